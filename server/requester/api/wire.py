"""How the API's replies look: plain JSON objects, money as strings of dollars, times in ISO 8601 UTC."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hits.money import format_amount
from hits.requester.campaigns.progress import CampaignProgress
from hits.requester.quality.review_queue import QueueRow
from hits.requester.tables.campaigns import Campaign, CampaignResult


def money(value: Decimal) -> str:
    return format_amount(value)


def campaign(c: Campaign) -> dict[str, Any]:
    return {
        "id": c.id,
        "name": c.name,
        "template": c.template,
        "status": c.status,
        "budget": money(c.budget),
        "created_at": c.created_at.isoformat(),
    }


def progress(p: CampaignProgress) -> dict[str, Any]:
    finish = p.estimated_finish
    return {
        "campaign": campaign(p.campaign),
        "hits": {"total": p.hit_count, "by_state": p.hits},
        "assignments": {
            "planned": p.planned_assignments,
            "submitted": p.submitted,
            "remaining": p.remaining,
            "by_decision": {(k or "undecided"): n for k, n in p.decisions.items()},
        },
        "money": {"budget": money(p.budget), "committed": money(p.committed), "spent": money(p.spent)},
        "throughput": {
            "submissions_per_hour_recently": p.throughput.recent_rate,
            "hours": [
                {"start": s.isoformat(), "submissions": n}
                for s, n in zip(p.throughput.starts, p.throughput.counts, strict=True)
            ],
            "estimated_finish": finish.isoformat() if finish else None,
        },
        "workers": p.workers,
    }


def results(r: CampaignResult | None, offset: int, size: int) -> dict[str, Any]:
    if r is None:
        return {"computed": False, "labels": [], "total": 0}
    return {
        "computed": True,
        "computed_at": r.computed_at.isoformat(),
        "method": r.method,
        "assignments": r.assignments,
        "agreement": r.agreement,
        "agreement_per_question": r.agreement_parts or {},
        "total": len(r.labels),
        "labels": r.labels[offset : offset + size],
    }


def queue_row(row: QueueRow) -> dict[str, Any]:
    return {
        "campaign": {"id": row.campaign_id, "name": row.campaign_name, "template": row.template},
        "worker_id": row.worker_id,
        "reason": row.reason,
        "flag_reason": row.flag_reason,
        "held_assignments": row.held,
        "at_stake": money(row.at_stake),
        "gold": {"correct": row.gold_correct, "total": row.gold_total, "accuracy": row.accuracy},
        "threshold": row.threshold,
    }
