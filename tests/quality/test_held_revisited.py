"""Work held on a signal is decided when gold later confirms the worker is bad (issue 15, item 15)."""

from __future__ import annotations

import json

from bs4 import BeautifulSoup
from sqlalchemy import select

from demo.crowd import PROFILES, Profile
from demo.data import write_rating_demo
from hits.db import session_scope
from hits.requester.tables.campaigns import PublishedHIT, Submission, WorkerStats
from tests.helpers import campaign_bot, publish_campaign_file, rating_campaign_spec
from tests.quality.test_followups import review
from tests.server.test_dashboard import staff_session

#: Gold cannot tell after 6 wrong answers at 0.999 (P = 0.9984), and can after 8 (0.9997).
STRICT = {
    "accuracy_threshold": 0.6,
    "confidence": 0.999,
    "min_gold": 2,
    "flagged_action": "reject",
    # The gold-only rule: gold decides here, the signals only hold.
    "worker_model": False,
}


def _launch(folder, market, sessions, url: str, name: str):  # type: ignore[no-untyped-def]
    """A rating campaign whose gold is never rated 3: a rater who always says 3 misses every gold item."""
    truth = write_rating_demo(folder, items=8, gold=24, seed=3)
    rows = [json.loads(line) for line in (folder / "gold.jsonl").read_text().splitlines()]
    kept = [row for row in rows if row["answer"]["rating"] != 3]
    assert len(kept) >= 8
    (folder / "gold.jsonl").write_text("".join(json.dumps(row) + "\n" for row in kept))
    spec = rating_campaign_spec(name, gold_per_hit=2, quality=STRICT, auto_approval_delay_seconds=3600)
    return publish_campaign_file(folder, spec, market, sessions, url), truth


def _work(sessions, campaign_id: int, worker: str) -> list[Submission]:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        rows = session.scalars(
            select(Submission)
            .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
            .where(PublishedHIT.campaign_id == campaign_id, Submission.worker_id == worker)
            .order_by(Submission.submitted_at, Submission.id)
        ).all()
        session.expunge_all()
        return list(rows)


def test_twins_with_the_same_gold_record_end_the_same_whichever_was_held_on_a_signal_first(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    name = "twins-1"
    campaign_id, truth = _launch(tmp_path, market, requester_sessions, live_server.url, name)
    # Both miss every gold item; one always says 3 (straight-lining), the other is always one off.
    flat = campaign_bot(live_server.url, f"{name}-flat", PROFILES["copycat"], truth, name)
    off = campaign_bot(live_server.url, f"{name}-off", Profile("always-off", 0.0), truth, name)
    for bot in (flat, off):
        assert bot.run(max_hits=3).submitted == 3
    review(requester_sessions, market)
    held, twin = flat.result.worker_id, off.result.worker_id
    # Gold 0/6 cannot tell at 0.999: the straight-liner is flagged on the signal and their work
    # held for a person; the twin's waits for more gold.
    assert [s.decision for s in _work(requester_sessions, campaign_id, held)] == ["held"] * 3
    assert [s.decision for s in _work(requester_sessions, campaign_id, twin)] == [None] * 3

    for bot in (flat, off):
        assert bot.run(max_hits=4).submitted == 4
    review(requester_sessions, market)
    # Gold 0/8 is confident for both: the same record, the same end, per the policy (reject).
    for worker in (held, twin):
        work = _work(requester_sessions, campaign_id, worker)
        assert [s.decision for s in work] == ["reject"] * 4, (worker, [s.decision for s in work])
        statuses = [
            mturk.get_assignment(AssignmentId=s.assignment_id)["Assignment"]["AssignmentStatus"] for s in work
        ]
        assert statuses == ["Rejected"] * 4
    with session_scope(requester_sessions) as session:
        first = session.get(WorkerStats, (campaign_id, held))
        second = session.get(WorkerStats, (campaign_id, twin))
        assert first is not None and second is not None
        assert (first.gold_correct, first.gold_total) == (second.gold_correct, second.gold_total) == (0, 8)
        assert first.flag_reason == second.flag_reason
    # The dashboard shows the flag as it stands now: confident gold, not the signal that held the work.
    page = staff_session(live_server.url, requester_sessions).get(
        f"{live_server.url}/dashboard/workers/{campaign_id}/{held}"
    )
    assert page.status_code == 200
    shown = BeautifulSoup(page.text, "html.parser").get_text(" ", strip=True)
    assert "Flagged: gold accuracy 0/8" in shown, shown
    assert "suspicious signals" not in shown and "held for review" not in shown
