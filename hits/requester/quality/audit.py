"""The QA audit log: who decided what, when, on which assignments, why, and on what evidence.

One row per decision a person made on the dashboard (``qa_review`` writes them),
browsable by campaign, worker and reviewer within the campaigns a user may see,
and exportable as CSV. Reads only.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from hits.requester.tables.campaigns import Campaign, ReviewAction, StaffUser

PER_PAGE = 100
#: What each recorded action means, in words.
ACTION_WORDS = {
    "confirm": "confirmed the flag (held work rejected)",
    "clear": "cleared the flag (held work approved)",
    "approve": "approved",
    "reject": "rejected",
    "override": "approved a rejected assignment after all",
    "spot check agree": "spot check: agreed with the approval",
    "spot check disagree": "spot check: disagreed with the approval (it stays approved)",
    "bonus": "sent a bonus",
    "block": "blocked the worker",
    "unblock": "lifted the worker's block",
    "grant": "granted a qualification",
    "revoke": "revoked a qualification",
    "restore": "restored a qualification",
    "message": "sent the worker a message",
    "campaign pause": "paused the campaign",
    "campaign resume": "resumed the campaign",
    "campaign cancel": "cancelled the campaign",
    "campaign extend": "extended the campaign's HITs",
    "campaign budget": "changed the campaign's budget",
    "relay recorded as done": "recorded a held relay as carried out on Prolific",
    "relay recorded as not done": "recorded a held relay as not carried out on Prolific (tried again)",
}
CSV_COLUMNS = ("when", "reviewer", "campaign", "worker", "action", "assignments", "why", "evidence_sha256")


@dataclass(frozen=True)
class AuditRow:
    """One decision, by name."""

    when: str
    reviewer: str
    campaign_id: int
    campaign_name: str
    worker_id: str
    action: str
    assignments: list[str]
    note: str
    evidence_sha256: str | None

    @property
    def action_words(self) -> str:
        return ACTION_WORDS.get(self.action) or ACTION_WORDS.get(self.action.split(" ", 1)[0], self.action)


def _filtered(
    query: Select,  # type: ignore[type-arg]
    visible: Collection[int] | Select[int],
    campaign_id: int | None,
    worker_id: str | None,
    reviewer: str | None,
) -> Select:  # type: ignore[type-arg]
    query = query.where(ReviewAction.campaign_id.in_(visible))
    if campaign_id is not None:
        query = query.where(ReviewAction.campaign_id == campaign_id)
    if worker_id:
        query = query.where(ReviewAction.worker_id == worker_id)
    if reviewer:
        query = query.where(StaffUser.username == reviewer)
    return query


def audit_log(
    session: Session,
    visible: Collection[int] | Select[int],
    *,
    campaign_id: int | None = None,
    worker_id: str | None = None,
    reviewer: str | None = None,
    page: int = 1,
    per_page: int | None = PER_PAGE,
) -> tuple[list[AuditRow], int]:
    """The log, newest first, filtered; one page of it (all with ``per_page=None``) and the total."""
    base = (
        select(ReviewAction, StaffUser.username, Campaign.name)
        .join(StaffUser, StaffUser.id == ReviewAction.staff_user_id)
        .join(Campaign, Campaign.id == ReviewAction.campaign_id)
    )
    query = _filtered(base, visible, campaign_id, worker_id, reviewer)
    counted = _filtered(
        select(func.count())
        .select_from(ReviewAction)
        .join(StaffUser, StaffUser.id == ReviewAction.staff_user_id),
        visible,
        campaign_id,
        worker_id,
        reviewer,
    )
    total = session.scalar(counted) or 0
    query = query.order_by(ReviewAction.created_at.desc(), ReviewAction.id.desc())
    if per_page is not None:
        query = query.offset((max(page, 1) - 1) * per_page).limit(per_page)
    rows = [
        AuditRow(
            when=action.created_at.strftime("%Y-%m-%d %H:%M:%S UTC"),
            reviewer=username,
            campaign_id=action.campaign_id,
            campaign_name=name,
            worker_id=action.worker_id,
            action=action.action,
            assignments=list(action.assignments or []),
            note=action.note,
            evidence_sha256=action.evidence_sha256,
        )
        for action, username, name in session.execute(query)
    ]
    return rows, total


def audit_csv(rows: Iterable[AuditRow]) -> str:
    """The rows as CSV, one line a decision (assignments separated by spaces)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for r in rows:
        writer.writerow(
            (
                r.when,
                _cell(r.reviewer),
                _cell(r.campaign_name),
                _cell(r.worker_id),
                _cell(r.action),
                " ".join(r.assignments),
                _cell(r.note),
                r.evidence_sha256 or "",
            )
        )
    return out.getvalue()


def _cell(text: str) -> str:
    # Names and notes are typed by people but opened in a spreadsheet: one starting like a
    # formula is quoted.
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
