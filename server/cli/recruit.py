"""``hitforge recruit status|sync|pause|resume|stop CAMPAIGN``: a campaign's study on Prolific.

Also what ``hitforge launch`` calls once a recruiting campaign's HITs are
published: create the study (once) and publish it.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

import click
from rich.console import Console

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from hits.requester.recruit.base import Recruiter
    from hits.requester.tables.campaigns import Campaign
    from hits.settings import Settings

console = Console()


def _fail(message: str, code: int = 2) -> NoReturn:
    console.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    sys.exit(code)


def recruiter_for(settings: Settings) -> Recruiter:
    """The Prolific client of the settings; exits with a clear message when there is no token."""
    from hits.requester.recruit.base import RecruitError
    from hits.requester.recruit.prolific.client import ProlificClient

    try:
        return ProlificClient.from_settings(settings)
    except RecruitError as exc:
        _fail(str(exc))


def resume_target(session: Session, name: str) -> tuple[Campaign, bool]:
    """The campaign a ``launch --resume`` goes on with, and whether only its study is left to launch."""
    from hits.requester.campaigns.recruitment import recruitment_of, study_pending
    from hits.requester.campaigns.service import campaign_to_resume, unpublished_count

    try:
        campaign, _ = recruitment_of(session, name)
    except ValueError:
        return campaign_to_resume(session, name), False
    if study_pending(session, name) and not unpublished_count(session, campaign.id):
        return campaign, True
    return campaign_to_resume(session, name), False


def launch_recruiting(
    sessions: Callable[[], Session], settings: Settings, campaign_id: int, name: str
) -> None:
    """Create and publish the campaign's study when it recruits; print what was done."""
    from hits.db import session_scope
    from hits.requester.campaigns.recruitment import StudyInterrupted, launch_study, recruit_spec
    from hits.requester.tables.campaigns import Campaign

    with session_scope(sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        spec = recruit_spec(campaign) if campaign is not None else None
        if spec is None:
            return
    if spec.platform == "panel":
        _open_panel(sessions, settings, campaign_id)
        return
    recruiter = recruiter_for(settings)
    try:
        report = launch_study(sessions, recruiter, campaign_id, settings.public_url)
    except StudyInterrupted as exc:
        _fail(f"{exc}\nFix the cause, then finish with: hitforge launch --resume {name}", 1)
    assert report is not None
    verb = "created and published" if report.created else "published"
    console.print(
        f"[green]Prolific study {report.study_id} {verb}[/green] ({report.places} places)", highlight=False
    )


def _open_panel(sessions: Callable[[], Session], settings: Settings, campaign_id: int) -> None:
    """Open a panel campaign's entry link (no API call) and print it for the panel."""
    from hits.requester.campaigns.recruitment import open_panel

    opened = open_panel(sessions, campaign_id, settings.public_url)
    assert opened is not None
    link, places = opened
    console.print(
        f"[green]panel entry link open[/green] ({places} places): {link}", highlight=False, soft_wrap=True
    )
    console.print(
        "Give the panel this link, with ID replaced by its placeholder for the participant's id.",
        highlight=False,
        soft_wrap=True,
    )


def _campaign_study(name: str) -> tuple[Any, Any]:
    from hits.db import session_scope
    from hits.requester.campaigns.recruitment import recruitment_of
    from hits.settings import load_settings
    from server.cli.sessions import open_sessions

    settings = load_settings()
    with session_scope(open_sessions("requester", settings)) as session:
        try:
            _, row = recruitment_of(session, name)
        except ValueError as exc:
            _fail(str(exc))
        if row is None or row.study_id is None:
            _fail(f"campaign {name!r} has no Prolific study")
        session.expunge(row)
    return settings, row


@click.group()
def recruit() -> None:
    """Recruiting on Prolific: a campaign's study, its places, pause, resume and stop."""


@recruit.command()
@click.argument("campaign")
def status(campaign: str) -> None:
    """The campaign's study: its state, places and submissions by status (every page read)."""
    from hits.requester.recruit.base import RecruitError

    settings, row = _campaign_study(campaign)
    recruiter = recruiter_for(settings)
    try:
        study = recruiter.get_study(row.study_id)
        counts = Counter(s.status for s in recruiter.submissions(row.study_id))
    except RecruitError as exc:
        _fail(str(exc), 1)
    console.print(
        f"study {study.id}: {study.status} ({row.status} here), {study.places} places", highlight=False
    )
    for state, count in sorted(counts.items()):
        console.print(f"  {state}: {count}", highlight=False)
    _print_money(campaign)
    _print_groups(row.id)


def _print_money(name: str) -> None:
    """What the study cost the budget and what Prolific has paid, from hitforge's records."""
    from hits.db import session_scope
    from hits.requester.campaigns.recruitment import recruit_spec, recruitment_of
    from hits.requester.recruit.summary import study_summary
    from hits.settings import load_settings
    from server.cli.sessions import open_sessions

    with session_scope(open_sessions("requester", load_settings())) as session:
        campaign, _ = recruitment_of(session, name)
        recruit = recruit_spec(campaign)
        summary = study_summary(session, campaign.id, recruit.reward, recruit.currency) if recruit else None
    if summary is None:
        return
    counted = f"${summary.study_cost}" if summary.study_cost is not None else "not counted (launched before)"
    held = f", {summary.bonuses_held} held" if summary.bonuses_held else ""
    console.print(
        f"  money: the study counted {counted} in the budget; rewards approved "
        f"{summary.rewards_approved} {summary.currency or ''}, bonuses paid {summary.bonuses_paid} "
        f"{summary.currency or ''}{held}",
        highlight=False,
        soft_wrap=True,
    )


def _print_groups(recruitment_id: int) -> None:
    """The participant groups mirroring the campaign's qualifications, with the ids a later study allows."""
    from hits.db import session_scope
    from hits.requester.recruit.groups import mirror_groups
    from hits.settings import load_settings
    from server.cli.sessions import open_sessions

    with session_scope(open_sessions("requester", load_settings())) as session:
        for group in mirror_groups(session, recruitment_id):
            made = group.group_id or "not made yet: hitforge launch --resume makes it"
            console.print(f"  group mirroring {group.label}: {made} ({group.name})", highlight=False)


def _change(campaign: str, action: str, done: str) -> None:
    from hits.requester.campaigns.recruitment import change_study
    from hits.requester.recruit.base import RecruitError
    from server.cli.sessions import open_sessions

    settings, _ = _campaign_study(campaign)
    try:
        study = change_study(open_sessions("requester", settings), recruiter_for(settings), campaign, action)
    except (RecruitError, ValueError) as exc:
        _fail(str(exc), 1)
    console.print(f"study {study.id} {done}: {study.status}", highlight=False)


@recruit.command()
@click.argument("campaign")
def pause(campaign: str) -> None:
    """Pause the study: no new participants until it is resumed."""
    _change(campaign, "PAUSE", "paused")


@recruit.command()
@click.argument("campaign")
def resume(campaign: str) -> None:
    """Open a paused study to participants again."""
    _change(campaign, "START", "resumed")


@recruit.command()
@click.argument("campaign")
def stop(campaign: str) -> None:
    """Stop the study for good; places taken are still decided and paid."""
    _change(campaign, "STOP", "stopped")


@recruit.command()
@click.argument("campaign")
def sync(campaign: str) -> None:
    """Read every place of the study, decide finished places from hitforge's verdicts, apply them once."""
    from hits.db import session_scope
    from hits.requester.campaigns.recruitment import recruitment_of, settle_places
    from hits.requester.recruit.base import RecruitError
    from server.cli.sessions import open_sessions

    settings, _ = _campaign_study(campaign)
    sessions = open_sessions("requester", settings)
    with session_scope(sessions) as session:
        campaign_id = recruitment_of(session, campaign)[0].id
    try:
        report = settle_places(sessions, recruiter_for(settings), campaign_id)
    except RecruitError as exc:
        _fail(str(exc), 1)
    console.print(
        f"{report.read} places read, {report.freed} freed, {report.queued} decided, "
        f"{len(report.applied)} applied, {len(report.failed)} failed (kept for the next sync)",
        highlight=False,
    )
    for entry_id, error in sorted(report.failed.items()):
        console.print(f"  [red]entry {entry_id}:[/red] {error}", highlight=False, soft_wrap=True)
    console.print(
        f"{len(report.relayed)} bonuses, blocks and messages relayed, {len(report.relay_failed)} failed "
        f"(kept for the next sync), {len(report.relay_held)} held",
        highlight=False,
        soft_wrap=True,
    )
    if report.relay_held:
        console.print(f"  see: hitforge recruit held {campaign}", highlight=False)


@recruit.command()
@click.argument("campaign")
def held(campaign: str) -> None:
    """Bonuses and messages whose call to Prolific may or may not have been carried out: a person checks."""
    from hits.db import session_scope
    from hits.requester.recruit.relay import held_relays
    from server.cli.sessions import open_sessions

    settings, row = _campaign_study(campaign)
    with session_scope(open_sessions("requester", settings)) as session:
        rows = held_relays(session, row.id)
        if not rows:
            console.print("nothing held", highlight=False)
        for relay in rows:
            what = ", ".join(f"{k} {v}" for k, v in sorted(relay.payload.items()))
            console.print(
                f"relay {relay.id}: {relay.action} to participant {relay.participant_id} ({what}); "
                f"Prolific set-up {relay.setup_id or '-'}; {relay.last_error or ''}",
                highlight=False,
                soft_wrap=True,
            )
    if rows:
        console.print(
            "Check each on Prolific (the study's bonus payments and messages), then: "
            "hitforge recruit resolve RELAY --done, or --not-done to have it made again.",
            highlight=False,
            soft_wrap=True,
        )


@recruit.command()
@click.argument("relay_id", type=int)
@click.option("--done/--not-done", required=True, help="Whether Prolific carried it out, as you checked.")
def resolve(relay_id: int, done: bool) -> None:
    """A person's answer about a held relay: carried out on Prolific, or to be made again."""
    from hits.db import session_scope
    from hits.requester.recruit.relay import resolve_held
    from hits.settings import load_settings
    from server.cli.sessions import open_sessions

    with session_scope(open_sessions("requester", load_settings())) as session:
        try:
            relay = resolve_held(session, relay_id, paid=done)
        except ValueError as exc:
            _fail(str(exc))
        console.print(f"relay {relay_id}: {relay.outcome}", highlight=False)
