"""The worker's statement at ``/me/earnings`` and where they are paid (``/me/payout-address``)."""

from __future__ import annotations

from typing import Any

from flask import flash, redirect, render_template, request, url_for

from hits.market import payouts
from hits.market.errors import RequestError
from hits.market.recruited import is_recruited, recruiting_platform
from hits.market.worker_statements import statement
from server.db import market_session
from server.market.worker_site.base import bp, signed_in_worker, worker_required


def _page(status: int = 200) -> Any:
    worker = signed_in_worker()
    db = market_session()
    return (
        render_template(
            "worker/earnings.html",
            statement=statement(db, worker.id),
            address=payouts.payout_address(db, worker.id),
            # Recruited participants are paid by their platform (payouts.plan leaves them out).
            recruited_by=recruiting_platform(worker),
            typed=request.form.get("address") if request.method == "POST" else None,
        ),
        status,
    )


@bp.get("/me/earnings")
@worker_required
def earnings() -> Any:
    """The signed-in worker's statement: approved rewards, bonuses, paid out and owed, by year."""
    return _page()


@bp.post("/me/payout-address")
@worker_required
def payout_address() -> Any:
    """Set or clear where the signed-in worker's pay-outs go."""
    if is_recruited(signed_in_worker()):
        flash("Your platform pays you for this work: there is no payout address to set here.", "error")
        return _page(400)
    try:
        address = payouts.set_payout_address(
            market_session(), signed_in_worker().id, request.form.get("address", "")
        )
    except RequestError as exc:
        flash(exc.message, "error")
        return _page(400)
    flash(f"Pay-outs go to {address}." if address else "Payout address removed.", "info")
    return redirect(url_for("worker_site.earnings"))
