"""Places decided from hitforge's verdicts and applied on Prolific exactly once; polling and webhooks."""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import requests
from sqlalchemy import select

from hits.db import session_scope
from hits.market.models import Assignment
from hits.requester.campaigns.recruitment import launch_study, recruit_spec, settle_places
from hits.requester.recruit.base import RecruitRefused
from hits.requester.recruit.outbox import apply_decisions, decide_places, queue_decision
from hits.requester.recruit.places import open_place, record_assignment
from hits.requester.recruit.prolific import wire
from hits.requester.recruit.prolific.client import ProlificClient
from hits.requester.recruit.prolific.standin import RunningStandin
from hits.requester.recruit.summary import study_summary
from hits.requester.recruit.sync import sync_places
from hits.requester.tables.campaigns import Campaign, PublishedHIT, Submission
from hits.requester.tables.recruiting import Recruitment, RecruitOutboxEntry, RecruitPlace
from server.requester.recruit_pages import HOOK_SECRET_EXTENSION, RECRUITER_EXTENSION
from tests.recruit.test_entry import csrf, enter
from tests.recruit.test_launch_study import campaign_with, recruiting_campaign
from workers.recruit_tasks import settle_all

FEEDBACK = "Too many of the check questions in this task were answered incorrectly."


@pytest.fixture
def recruiting(
    tmp_path: Path,
    market: Any,
    requester_sessions: Any,
    live_server: Any,
    prolific: ProlificClient,
    request: pytest.FixtureRequest,
) -> tuple[int, Recruitment]:
    name = "rc-dec-" + secrets.token_hex(4)
    campaign_id = recruiting_campaign(tmp_path, name, market, requester_sessions, live_server.url)
    launch_study(requester_sessions, prolific, campaign_id, live_server.url)
    with session_scope(requester_sessions) as session:
        row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign_id))
        assert row is not None
        session.expunge(row)
    return campaign_id, row


def finished_place(
    requester_sessions: Any,
    standin: RunningStandin,
    campaign_id: int,
    row: Recruitment,
    decisions: list[str | None],
    *,
    code: bool = True,
) -> str:
    """A place whose participant finished on Prolific, its assignments decided as given; its session id."""
    assert row.study_id is not None
    pid = secrets.token_hex(12)
    session_id = standin.app.take_place(row.study_id, pid)
    if code:
        standin.app.finish(session_id, row.completion_code)
    with session_scope(requester_sessions) as session:
        hit_id = session.scalar(
            select(PublishedHIT.id).where(PublishedHIT.campaign_id == campaign_id).limit(1)
        )
        assert hit_id is not None
        place = open_place(session, session.get(Recruitment, row.id), pid, session_id, f"W{pid[:12]}")  # type: ignore[arg-type]
        for n, decision in enumerate(decisions):
            assignment_id = f"A{secrets.token_hex(10)}"
            record_assignment(session, place, assignment_id, f"H{n}")
            session.add(
                Submission(
                    assignment_id=assignment_id,
                    published_hit_id=hit_id,
                    worker_id=place.worker_id,
                    answers={},
                    decision=decision,
                )
            )
        place.status = "finished"
    return session_id


def transitions(standin: RunningStandin, session_id: str) -> int:
    return standin.app.state.calls.count(("POST", f"/submissions/{session_id}/transition/"))


def test_places_are_decided_from_their_assignments(
    requester_sessions: Any, standin: RunningStandin, recruiting: tuple[int, Recruitment]
) -> None:
    campaign_id, row = recruiting
    good = finished_place(requester_sessions, standin, campaign_id, row, ["approve", "approve"])
    bad = finished_place(requester_sessions, standin, campaign_id, row, ["approve", "reject"])
    waiting = finished_place(requester_sessions, standin, campaign_id, row, ["approve", None])
    held = finished_place(requester_sessions, standin, campaign_id, row, ["hold", "approve"])
    with session_scope(requester_sessions) as session:
        assert len(decide_places(session, row.id, FEEDBACK)) == 2
        assert decide_places(session, row.id, FEEDBACK) == []  # decided once
        entries = {e.submission_id: e for e in session.scalars(select(RecruitOutboxEntry))}
        assert entries[good].action == "approve"
        assert entries[bad].action == "reject"
        assert entries[bad].payload["rejection_category"] == "FAILED_CHECK"
        assert len(entries[bad].payload["message"]) >= 100 and FEEDBACK in entries[bad].payload["message"]
        assert waiting not in entries and held not in entries
    report = apply_decisions(requester_sessions, ProlificClient(standin.api_url, standin.app.token))
    assert sorted(report.outcomes.values()) == ["approve", "reject"]
    assert standin.app.state.submissions[good]["status"] == "APPROVED"
    assert standin.app.state.submissions[bad]["status"] == "REJECTED"


