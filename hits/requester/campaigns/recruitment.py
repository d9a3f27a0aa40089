"""A campaign's study on a recruiting platform: created after its HITs, once, and published.

``launch_study`` is safe to run again after any interruption: the row
(``rq_recruitments``) is written before the platform is called, the study is
created under hitforge's own internal name and found by it when the answer
to a creation was lost, and a study already published is not published
again. A launch stopped between creating and publishing resumes on the same
study; no second study is ever made.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from urllib.parse import urlencode

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hits.db import call_after_commit, session_scope, utcnow
from hits.requester.files.campaign import CampaignSpec
from hits.requester.files.recruit import RecruitSpec, places_needed, study_filters
from hits.requester.quality.followups import OverBudget, check_budget
from hits.requester.quality.platform_bonus import BonusCurrencyError, study_cost_in_dollars
from hits.requester.recruit.base import CompletionCode, Recruiter, RecruitError, Study, StudyDraft
from hits.requester.recruit.groups import (
    block_group_name,
    ensure_block_group,
    ensure_mirror_groups,
    plan_mirror_groups,
)
from hits.requester.recruit.mirroring import queue_standing_grants
from hits.requester.recruit.outbox import apply_decisions, decide_places
from hits.requester.recruit.panel_identity import SIGNATURE_PARAMETER, entry_signature
from hits.requester.recruit.relay import apply_relays
from hits.requester.recruit.sync import sync_places
from hits.requester.tables.campaigns import Campaign, PublishedHIT
from hits.requester.tables.qualification import QualificationTest
from hits.requester.tables.recruiting import Recruitment

#: Where participants arrive on hitforge (the requester site's entry page).
ENTRY_PATH = "/recruit/prolific/enter"
#: Where a panel's participants arrive: this, then the recruitment's internal name.
PANEL_PATH = "/recruit/panel/"
#: Why a participant who found no task left is asked to return their place.
NO_WORK_REASON = "No task was left for you in this study: every HIT was already taken."


class StudyInterrupted(Exception):
    """Creating or publishing the study failed; what was done is recorded, and a resume goes on from it."""

    def __init__(self, campaign_name: str, step: str, cause: Exception):
        super().__init__(f"the Prolific study of campaign {campaign_name!r} was not {step}: {cause}")
        self.cause = cause


@dataclass(frozen=True)
class StudyReport:
    """What ``launch_study`` found and did."""

    study_id: str
    created: bool
    published: bool
    places: int


def stored_spec(campaign: Campaign) -> CampaignSpec:
    """The campaign file as stored with the campaign."""
    return CampaignSpec.model_validate({k: v for k, v in campaign.spec.items() if k != "media_path"})


def recruit_spec(campaign: Campaign) -> RecruitSpec | None:
    """The campaign's ``recruit:`` section, if it has one."""
    return stored_spec(campaign).recruit


def plan_recruitment(session: Session, campaign: Campaign) -> Recruitment | None:
    """The campaign's recruitment row, written once, before the platform hears of it.

    None for a campaign without a ``recruit`` section.
    """
    existing = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign.id))
    if existing is not None:
        return existing
    spec = stored_spec(campaign)
    if spec.recruit is None:
        return None
    hits = session.scalar(
        select(func.count()).select_from(PublishedHIT).where(PublishedHIT.campaign_id == campaign.id)
    )
    row = Recruitment(
        campaign_id=campaign.id,
        platform=spec.recruit.platform,
        internal_name=f"hitforge-c{campaign.id}-{secrets.token_hex(6)}",
        # Shown to the participant in the redirect; it proves nothing, hitforge decides each place itself.
        completion_code=spec.recruit.completion_code or secrets.token_hex(4).upper(),
        return_code=secrets.token_hex(4).upper(),
        partial_code=secrets.token_hex(4).upper() if spec.recruit.partial_payment else None,
        places=places_needed(spec.recruit, int(hits or 0), spec.assignments_per_hit),
        status="planned",
    )
    session.add(row)
    session.flush()
    return row


