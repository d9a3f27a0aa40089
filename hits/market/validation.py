"""Parameter rules MTurk enforces beyond what botocore checks."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hits.market.errors import invalid
from hits.money import MoneyError, parse_amount

MIN_DURATION, MAX_DURATION = 30, 31_536_000
MAX_AUTO_APPROVAL_DELAY = 2_592_000
COMPARATORS = {
    "LessThan",
    "LessThanOrEqualTo",
    "GreaterThan",
    "GreaterThanOrEqualTo",
    "EqualTo",
    "NotEqualTo",
    "Exists",
    "DoesNotExist",
    "In",
    "NotIn",
}
LOCALE_QUALIFICATION = "00000000000000000071"


def seconds(value: Any, name: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise invalid(f"{name} must be an integer between {low} and {high}; got {value!r}.")
    return value


def text(value: Any, name: str, limit: int, *, required: bool = False) -> str:
    if value is None:
        if required:
            raise invalid(f"{name} is required.")
        return ""
    if not isinstance(value, str):
        raise invalid(f"{name} must be a string.")
    if required and not value.strip():
        raise invalid(f"{name} must not be empty.")
    if len(value) > limit:
        raise invalid(f"{name} must be at most {limit} characters; got {len(value)}.")
    return value


def money(value: Any, name: str) -> Decimal:
    try:
        return parse_amount(value if isinstance(value, str) else str(value), field=name)
    except MoneyError as exc:
        raise invalid(str(exc)) from exc


def qualification_requirements(reqs: Any) -> list[dict[str, Any]]:
    """Check QualificationRequirements against MTurk's comparator rules."""
    if reqs is None:
        return []
    if not isinstance(reqs, list) or len(reqs) > 10:
        raise invalid("QualificationRequirements takes at most 10 requirements.")
    out = []
    for req in reqs:
        comparator = req.get("Comparator")
        qid = req.get("QualificationTypeId")
        ints = req.get("IntegerValues") or []
        locales = req.get("LocaleValues") or []
        if comparator not in COMPARATORS:
            raise invalid(f"Comparator {comparator!r} is not valid.")
        if comparator in ("Exists", "DoesNotExist") and (ints or locales):
            raise invalid(f"Comparator {comparator} takes no IntegerValues or LocaleValues.")
        if locales and qid != LOCALE_QUALIFICATION:
            raise invalid("LocaleValues can only be used with the Worker_Locale qualification.")
        if ints and qid == LOCALE_QUALIFICATION:
            raise invalid("IntegerValues cannot be used with the Worker_Locale qualification.")
        if comparator in ("In", "NotIn"):
            if len(ints) > 15 or len(locales) > 30:
                raise invalid("In and NotIn take at most 15 IntegerValues or 30 LocaleValues.")
        elif comparator not in ("Exists", "DoesNotExist") and len(ints) + len(locales) != 1:
            raise invalid(f"Comparator {comparator} takes exactly one value.")
        out.append(
            {
                "QualificationTypeId": qid,
                "Comparator": comparator,
                "IntegerValues": list(ints),
                "LocaleValues": list(locales),
                "RequiredToPreview": bool(req.get("RequiredToPreview", False)),
                "ActionsGuarded": req.get("ActionsGuarded")
                or ("DiscoverPreviewAndAccept" if req.get("RequiredToPreview") else "Accept"),
            }
        )
    return out
