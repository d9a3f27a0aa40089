"""Qualifications mirrored to participant groups, Prolific's bonus fee and currency, relays sent at once.

End to end as ``test_relays``: a participant enters through the study URL on
a real server and works a HIT; a reviewer's grant, revocation or bonus goes
through the requester's outbox, which hands it over to a relay.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from demo.data import write_rating_demo
from hits.db import session_scope
from hits.requester.campaigns.recruitment import launch_study
from hits.requester.mturk import Marketplace
from hits.requester.quality import staff_actions
from hits.requester.quality.outbox import apply_entries
from hits.requester.recruit.prolific.client import ProlificClient
from hits.requester.recruit.prolific.standin import RunningStandin
from hits.requester.recruit.relay import apply_relays
from hits.requester.tables.campaigns import Campaign, OutboxEntry, Submission
from hits.requester.tables.recruiting import RecruitGroup, Recruitment, RecruitRelay
from server.cli.main import main
from server.requester.recruit_pages import RECRUITER_EXTENSION
from tests.helpers import publish_campaign_file, rating_campaign_spec
from tests.recruit.test_cli import cli_env
from tests.recruit.test_launch_study import RECRUIT
from tests.recruit.test_relays import Participant, participant, relay_of, staff_id

__all__ = ["participant"]  # the fixture, shared with the relay tests

#: The recruit section each test's campaign adds to RECRUIT (by the test's name).
EXTRA: dict[str, dict[str, Any]] = {
    "gbp": {"currency": "GBP", "exchange_rate": "0.8"},
    "cheap_fee": {"bonus_fee_rate": "0.1"},
}


@pytest.fixture
def study(
    tmp_path: Path,
    market: Marketplace,
    requester_sessions: Any,
    live_server: Any,
    prolific: ProlificClient,
    request: pytest.FixtureRequest,
) -> Iterator[Recruitment]:
    """A published recruiting campaign mirroring one qualification (of its requirements) to a group."""
    name = f"rc-groups-{secrets.token_hex(4)}"
    type_id = market.ensure_qualification_type(f"passed-{name}", "Passed the screening.")
    extra = next((v for k, v in EXTRA.items() if request.node.name.endswith(f"[{k}]")), {})
    recruit = {**RECRUIT, "mirror_qualifications": [type_id], **extra}
    recruit = {k: v for k, v in recruit.items() if v is not None}
    write_rating_demo(tmp_path, items=6, gold=4, seed=1)
    spec = rating_campaign_spec(name, recruit=recruit)
    spec["qualification_requirements"] = [{"QualificationTypeId": type_id, "Comparator": "DoesNotExist"}]
    campaign_id = publish_campaign_file(tmp_path, spec, market, requester_sessions, live_server.url)
    launch_study(requester_sessions, prolific, campaign_id, live_server.url)
    app = live_server.server.app
    app.extensions[RECRUITER_EXTENSION] = prolific
    with session_scope(requester_sessions) as session:
        row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign_id))
        assert row is not None
        session.expunge(row)
    yield row
    app.extensions.pop(RECRUITER_EXTENSION, None)


def change(requester_sessions: Any, who: Participant, how: staff_actions.QualificationChange) -> int:
    """A reviewer grants (score 1) or revokes the mirrored qualification; the outbox entry's id."""
    staff = staff_id(requester_sessions)
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, who.campaign_id)
        assert campaign is not None
        (type_id,) = [r["QualificationTypeId"] for r in campaign.spec["qualification_requirements"]]
        done = staff_actions.change_qualification(
            session, campaign, who.worker_id, how, type_id, 1, staff, "", secrets.token_hex(8)
        )
        (entry_id,) = done.entry_ids
        return entry_id


def bonus(requester_sessions: Any, who: Participant, amount: str = "0.50") -> int:
    staff = staff_id(requester_sessions)
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, who.campaign_id)
        submission = session.scalar(select(Submission).where(Submission.assignment_id == who.assignment_id))
        assert campaign is not None and submission is not None
        done = staff_actions.send_bonus(
            session, campaign, submission, Decimal(amount), "Careful work", staff, "", secrets.token_hex(8)
        )
        (entry_id,) = done.entry_ids
        return entry_id


def test_a_granted_qualification_joins_the_mirror_group_and_a_revoked_one_leaves_it(
    requester_sessions: Any,
    market: Marketplace,
    standin: RunningStandin,
    prolific: ProlificClient,
    participant: Participant,
    study: Recruitment,
) -> None:
    with session_scope(requester_sessions) as session:
        (mirror,) = session.scalars(select(RecruitGroup).where(RecruitGroup.recruitment_id == study.id))
        group_id, group_name = mirror.group_id, mirror.name
    assert group_id in standin.app.state.groups and group_name == f"{study.internal_name} {mirror.label}"
    assert len(standin.app.state.groups) == 2  # the blocklist and the mirror, made once at launch

    sent: list[list[int]] = []
    granted = change(requester_sessions, participant, "grant")
    outcome = apply_entries(requester_sessions, market, [granted], send_relays=sent.append)
    assert outcome.outcomes[granted] == "qualify"  # granted on the marketplace as well
    joined = relay_of(requester_sessions, granted)
    assert joined.action == "group_add" and sent == [[joined.id]]
    apply_relays(requester_sessions, prolific, relay_ids=[joined.id])
    assert standin.app.state.groups[group_id]["members"] == [participant.pid]

    revoked = change(requester_sessions, participant, "revoke")
    apply_entries(requester_sessions, market, [revoked], send_relays=sent.append)
    left = relay_of(requester_sessions, revoked)
    assert left.action == "group_remove"
    standin.app.state.fail_before["members"] = [503] * 5  # one round's every retry: tried again later
    assert left.id in apply_relays(requester_sessions, prolific).failures
    apply_relays(requester_sessions, prolific)
    assert standin.app.state.groups[group_id]["members"] == []
    assert relay_of(requester_sessions, revoked).status == "done"


