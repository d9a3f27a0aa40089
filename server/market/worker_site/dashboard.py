"""The worker's own dashboard at ``/me``."""

from __future__ import annotations

from typing import Any

from flask import render_template

from hits.market.worker_dashboard import summary
from server.db import market_session
from server.market.worker_site.base import bp, signed_in_worker, worker_required


@bp.get("/me")
@worker_required
def dashboard() -> Any:
    """Earnings, counts, approval rate, qualifications and inbox of the signed-in worker."""
    return render_template("worker/me.html", summary=summary(market_session(), signed_in_worker()))
