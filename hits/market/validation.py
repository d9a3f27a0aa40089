"""Parameter rules MTurk enforces beyond what botocore checks."""

from __future__ import annotations

import re
from decimal import Decimal
from functools import cache
from typing import Any

from botocore.loaders import Loader

from hits.market.errors import invalid
from hits.money import MoneyError, parse_amount
from hits.wire.limits import MAX_REQUIREMENTS

MIN_DURATION, MAX_DURATION = 30, 31_536_000
MAX_AUTO_APPROVAL_DELAY = 2_592_000


@cache
def comparators() -> tuple[str, ...]:
    """The QualificationRequirement comparators, as the ``Comparator`` enum of botocore's mturk model.

    The one list the marketplace and ``hitforge batch`` check against, so neither can
    drift from the service model boto3 clients are built from. Read on first use.
    """
    shapes = Loader().load_service_model("mturk", "service-2")["shapes"]
    return tuple(shapes["Comparator"]["enum"])


LOCALE_QUALIFICATION = "00000000000000000071"


def seconds(value: Any, name: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise invalid(f"{name} must be an integer between {low} and {high}; got {value!r}.")
    return value


def optional_seconds(value: Any, name: str) -> int | None:
    """A duration that may be left out (None): an integer from 0 to a year."""
    return None if value is None else seconds(value, name, 0, MAX_DURATION)


def integer(value: Any, name: str) -> int:
    """An integer member that botocore would send as a number (a boolean is not one)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise invalid(f"{name} must be an integer; got {value!r}.")
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


#: A currency string as MTurk takes it: dollars, optionally a point and one or two digits of cents.
CURRENCY = re.compile(r"[0-9]{1,9}(\.[0-9]{1,2})?")


def money(value: Any, name: str) -> Decimal:
    """A Reward or BonusAmount: a currency string such as "0.05" (no sign, exponent or spaces)."""
    if not isinstance(value, str) or CURRENCY.fullmatch(value) is None:
        raise invalid(f'{name} must be a currency string of US dollars such as "0.05"; got {value!r}.')
    try:
        return parse_amount(value, field=name)
    except MoneyError as exc:
        raise invalid(str(exc)) from exc


ACTIONS_GUARDED = ("Accept", "PreviewAndAccept", "DiscoverPreviewAndAccept")
LOCALE_COMPARATORS = ("EqualTo", "NotEqualTo", "In", "NotIn")
COUNTRY = re.compile(r"[A-Z]{2}")  # ISO 3166-1 alpha-2
SUBDIVISION = re.compile(r"[A-Z0-9]{1,3}")  # the part of an ISO 3166-2 code after the country


def locale_value(locale: Any) -> dict[str, str]:
    """A LocaleValue: an ISO 3166-1 alpha-2 Country, and optionally an ISO 3166-2 Subdivision."""
    if not isinstance(locale, dict):
        raise invalid("A LocaleValue must be a structure with a Country.")
    country, subdivision = locale.get("Country"), locale.get("Subdivision")
    if not isinstance(country, str) or not COUNTRY.fullmatch(country):
        raise invalid(f"Country must be an ISO 3166-1 alpha-2 code such as US; got {country!r}.")
    if subdivision is None:
        return {"Country": country}
    if not isinstance(subdivision, str) or not SUBDIVISION.fullmatch(subdivision):
        raise invalid(f"Subdivision must be an ISO 3166-2 subdivision code such as CA; got {subdivision!r}.")
    return {"Country": country, "Subdivision": subdivision}


def _requirement(req: Any) -> dict[str, Any]:
    """One QualificationRequirement, checked and in the form it is stored (types are checked later)."""
    if not isinstance(req, dict):
        raise invalid("A QualificationRequirement must be a structure.")
    comparator = req.get("Comparator")
    qid = req.get("QualificationTypeId")
    ints = req.get("IntegerValues") or []
    locales = [locale_value(loc) for loc in req.get("LocaleValues") or []]
    if not isinstance(qid, str) or not qid:
        raise invalid("QualificationTypeId is required.")
    if comparator not in comparators():
        raise invalid(f"Comparator {comparator!r} is not valid.")
    if comparator in ("Exists", "DoesNotExist") and (ints or locales):
        raise invalid(f"Comparator {comparator} takes no IntegerValues or LocaleValues.")
    if qid == LOCALE_QUALIFICATION:
        if ints:
            raise invalid("IntegerValues cannot be used with the Worker_Locale qualification.")
        if comparator not in LOCALE_COMPARATORS:
            raise invalid(f"Comparator {comparator} cannot be used with the Worker_Locale qualification.")
    elif locales:
        raise invalid("LocaleValues can only be used with the Worker_Locale qualification.")
    if any(not isinstance(i, int) or isinstance(i, bool) for i in ints):
        raise invalid("IntegerValues must be integers.")
    if comparator in ("In", "NotIn"):
        if not ints and not locales:
            raise invalid(f"Comparator {comparator} takes at least one value.")
        if len(ints) > 15 or len(locales) > 30:
            raise invalid("In and NotIn take at most 15 IntegerValues or 30 LocaleValues.")
    elif comparator not in ("Exists", "DoesNotExist") and len(ints) + len(locales) != 1:
        raise invalid(f"Comparator {comparator} takes exactly one value.")
    preview = req.get("RequiredToPreview", False)
    actions = req.get("ActionsGuarded")
    if not isinstance(preview, bool):
        raise invalid("RequiredToPreview must be true or false.")
    if actions is None:
        # The deprecated flag means what PreviewAndAccept means; ActionsGuarded, if given, wins.
        actions = "PreviewAndAccept" if preview else "Accept"
    elif actions not in ACTIONS_GUARDED:
        raise invalid(f"ActionsGuarded must be one of {', '.join(ACTIONS_GUARDED)}; got {actions!r}.")
    return {
        "QualificationTypeId": qid,
        "Comparator": comparator,
        "IntegerValues": list(ints),
        "LocaleValues": locales,
        # Echoed only while it is true of the requirement: a worker without it cannot preview.
        "RequiredToPreview": preview and actions != "Accept",
        "ActionsGuarded": actions,
    }


def qualification_requirements(reqs: Any) -> list[dict[str, Any]]:
    """Check QualificationRequirements against MTurk's rules (their types are checked later)."""
    if reqs is None:
        return []
    if not isinstance(reqs, list):
        raise invalid("QualificationRequirements must be a list.")
    if len(reqs) > MAX_REQUIREMENTS:
        raise invalid(
            f"QualificationRequirements takes at most {MAX_REQUIREMENTS} requirements; got {len(reqs)}."
        )
    return [_requirement(req) for req in reqs]
