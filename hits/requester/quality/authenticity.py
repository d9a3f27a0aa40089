"""Authenticity signals: was this free text written here, by this worker?

Three signals, each about one assignment rather than a worker's whole record:

* ``paste``: most of the text the worker produced on the page came in by
  pasting (or dragging) rather than typing;
* ``typing_speed``: keystrokes faster than people type, or text that appeared
  with almost no keystrokes or pastes at all (set by a script);
* ``near_duplicate``: a free-text answer nearly the same as another worker's
  answer to a different item of the same campaign.

The first two read the page's typing record (``hits.wire.authenticity``),
which comes from the worker's browser: a claim, never a measurement. So, like
every signal, they only ever hold work for a person. They never approve
(a clean record proves nothing: it is easy to forge, or to leave out) and
never reject on their own. This module computes; the review
(``review.py``) applies.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from rapidfuzz import fuzz, process
from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.requester.quality.copying import normalised_text
from hits.requester.quality.signals import Signal
from hits.requester.tables.campaigns import GoldItem, HITSlot, Item, PublishedHIT, Submission

#: ``paste``: suspicious when pasted characters are at least this share of those produced...
PASTE_SHARE = 0.5
#: ... and the page produced at least this many characters (a pasted word or two is nothing).
MIN_CHARS = 20
#: ``typing_speed``: faster than this many keystrokes a second, over the span from the first keystroke
#: to the last, is not a person (the fastest typists sustain about 15; a script sends hundreds)...
MAX_KEYS_PER_SECOND = 20.0
#: ... judged only over at least this many keystrokes (a short burst can be quick).
MIN_KEYS_FOR_SPEED = 30
#: ``typing_speed`` too: keystrokes and pasted characters together explaining less than this share of
#: the characters produced (a phone's word suggestions still leave one keystroke a word or so).
MIN_EXPLAINED_SHARE = 0.1
#: ``near_duplicate``: rapidfuzz's ratio (0-100) of two normalised texts at or above this...
NEAR_DUPLICATE_RATIO = 90.0
#: ... for texts of at least this many characters once normalised (a short formulaic sentence, "a red
#: square in the top left of the picture", turns up honestly under many pictures).
NEAR_DUPLICATE_MIN_CHARS = 60
#: The other workers' most recent submissions a text is compared with (bounds the cost per review).
NEAR_DUPLICATE_POOL = 5000
#: How deep a structured answer (a layout's fields, a crowd form's JSON) is searched for text.
_MAX_DEPTH = 4


def record_signals(summary: Mapping[str, Any] | None) -> list[Signal]:
    """The ``paste`` and ``typing_speed`` signals of one page's typing record (none without a record)."""
    if not summary:
        return []
    chars = int(summary.get("chars", 0))
    keys = int(summary.get("keys", 0))
    pasted = min(int(summary.get("pasted", 0)), chars)  # a paste deleted again produced nothing
    paste_share = pasted / chars if chars else 0.0
    paste = Signal(
        "paste",
        round(paste_share, 4),
        chars >= MIN_CHARS and paste_share >= PASTE_SHARE,
        {"chars": chars, "pasted": pasted, "pastes": int(summary.get("pastes", 0)), "share": PASTE_SHARE},
    )
    typing_ms = int(summary.get("typing_ms", 0))
    rate = (keys - 1) / (typing_ms / 1000) if keys > 1 and typing_ms > 0 else None
    too_fast = rate is not None and keys >= MIN_KEYS_FOR_SPEED and rate > MAX_KEYS_PER_SECOND
    explained = (keys + pasted) / chars if chars else 1.0
    untyped = chars >= MIN_CHARS and explained < MIN_EXPLAINED_SHARE
    speed = Signal(
        "typing_speed",
        None if rate is None else round(rate, 2),
        too_fast or untyped,
        {
            "keys": keys,
            "chars": chars,
            "typing_seconds": round(typing_ms / 1000, 1),
            "max_keys_per_second": MAX_KEYS_PER_SECOND,
            "explained_share": round(explained, 4),
        },
    )
    return [paste, speed]


def free_texts(answer: Any, depth: int = 0) -> Iterator[str]:
    """The free-text strings in an answer, normalised (``copying.normalised_text``), long enough to compare.

    Strings inside mappings and lists are looked at too (a layout's fields, a
    crowd form's ``taskAnswers`` JSON), to a small depth.
    """
    if depth > _MAX_DEPTH:
        return
    if isinstance(answer, str):
        stripped = answer.lstrip()
        if stripped[:1] in ("{", "[") and depth < _MAX_DEPTH:
            try:
                yield from free_texts(json.loads(stripped), depth + 1)
                return
            except ValueError:
                pass  # not JSON after all: text like any other
        text = normalised_text(answer)
        if text is not None and len(text) >= NEAR_DUPLICATE_MIN_CHARS:
            yield text
    elif isinstance(answer, Mapping):
        for value in answer.values():
            yield from free_texts(value, depth + 1)
    elif isinstance(answer, list):
        for value in answer:
            yield from free_texts(value, depth + 1)