def mirrored_qualifications(session: Session, campaign: Campaign) -> dict[str, str]:
    """The qualification type ids the campaign mirrors to participant groups, with their names in the file.

    Each is a qualification test's name, or a qualification type id among the
    campaign's ``qualification_requirements``; anything else is refused
    (a typo would otherwise mirror nothing, silently).
    """
    recruit = recruit_spec(campaign)
    if recruit is None:
        return {}
    tests = dict(
        session.execute(select(QualificationTest.name, QualificationTest.qualification_type_id)).all()
    )
    required = {
        r.get("QualificationTypeId")
        for r in campaign.spec.get("qualification_requirements") or []
        if isinstance(r, dict)
    }
    found: dict[str, str] = {}
    for label in recruit.mirror_qualifications:
        type_id = tests.get(label) or (label if label in required else None)
        if type_id is None:
            raise ValueError(
                f"recruit.mirror_qualifications: {label!r} is neither a qualification test's name nor a "
                f"qualification type id in campaign {campaign.name!r}'s qualification_requirements"
            )
        found[type_id] = label
    return found


def study_draft(campaign: Campaign, row: Recruitment, entry_url: str) -> StudyDraft:
    """The study a campaign's recruitment asks for; ``entry_url`` carries the platform's placeholders."""
    recruit = recruit_spec(campaign)
    # A row exists only for campaigns with a recruit section; a Prolific one has both (validated).
    assert recruit is not None and recruit.reward is not None and recruit.estimated_minutes is not None
    return StudyDraft(
        title=recruit.title,
        description=recruit.description,
        internal_name=row.internal_name,
        entry_url=entry_url,
        reward=recruit.reward,
        estimated_minutes=recruit.estimated_minutes,
        places=row.places,
        completion_codes=(
            CompletionCode(row.completion_code, "COMPLETED"),
            CompletionCode(row.return_code, "OTHER", NO_WORK_REASON),
            *([CompletionCode(row.partial_code, "OTHER", partial_payment=True)] if row.partial_code else []),
        ),
        filters=tuple(study_filters(recruit.eligibility, row.block_group_id)),
    )


def launch_study(
    sessions: Callable[[], Session], recruiter: Recruiter, campaign_id: int, public_url: str
) -> StudyReport | None:
    """Create the campaign's study (once) and publish it; None when the campaign recruits nowhere.

    Four steps, each recorded before the next: the row, the study's
    blocklist participant group (found by its name when its creation's
    answer was lost), the study's id (a
    creation whose answer was lost is found by the internal name), the
    publication (a study the platform already shows published is only
    recorded). Raises ``StudyInterrupted`` on a platform error.
    """
    with session_scope(sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        if campaign is None:
            raise ValueError(f"campaign {campaign_id} does not exist")
        name = campaign.name
        row = plan_recruitment(session, campaign)
        if row is None:
            return None
        recruit = recruit_spec(campaign)
        if recruit is not None and recruit.mirror_qualifications:
            plan_mirror_groups(session, row, mirrored_qualifications(session, campaign))
        recruitment_id, internal_name, group_id = row.id, row.internal_name, row.block_group_id
        study_id = row.study_id
        if row.platform == "panel":
            raise ValueError(f"campaign {name!r} recruits on a panel: it has no study (open_panel)")
    try:
        if study_id is None and group_id is None:
            # The study's filters block this group, and filters cannot change once it is published:
            # the group exists first, empty; blocked participants are added to it later (relay.py).
            ensure_block_group(sessions, recruiter, recruitment_id, block_group_name(internal_name))
        # The groups mirroring the campaign's qualifications, made once (planned with the row).
        ensure_mirror_groups(sessions, recruiter, recruitment_id)
    except RecruitError as exc:
        raise StudyInterrupted(name, "created", exc) from exc
    if study_id is None:
        _count_study_cost(sessions, recruiter, campaign_id)
    with session_scope(sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign_id))
        assert campaign is not None and row is not None
        draft = study_draft(campaign, row, recruiter.entry_url(public_url.rstrip("/") + ENTRY_PATH))
        study_id, status = row.study_id, row.status
        if study_id is None and status == "planned":
            row.status = "creating"  # committed before the call: a lost answer is looked for next time
    created = False
    try:
        if study_id is None:
            found = recruiter.find_study(draft.internal_name) if status == "creating" else None
            study = found or recruiter.create_study(draft)
            created = found is None
            _record(sessions, campaign_id, study_id=study.id, status="created")
            study_id, status = study.id, "created"
    except RecruitError as exc:
        raise StudyInterrupted(name, "created", exc) from exc
    published = False
    if status == "created":
        try:
            study = recruiter.get_study(study_id)
            if study.status == "UNPUBLISHED":
                study = recruiter.transition_study(study_id, "PUBLISH")
                published = True
        except RecruitError as exc:
            raise StudyInterrupted(name, "published", exc) from exc
        _record(sessions, campaign_id, status="published", published=True)
    return StudyReport(study_id, created, published, draft.places)


