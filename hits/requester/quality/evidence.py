"""One assignment as a reviewer needs to see it: the items as shown, the answers, gold, time, signals.

Everything here is for staff only (it names gold items and their answers); the
dashboard shows it behind its sign-in and campaign scopes. Reads only.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.requester.files.campaign import stored_policy
from hits.requester.pages.gold import exposures_for, slots_with_gold
from hits.requester.quality.authenticity import record_in_words, signal_in_words
from hits.requester.tables.campaigns import (
    Campaign,
    PublishedHIT,
    ReviewAction,
    StaffUser,
    Submission,
    WorkerStats,
)
from hits.requester.templates import get_template
from hits.requester.templates.base import TaskTemplate

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
#: What each worker signal means, in words a reviewer reads.
SIGNAL_WORDS = {
    "speed": "answered faster than a person reads the items",
    "straightline": "gave the same answer to nearly every item",
    "agreement": "disagreed with the other workers on the same items far more than usual",
    "copying": "answered like another worker beyond what chance explains",
    "paste": "most of the text was pasted into the page, not typed there",
    "typing_speed": "the text came faster than people type, or with almost no keystrokes",
    "near_duplicate": "wrote nearly the same text as another worker",
}


@dataclass(frozen=True)
class Shown:
    """One part of an item or an answer, ready to show: text, a picture of the campaign, or data."""

    label: str
    kind: str  # "text" | "image" | "data"
    value: str


@dataclass(frozen=True)
class SlotEvidence:
    """A position of the page: what was shown, what the worker answered, and (gold) what was expected."""

    position: int
    shown: list[Shown]
    answer: list[Shown]
    gold: bool
    expected: list[Shown] = field(default_factory=list)
    #: Gold: whether the answer passed; items: the share of other workers who answered alike.
    passed: bool | None = None
    agreement: tuple[int, int] | None = None
    #: The same, unflattened, for a template's own evidence view (``<template>/evidence.html``).
    payload: Any = None
    raw_answer: Any = None
    raw_expected: Any = None


@dataclass(frozen=True)
class Decision:
    """One line of the audit log, by name."""

    when: str
    who: str
    action: str
    note: str


@dataclass(frozen=True)
class AssignmentEvidence:
    """An assignment, its worker's standing in the campaign and what fired."""

    submission: Submission
    campaign: Campaign
    stats: WorkerStats | None
    slots: list[SlotEvidence]
    signals: list[str]
    crowd_median_seconds: float | None
    threshold: float
    decisions: list[Decision]
    #: Answers with no item on record (a layout batch's fields, or more answers than slots).
    other_answers: list[Shown] = field(default_factory=list)
    #: What the quality model recorded about the assignment beyond the signals above.
    recorded: list[Shown] = field(default_factory=list)
    #: The template's answer-free page values (a rating scale), for its evidence view.
    template_context: dict[str, Any] = field(default_factory=dict)

    @property
    def held(self) -> bool:
        return self.submission.decision == "held"


