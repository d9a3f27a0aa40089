"""Copying pairs: two workers whose answers on the same items agree more than their accuracy explains.

A worker who copies another (or one person working under two accounts)
gives the other's answers, right or wrong. Gold cannot see it: the copier's
gold record is the source's, and a pair copying a good worker passes gold.
What gives them away is how often they agree.

The rule, for a pair of workers who answered the same real items (the same
HIT, the same slot):

* If each answers independently given the item's true answer, worker a
  right with probability ``q_a`` and b with ``q_b``, they agree when both
  are right, or both wrong the same way. The second is at most
  ``(1 - q_a)(1 - q_b)`` (every error coinciding), so the chance they agree
  on an item is at most ``f = q_a q_b + (1 - q_a)(1 - q_b)``.
* ``q_a`` and ``q_b`` are not known, only their gold records: each has the
  Beta(1 + right, 1 + wrong) posterior gold uses. The p-value is the
  chance, under that model and those posteriors, of at least the observed
  number of identical answers among the shared items:
  ``E[P(Binomial(n, f(q_a, q_b)) >= identical)]``. Gold items are left out
  of the count (they made the posteriors), so the two are independent data.
  The binomial tail is a polynomial in ``q_a`` and in ``q_b`` of degree
  ``n``, so Gauss-Jacobi quadrature (the Beta density is its weight) with
  ``n / 2 + 1`` nodes a side integrates it exactly (up to rounding; capped at
  :data:`MAX_NODES` nodes, where posteriors are narrow).
* The pair is **suspicious** when that p-value is at most ``false_alarm``
  (default :data:`DEFAULT_FALSE_ALARM`, per pair and judgement), once they
  share at least ``min_shared`` real items.

Assuming every error coincides makes the expected agreement an upper bound:
honest workers of equal skill agree less than it allows, so the test is
conservative (measured: ``tests/quality/test_copying.py``). It assumes a
worker's accuracy does not depend on the item: honest workers who both find
the same items easy and the same items hard agree more than the bound says,
which is why a suspicious pair only holds work for a person.

**Free text** (answers of :data:`MIN_TEXT_WORDS` words or more): two people
rarely write the same sentence of several words, so the pair is suspicious
when at least ``min_identical_texts`` of its shared answers are the same
text (compared case- and space-insensitively). No model, a stated count.

Pure functions over plain data (no database, no clock), as the other
signals (:mod:`hits.requester.quality.signals`); :mod:`hits.requester.quality.live_copying`
reads them from a running campaign.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import astuple, dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.special import roots_jacobi
from scipy.stats import binom

from hits.requester.files.campaign import COPYING_FALSE_ALARM, COPYING_MIN_IDENTICAL_TEXTS, COPYING_MIN_SHARED
from hits.requester.quality.policy import GoldRecord

#: Per pair and judgement: the p-value at or below which a pair is suspicious.
DEFAULT_FALSE_ALARM = COPYING_FALSE_ALARM
#: Real items a pair must share before the agreement test speaks.
DEFAULT_MIN_SHARED = COPYING_MIN_SHARED
#: Identical texts a pair must share before the text rule speaks.
DEFAULT_MIN_IDENTICAL_TEXTS = COPYING_MIN_IDENTICAL_TEXTS
#: A string answer of at least this many words is free text (shorter ones are labels).
MIN_TEXT_WORDS = 5
#: Quadrature nodes per worker at most (exact up to 2 x this many shared items).
MAX_NODES = 200
#: Examples of identical answers kept in the evidence (the counts are always complete).
EXAMPLES = 25


@dataclass(frozen=True)
class SharedItem:
    """One item both workers answered: its name, each one's answer, and whether it is gold.

    ``wrong``: for a gold item, whether the answer (when the two are the same) misses the key.
    ``structured``: the answers are lists or objects (compared by their canonical JSON), so they
    are labels, never free text, however many words their JSON holds: a ranking such as
    ``{"c1": 1, "c2": 2, "c3": 1}`` that two careful workers share is agreement, not a copied text.
    """

    item: str
    first: Hashable
    second: Hashable
    gold: bool = False
    wrong: bool = False
    structured: bool = False

    def texts(self) -> tuple[str | None, str | None]:
        """Both answers as comparable free text (None for an answer that is not free text)."""
        if self.structured:
            return None, None
        return normalised_text(self.first), normalised_text(self.second)


@dataclass(frozen=True)
class SharedHIT:
    """A HIT both workers did, and when each submitted it (who answered first)."""

    hit: str
    first_at: datetime | None
    second_at: datetime | None


@dataclass(frozen=True)
class PairRecord:
    """What two workers did on the same HITs; ``first`` sorts before ``second``."""

    first: str
    second: str
    items: Sequence[SharedItem]
    gold_first: GoldRecord
    gold_second: GoldRecord
    hits: Sequence[SharedHIT] = ()


@dataclass(frozen=True)
class PairVerdict:
    """Whether a pair looks like copying, its p-value, and the evidence QA staff read."""

    first: str
    second: str
    suspicious: bool
    p_value: float
    evidence: dict[str, Any] = field(default_factory=dict)

    def partner(self, worker_id: str) -> str:
        """The other worker of the pair."""
        return self.second if worker_id == self.first else self.first


def agreement_bound(q_first: float, q_second: float) -> float:
    """The most two independent workers of these accuracies agree on an item: every error coinciding."""
    return q_first * q_second + (1 - q_first) * (1 - q_second)


def _beta_nodes(record: GoldRecord, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Jacobi nodes (accuracies) and weights for the record's Beta(1 + right, 1 + wrong) posterior."""
    right, wrong = record.correct, record.total - record.correct
    # Jacobi weight (1 - x)^alpha (1 + x)^beta on [-1, 1], q = (1 + x) / 2: alpha = wrong, beta = right.
    x, w = roots_jacobi(count, float(wrong), float(right))
    return (1 + x) / 2, w / w.sum()


