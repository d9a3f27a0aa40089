"""A bonus for a participant recruited on Prolific: what is paid there, in which currency, at what cost.

hitforge's budget is in US dollars, as the marketplace's money. Prolific pays
bonuses in the study's currency (its workspace's: pounds or dollars) and
takes its own fee on them. So a bonus for a participant of the campaign's
Prolific study is checked against the budget with Prolific's fee (the
campaign's ``recruit.bonus_fee_rate``) instead of the marketplace's, and in
dollars: a study in another currency needs the campaign's
``recruit.exchange_rate`` to convert the amount, and without it (or without
``recruit.currency``) the bonus is refused here, when it is queued, never
paid as the same number in another currency. What is fixed here travels in
the outbox entry's payload to the relay (``hits/requester/recruit/relay.py``),
which does not pay a bonus whose set-up would take more than ``pay_limit``.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal

from sqlalchemy.orm import Session

from hits.money import format_amount
from hits.requester.files.campaign import CampaignSpec
from hits.requester.files.recruit import RecruitSpec
from hits.requester.recruit.relay import participant_place
from hits.requester.tables.campaigns import Campaign

CENT = Decimal("0.01")
#: The currency hitforge's budgets and the marketplace's money are in.
BUDGET_CURRENCY = "USD"


class BonusCurrencyError(ValueError):
    """A bonus to a Prolific participant that cannot be paid as the campaign file stands."""


@dataclass(frozen=True)
class PlatformBonus:
    """A bonus paid on Prolific: the amount there, its currency, and what it costs in dollars."""

    pay_amount: Decimal
    currency: str
    #: Counted against the budget, in dollars: the bonus with Prolific's fee, rounded up to the cent.
    cost: Decimal
    #: The most Prolific may take for it, fees and VAT included, in the study's currency.
    pay_limit: Decimal

    def payload(self) -> dict[str, str]:
        """What the outbox entry records for the relay (and the budget: ``cost``)."""
        return {
            "pay_amount": format_amount(self.pay_amount),
            "pay_currency": self.currency,
            "pay_limit": format(self.pay_limit, "f"),
            "cost": format_amount(self.cost),
        }


def exchange_rate(campaign_name: str, recruit: RecruitSpec, what: str) -> Decimal:
    """Units of the study's currency one budget dollar is worth; :class:`BonusCurrencyError` when the
    campaign file does not say (no currency, or one that is not dollars without a rate)."""
    if recruit.currency is None:
        raise BonusCurrencyError(
            f"campaign {campaign_name!r}'s Prolific study pays in its workspace's currency, which the "
            f"campaign file does not state: add recruit.currency (USD, or GBP with recruit.exchange_rate) "
            f"to {what}"
        )
    if recruit.currency == BUDGET_CURRENCY:
        return Decimal(1)
    if recruit.exchange_rate is None:
        raise BonusCurrencyError(
            f"campaign {campaign_name!r}'s Prolific study pays in {recruit.currency} and its budget is in "
            f"dollars: add recruit.exchange_rate ({recruit.currency} to one US dollar) to {what}; "
            "nothing is paid as the same number in another currency"
        )
    return recruit.exchange_rate


def study_cost_in_dollars(campaign_name: str, recruit: RecruitSpec, total: Decimal) -> Decimal:
    """What a study costing ``total`` in its currency (rewards, fees, VAT) counts in dollars, rounded up."""
    rate = exchange_rate(campaign_name, recruit, "count the study's cost in its budget")
    return (total / rate).quantize(CENT, rounding=ROUND_CEILING)


def platform_bonus(
    session: Session,
    campaign: Campaign,
    spec: CampaignSpec,
    worker_id: str,
    assignment_id: str | None,
    amount: Decimal,
) -> PlatformBonus | None:
    """The bonus as Prolific will pay it, when the worker holds a place in the campaign's Prolific study.

    None for any other worker (the marketplace pays them, with its fee).
    Raises :class:`BonusCurrencyError` when the campaign file does not say
    the study's currency, or says one that is not dollars without an
    exchange rate.
    """
    recruit = spec.recruit
    if recruit is None or recruit.platform != "prolific":
        return None
    if participant_place(session, campaign.id, worker_id, assignment_id) is None:
        return None
    if recruit.currency is None:
        raise BonusCurrencyError(
            f"{worker_id} is a participant of campaign {campaign.name!r}'s Prolific study, and Prolific "
            "pays bonuses in the study's currency, which the campaign file does not state: add "
            "recruit.currency (USD, or GBP with recruit.exchange_rate) so that a bonus in dollars is not "
            "paid as the same number in another currency"
        )
    rate = exchange_rate(campaign.name, recruit, "pay bonuses there")
    pay = (amount * rate).quantize(CENT, rounding=ROUND_HALF_UP)
    if pay < CENT:
        raise BonusCurrencyError(f"a bonus of ${amount} is less than 0.01 {recruit.currency}")
    cost = (pay * (1 + recruit.bonus_fee_rate) / rate).quantize(CENT, rounding=ROUND_CEILING)
    # What the budget counted, in the study's currency: Prolific may take up to this, and no more.
    return PlatformBonus(pay_amount=pay, currency=recruit.currency, cost=cost, pay_limit=cost * rate)