def digest_of(shown: Any) -> str:
    """SHA-256 of what a page showed (canonical JSON): the audit log keeps it with the decision."""
    text = json.dumps(shown, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def evidence_digest(evidence: AssignmentEvidence) -> str:
    """The digest of an assignment's evidence page: its slots, signals, time and standing."""
    s = evidence.submission
    return digest_of(
        {
            "assignment": s.assignment_id,
            "decision": s.decision,
            "gold": [s.gold_correct, s.gold_total],
            "seconds": s.work_seconds,
            "slots": [repr(slot) for slot in evidence.slots],
            "signals": evidence.signals,
            "other_answers": [repr(f) for f in evidence.other_answers],
            "recorded": [repr(f) for f in evidence.recorded],
        }
    )


def shown_fields(value: Any, label: str = "") -> list[Shown]:
    """A payload or answer as fields: top-level keys of a mapping, pictures recognised by name."""
    if isinstance(value, Mapping):
        out = []
        for key, inner in value.items():
            out.extend(shown_fields(inner, f"{label} {key}" if label else str(key)))
        return out
    if isinstance(value, str):
        is_image = value.lower().endswith(IMAGE_SUFFIXES) and "://" not in value and "/" not in value
        return [Shown(label, "image" if is_image else "text", value)]
    if value is None:
        return [Shown(label, "text", "(no answer)")]
    if isinstance(value, bool | int | float):
        return [Shown(label, "text", str(value))]
    return [Shown(label, "data", json.dumps(value, ensure_ascii=False, sort_keys=True))]


def _answers(submission: Submission) -> list[Any]:
    stored = submission.answers if isinstance(submission.answers, Mapping) else {}
    answers = stored.get("answers")
    return list(answers) if isinstance(answers, list) else []


#: Evidence keys said in words elsewhere on the page (``signal_sentences``), or bookkeeping.
_SAID = {"signals", "copying_reason", "reason", "held_for", "flagged_by", "authenticity"}


def _recorded(submission: Submission) -> list[Shown]:
    evidence = submission.evidence if isinstance(submission.evidence, Mapping) else {}
    return [f for key in sorted(evidence) if key not in _SAID for f in shown_fields(evidence[key], key)]


def _other_answers(submission: Submission, slots: int) -> list[Shown]:
    stored = submission.answers if isinstance(submission.answers, Mapping) else {}
    answers = stored.get("answers")
    if isinstance(answers, list):
        return [
            f for i, a in enumerate(answers[slots:], start=slots) for f in shown_fields(a, f"answer {i + 1}")
        ]
    return shown_fields({k: v for k, v in stored.items() if k != "answers"} or answers)


def _passed(template: TaskTemplate, answer: Any, key: Any, payload: Any, options: Mapping[str, Any]) -> bool:
    try:
        return template.gold_passed(template.score_gold_item(answer, key, payload, options), options)
    except Exception:  # noqa: BLE001 - the pipeline counts an answer it cannot score as wrong, so do we
        return False


def signal_sentences(submission: Submission, stats: WorkerStats | None) -> list[str]:
    """Every reason on record for holding or flagging this work, in words."""
    evidence = submission.evidence if isinstance(submission.evidence, Mapping) else {}
    signals = evidence.get("signals")
    out: list[str] = []
    if stats is not None and stats.flag_reason:
        out.append(f"Flagged: {stats.flag_reason}.")
    for name in signals.get("suspicious", []) if isinstance(signals, Mapping) else []:
        out.append(f"Signal {name}: {SIGNAL_WORDS.get(name, name)}.")
    if evidence.get("copying_reason"):
        out.append(f"Copying: {evidence['copying_reason']}.")
    if evidence.get("reason"):
        out.append(f"Quality model: {evidence['reason']}.")
    found = evidence.get("authenticity")
    authenticity: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    for name in authenticity.get("suspicious", []):
        figures = authenticity.get(name)
        measured = f" ({signal_in_words(name, figures)})" if isinstance(figures, Mapping) else ""
        out.append(f"Signal {name}: {SIGNAL_WORDS.get(name, name)}{measured}.")
    if isinstance(submission.authenticity, Mapping):
        # A claim of the worker's browser: shown to the reviewer, never taken as proof either way.
        out.append(f"Typing record (counts sent by the page): {record_in_words(submission.authenticity)}.")
    if evidence.get("held_for") == "flag":
        out.append("Held because the worker is flagged: a person decides.")
    elif evidence.get("held_for") == "authenticity":
        out.append("Held for a person on the signals above: they never reject work on their own.")
    elif submission.decision == "held":
        out.append("Held for a person: the quality model could not decide before the campaign ended.")
    return out


#: The crowd's median time per assignment is taken over its latest this many assignments.
MEDIAN_SAMPLE = 2000


def decisions_of(session: Session, campaign_id: int, worker_id: str) -> list[Decision]:
    """The audit log of one worker in one campaign, oldest first, with reviewers by name."""
    rows = session.execute(
        select(ReviewAction, StaffUser.username)
        .join(StaffUser, StaffUser.id == ReviewAction.staff_user_id)
        .where(ReviewAction.campaign_id == campaign_id, ReviewAction.worker_id == worker_id)
        .order_by(ReviewAction.created_at, ReviewAction.id)
    )
    return [
        Decision(a.created_at.strftime("%Y-%m-%d %H:%M UTC"), username, a.action, a.note)
        for a, username in rows
    ]


def assignment_evidence(session: Session, submission: Submission) -> AssignmentEvidence:
    """The evidence of ``submission`` (the caller has checked the user may see its campaign)."""
    published = submission.published_hit
    campaign = session.get(Campaign, published.campaign_id)
    assert campaign is not None
    template = get_template(campaign.template)
    options = campaign.spec.get("template_options", {})
    stats = session.get(WorkerStats, (campaign.id, submission.worker_id))
    shown = exposures_for(session, campaign.id, [submission.assignment_id]).get(submission.assignment_id, {})
    others = [
        _answers(s)
        for s in session.scalars(
            select(Submission).where(
                Submission.published_hit_id == published.id, Submission.id != submission.id
            )
        )
    ]
    answers = _answers(submission)
    slots = []
    for slot in slots_with_gold(published, shown):
        answer = answers[slot.position] if slot.position < len(answers) else None
        if slot.gold is not None:
            slots.append(
                SlotEvidence(
                    slot.position,
                    shown_fields(slot.payload),
                    shown_fields(answer, "answer"),
                    gold=True,
                    expected=shown_fields(slot.gold.answer, "expected"),
                    passed=_passed(template, answer, slot.gold.answer, slot.gold.payload, options),
                    payload=slot.payload,
                    raw_answer=answer,
                    raw_expected=slot.gold.answer,
                )
            )
        else:
            theirs = [o[slot.position] for o in others if slot.position < len(o)]
            alike = sum(1 for other in theirs if other == answer)
            slots.append(
                SlotEvidence(
                    slot.position,
                    shown_fields(slot.payload),
                    shown_fields(answer, "answer"),
                    gold=False,
                    agreement=(alike, len(theirs)) if theirs else None,
                    payload=slot.payload,
                    raw_answer=answer,
                )
            )
    # The crowd's pace from its latest assignments: a sample that large pins a median down, and the
    # page's cost then stays the same however many assignments the campaign has had.
    seconds = [
        s
        for s in session.scalars(
            select(Submission.work_seconds)
            .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
            .where(PublishedHIT.campaign_id == campaign.id, Submission.work_seconds.is_not(None))
            .order_by(Submission.id.desc())
            .limit(MEDIAN_SAMPLE)
        )
        if s is not None
    ]
    policy = stored_policy(campaign.spec)
    return AssignmentEvidence(
        submission=submission,
        campaign=campaign,
        stats=stats,
        slots=slots,
        signals=signal_sentences(submission, stats),
        crowd_median_seconds=statistics.median(seconds) if seconds else None,
        threshold=policy.accuracy_threshold,
        decisions=decisions_of(session, campaign.id, submission.worker_id),
        other_answers=_other_answers(submission, len(slots)),
        recorded=_recorded(submission),
        template_context=template.page_context(),
    )