@lru_cache(maxsize=4096)
def _p_value(identical: int, shared: int, first: GoldRecord, second: GoldRecord) -> float:
    count = min(MAX_NODES, shared // 2 + 1)
    q1, w1 = _beta_nodes(first, count)
    q2, w2 = _beta_nodes(second, count)
    agree = np.outer(q1, q2) + np.outer(1 - q1, 1 - q2)
    tail = binom.sf(identical - 1, shared, np.clip(agree, 0.0, 1.0))
    return float(min(1.0, max(0.0, (np.outer(w1, w2) * tail).sum())))


def agreement_p_value(identical: int, shared: int, first: GoldRecord, second: GoldRecord) -> float:
    """P(at least ``identical`` agreements in ``shared`` items) for an honest pair with these gold records.

    The binomial tail at the bound :func:`agreement_bound`, averaged over both
    workers' Beta posteriors on accuracy (see the module's docstring).
    """
    if shared <= 0 or identical <= 0:
        return 1.0
    return _p_value(int(identical), int(shared), first, second)


def posterior_mean(record: GoldRecord) -> float:
    """The mean of the Beta(1 + right, 1 + wrong) posterior on accuracy."""
    return (1 + record.correct) / (2 + record.total)


def normalised_text(answer: Any) -> str | None:
    """The answer as comparable free text (case and spacing folded), or None when it is not free text."""
    if not isinstance(answer, str):
        return None
    words = re.findall(r"\w+", answer.casefold())
    return " ".join(words) if len(words) >= MIN_TEXT_WORDS else None


@dataclass(frozen=True)
class PairCounts:
    """What the test needs of a pair: counts only, so that they can be kept and added to."""

    shared_hits: int = 0
    #: Real items with a label (not free text) from both, and how many of those were identical.
    shared_items: int = 0
    identical_answers: int = 0
    shared_texts: int = 0
    identical_texts: int = 0
    #: Gold items both got wrong with the same answer.
    identical_wrong_gold: int = 0
    #: Shared HITs the first (the second) of the pair submitted first.
    first_ahead: int = 0
    second_ahead: int = 0

    def __add__(self, other: PairCounts) -> PairCounts:
        return PairCounts(*(x + y for x, y in zip(astuple(self), astuple(other), strict=True)))


def tally(items: Sequence[SharedItem], hits: Sequence[SharedHIT]) -> PairCounts:
    """The counts of a pair's shared items and HITs."""
    real = [i for i in items if not i.gold]
    texts = [i for i in real if i.texts()[0] is not None]
    labels = [i for i in real if i.texts() == (None, None)]
    return PairCounts(
        shared_hits=len(hits),
        shared_items=len(labels),
        identical_answers=sum(i.first == i.second for i in labels),
        shared_texts=len(texts),
        identical_texts=sum(i.texts()[0] == i.texts()[1] for i in texts),
        identical_wrong_gold=sum(i.gold and i.wrong and i.first == i.second for i in items),
        first_ahead=sum(1 for h in hits if h.first_at and h.second_at and h.first_at < h.second_at),
        second_ahead=sum(1 for h in hits if h.first_at and h.second_at and h.second_at < h.first_at),
    )


def examples(items: Sequence[SharedItem]) -> list[dict[str, Any]]:
    """Identical answers to show first: the same wrong gold answer, the same text, the same label."""
    alike = [i for i in items if i.first == i.second or _same_text(i)]
    wrong = [i for i in alike if i.gold and i.wrong]
    texts = [i for i in alike if not i.gold and _same_text(i)]
    labels = [i for i in alike if not i.gold and not _same_text(i)]
    return [
        {"item": i.item, "answer": i.first, "gold": i.gold, "wrong": i.wrong}
        for i in (wrong + texts + labels)[:EXAMPLES]
    ]


def _same_text(item: SharedItem) -> bool:
    first, second = item.texts()
    return first is not None and first == second


def shared_hit_times(hits: Sequence[SharedHIT], first: str, second: str) -> list[dict[str, Any]]:
    """When each of the pair submitted each shared HIT (ISO times), for the evidence."""
    return [{"hit": h.hit, first: _when(h.first_at), second: _when(h.second_at)} for h in hits]


def judge_counts(
    first: str,
    second: str,
    counts: PairCounts,
    gold_first: GoldRecord,
    gold_second: GoldRecord,
    *,
    false_alarm: float = DEFAULT_FALSE_ALARM,
    min_shared: int = DEFAULT_MIN_SHARED,
    min_identical_texts: int = DEFAULT_MIN_IDENTICAL_TEXTS,
) -> PairVerdict:
    """Judge a pair from its counts by the agreement test and the identical-text rule (module docstring)."""
    shared, identical = counts.shared_items, counts.identical_answers
    # Below the minimum the test does not speak: no quadrature for pairs that met once or twice.
    p_value = agreement_p_value(identical, shared, gold_first, gold_second) if shared >= min_shared else 1.0
    by_agreement = shared >= min_shared and p_value <= false_alarm
    by_text = counts.identical_texts >= min_identical_texts
    evidence: dict[str, Any] = {
        "pair": [first, second],
        "shared_hits": counts.shared_hits,
        "shared_items": shared,
        "identical_answers": identical,
        "observed_agreement": round(identical / shared, 4) if shared else None,
        # The bound at the posterior means, for reading; the test averages over the posteriors.
        "expected_agreement_at_most": round(
            agreement_bound(posterior_mean(gold_first), posterior_mean(gold_second)), 4
        ),
        "gold": {first: _gold(gold_first), second: _gold(gold_second)},
        "p_value": float(f"{p_value:.3g}"),
        "false_alarm": false_alarm,
        "min_shared": min_shared,
        "identical_wrong_gold": counts.identical_wrong_gold,
        "shared_texts": counts.shared_texts,
        "identical_texts": counts.identical_texts,
        "min_identical_texts": min_identical_texts,
        "answered_first": {first: counts.first_ahead, second: counts.second_ahead},
        "suspicious_by": [name for name, hit in (("agreement", by_agreement), ("text", by_text)) if hit],
    }
    return PairVerdict(first, second, by_agreement or by_text, p_value, evidence)


def judge_pair(
    pair: PairRecord,
    *,
    false_alarm: float = DEFAULT_FALSE_ALARM,
    min_shared: int = DEFAULT_MIN_SHARED,
    min_identical_texts: int = DEFAULT_MIN_IDENTICAL_TEXTS,
) -> PairVerdict:
    """:func:`judge_counts` on a pair's shared items and HITs, with examples and times in the evidence."""
    verdict = judge_counts(
        pair.first,
        pair.second,
        tally(pair.items, pair.hits),
        pair.gold_first,
        pair.gold_second,
        false_alarm=false_alarm,
        min_shared=min_shared,
        min_identical_texts=min_identical_texts,
    )
    verdict.evidence["examples"] = examples(pair.items)
    verdict.evidence["hits"] = shared_hit_times(list(pair.hits)[:EXAMPLES], pair.first, pair.second)
    return verdict


def _gold(record: GoldRecord) -> str:
    return f"{record.correct}/{record.total}"


def _when(moment: datetime | None) -> str | None:
    return moment.isoformat(timespec="seconds") if moment else None


def reason(verdicts: Sequence[PairVerdict], worker_id: str) -> str:
    """A flag reason naming the suspicious pairs of ``worker_id``, restated as the evidence grows."""
    parts = []
    for verdict in verdicts:
        if not verdict.suspicious:
            continue
        e = verdict.evidence
        part = (
            f"copying with {verdict.partner(worker_id)}: {e['identical_answers']}/{e['shared_items']} "
            f"identical answers (an honest pair agrees at most {e['expected_agreement_at_most']:.0%}), "
            f"p = {e['p_value']:.2g}"
        )
        if e["identical_texts"]:
            part += f", {e['identical_texts']} identical texts"
        parts.append(part)
    return "; ".join(parts)