def test_an_approval_applied_twice_calls_prolific_once(
    requester_sessions: Any,
    standin: RunningStandin,
    prolific: ProlificClient,
    recruiting: tuple[int, Recruitment],
) -> None:
    campaign_id, row = recruiting
    session_id = finished_place(requester_sessions, standin, campaign_id, row, ["approve"])
    with session_scope(requester_sessions) as session:
        place = session.scalar(select(RecruitPlace).where(RecruitPlace.session_id == session_id))
        assert place is not None
        entry_id = queue_decision(session, place, "approve").id
        assert queue_decision(session, place, "approve").id == entry_id  # deciding again: the same entry
        with pytest.raises(ValueError, match="decided already"):
            queue_decision(session, place, "reject", category="LOW_EFFORT", message="x" * 120)
    assert apply_decisions(requester_sessions, prolific, [entry_id]).outcomes == {entry_id: "approve"}
    assert apply_decisions(requester_sessions, prolific, [entry_id]).outcomes == {}  # done: not claimed
    assert transitions(standin, session_id) == 1
    # A crash after Prolific approved but before the entry was marked done: recognised, not re-sent.
    with session_scope(requester_sessions) as session:
        entry = session.get(RecruitOutboxEntry, entry_id)
        assert entry is not None
        entry.status = "pending"
    assert apply_decisions(requester_sessions, prolific, [entry_id]).outcomes == {
        entry_id: "approve (already applied)"
    }
    assert transitions(standin, session_id) == 1
    assert standin.app.state.submissions[session_id]["status"] == "APPROVED"


class _SlowReads(ProlificClient):
    """The real client on a slow network: reading a place's status waits for the other process's read."""

    def __init__(self, standin: RunningStandin, barrier: threading.Barrier) -> None:
        super().__init__(standin.api_url, standin.app.token, backoff=0, sleep=lambda _: None)
        self._barrier = barrier

    def get_submission(self, submission_id: str) -> Any:
        found = super().get_submission(submission_id)
        # Both have read "AWAITING REVIEW" before either transitions; a broken barrier: the other
        # process never read it (it did not claim the entry).
        with contextlib.suppress(threading.BrokenBarrierError):
            self._barrier.wait()
        return found


def test_two_processes_settling_at_once_transition_a_place_once(
    requester_sessions: Any,
    standin: RunningStandin,
    prolific: ProlificClient,
    recruiting: tuple[int, Recruitment],
) -> None:
    """The beat's settling and ``hitforge recruit sync`` (or two beats) apply the same pending decision."""
    campaign_id, row = recruiting
    session_id = finished_place(requester_sessions, standin, campaign_id, row, ["approve"])
    with session_scope(requester_sessions) as session:
        assert len(decide_places(session, row.id, FEEDBACK)) == 1
    barrier = threading.Barrier(2, timeout=3)
    with ThreadPoolExecutor(2) as pool:
        reports = list(
            pool.map(lambda _: apply_decisions(requester_sessions, _SlowReads(standin, barrier)), range(2))
        )
    assert sorted(len(r.outcomes) for r in reports) == [0, 1], [r.outcomes for r in reports]
    assert transitions(standin, session_id) == 1
    assert standin.app.state.submissions[session_id]["status"] == "APPROVED"
    with session_scope(requester_sessions) as session:
        entry = session.scalar(
            select(RecruitOutboxEntry).where(RecruitOutboxEntry.submission_id == session_id)
        )
        assert entry is not None and entry.status == "done" and entry.claimed_until is None