#: Where a text was written: an item, a gold item, or (no item on record) a HIT's position.
UnitKey = tuple[str, int, int]


def _units_of(session: Session, hit_ids: Iterable[int]) -> dict[tuple[int, int], UnitKey]:
    """(HIT row id, position) to the item or gold item shown there, for the HITs given."""
    wanted = sorted(set(hit_ids))
    out: dict[tuple[int, int], UnitKey] = {}
    for start in range(0, len(wanted), 900):  # under every backend's bound on parameters
        rows = session.execute(
            select(HITSlot.published_hit_id, HITSlot.position, HITSlot.item_id, HITSlot.gold_item_id).where(
                HITSlot.published_hit_id.in_(wanted[start : start + 900])
            )
        )
        for hit, position, item_id, gold_id in rows:
            if item_id is not None:
                out[(hit, position)] = ("item", item_id, 0)
            elif gold_id is not None:
                out[(hit, position)] = ("gold", gold_id, 0)
    return out


def _texts_by_unit(
    submission_answers: Any, hit_id: int, units: Mapping[tuple[int, int], UnitKey]
) -> list[tuple[UnitKey, str]]:
    """The free texts of one submission, each with the unit (item) it answers."""
    stored = submission_answers if isinstance(submission_answers, Mapping) else {}
    answers = stored.get("answers", [])
    per_position = list(enumerate(answers)) if isinstance(answers, list) else [(0, answers)]
    out: dict[tuple[UnitKey, str], None] = {}
    for position, answer in per_position:
        unit = units.get((hit_id, position), ("hit", hit_id, position))
        for text in free_texts(answer):
            out[(unit, text)] = None
    return list(out)