def _count_study_cost(sessions: Callable[[], Session], recruiter: Recruiter, campaign_id: int) -> None:
    """Count the study's rewards and Prolific's fees in the campaign's budget, once, before it exists.

    Prolific computes the cost (``study_cost``: fees and VAT at the
    account's own rates); it is converted to dollars with the campaign's
    exchange rate and checked against what the budget has left, under the
    campaign's lock. A study that does not fit is not created
    (``StudyInterrupted``: raise the budget, then resume the launch).
    """
    with session_scope(sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign_id))
        recruit = recruit_spec(campaign) if campaign is not None else None
        assert campaign is not None and row is not None and recruit is not None and recruit.reward is not None
        if row.study_cost is not None:
            return  # counted by a launch that stopped later
        name, places, reward = campaign.name, row.places, recruit.reward
    try:
        total = recruiter.study_cost(reward, places)  # no transaction open during the call
    except RecruitError as exc:
        raise StudyInterrupted(name, "created", exc) from exc
    with session_scope(sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign_id))
        assert campaign is not None and row is not None
        try:
            cost = study_cost_in_dollars(name, recruit, total)
            check_budget(
                session,
                campaign,
                cost,
                f"its Prolific study ({places} places at {reward / 100:.2f} {recruit.currency}, "
                f"{total:.2f} {recruit.currency} with Prolific's fees)",
            )
        except (BonusCurrencyError, OverBudget) as exc:
            raise StudyInterrupted(name, "created", exc) from exc
        row.study_cost = cost


def _record(
    sessions: Callable[[], Session],
    campaign_id: int,
    *,
    status: str,
    study_id: str | None = None,
    published: bool = False,
) -> None:
    with session_scope(sessions) as session:
        row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign_id))
        assert row is not None
        if study_id is not None:
            row.study_id = study_id
        row.status = status
        if published:
            row.published_at = utcnow()


def open_panel(sessions: Callable[[], Session], campaign_id: int, public_url: str) -> tuple[str, int] | None:
    """Open a panel campaign's entry link (no API: the row says it is open); the link and its places.

    None when the campaign recruits on no panel. Safe to run again.
    """
    with session_scope(sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        if campaign is None:
            raise ValueError(f"campaign {campaign_id} does not exist")
        row = plan_recruitment(session, campaign)
        recruit = recruit_spec(campaign)
        if row is None or recruit is None or row.platform != "panel":
            return None
        if row.status == "planned":
            row.status, row.published_at = "published", utcnow()
        return panel_link(public_url, row, recruit.id_parameter or ""), row.places


def panel_link(public_url: str, row: Recruitment, id_parameter: str) -> str:
    """The entry link a panel sends its participants to; ``ID`` stands for the panel's own placeholder."""
    return f"{public_url.rstrip('/')}{PANEL_PATH}{row.internal_name}?{id_parameter}=ID"


def signed_panel_link(
    public_url: str, row: Recruitment, id_parameter: str, participant_id: str, secret_key: str
) -> str:
    """A participant's own entry link (``recruit.signed_links``): their id and its signature."""
    query = urlencode(
        {
            id_parameter: participant_id,
            SIGNATURE_PARAMETER: entry_signature(secret_key, row.internal_name, participant_id),
        }
    )
    return f"{public_url.rstrip('/')}{PANEL_PATH}{row.internal_name}?{query}"


def recruitment_of(session: Session, campaign_name: str) -> tuple[Campaign, Recruitment | None]:
    """A campaign by name and its recruitment row (None before its study was planned)."""
    campaign = session.scalar(select(Campaign).where(Campaign.name == campaign_name))
    if campaign is None:
        raise ValueError(f"there is no campaign named {campaign_name!r}")
    return campaign, session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign.id))


