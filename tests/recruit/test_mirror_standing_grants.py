"""Grants a mirrored group missed at the moment they were applied reach it later, once.

End to end as ``test_recruit_groups_and_fees``: participants enter through
the study URL on a real server; grants go through the requester's outbox on
the real marketplace; relays reach the Prolific stand-in.
"""

from __future__ import annotations

import secrets
from typing import Any

import requests
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.campaigns.recruitment import settle_places
from hits.requester.mturk import Marketplace
from hits.requester.quality.outbox import apply_entries
from hits.requester.recruit.mirroring import queue_standing_grants
from hits.requester.recruit.prolific.client import ProlificClient
from hits.requester.recruit.prolific.standin import RunningStandin
from hits.requester.recruit.relay import apply_relays
from hits.requester.tables.campaigns import Campaign, OutboxEntry
from hits.requester.tables.recruiting import RecruitGroup, Recruitment, RecruitRelay
from tests.recruit.test_entry import enter
from tests.recruit.test_recruit_groups_and_fees import participant, study
from tests.recruit.test_relays import Participant, relay_of

__all__ = ["participant", "study"]  # the fixtures


def _mirror(requester_sessions: Any, study: Recruitment) -> tuple[int, str, str]:
    """The study's mirror group: its row id, its platform id, the qualification type it mirrors."""
    with session_scope(requester_sessions) as session:
        (row,) = session.scalars(select(RecruitGroup).where(RecruitGroup.recruitment_id == study.id))
        assert row.group_id is not None
        return row.id, row.group_id, row.qualification_type_id


def _grant(
    requester_sessions: Any, market: Marketplace, campaign_id: int, worker_id: str, type_id: str, value: int
) -> int:
    """A grant queued under ``campaign_id`` (as a qualification test's grading queues it) and applied."""
    with session_scope(requester_sessions) as session:
        entry = OutboxEntry(
            campaign_id=campaign_id,
            action="qualify",
            target=f"{type_id}:{worker_id}:{secrets.token_hex(4)}",
            payload={"qualification_type_id": type_id, "worker_id": worker_id, "value": value},
        )
        session.add(entry)
        session.flush()
        entry_id = entry.id
    assert apply_entries(requester_sessions, market, [entry_id]).outcomes[entry_id] in ("qualify", "skipped")
    return entry_id


def _test_anchor(requester_sessions: Any, market: Marketplace) -> int:
    """A qualification test's placeholder campaign (``qualification.service._anchor_campaign``)."""
    with session_scope(requester_sessions) as session:
        anchor = Campaign(
            name=f"qualification-test-{secrets.token_hex(4)}",
            template="qualification",
            spec={},
            budget=0,
            status="qualification",
            access_key_id=market.access_key_id,
        )
        session.add(anchor)
        session.flush()
        return anchor.id


def _without_group(requester_sessions: Any, group_row_id: int, group_id: str | None) -> None:
    with session_scope(requester_sessions) as session:
        row = session.get(RecruitGroup, group_row_id)
        assert row is not None
        row.group_id = group_id


def _mirror_entries(requester_sessions: Any, campaign_id: int) -> list[OutboxEntry]:
    with session_scope(requester_sessions) as session:
        rows = list(
            session.scalars(
                select(OutboxEntry).where(
                    OutboxEntry.campaign_id == campaign_id, OutboxEntry.action == "mirror"
                )
            )
        )
        session.expunge_all()
        return rows


def test_a_qualification_test_s_grant_joins_the_group_of_the_study_the_taker_holds_a_place_in(
    requester_sessions: Any,
    market: Marketplace,
    standin: RunningStandin,
    prolific: ProlificClient,
    participant: Participant,
    study: Recruitment,
) -> None:
    _, group_id, type_id = _mirror(requester_sessions, study)
    anchor = _test_anchor(requester_sessions, market)
    sent: list[list[int]] = []
    with session_scope(requester_sessions) as session:
        entry = OutboxEntry(
            campaign_id=anchor,
            action="qualify",
            target=f"{type_id}:{participant.worker_id}:1",
            payload={"qualification_type_id": type_id, "worker_id": participant.worker_id, "value": 1},
        )
        session.add(entry)
        session.flush()
        granted = entry.id
    outcome = apply_entries(requester_sessions, market, [granted], send_relays=sent.append)
    assert outcome.outcomes[granted] == "qualify"  # the marketplace is granted it too
    joined = relay_of(requester_sessions, granted)
    assert joined.action == "group_add" and joined.recruitment_id == study.id and sent == [[joined.id]]
    apply_relays(requester_sessions, prolific, relay_ids=[joined.id])
    assert standin.app.state.groups[group_id]["members"] == [participant.pid]


