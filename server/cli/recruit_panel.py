"""``hitforge recruit links|codes CAMPAIGN``: a panel campaign's own links and codes per participant.

For panels whose campaign file sets ``recruit.signed_links`` or
``recruit.per_participant_codes`` (``hits/requester/recruit/panel_identity.py``).
Both print CSV on standard output, for a mail merge or a spreadsheet.
"""

from __future__ import annotations

import csv
import sys
from typing import Any, NoReturn

import click
from rich.console import Console

err = Console(stderr=True)


def _fail(message: str, code: int = 2) -> NoReturn:
    err.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    sys.exit(code)


def _panel(name: str) -> tuple[Any, Any, Any]:
    """The settings, the panel campaign's recruitment row and its recruit section; exits otherwise."""
    from hits.db import session_scope
    from hits.requester.campaigns.recruitment import recruit_spec, recruitment_of
    from hits.settings import load_settings
    from server.cli.sessions import open_sessions

    settings = load_settings()
    with session_scope(open_sessions("requester", settings)) as session:
        try:
            campaign, row = recruitment_of(session, name)
        except ValueError as exc:
            _fail(str(exc))
        recruit = recruit_spec(campaign)
        if recruit is None or recruit.platform != "panel" or row is None:
            _fail(f"campaign {name!r} recruits on no panel whose link is open (hitforge launch opens it)")
        session.expunge(row)
    return settings, row, recruit


@click.command()
@click.argument("campaign")
@click.argument("ids", type=click.File("r"), default="-")
def links(campaign: str, ids: Any) -> None:
    """Each participant's own entry link (recruit.signed_links): IDS is a file of ids, one per line."""
    from hits.requester.campaigns.recruitment import signed_panel_link
    from hits.requester.recruit.places import PANEL_ID

    settings, row, recruit = _panel(campaign)
    if not recruit.signed_links:
        _fail(
            f"campaign {campaign!r} does not sign its links: its open link takes any id "
            "(set recruit.signed_links: true in the campaign file before launching to give each their own)"
        )
    name = getattr(ids, "name", "-")
    wanted: list[str] = []
    for number, line in enumerate(ids, start=1):
        pid = line.strip()
        if not pid or pid.startswith("#"):
            continue
        if not PANEL_ID.fullmatch(pid):
            _fail(
                f"{name}, line {number}: {pid[:60]!r} is not an id the entry link accepts "
                "(letters and digits, and _ . - inside; 48 at most)"
            )
        wanted.append(pid)
    out = csv.writer(sys.stdout)
    out.writerow(["participant_id", "link"])
    for pid in dict.fromkeys(wanted):
        link = signed_panel_link(settings.public_url, row, recruit.id_parameter, pid, settings.secret_key)
        out.writerow([pid, link])


@click.command()
@click.argument("campaign")
def codes(campaign: str) -> None:
    """Each participant's own completion code (recruit.per_participant_codes), for those who took a place."""
    from sqlalchemy import select

    from hits.db import session_scope
    from hits.requester.recruit.panel_identity import participant_code
    from hits.requester.tables.recruiting import RecruitPlace
    from server.cli.sessions import open_sessions

    settings, row, recruit = _panel(campaign)
    if not recruit.per_participant_codes:
        _fail(f"campaign {campaign!r} gives every participant the same code: {row.completion_code}")
    out = csv.writer(sys.stdout)
    out.writerow(["participant_id", "code", "place"])
    with session_scope(open_sessions("requester", settings)) as session:
        places = session.execute(
            select(RecruitPlace.participant_id, RecruitPlace.status)
            .where(RecruitPlace.recruitment_id == row.id)
            .order_by(RecruitPlace.id)
        ).all()
    for pid, status in places:
        # "finished": the code was shown to them; any other place has not earned one yet.
        out.writerow([pid, participant_code(settings.secret_key, row.internal_name, pid), status])
