"""A campaign's own page: progress, money, throughput with a finish estimate, gold, results, items.

And what a requester does to a running campaign from there: pause, resume,
cancel, extend, raise the budget (``hits.requester.campaigns.control``: one
outbox entry and one audit line each), and the downloads. Plots are SVG
images drawn on the server (``plots``), each with its figures in a table.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, cast

from flask import Response, abort, flash, redirect, render_template, request, url_for
from sqlalchemy import func, select
from sqlalchemy.orm import defer

from hits.db import utcnow
from hits.requester.campaigns import control, export
from hits.requester.campaigns.progress import DECISION_WORDS, campaign_progress, gold_accuracies, throughput
from hits.requester.files.campaign import stored_policy
from hits.requester.quality.trust import trust_summary
from hits.requester.tables.campaigns import (
    Campaign,
    CampaignResult,
    HITSlot,
    Item,
    Submission,
)
from hits.requester.tables.counters import item_count
from server.db import requester_session
from server.requester.dashboard import plots
from server.requester.dashboard.base import (
    bp,
    campaign_or_404,
    manager_required,
    may_manage,
    page_number,
    signed_in_staff,
    staff_required,
    svg_response,
)
from server.requester.dashboard.relay_pages import recruiting_context
from server.task_queue import send_after_commit

ITEMS_PER_PAGE = 50
#: What each control button does, said on it.
CHANGE_WORDS = {
    "pause": "Pause: expire its open HITs now (submitted work is still reviewed)",
    "resume": "Resume: open its HITs again for a fresh lifetime",
    "cancel": "Cancel: stop taking work for good (submitted work is reviewed and paid as usual)",
    "extend": "Extend its open HITs by",
}


def _campaign(campaign_id: int) -> Campaign:
    campaign_or_404(campaign_id)
    campaign = requester_session().get(Campaign, campaign_id)
    if campaign is None:
        abort(404)
    return campaign


@bp.get("/campaigns/<int:campaign_id>")
@staff_required
def campaign_page(campaign_id: int) -> Any:
    """Everything about one campaign at a glance."""
    campaign = _campaign(campaign_id)
    rs = requester_session()
    progress = campaign_progress(rs, campaign)
    accuracies = [100 * c / t for _, c, t in gold_accuracies(rs, campaign_id)]
    # The labels (one per item) are counted by the database, never parsed here: the page says how
    # many there are, and reading them all would cost in proportion to the campaign.
    result = rs.get(CampaignResult, campaign_id, options=[defer(CampaignResult.labels)])
    labelled = (
        rs.scalar(
            select(func.json_array_length(CampaignResult.labels)).where(
                CampaignResult.campaign_id == campaign_id
            )
        )
        if result
        else None
    )
    return render_template(
        "dashboard/campaign.html",
        c=campaign,
        p=progress,
        decision_words=DECISION_WORDS,
        threshold=stored_policy(campaign.spec).accuracy_threshold * 100,
        gold_table=plots.histogram_counts(accuracies),
        gold_workers=len(accuracies),
        result=result,
        labelled=labelled or 0,
        change_words=CHANGE_WORDS,
        allowed={k for k, v in control.ALLOWED_FROM.items() if campaign.status in v},
        may_manage=may_manage(signed_in_staff()),
        trust=trust_summary(rs, campaign),
        **recruiting_context(campaign_id),
    )


@bp.get("/campaigns/<int:campaign_id>/plots/throughput.svg")
@staff_required
def throughput_plot(campaign_id: int) -> Any:
    """Submissions per hour over the latest two days."""
    _campaign(campaign_id)
    t = throughput(requester_session(), campaign_id, utcnow())
    return svg_response(plots.bars_over_time(tuple(t.starts), tuple(t.counts), "submissions per hour"))


@bp.get("/campaigns/<int:campaign_id>/plots/gold.svg")
@staff_required
def gold_plot(campaign_id: int) -> Any:
    """Workers by gold accuracy, with the campaign's threshold."""
    campaign = _campaign(campaign_id)
    values = tuple(sorted(100 * c / t for _, c, t in gold_accuracies(requester_session(), campaign_id)))
    threshold = stored_policy(campaign.spec).accuracy_threshold * 100
    return svg_response(plots.histogram(values, threshold, "gold accuracy (%)"))


@bp.post("/campaigns/<int:campaign_id>/control")
@staff_required
def control_campaign(campaign_id: int) -> Any:
    """Pause, resume, cancel or extend the campaign, or set its budget (its requester or an admin)."""
    campaign = _campaign(campaign_id)
    manager_required()
    rs = requester_session()
    change = request.form.get("change", "")
    note = request.form.get("note", "")[:2000]
    back = url_for("dashboard.campaign_page", campaign_id=campaign_id)
    try:
        if change == "budget":
            try:
                budget = Decimal(request.form.get("budget", "").strip().lstrip("$"))
            except InvalidOperation:
                raise control.ControlRefused("the budget is a sum in dollars, such as 250.00") from None
            if not budget.is_finite() or budget != budget.quantize(Decimal("0.01")) or budget > 10**9:
                raise control.ControlRefused("the budget is a sum in dollars and cents, such as 250.00")
            flash(control.raise_budget(rs, campaign, budget, signed_in_staff().id, note) + ".", "info")
            return redirect(back)
        if change not in control.ALLOWED_FROM:
            abort(400)
        hours = request.form.get("hours", "").strip()
        seconds = int(hours) * 3600 if change == "extend" and hours.isdigit() and len(hours) < 7 else None
        done = control.change_campaign(
            rs, campaign, cast(control.Change, change), signed_in_staff().id, note, extend_seconds=seconds
        )
    except control.ControlRefused as exc:
        rs.rollback()
        flash(f"Nothing done: {exc}.", "error")
        return redirect(back)
    if done.entry_ids:
        send_after_commit(rs, "hitforge.apply_decisions", done.entry_ids)
    flash(done.said + ".", "info")
    return redirect(back)