def test_a_grant_applied_before_the_group_was_made_joins_it_at_the_next_settling_once(
    requester_sessions: Any,
    market: Marketplace,
    standin: RunningStandin,
    prolific: ProlificClient,
    participant: Participant,
    study: Recruitment,
) -> None:
    row_id, group_id, type_id = _mirror(requester_sessions, study)
    _without_group(requester_sessions, row_id, None)  # not made yet (added on a re-launch)
    granted = _grant(requester_sessions, market, study.campaign_id, participant.worker_id, type_id, 1)
    with session_scope(requester_sessions) as session:
        assert session.scalar(select(RecruitRelay).where(RecruitRelay.outbox_entry_id == granted)) is None
    _without_group(requester_sessions, row_id, group_id)  # made now

    sent: list[list[int]] = []
    settle_places(requester_sessions, prolific, study.campaign_id, send_outbox=sent.append)
    (mirror,) = _mirror_entries(requester_sessions, study.campaign_id)
    assert sent == [[mirror.id]] and mirror.payload["grant_entry_id"] == granted
    settle_places(requester_sessions, prolific, study.campaign_id, send_outbox=sent.append)
    assert len(_mirror_entries(requester_sessions, study.campaign_id)) == 1  # asked twice, queued once

    outcome = apply_entries(requester_sessions, market, [mirror.id])
    assert "relayed to Prolific" in outcome.outcomes[mirror.id]  # never a marketplace call
    apply_relays(requester_sessions, prolific, relay_ids=[relay_of(requester_sessions, mirror.id).id])
    assert standin.app.state.groups[group_id]["members"] == [participant.pid]
    with session_scope(requester_sessions) as session:
        recruitment = session.get(Recruitment, study.id)
        assert recruitment is not None
        assert queue_standing_grants(session, recruitment) == []  # mirrored: nothing more to do


def test_a_participant_granted_before_taking_a_place_joins_when_they_enter_and_leaves_when_revoked(
    requester_sessions: Any,
    market: Marketplace,
    live_server: Any,
    standin: RunningStandin,
    prolific: ProlificClient,
    participant: Participant,
    study: Recruitment,
) -> None:
    row_id, group_id, type_id = _mirror(requester_sessions, study)
    _without_group(requester_sessions, row_id, None)
    _grant(requester_sessions, market, study.campaign_id, participant.worker_id, type_id, 1)
    _without_group(requester_sessions, row_id, group_id)
    assert study.study_id is not None
    # The same participant takes a second place: the entry queues the grant its group missed.
    session_id = standin.app.take_place(study.study_id, participant.pid)
    arrived = enter(
        live_server.url,
        requests.Session(),
        PROLIFIC_PID=participant.pid,
        STUDY_ID=study.study_id,
        SESSION_ID=session_id,
    )
    assert arrived.status_code == 302, arrived.text
    (mirror,) = _mirror_entries(requester_sessions, study.campaign_id)
    assert mirror.payload["value"] == 1
    apply_entries(requester_sessions, market, [mirror.id])
    apply_relays(requester_sessions, prolific)
    assert standin.app.state.groups[group_id]["members"] == [participant.pid]

    # Revoked while the group could not hear of it: the next settling takes them out.
    _without_group(requester_sessions, row_id, None)
    with session_scope(requester_sessions) as session:
        revoke = OutboxEntry(
            campaign_id=study.campaign_id,
            action="revoke",
            target=f"revoke-{secrets.token_hex(4)}",
            payload={"qualification_type_id": type_id, "worker_id": participant.worker_id},
        )
        session.add(revoke)
        session.flush()
        revoke_id = revoke.id
    apply_entries(requester_sessions, market, [revoke_id])
    _without_group(requester_sessions, row_id, group_id)
    settle_places(requester_sessions, prolific, study.campaign_id)
    removal = [e for e in _mirror_entries(requester_sessions, study.campaign_id) if e.id != mirror.id]
    assert [e.payload["value"] for e in removal] == [0]
    apply_entries(requester_sessions, market, [removal[0].id])
    apply_relays(requester_sessions, prolific)
    assert standin.app.state.groups[group_id]["members"] == []


def test_a_failed_test_of_someone_who_never_held_it_queues_nothing(
    requester_sessions: Any,
    market: Marketplace,
    prolific: ProlificClient,
    participant: Participant,
    study: Recruitment,
) -> None:
    row_id, group_id, type_id = _mirror(requester_sessions, study)
    _without_group(requester_sessions, row_id, None)
    _grant(
        requester_sessions,
        market,
        _test_anchor(requester_sessions, market),
        participant.worker_id,
        type_id,
        0,
    )
    _without_group(requester_sessions, row_id, group_id)
    settle_places(requester_sessions, prolific, study.campaign_id)
    assert _mirror_entries(requester_sessions, study.campaign_id) == []