def test_recording_outcomes_beside_another_claim_does_not_deadlock(
    requester_sessions: Any,
    standin: RunningStandin,
    prolific: ProlificClient,
    recruiting: tuple[int, Recruitment],
) -> None:
    """A pass records an approval (the higher entry) and a failure (the lower one) while a second
    process claims every pending entry. The pass used to lock the approval's row, then the
    failure's; the claim, in id order, held the failure's and waited for the approval's: a
    deadlock on PostgreSQL, one of the two aborted (SQLite's writers take turns either way)."""
    from sqlalchemy import event

    campaign_id, row = recruiting
    refused = finished_place(requester_sessions, standin, campaign_id, row, ["reject"])
    approved = finished_place(requester_sessions, standin, campaign_id, row, ["approve"])
    with session_scope(requester_sessions) as session:
        # The lower entry: a rejection written past the check, refused at every try (stays pending).
        low = RecruitOutboxEntry(
            recruitment_id=row.id, action="reject", submission_id=refused,
            payload={"rejection_category": "LOW_EFFORT", "message": "Bad work."},
        )  # fmt: skip
        session.add(low)
        session.flush()
        place = session.scalar(select(RecruitPlace).where(RecruitPlace.session_id == approved))
        assert place is not None
        high = queue_decision(session, place, "approve")
        entries = [low.id, high.id]
    assert entries[0] < entries[1]
    engine = requester_sessions.kw["bind"]
    recorder = threading.current_thread()
    claimer: list[threading.Thread] = []
    errors: list[BaseException] = []

    def claim_all() -> None:
        try:
            apply_decisions(requester_sessions, prolific)
        except BaseException as exc:  # the test's verdict, read below
            errors.append(exc)

    def on_execute(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        # Once the pass's first row update has run: the other process claims now, and reaches its
        # row locks before this pass takes its next one.
        if claimer or threading.current_thread() is not recorder:
            return
        if statement.lstrip().upper().startswith("UPDATE RQ_RECRUIT_OUTBOX") and "status" in statement:
            claimer.append(threading.Thread(target=claim_all))
            claimer[0].start()
            time.sleep(1.5)

    event.listen(engine, "after_cursor_execute", on_execute)
    try:
        report = apply_decisions(requester_sessions, prolific, entries)
    finally:
        event.remove(engine, "after_cursor_execute", on_execute)
        for thread in claimer:
            thread.join(30)
    assert claimer, "the pass never recorded an outcome"
    assert errors == []
    assert set(report.outcomes) == {entries[1]} and set(report.failures) == {entries[0]}
    assert standin.app.state.submissions[approved]["status"] == "APPROVED"
    assert transitions(standin, refused) == 0


def test_a_short_rejection_message_is_never_sent(
    requester_sessions: Any,
    standin: RunningStandin,
    prolific: ProlificClient,
    recruiting: tuple[int, Recruitment],
) -> None:
    campaign_id, row = recruiting
    session_id = finished_place(requester_sessions, standin, campaign_id, row, ["reject"])
    with session_scope(requester_sessions) as session:
        place = session.scalar(select(RecruitPlace).where(RecruitPlace.session_id == session_id))
        assert place is not None
        with pytest.raises(ValueError, match="100 characters"):
            queue_decision(session, place, "reject", category="LOW_EFFORT", message="Bad work.")
        # Written by hand past the check: applying refuses it too, before any transition.
        entry = RecruitOutboxEntry(
            recruitment_id=row.id,
            action="reject",
            submission_id=session_id,
            payload={"rejection_category": "LOW_EFFORT", "message": "Bad work."},
        )
        session.add(entry)
        session.flush()
        entry_id = entry.id
    report = apply_decisions(requester_sessions, prolific, [entry_id])
    assert entry_id in report.failures
    assert transitions(standin, session_id) == 0
    assert standin.app.state.submissions[session_id]["status"] == "AWAITING REVIEW"


@pytest.mark.parametrize("gone", ["give_back", "time_out"])
def test_a_returned_or_timed_out_place_is_recorded_not_transitioned(
    gone: str,
    requester_sessions: Any,
    standin: RunningStandin,
    prolific: ProlificClient,
    recruiting: tuple[int, Recruitment],
) -> None:
    campaign_id, row = recruiting
    session_id = finished_place(requester_sessions, standin, campaign_id, row, ["approve"], code=False)
    getattr(standin.app, gone)(session_id)
    report = settle_places(requester_sessions, prolific, campaign_id)
    assert report.freed == 1
    status = "RETURNED" if gone == "give_back" else "TIMED-OUT"
    with session_scope(requester_sessions) as session:
        place = session.scalar(select(RecruitPlace).where(RecruitPlace.session_id == session_id))
        assert place is not None and place.status == "freed" and place.platform_status == status
        place.status = "finished"  # even a place hitforge counted finished: Prolific's status is final
    with session_scope(requester_sessions) as session:
        queued = decide_places(session, row.id, FEEDBACK)
    outcomes = apply_decisions(requester_sessions, prolific, queued).outcomes
    assert list(outcomes.values()) == [f"approve (not applied: {status} on Prolific)"]
    assert transitions(standin, session_id) == 0


def test_polling_reads_all_45_places_in_3_pages(
    requester_sessions: Any,
    standin: RunningStandin,
    prolific: ProlificClient,
    recruiting: tuple[int, Recruitment],
) -> None:
    campaign_id, row = recruiting
    assert row.study_id is not None
    sessions = [finished_place(requester_sessions, standin, campaign_id, row, ["approve"]) for _ in range(45)]
    standin.app.give_back(sessions[-1])  # on the third page
    standin.app.state.calls.clear()
    report = sync_places(requester_sessions, prolific, campaign_id)
    assert report.read == 45 and report.updated == 45 and len(report.freed) == 1
    assert standin.app.state.calls.count(("GET", "/submissions/")) == 3


def test_webhooks_are_verified_and_free_a_returned_place(
    live_server: Any,
    market_sessions: Any,
    requester_sessions: Any,
    standin: RunningStandin,
    prolific: ProlificClient,
    recruiting: tuple[int, Recruitment],
) -> None:
    _, row = recruiting
    assert row.study_id is not None
    app = live_server.server.app
    hook_url = f"{live_server.url}/recruit/prolific/hook"
    secret = prolific.new_hook_secret()
    prolific.subscribe("submission.status.change", hook_url)
    app.extensions[RECRUITER_EXTENSION] = prolific
    app.extensions[HOOK_SECRET_EXTENSION] = secret
    try:
        pid = secrets.token_hex(12)
        session_id = standin.app.take_place(row.study_id, pid)
        browser = requests.Session()
        assert (
            enter(
                live_server.url, browser, PROLIFIC_PID=pid, STUDY_ID=row.study_id, SESSION_ID=session_id
            ).status_code
            == 302
        )
        page = browser.get(f"{live_server.url}/recruit/place/{session_id}", timeout=10)
        taken = browser.post(
            f"{live_server.url}/recruit/place/{session_id}/next",
            data={"csrf_token": csrf(page.text)},
            allow_redirects=False,
            timeout=10,
        )
        assignment_id = taken.headers["Location"].rsplit("/", 1)[1]
        body = json.dumps({"resource_id": session_id, "event_type": "submission.status.change"}).encode()
        stamp = str(int(time.time()))
        for signature in (
            "",
            wire.signature("not-the-secret", stamp, body),
            wire.signature(secret, "1", body),
        ):
            refused = requests.post(
                hook_url,
                data=body,
                headers={wire.TIMESTAMP_HEADER: stamp, wire.SIGNATURE_HEADER: signature},
                timeout=10,
            )
            assert refused.status_code == 403
        with session_scope(requester_sessions) as session:
            place = session.scalar(select(RecruitPlace).where(RecruitPlace.session_id == session_id))
            assert place is not None and place.status == "working"
        standin.app.give_back(session_id)  # Prolific calls the hook, signed
        with session_scope(requester_sessions) as session:
            place = session.scalar(select(RecruitPlace).where(RecruitPlace.session_id == session_id))
            assert place is not None and place.status == "freed" and place.platform_status == "RETURNED"
        with session_scope(market_sessions) as session:
            assignment = session.get(Assignment, assignment_id)
            assert assignment is not None and assignment.status == "Returned"
    finally:
        app.extensions.pop(RECRUITER_EXTENSION, None)
        app.extensions.pop(HOOK_SECRET_EXTENSION, None)


def test_the_beat_task_settles_places_only_with_a_token(
    settings: Any, requester_sessions: Any, standin: RunningStandin, recruiting: tuple[int, Recruitment]
) -> None:
    campaign_id, row = recruiting
    session_id = finished_place(requester_sessions, standin, campaign_id, row, ["approve"])
    no_token = SimpleNamespace(settings=settings, sessions=requester_sessions)
    assert settle_all(no_token) == {"campaigns": 0, "applied": 0, "failed": 0}
    assert standin.app.state.submissions[session_id]["status"] == "AWAITING REVIEW"
    rt = SimpleNamespace(
        settings=settings.with_overrides(prolific_token=standin.app.token, prolific_api_url=standin.api_url),
        sessions=requester_sessions,
    )
    counts = settle_all(rt)
    assert counts["campaigns"] >= 1 and counts["applied"] >= 1
    assert standin.app.state.submissions[session_id]["status"] == "APPROVED"
    assert transitions(standin, session_id) == 1


def test_a_partly_approved_place_is_paid_its_share_once_when_the_campaign_allows_it(
    tmp_path: Path, market: Any, requester_sessions: Any, live_server: Any, standin: RunningStandin
) -> None:
    prolific = ProlificClient(standin.api_url, standin.app.token)
    campaign_id = campaign_with(
        tmp_path, "rc-part", market, requester_sessions, live_server.url, partial_payment=True
    )
    launch_study(requester_sessions, prolific, campaign_id, live_server.url)
    with session_scope(requester_sessions) as session:
        row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign_id))
        assert row is not None and row.partial_code
        session.expunge(row)
    assert row.study_id is not None
    (code,) = [
        c
        for c in standin.app.state.studies[row.study_id]["completion_codes"]
        if c["code"] == row.partial_code
    ]
    assert code["actor"] == "researcher" and code["actions"] == [{"action": "DYNAMIC_PAYMENT"}]

    two_thirds = finished_place(
        requester_sessions, standin, campaign_id, row, ["approve", "reject", "approve"]
    )
    waiting = finished_place(requester_sessions, standin, campaign_id, row, ["approve", "reject", None])
    too_little = finished_place(requester_sessions, standin, campaign_id, row, ["approve"] + ["reject"] * 12)
    none = finished_place(requester_sessions, standin, campaign_id, row, ["reject", "reject"])
    with session_scope(requester_sessions) as session:
        queued = decide_places(session, row.id, FEEDBACK, partial_code=row.partial_code)
        entries = {e.submission_id: e for e in session.scalars(select(RecruitOutboxEntry))}
        assert len(queued) == 3 and waiting not in entries  # its share is not known yet
        assert entries[two_thirds].action == "partial" and entries[two_thirds].payload["percentage"] == 66
        assert "2 of the 3 tasks" in entries[two_thirds].payload["message"]
        assert entries[too_little].action == "reject" and entries[none].action == "reject"  # 7% and 0%
    apply_decisions(requester_sessions, prolific)
    paid = standin.app.state.submissions[two_thirds]
    assert paid["status"] == "PARTIALLY APPROVED" and paid["percentage_of_reward"] == 66
    with session_scope(requester_sessions) as session:
        session.execute(
            RecruitOutboxEntry.__table__.update()
            .where(RecruitOutboxEntry.submission_id == two_thirds)
            .values(status="pending")  # a crash lost the bookkeeping: applying again reads it first
        )
    again = apply_decisions(requester_sessions, prolific)
    assert "partial (already applied)" in again.outcomes.values()
    assert transitions(standin, two_thirds) == 1

    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        recruit = recruit_spec(campaign)
        assert recruit is not None
        summary = study_summary(session, campaign_id, recruit.reward, recruit.currency)
    assert summary is not None and summary.places == 3 and summary.taken == 4
    # The waiting place was never polled here: its status on Prolific is not known yet.
    assert summary.by_status == {"PARTIALLY APPROVED": 1, "REJECTED": 2, "not read yet": 1}
    # 66% of the $1.50 reward: nothing else approved yet. The study counted 3 x 1.50 with a third on top.
    assert summary.rewards_approved == Decimal("0.99") and summary.study_cost == Decimal("6.00")


def test_the_stand_in_takes_complete_only_with_a_researcher_s_code_and_a_share_in_range(
    requester_sessions: Any, standin: RunningStandin, recruiting: tuple[int, Recruitment]
) -> None:
    campaign_id, row = recruiting
    place = finished_place(requester_sessions, standin, campaign_id, row, ["approve"])
    prolific = ProlificClient(standin.api_url, standin.app.token, backoff=0, sleep=lambda _: None)
    with pytest.raises(RecruitRefused):
        prolific.complete(place, row.completion_code)  # the participant's code: not the researcher's
    with pytest.raises(ValueError, match="8 to 99"):
        prolific.pay_in_part(place, "ANY", 100, "")
