"""How one round's text differs from the previous one: the per-round record's figures.

Tokens are words (letters, digits and inner apostrophes), case-folded. The
stopping rule compares word n-gram *sets* with Jaccard's index; the edit
distance is rapidfuzz's Levenshtein distance over characters. Part-of-speech
counts need a tagger: NLTK's averaged perceptron tagger when NLTK and its
data are installed (``python -m nltk.downloader averaged_perceptron_tagger_eng``),
otherwise they are left out (``None``), never guessed.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from typing import Any

from rapidfuzz.distance import Levenshtein

_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
#: Penn Treebank tags grouped the way the report shows them.
_POS_GROUPS = {"NN": "nouns", "VB": "verbs", "JJ": "adjectives", "RB": "adverbs"}


def tokens(text: str) -> list[str]:
    """The text's words, case-folded, in order."""
    return [t.casefold() for t in _TOKEN.findall(text)]


def ngrams(words: list[str], n: int) -> set[tuple[str, ...]]:
    """The set of word n-grams (a text shorter than ``n`` words is one n-gram of all of it)."""
    if len(words) < n:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def jaccard(previous: str, text: str, n: int = 2) -> float:
    """Jaccard similarity of the two texts' word n-gram sets (1.0 for two empty texts)."""
    a, b = ngrams(tokens(previous), n), ngrams(tokens(text), n)
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def edit_distance(previous: str, text: str) -> int:
    """Characters inserted, deleted or substituted to turn ``previous`` into ``text``."""
    return int(Levenshtein.distance(previous, text))


@cache
def _tagger() -> Any:
    """NLTK's ``pos_tag`` if NLTK and its tagger data are installed, else None (looked up once)."""
    try:
        import nltk
    except ImportError:
        return None
    try:
        nltk.pos_tag(["a", "test"])
    except LookupError:
        return None
    return nltk.pos_tag


def tagger_available() -> bool:
    """Whether part-of-speech counts are recorded (NLTK with its tagger data installed)."""
    return _tagger() is not None


def pos_counts(text: str) -> dict[str, int] | None:
    """Nouns, verbs, adjectives and adverbs in the text; None without a tagger."""
    tag = _tagger()
    if tag is None:
        return None
    words = _TOKEN.findall(text)
    counts: Counter[str] = Counter()
    for _word, label in tag(words):
        group = _POS_GROUPS.get(str(label)[:2])
        if group:
            counts[group] += 1
    return {name: counts.get(name, 0) for name in _POS_GROUPS.values()}


def round_metrics(previous: str, text: str, n: int = 2) -> dict[str, Any]:
    """The figures recorded for one approved round."""
    return {
        "tokens": len(tokens(text)),
        "previous_tokens": len(tokens(previous)),
        "jaccard": round(jaccard(previous, text, n), 4),
        "ngram": n,
        "edit_distance": edit_distance(previous, text),
        "pos": pos_counts(text),
    }
