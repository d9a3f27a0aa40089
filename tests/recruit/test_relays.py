"""Bonuses, blocks and messages for a recruited participant reach Prolific through the outbox, once.

End to end: a participant enters through the study URL on a real server and
works a HIT; a reviewer's bonus, block or message (``staff_actions``, the
dashboard's path) is queued in the requester's outbox, applied by the outbox
(which hands it over), and relayed to the stand-in by the recruiting task.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
import requests
from click.testing import CliRunner
from sqlalchemy import select

from hits.db import session_scope, utcnow
from hits.requester.campaigns.recruitment import settle_places
from hits.requester.mturk import Marketplace
from hits.requester.quality import staff_actions
from hits.requester.quality.outbox import apply_entries
from hits.requester.recruit.prolific.client import ProlificClient
from hits.requester.recruit.prolific.standin import RunningStandin
from hits.requester.recruit.relay import apply_relays, resolve_held
from hits.requester.tables.campaigns import Campaign, OutboxEntry, PublishedHIT, StaffUser, Submission
from hits.requester.tables.recruiting import Recruitment, RecruitPlace, RecruitRelay
from server.cli.main import main
from tests.recruit.test_cli import cli_env
from tests.recruit.test_entry import enter, study, work_one

__all__ = ["study"]  # the fixture, shared with the entry tests


@dataclass(frozen=True)
class Participant:
    pid: str
    session_id: str
    worker_id: str
    assignment_id: str
    campaign_id: int


@pytest.fixture
def participant(
    live_server: Any, standin: RunningStandin, study: Recruitment, requester_sessions: Any
) -> Participant:
    """A participant who entered through the study URL and submitted one HIT of their place."""
    assert study.study_id is not None
    pid = secrets.token_hex(12)
    session_id = standin.app.take_place(study.study_id, pid)
    browser = requests.Session()
    arrived = enter(
        live_server.url, browser, PROLIFIC_PID=pid, STUDY_ID=study.study_id, SESSION_ID=session_id
    )
    assert arrived.status_code == 302, arrived.text
    assignment_id = work_one(live_server.url, browser, session_id)
    with session_scope(requester_sessions) as session:
        place = session.scalar(select(RecruitPlace).where(RecruitPlace.session_id == session_id))
        assert place is not None
        # The review pipeline's record of the submitted assignment, as a sync would write it.
        hit_id = session.scalar(
            select(PublishedHIT.id).where(PublishedHIT.campaign_id == study.campaign_id).limit(1)
        )
        session.add(
            Submission(
                assignment_id=assignment_id,
                published_hit_id=hit_id,
                worker_id=place.worker_id,
                answers={},
                decision="approve",
            )
        )
        return Participant(pid, session_id, place.worker_id, assignment_id, study.campaign_id)


def staff_id(requester_sessions: Any) -> int:
    with session_scope(requester_sessions) as session:
        user = StaffUser(username=f"qa-{secrets.token_hex(4)}", password_hash="-", role="qa")
        session.add(user)
        session.flush()
        return user.id


def queue(requester_sessions: Any, who: Participant, action: str, **kwargs: Any) -> int:
    """A reviewer's action on the participant, as the dashboard queues it; the outbox entry's id."""
    staff = staff_id(requester_sessions)
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, who.campaign_id)
        assert campaign is not None
        token = secrets.token_hex(8)
        if action == "bonus":
            submission = session.scalar(
                select(Submission).where(Submission.assignment_id == who.assignment_id)
            )
            assert submission is not None
            done = staff_actions.send_bonus(
                session, campaign, submission, Decimal("0.50"), "Careful work", staff, "", token
            )
        elif action == "block":
            done = staff_actions.block(session, campaign, who.worker_id, "Spam answers", staff, "", token)
        else:
            done = staff_actions.message(
                session, campaign, who.worker_id, "About your work", "Thank you!", staff, "", token
            )
        (entry_id,) = done.entry_ids
        return entry_id


def relay_of(requester_sessions: Any, entry_id: int) -> RecruitRelay:
    with session_scope(requester_sessions) as session:
        row = session.scalar(select(RecruitRelay).where(RecruitRelay.outbox_entry_id == entry_id))
        assert row is not None
        session.expunge(row)
        return row


def pay_calls(standin: RunningStandin) -> int:
    return sum(1 for method, path in standin.app.state.calls if path.startswith("/bulk-bonus-payments/"))


def test_a_bonus_whose_first_pay_call_fails_is_paid_once_on_prolific_not_on_the_marketplace(
    requester_sessions: Any,
    market: Marketplace,
    standin: RunningStandin,
    prolific: ProlificClient,
    participant: Participant,
) -> None:
    entry_id = queue(requester_sessions, participant, "bonus")
    outcome = apply_entries(requester_sessions, market, [entry_id]).outcomes[entry_id]
    assert "relayed to Prolific" in outcome
    assert market.bonus_payments(participant.assignment_id) == []  # not paid on the marketplace too
    with session_scope(requester_sessions) as session:
        entry = session.get(OutboxEntry, entry_id)
        assert entry is not None and entry.status == "done"
    # Applied again (a retried task): handed over once, never a second relay.
    assert apply_entries(requester_sessions, market, [entry_id]).outcomes[entry_id] == "skipped"
    relay = relay_of(requester_sessions, entry_id)

    # The first pay call fails having paid nothing (503), and so do the client's own retries of it.
    standin.app.state.fail_before["bonus_pay"] = [503] * 5
    first = apply_relays(requester_sessions, prolific)
    assert relay.id in first.failures and standin.app.state.paid == []
    after_failure = relay_of(requester_sessions, entry_id)
    assert after_failure.status == "set_up" and after_failure.setup_id  # the set-up id was kept
    # The next round (the beat's recruit_settle) pays it, with the set-up already made.
    settled = settle_places(requester_sessions, prolific, participant.campaign_id)
    assert "paid on Prolific" in settled.relayed[relay.id]
    assert len(standin.app.state.bonuses) == 1
    for _ in range(2):
        apply_relays(requester_sessions, prolific)
        settle_places(requester_sessions, prolific, participant.campaign_id)
    assert [p["amounts"] for p in standin.app.state.paid] == [{participant.pid: "0.50"}]
    assert pay_calls(standin) == 6  # the failed calls and the one that paid
    assert relay_of(requester_sessions, entry_id).status == "done"


@pytest.mark.parametrize("how", ["answer-lost", "crash-while-sending"])
def test_a_bonus_whose_pay_outcome_is_unknown_is_held_never_paid_again(
    how: str,
    requester_sessions: Any,
    market: Marketplace,
    standin: RunningStandin,
    prolific: ProlificClient,
    participant: Participant,
) -> None:
    entry_id = queue(requester_sessions, participant, "bonus")
    apply_entries(requester_sessions, market, [entry_id])
    relay = relay_of(requester_sessions, entry_id)
    if how == "answer-lost":
        # Prolific paid, then the answer was a fault: the client must not call pay again by itself.
        standin.app.state.fail_after["bonus_pay"] = [500]
        report = apply_relays(requester_sessions, prolific)
        assert report.held == [relay.id] and pay_calls(standin) == 1
    else:
        # An attempt set the bonus up, marked the row sending, called pay and died before recording.
        (study_id,) = standin.app.state.studies
        setup_id = prolific.set_up_bonuses(study_id, {participant.pid: "0.50"}).id
        prolific.pay_bonuses(setup_id)
        with session_scope(requester_sessions) as session:
            row = session.get(RecruitRelay, relay.id)
            assert row is not None
            row.status, row.setup_id, row.sending_at = "sending", setup_id, utcnow() - timedelta(hours=1)
        assert apply_relays(requester_sessions, prolific).held == [relay.id]
    assert len(standin.app.state.paid) == 1
    for _ in range(2):
        apply_relays(requester_sessions, prolific)
    assert len(standin.app.state.paid) == 1 and relay_of(requester_sessions, entry_id).status == "held"
    # A person checked Prolific's payments: it was paid.
    with session_scope(requester_sessions) as session:
        resolve_held(session, relay.id, paid=True)
    apply_relays(requester_sessions, prolific)
    assert len(standin.app.state.paid) == 1 and relay_of(requester_sessions, entry_id).status == "done"


def test_a_held_bonus_a_person_found_unpaid_is_paid_once_with_its_set_up(
    requester_sessions: Any,
    market: Marketplace,
    standin: RunningStandin,
    prolific: ProlificClient,
    participant: Participant,
) -> None:
    entry_id = queue(requester_sessions, participant, "bonus")
    apply_entries(requester_sessions, market, [entry_id])
    standin.app.state.fail_before["bonus_pay"] = [502]  # nothing paid, but the client cannot know
    relay = relay_of(requester_sessions, entry_id)
    assert apply_relays(requester_sessions, prolific).held == [relay.id]
    with session_scope(requester_sessions) as session:
        resolve_held(session, relay.id, paid=False)
        with pytest.raises(ValueError, match="not held"):
            resolve_held(session, relay.id, paid=False)
    apply_relays(requester_sessions, prolific)
    assert len(standin.app.state.paid) == 1 and len(standin.app.state.bonuses) == 1


def test_a_block_adds_the_participant_to_the_study_s_blocklist_group(
    requester_sessions: Any,
    market: Marketplace,
    standin: RunningStandin,
    prolific: ProlificClient,
    participant: Participant,
    study: Recruitment,
) -> None:
    (group_id,) = standin.app.state.groups  # made once at launch, before the study
    assert study.study_id is not None
    filters = standin.app.state.studies[study.study_id]["filters"]
    assert {"filter_id": "participant_group_blocklist", "selected_values": [group_id]} in filters
    entry_id = queue(requester_sessions, participant, "block")
    outcome = apply_entries(requester_sessions, market, [entry_id]).outcomes[entry_id]
    assert outcome == "block"  # the marketplace's block is applied as well
    standin.app.state.fail_before["members"] = [503, 503, 503, 503, 503]  # every retry of one round
    assert relay_of(requester_sessions, entry_id).id in apply_relays(requester_sessions, prolific).failures
    apply_relays(requester_sessions, prolific)
    assert standin.app.state.groups[group_id]["members"] == [participant.pid]
    assert relay_of(requester_sessions, entry_id).status == "done"
    assert len(standin.app.state.groups) == 1


def test_a_message_is_sent_through_prolific_once(
    requester_sessions: Any,
    market: Marketplace,
    standin: RunningStandin,
    prolific: ProlificClient,
    participant: Participant,
    study: Recruitment,
) -> None:
    entry_id = queue(requester_sessions, participant, "message")
    assert "relayed to Prolific" in apply_entries(requester_sessions, market, [entry_id]).outcomes[entry_id]
    standin.app.state.fail_before["message"] = [429, 429, 429, 429, 429]  # throttled: sent nothing
    apply_relays(requester_sessions, prolific)
    assert standin.app.state.messages == []
    for _ in range(2):
        apply_relays(requester_sessions, prolific)
    (sent,) = standin.app.state.messages
    assert sent["recipient_id"] == participant.pid and sent["study_id"] == study.study_id
    assert "About your work" in sent["body"] and "Thank you!" in sent["body"]


def test_held_relays_are_listed_and_resolved_from_the_command_line(
    settings: Any,
    live_server: Any,
    requester: Any,
    requester_sessions: Any,
    market: Marketplace,
    standin: RunningStandin,
    prolific: ProlificClient,
    participant: Participant,
    study: Recruitment,
) -> None:
    entry_id = queue(requester_sessions, participant, "bonus")
    apply_entries(requester_sessions, market, [entry_id])
    standin.app.state.fail_after["bonus_pay"] = [504]
    env = cli_env(settings, live_server, requester, standin)
    runner = CliRunner()
    with session_scope(requester_sessions) as session:
        name = session.get(Campaign, participant.campaign_id).name  # type: ignore[union-attr]
    synced = runner.invoke(main, ["recruit", "sync", name], env=env)
    assert synced.exit_code == 0 and "1 held" in synced.output, synced.output
    relay = relay_of(requester_sessions, entry_id)
    listed = runner.invoke(main, ["recruit", "held", name], env=env)
    assert f"relay {relay.id}: bonus to participant {participant.pid}" in listed.output, listed.output
    assert relay.setup_id is not None and relay.setup_id in listed.output
    resolved = runner.invoke(main, ["recruit", "resolve", str(relay.id), "--done"], env=env)
    assert resolved.exit_code == 0, resolved.output
    assert runner.invoke(main, ["recruit", "held", name], env=env).output.strip() == "nothing held"
    assert runner.invoke(main, ["recruit", "sync", name], env=env).exit_code == 0
    assert len(standin.app.state.paid) == 1
    again = runner.invoke(main, ["recruit", "resolve", str(relay.id), "--not-done"], env=env)
    assert again.exit_code == 2 and "not held" in again.output