def test_launching_again_makes_no_second_mirror_group(
    requester_sessions: Any,
    standin: RunningStandin,
    prolific: ProlificClient,
    study: Recruitment,
    live_server: Any,
) -> None:
    with session_scope(requester_sessions) as session:
        session.execute(
            RecruitGroup.__table__.update()
            .where(RecruitGroup.recruitment_id == study.id)
            .values(group_id=None)
        )
    # The group's creation answer was lost: found by its name, not made again.
    launch_study(requester_sessions, prolific, study.campaign_id, live_server.url)
    assert len(standin.app.state.groups) == 2


def test_the_relay_task_is_sent_only_after_the_claim_commits(
    requester_sessions: Any, market: Marketplace, participant: Participant
) -> None:
    seen: list[tuple[list[int], bool]] = []

    def send(relay_ids: list[int]) -> None:
        # The task's worker reads the rows: they must be committed when it is sent.
        with session_scope(requester_sessions) as session:
            seen.append((relay_ids, session.get(RecruitRelay, relay_ids[0]) is not None))

    entry_id = bonus(requester_sessions, participant)
    apply_entries(requester_sessions, market, [entry_id], send_relays=send)
    assert seen == [([relay_of(requester_sessions, entry_id).id], True)]
    apply_entries(requester_sessions, market, [entry_id], send_relays=send)
    assert len(seen) == 1  # handed over once, sent once


@pytest.mark.parametrize("variant", ["usd", "cheap_fee"])
def test_a_bonus_counts_prolific_s_fee_and_is_not_paid_when_prolific_would_take_more(
    variant: str,
    requester_sessions: Any,
    market: Marketplace,
    standin: RunningStandin,
    prolific: ProlificClient,
    participant: Participant,
) -> None:
    entry_id = bonus(requester_sessions, participant)
    with session_scope(requester_sessions) as session:
        entry = session.get(OutboxEntry, entry_id)
        assert entry is not None
        payload = dict(entry.payload)
    if variant == "usd":
        # 0.50 with a third on top (0.3334), rounded up: not the marketplace's 20%.
        assert (
            payload["cost"] == "0.67" and payload["pay_amount"] == "0.50" and payload["pay_currency"] == "USD"
        )
        apply_entries(requester_sessions, market, [entry_id])
        report = apply_relays(requester_sessions, prolific)
        (outcome,) = report.outcomes.values()
        assert "0.6667 USD with fees" in outcome and len(standin.app.state.paid) == 1
        return
    # The campaign counted a 10% fee; Prolific's set-up says it takes a third: nothing is paid.
    assert payload["cost"] == "0.55"
    apply_entries(requester_sessions, market, [entry_id])
    apply_relays(requester_sessions, prolific)
    relay = relay_of(requester_sessions, entry_id)
    assert relay.status == "refused" and "more than the 0.55 USD" in (relay.outcome or "")
    apply_relays(requester_sessions, prolific)
    assert standin.app.state.paid == [] and len(standin.app.state.bonuses) == 1


@pytest.mark.parametrize("variant", ["gbp"])
def test_a_bonus_in_another_currency_is_converted_when_queued(
    variant: str,
    requester_sessions: Any,
    market: Marketplace,
    standin: RunningStandin,
    prolific: ProlificClient,
    participant: Participant,
) -> None:
    entry_id = bonus(requester_sessions, participant)
    with session_scope(requester_sessions) as session:
        entry = session.get(OutboxEntry, entry_id)
        assert entry is not None
        # $0.50 at 0.8 is £0.40; with the fee £0.53336, counted as $0.67 (rounded up).
        assert entry.payload["pay_amount"] == "0.40" and entry.payload["pay_currency"] == "GBP"
        assert entry.payload["cost"] == "0.67"
    apply_entries(requester_sessions, market, [entry_id])
    apply_relays(requester_sessions, prolific)
    assert [p["amounts"] for p in standin.app.state.paid] == [{participant.pid: "0.40"}]


def test_recruit_status_prints_the_mirror_group_s_id_for_a_later_study(
    settings: Any,
    live_server: Any,
    requester: Any,
    requester_sessions: Any,
    standin: RunningStandin,
    study: Recruitment,
) -> None:
    with session_scope(requester_sessions) as session:
        (mirror,) = session.scalars(select(RecruitGroup).where(RecruitGroup.recruitment_id == study.id))
        name = session.get(Campaign, study.campaign_id).name  # type: ignore[union-attr]
        group_id, label = mirror.group_id, mirror.label
    env = cli_env(settings, live_server, requester, standin)
    shown = CliRunner().invoke(main, ["recruit", "status", name], env=env)
    assert shown.exit_code == 0 and f"group mirroring {label}: {group_id}" in shown.output, shown.output
