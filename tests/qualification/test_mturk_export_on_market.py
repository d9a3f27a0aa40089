"""Issue 15, item 9, MTurk-native: the exported Test and AnswerKey grade on a marketplace as hitforge does.

``create BANK --export`` writes one paper; a requester creates a qualification
type from it with boto3 on hitforge's marketplace (which scores AnswerKeys as
MTurk does), and workers take it on the worker site: a failed section earns
0 however high the score, a pass earns the score.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from click.testing import CliRunner

from qualification.assembly import assemble
from qualification.bank import DEFAULT_BANK, load_bank
from server.cli.qualification import qualification
from tests.server.test_question_forms import take_test
from tests.server.worker_helpers import WorkerClient, soup


def test_the_exported_key_gives_0_to_a_failed_section_on_the_marketplace(
    tmp_path: Path, live_server, mturk
) -> None:
    out = tmp_path / "export"
    args = ["create", str(DEFAULT_BANK), "--export", str(out), "--seed", "5"]
    exported = CliRunner().invoke(qualification, [*args, "--media-url", "https://media.example.org/q"])
    assert exported.exit_code == 0, exported.output
    qtype_id = mturk.create_qualification_type(
        Name=f"Exported {uuid.uuid4().hex[:8]}",
        Description="The default bank, exported.",
        QualificationTypeStatus="Active",
        Test=(out / "test.xml").read_text(),
        AnswerKey=(out / "answerkey.xml").read_text(),
        TestDurationInSeconds=600,
    )["QualificationType"]["QualificationTypeId"]

    bank = load_bank(DEFAULT_BANK)
    paper = assemble(bank, 5)
    right = {e.item_id: bank.items[e.item_id].answer for e in paper.items}
    weak = dict(right)
    for entry in [e for e in paper.items if e.section == "judgment"][:5]:  # 3 of 8, needs 7: score 82
        weak[entry.item_id] = next(c for c in entry.choice_order if c != right[entry.item_id])

    for name, answers, value in (("weak", weak, "0"), ("strong", right, "100")):
        worker = WorkerClient(live_server.url, name)
        # The renderer names fields q1, q2, ... in the QuestionForm's order, the paper's order.
        fields = {f"q{n}": answers[e.item_id] for n, e in enumerate(paper.items, start=1)}
        done = take_test(worker, qtype_id, fields)
        assert done.status_code == 200, done.text
        shown = soup(done).select_one("#qualification-score")
        assert shown is not None and shown.get_text() == value, name