class _ShownTexts:
    """The free texts each item showed on its page (a draft to correct, a passage), read when first asked."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._known: dict[UnitKey, list[str]] = {}

    def of(self, unit: UnitKey) -> list[str]:
        if unit not in self._known:
            kind, row_id, _ = unit
            payload: Any = None
            if kind == "item":
                payload = self._session.scalar(select(Item.payload).where(Item.id == row_id))
            elif kind == "gold":
                payload = self._session.scalar(select(GoldItem.payload).where(GoldItem.id == row_id))
            self._known[unit] = list(free_texts(payload))
        return self._known[unit]

    def echoes(self, text: str, unit: UnitKey) -> bool:
        """Whether ``text`` repeats (nearly) a text the page of ``unit`` showed."""
        return any(fuzz.ratio(text, shown) >= NEAR_DUPLICATE_RATIO for shown in self.of(unit))


def _has_text(submission_answers: Any) -> bool:
    stored = submission_answers if isinstance(submission_answers, Mapping) else {}
    return next(free_texts(stored.get("answers", [])), None) is not None


def near_duplicates(
    session: Session, campaign_id: int, submissions: Sequence[Submission]
) -> dict[int, Signal]:
    """A suspicious ``near_duplicate`` signal for each of ``submissions`` with a text like another worker's.

    Compared with the free texts of the campaign's other workers (their
    :data:`NEAR_DUPLICATE_POOL` latest submissions, void ones left out) on
    *other* items: two people describing the same picture or correcting the
    same draft honestly converge, and that agreement is what consensus is
    made of; the same text turning up on a different item is no agreement,
    but a canned or copied answer, unless one of the two pages showed it
    (a refinement round whose draft was already right). The closest match of at least
    :data:`NEAR_DUPLICATE_RATIO` names the other assignment, its worker and
    who submitted first.
    """
    if not any(_has_text(s.answers) for s in submissions):
        return {}
    rows = session.execute(
        select(
            Submission.id,
            Submission.assignment_id,
            Submission.worker_id,
            Submission.answers,
            Submission.published_hit_id,
        )
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(PublishedHIT.campaign_id == campaign_id)
        .where((Submission.decision.is_(None)) | (Submission.decision != "void"))
        .order_by(Submission.id.desc())
        .limit(NEAR_DUPLICATE_POOL)
    ).all()
    units = _units_of(
        session, [row.published_hit_id for row in rows] + [s.published_hit_id for s in submissions]
    )
    pool: list[str] = []
    owners: list[tuple[int, str, str, UnitKey]] = []
    for row_id, assignment_id, worker_id, answers, hit_id in rows:
        for unit, text in _texts_by_unit(answers, hit_id, units):
            pool.append(text)
            owners.append((row_id, assignment_id, worker_id, unit))
    shown = _ShownTexts(session)
    out: dict[int, Signal] = {}
    for submission in submissions:
        best: tuple[float, int] | None = None
        for unit, text in _texts_by_unit(submission.answers, submission.published_hit_id, units):
            for other_text, score, index in process.extract(
                text, pool, scorer=fuzz.ratio, score_cutoff=NEAR_DUPLICATE_RATIO, limit=None
            ):
                _, _, other_worker, other_unit = owners[index]
                if other_worker == submission.worker_id or other_unit == unit:
                    continue
                # Text one of the two pages showed (a refinement round's draft, carried on
                # unchanged) is nobody's copy of the other.
                if shown.echoes(text, other_unit) or shown.echoes(other_text, unit):
                    continue
                if best is None or score > best[0]:
                    best = (float(score), index)
        if best is not None:
            other_id, other_assignment, other_worker, _ = owners[best[1]]
            out[submission.id] = Signal(
                "near_duplicate",
                round(best[0] / 100, 4),
                True,
                {
                    "other_assignment": other_assignment,
                    "other_worker": other_worker,
                    # Submission ids grow in the order work was recorded: the copier is usually second.
                    "submitted_first": submission.id < other_id,
                    "min_ratio": NEAR_DUPLICATE_RATIO / 100,
                },
            )
    return out


def suspect_work(
    session: Session, campaign_id: int, submissions: Sequence[Submission]
) -> dict[int, dict[str, Any]]:
    """The evidence of each of ``submissions`` an authenticity signal fired for, by submission id.

    Each entry has ``suspicious`` (the names that fired) and each signal's
    figures; submissions nothing fired for are left out. What to do with them
    (hold, never reject) is the caller's.
    """
    if not submissions:
        return {}
    duplicates = near_duplicates(session, campaign_id, submissions)
    out: dict[int, dict[str, Any]] = {}
    for submission in submissions:
        signals = record_signals(submission.authenticity)
        if submission.id in duplicates:
            signals.append(duplicates[submission.id])
        fired = sorted(s.name for s in signals if s.suspicious)
        if fired:
            out[submission.id] = {
                "suspicious": fired,
                **{s.name: {"value": s.value, **s.evidence} for s in signals},
            }
    return out


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.1f} s"


def record_in_words(summary: Mapping[str, Any]) -> str:
    """A page's typing record as a reviewer reads it (counts only; there is no content to show)."""
    chars, keys = int(summary.get("chars", 0)), int(summary.get("keys", 0))
    pasted, pastes = int(summary.get("pasted", 0)), int(summary.get("pastes", 0))
    blurs, hides = int(summary.get("blurs", 0)), int(summary.get("hides", 0))
    parts = [
        f"{chars} character{'s' if chars != 1 else ''} entered",
        f"{keys} keystroke{'s' if keys != 1 else ''}"
        + (f" over {_seconds(int(summary['typing_ms']))}" if summary.get("typing_ms") else ""),
        f"pasted {pasted} of {chars} characters in {pastes} paste{'s' if pastes != 1 else ''}",
        f"left the page {blurs} time{'s' if blurs != 1 else ''}"
        + (f" (hidden {hides} time{'s' if hides != 1 else ''})" if hides else ""),
    ]
    if "first_ms" in summary:
        parts.append(f"first input after {_seconds(int(summary['first_ms']))}")
    else:
        parts.append("no input recorded")
    if "page_ms" in summary:
        parts.append(f"{_seconds(int(summary['page_ms']))} on the page")
    return ", ".join(parts)


def signal_in_words(name: str, figures: Mapping[str, Any]) -> str:
    """What one fired authenticity signal measured, in words."""
    if name == "paste":
        return f"{figures.get('pasted', 0)} of {figures.get('chars', 0)} characters pasted"
    if name == "typing_speed":
        if figures.get("value") is not None and float(figures["value"]) > MAX_KEYS_PER_SECOND:
            return f"{figures['value']} keystrokes a second over {figures.get('keys', 0)} keystrokes"
        chars, keys = figures.get("chars", 0), figures.get("keys", 0)
        return f"{chars} characters from {keys} keystrokes and no paste to match"
    if name == "near_duplicate":
        first = "before" if figures.get("submitted_first") else "after"
        return (
            f"{round(float(figures.get('value') or 0) * 100)}% alike with a text of assignment "
            f"{figures.get('other_assignment', '?')} by worker {figures.get('other_worker', '?')}, "
            f"submitted {first} it"
        )
    return name
