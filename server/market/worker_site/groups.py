"""The HIT list: groups of HITs by HIT type, searched, sorted and paginated."""

from __future__ import annotations

from typing import Any

from flask import redirect, render_template, request, session, url_for

from hits.market.worker_groups import COUNT_CAP, SORTS, in_progress, list_groups
from hits.market.worker_quals import qualification_names
from server.db import market_session
from server.market.worker_site.base import bp, current_worker

SORT_LABELS = {
    "newest": "Newest first",
    "reward": "Reward",
    "time": "Time allotted",
    "requester": "Requester",
}


def _page_number(raw: str | None) -> int:
    try:
        return max(1, int(raw or "1"))
    except ValueError:
        return 1


@bp.get("/")
def index() -> Any:
    """The HIT groups the signed-in worker may discover."""
    worker = current_worker()
    if worker is None:
        return redirect(url_for("worker_site.signin"))
    if request.args.get("submitted"):
        # Back on the list after a submission: the worker stopped taking the group's HITs in a row.
        session.pop("accept_next", None)
    query = request.args.get("q", "").strip()[:200]
    sort = request.args.get("sort", "newest")
    sort = sort if sort in SORTS else "newest"
    order = request.args.get("order", "")
    descending = {"asc": False, "desc": True}.get(order)
    ms = market_session()
    result = list_groups(
        ms, worker, query=query, sort=sort, descending=descending, page=_page_number(request.args.get("page"))
    )

    def page_url(number: int) -> str:
        args: dict[str, Any] = {"q": query or None, "sort": sort, "order": order or None, "page": number}
        return url_for("worker_site.index", **{k: v for k, v in args.items() if v is not None})

    return render_template(
        "worker/index.html",
        result=result,
        groups=result.groups,
        query=query,
        sort=sort,
        order=order,
        sort_labels=SORT_LABELS,
        count_cap=COUNT_CAP,
        page_url=page_url,
        in_progress=in_progress(ms, worker),
        qual_names=qualification_names(
            ms, {r["QualificationTypeId"] for g in result.groups for r in g.missing}
        ),
    )