@bp.get("/campaigns/<int:campaign_id>/items")
@staff_required
def campaign_items(campaign_id: int) -> Any:
    """The campaign's items, each with every answer given and the consensus, paged and searchable."""
    campaign = _campaign(campaign_id)
    rs = requester_session()
    search = (request.args.get("q") or "").strip()[:200]
    listed = select(Item.id).where(Item.campaign_id == campaign_id)
    if search:
        listed = listed.where(Item.external_id.contains(search, autoescape=True))
        total = rs.scalar(select(func.count()).select_from(listed.subquery())) or 0
    else:
        total = item_count(rs, campaign_id)  # kept as items are added: no count over them all
    pages = max(1, -(-total // ITEMS_PER_PAGE))
    page = min(page_number(request.args.get("page")), pages)
    skipped = (page - 1) * ITEMS_PER_PAGE
    if not search:
        # Page k holds the items at positions [50(k-1), 50k): a range of the (campaign, position)
        # index, the same few entries whatever k. Positions are dense and in id order, so these
        # are the items that skipping (k-1) x 50 in id order would reach.
        items = rs.scalars(
            select(Item)
            .where(
                Item.campaign_id == campaign_id,
                Item.position >= skipped,
                Item.position < skipped + ITEMS_PER_PAGE,
            )
            .order_by(Item.position)
        ).all()
    else:
        # A search's matches have no positions of their own: their ids first, from the (campaign,
        # id) index (skipping passes over index entries, not whole rows with their payloads),
        # then the page's rows by id.
        if skipped > total // 2:
            # A page in the later half is counted from the end: no page skips more than half the matches.
            from_end = max(0, total - skipped - ITEMS_PER_PAGE)
            size = min(ITEMS_PER_PAGE, total - skipped)
            ids = list(rs.scalars(listed.order_by(Item.id.desc()).offset(from_end).limit(size)))[::-1]
        else:
            ids = list(rs.scalars(listed.order_by(Item.id).offset(skipped).limit(ITEMS_PER_PAGE)))
        items = rs.scalars(select(Item).where(Item.id.in_(ids)).order_by(Item.id)).all() if ids else []
    answers: dict[int, list[tuple[str, str | None, Any]]] = {i.id: [] for i in items}
    rows = rs.execute(
        select(
            HITSlot.item_id, HITSlot.position, Submission.worker_id, Submission.decision, Submission.answers
        )
        .join(Submission, Submission.published_hit_id == HITSlot.published_hit_id)
        .where(HITSlot.item_id.in_(list(answers)))
        .order_by(Submission.id)
    )
    for item_id, position, worker_id, decision, stored in rows:
        given = (stored or {}).get("answers") if isinstance(stored, dict) else None
        value = given[position] if isinstance(given, list) and position < len(given) else None
        answers[item_id].append((worker_id, decision, value))
    result = rs.get(CampaignResult, campaign_id)
    wanted = {i.external_id for i in items}
    labels = {
        str(r.get("item_id")): r for r in (result.labels if result else []) if str(r.get("item_id")) in wanted
    }
    return render_template(
        "dashboard/items_list.html",
        c=campaign,
        items=items,
        answers=answers,
        labels=labels,
        result=result,
        page=page,
        pages=pages,
        total=total,
        search=search,
        decision_words=DECISION_WORDS,
    )


DOWNLOADS = {
    "answers.jsonl": ("application/x-ndjson", "every assignment with its answers, as JSON lines"),
    "batch.csv": ("text/csv", "MTurk's batch results CSV"),
    "labels.csv": ("text/csv", "the aggregated label of each item with its confidence"),
}


@bp.get("/campaigns/<int:campaign_id>/download/<name>")
@staff_required
def campaign_download(campaign_id: int, name: str) -> Any:
    """One of the campaign's result files."""
    campaign = _campaign(campaign_id)
    if name not in DOWNLOADS:
        abort(404)
    rs = requester_session()
    out = io.StringIO()
    if name == "answers.jsonl":
        export.write_jsonl(rs, campaign_id, out)
    elif name == "batch.csv":
        export.write_batch_csv(rs, campaign_id, out)
    else:
        export.write_labels_csv(rs, campaign, out)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M")
    response = Response(out.getvalue(), mimetype=DOWNLOADS[name][0])
    response.headers["Content-Disposition"] = f'attachment; filename="{campaign.name}-{stamp}-{name}"'
    return response
