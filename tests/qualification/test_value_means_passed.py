"""Issue 15, item 9: the value reaching the marketplace, and the requirement publish recommends, mean passed.

A worker takes a published test over HTTP with every spelling and grammar
question right and most judgment questions wrong: a score of 82, above the
pass mark, with a failed section. The page says so, and the value the outbox
delivers to the marketplace (through the real apply code and the boto3
client) does not clear the requirement ``publish`` recommends.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.quality.outbox import apply_entry
from hits.requester.tables.campaigns import OutboxEntry
from qualification.bank import DEFAULT_BANK, load_bank
from qualification.service import publish_test
from server.cli.main import main
from tests.server.worker_helpers import WorkerClient, csrf_of, soup


def granted(market, qtype_id: str) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """Worker id -> IntegerValue of the type's grants, as the requester reads them through boto3."""
    reply = market.client.list_workers_with_qualification_type(QualificationTypeId=qtype_id)
    return {q["WorkerId"]: q["IntegerValue"] for q in reply["Qualifications"]}


def outbox_entry(requester_sessions, worker: WorkerClient) -> int:  # type: ignore[no-untyped-def]
    """The id of the qualify decision queued for ``worker``'s attempt."""
    with session_scope(requester_sessions) as session:
        entries = session.scalars(select(OutboxEntry).where(OutboxEntry.action == "qualify")).all()
        (entry,) = [e for e in entries if e.payload["worker_id"] == worker.worker_id]
        return entry.id


def take_test(worker: WorkerClient, test_id: int, wrong_judgments: int) -> str:
    """Take the test: all right but ``wrong_judgments`` judgment questions; the result page's text."""
    bank = load_bank(DEFAULT_BANK)
    intro = worker.get(f"/qualify/{test_id}")
    page = worker.http.post(f"{worker.base}/qualify/{test_id}/start", data={"csrf_token": csrf_of(intro)})
    form = soup(page).select_one("#qualification-form")
    assert form is not None
    answers: dict[str, str] = {}
    wrong = 0
    for fieldset in form.select("fieldset"):
        values = [str(r["value"]) for r in fieldset.select("input[type=radio]")]
        name = str(fieldset.select_one("input[type=radio]")["name"])  # type: ignore[index]
        item = bank.items[name.removeprefix("q-")]
        right = item.answer
        if item.section == "judgment" and wrong < wrong_judgments:
            right, wrong = next(v for v in values if v != item.answer), wrong + 1
        answers[name] = right
    action = str(form["action"])
    result = worker.http.post(worker.base + action, data={"csrf_token": csrf_of(page), **answers})
    assert result.status_code == 200, result.text
    return soup(result).get_text()


def test_a_failed_section_does_not_clear_the_recommended_requirement(
    tmp_path: Path, live_server, market, requester, requester_sessions, settings
) -> None:
    with session_scope(requester_sessions) as session:
        test = publish_test(session, market, name="Value means passed", bank_path=DEFAULT_BANK)
        test_id, qtype_id = test.id, test.qualification_type_id
    worker = WorkerClient(live_server.url, "weak-judge")
    html = take_test(worker, test_id, wrong_judgments=5)  # judgment 3 of 8, needs 7
    assert "Your score: 82" in html and "You did not pass" in html
    assert "3 of 8" in html and "Your qualification value is 0" in html

    assert apply_entry(requester_sessions, market, outbox_entry(requester_sessions, worker)) == "qualify"
    value = granted(market, qtype_id)[worker.worker_id]

    # The requirement publish recommends for this bank.
    env = {
        "HITFORGE_VAR_DIR": str(settings.var_dir),
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
        "HITFORGE_PUBLIC_URL": live_server.url,
        "HITFORGE_MTURK_ENDPOINT_URL": live_server.url,
        "HITFORGE_MTURK_ACCESS_KEY_ID": requester.access_key_id,
        "HITFORGE_MTURK_SECRET_ACCESS_KEY": requester.secret_access_key,
    }
    published = CliRunner().invoke(
        main, ["qualification", "publish", str(DEFAULT_BANK), "--name", "Value rule CLI"], env=env
    )
    assert published.exit_code == 0, published.output
    assert "GreaterThanOrEqualTo 80" in published.output
    assert value < 80
    assert value == 0

    # A worker who passes gets the score itself, which clears it.
    strong = WorkerClient(live_server.url, "strong-judge")
    assert "You passed" in take_test(strong, test_id, wrong_judgments=1)
    assert apply_entry(requester_sessions, market, outbox_entry(requester_sessions, strong)) == "qualify"
    assert granted(market, qtype_id)[strong.worker_id] == 96
