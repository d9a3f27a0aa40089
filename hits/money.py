"""Exact money: ``Decimal`` amounts in US dollars, parsed strictly."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")


class MoneyError(ValueError):
    """A string that is not a valid currency amount."""


def parse_amount(text: str | int | Decimal, *, field: str = "amount") -> Decimal:
    """Parse a currency string such as ``"0.05"`` into an exact ``Decimal``.

    Floats are refused on purpose: they cannot carry cents exactly.
    """
    if isinstance(text, float):
        raise MoneyError(f'{field}: give money as a string such as "0.05", not a float')
    try:
        value = Decimal(str(text).strip())
    except InvalidOperation as exc:
        raise MoneyError(f"{field}: {text!r} is not a currency amount") from exc
    if not value.is_finite() or value < 0:
        raise MoneyError(f"{field}: {text!r} must be a non-negative amount")
    if value != value.quantize(CENT):
        raise MoneyError(f"{field}: {text!r} has more than two decimal places")
    return value.quantize(CENT)


def format_amount(value: Decimal) -> str:
    """The wire format MTurk uses: two decimals, no currency sign."""
    return str(value.quantize(CENT))


def dollars(value: Decimal) -> str:
    """An amount as people read it: a dollar sign and two decimals."""
    return f"${format_amount(value)}"


def mturk_fee(amount: Decimal, *, max_assignments: int = 1) -> Decimal:
    """MTurk's commission: 20%, plus 20% for HITs with 10 or more assignments; at least $0.01."""
    if amount <= 0:
        return Decimal("0.00")
    rate = Decimal("0.40") if max_assignments >= 10 else Decimal("0.20")
    return max(CENT, (amount * rate).quantize(CENT, rounding=ROUND_HALF_UP))
