"""Account operations of the requester API."""

from __future__ import annotations

from typing import Any

from hits.market import ledger
from hits.money import format_amount
from server.market.mturk_api.registry import CallContext, operation


@operation("GetAccountBalance", read_only=True)
def get_account_balance(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    available = ledger.balance(ctx.session, ledger.requester_account(ctx.requester_id))
    return {"AvailableBalance": format_amount(available)}
