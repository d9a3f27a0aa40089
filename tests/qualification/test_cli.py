"""The ``hitforge qualification`` commands."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from qualification.assembly import assemble
from qualification.bank import DEFAULT_BANK, Bank
from qualification.mturk import validate_answer_key, validate_question_form
from server.cli.qualification import qualification
from tests.qualification.conftest import small_bank_data, write_bank


def test_create_validates_and_exports(tmp_path: Path, bank: Bank) -> None:
    out = tmp_path / "out"
    args = ["create", str(DEFAULT_BANK), "--export", str(out), "--seed", "3"]
    refused = CliRunner().invoke(qualification, args)
    assert refused.exit_code == 2 and "this test shows 8 pictures: give --media-url" in refused.output
    result = CliRunner().invoke(qualification, [*args, "--media-url", "https://media.example.org/q"])
    assert result.exit_code == 0, result.output
    assert "spelling" in result.output and "random guesser passes: 0.000105" in result.output
    test = (out / "test.xml").read_text()
    validate_question_form(test)
    validate_answer_key((out / "answerkey.xml").read_text())
    # The pictures of the paper, under the names test.xml links to, and nothing else.
    pictures = sorted(p.name for p in (out / "media").iterdir())
    assert len(pictures) == 8
    for name in pictures:
        assert f"https://media.example.org/q/{name}" in test
        assert (out / "media" / name).read_bytes() == bank.media[name].read_bytes()


def test_create_reports_every_problem_of_a_broken_bank(tmp_path: Path) -> None:
    data = small_bank_data()
    del data["items"][0]["answer"]
    data["items"][3]["section"] = "style"
    result = CliRunner().invoke(qualification, ["create", str(write_bank(tmp_path, data))])
    assert result.exit_code == 1
    assert "item 's1': Field required" in result.output
    assert "item 'g2': unknown section 'style'" in result.output


def test_show_prints_sections() -> None:
    result = CliRunner().invoke(qualification, ["show", str(DEFAULT_BANK)])
    assert result.exit_code == 0
    for word in ("spelling", "grammar", "judgment", "8/10", "7/8"):
        assert word in result.output


def test_grade_a_json_answers_file(tmp_path: Path, bank: Bank) -> None:
    paper = assemble(bank, 21)
    answers = {e.item_id: bank.items[e.item_id].answer for e in paper.items}
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(answers))
    result = CliRunner().invoke(qualification, ["grade", str(DEFAULT_BANK), "--seed", "21", str(path)])
    assert result.exit_code == 0, result.output
    assert "score 100 (needs 80): PASSED; qualification value 100" in result.output
    path.write_text("[1, 2]")
    bad = CliRunner().invoke(qualification, ["grade", str(DEFAULT_BANK), "--seed", "21", str(path)])
    assert bad.exit_code != 0 and "expected an object" in bad.output


def test_items_analysis_from_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "attempts.jsonl"
    rows = [{"correct": {"a": True, "b": i % 2 == 0, "c": False}} for i in range(6)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = CliRunner().invoke(qualification, ["items", str(path)])
    assert result.exit_code == 0, result.output
    assert "too easy" in result.output and "too hard" in result.output
    path.write_text('{"correct": {"a": "yes"}}\n')
    bad = CliRunner().invoke(qualification, ["items", str(path)])
    assert bad.exit_code != 0 and "line 1" in bad.output


def test_every_bank_command_takes_the_bank_as_its_first_argument(tmp_path: Path) -> None:
    """Issue 15, item 10: one convention; a missing bank is a usage error naming BANK."""
    from server.cli.main import main

    for command in ("show", "create", "grade", "publish"):
        usage = CliRunner().invoke(main, ["qualification", command, "--help"], prog_name="hitforge").output
        assert f"hitforge qualification {command} [OPTIONS] BANK" in usage, usage
        missing = CliRunner().invoke(main, ["qualification", command])
        assert missing.exit_code == 2 and "Missing argument 'BANK'" in missing.output