def study_pending(session: Session, campaign_name: str) -> bool:
    """Whether a campaign recruits and its study is not published yet (a launch to resume)."""
    campaign = session.scalar(select(Campaign).where(Campaign.name == campaign_name))
    if campaign is None or recruit_spec(campaign) is None:
        return False
    row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign.id))
    return row is None or row.status in ("planned", "creating", "created")


def change_study(
    sessions: Callable[[], Session], recruiter: Recruiter, campaign_name: str, action: str
) -> Study:
    """PAUSE, START (resume) or STOP a campaign's published study, and record its state."""
    with session_scope(sessions) as session:
        _, row = recruitment_of(session, campaign_name)
        if row is None or row.study_id is None:
            raise ValueError(f"campaign {campaign_name!r} has no Prolific study")
        study_id = row.study_id
    study = recruiter.transition_study(study_id, action)
    state = {"PAUSE": "paused", "START": "published", "STOP": "stopped"}[action]
    _record(sessions, _campaign_id(sessions, campaign_name), status=state)
    return study


def _campaign_id(sessions: Callable[[], Session], name: str) -> int:
    with session_scope(sessions) as session:
        campaign, _ = recruitment_of(session, name)
        return campaign.id


@dataclass(frozen=True)
class SettleReport:
    """One round of settling a campaign's places: read, freed, decided, applied."""

    read: int
    freed: int
    queued: int
    applied: dict[int, str]
    failed: dict[int, str]
    #: Bonuses, blocks and messages relayed to the platform (relay id -> outcome), failed, held.
    relayed: dict[int, str] = field(default_factory=dict)
    relay_failed: dict[int, str] = field(default_factory=dict)
    relay_held: list[int] = field(default_factory=list)


def settle_places(
    sessions: Callable[[], Session],
    recruiter: Recruiter,
    campaign_id: int,
    send_outbox: Callable[[list[int]], object] | None = None,
) -> SettleReport:
    """Poll the study's places (every page), decide the finished ones, apply the decisions once each.

    What ``hitforge recruit sync`` runs. Places freed by polling keep any
    assignment still in progress until its deadline (the webhook frees them
    at once, through the marketplace). Grants the study's mirrored groups
    missed are queued as ``mirror`` outbox entries (``recruit/mirroring.py``);
    ``send_outbox`` is given their ids once that commits (without it, the
    outbox's resend sweep applies them).
    """
    polled = sync_places(sessions, recruiter, campaign_id)
    with session_scope(sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign_id))
        if campaign is None or row is None:
            raise ValueError(f"campaign {campaign_id} recruits nowhere")
        queued = decide_places(
            session, row.id, stored_spec(campaign).quality.rejection_feedback, partial_code=row.partial_code
        )
        recruitment_id = row.id
        mirrors = queue_standing_grants(session, row)
        if mirrors and send_outbox is not None:
            call_after_commit(session, partial(send_outbox, mirrors))
    applied = apply_decisions(sessions, recruiter)
    relayed = apply_relays(sessions, recruiter, recruitment_id)
    return SettleReport(
        polled.read,
        len(polled.freed),
        len(queued),
        applied.outcomes,
        {k: str(v) for k, v in applied.failures.items()},
        relayed.outcomes,
        {k: str(v) for k, v in relayed.failures.items()},
        relayed.held,
    )


def recruiting_campaigns(session: Session) -> list[int]:
    """Campaigns whose study is out (published, paused or stopped): their places may need settling."""
    return list(
        session.scalars(
            select(Recruitment.campaign_id)
            .where(
                Recruitment.study_id.is_not(None), Recruitment.status.in_(("published", "paused", "stopped"))
            )
            .order_by(Recruitment.campaign_id)
        )
    )
