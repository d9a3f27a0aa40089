"""How one round's text differs from the previous one: the per-round record's figures.

Tokens are words (letters, digits and inner apostrophes), case-folded. The
stopping rule compares word n-gram *sets* with Jaccard's index; the edit
distance is rapidfuzz's Levenshtein distance over characters. Part-of-speech
counts need a tagger, chosen per rounds stage (``rounds: {pos_tagger: ...}``):
``nltk`` (the default), NLTK's averaged perceptron tagger when NLTK and its
data are installed (``python -m nltk.downloader averaged_perceptron_tagger_eng``);
``none``; or a callable a package registers in the ``hitforge.taggers``
entry-point group. Without one they are left out (``None``), never guessed.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable
from functools import cache
from importlib.metadata import entry_points
from typing import Any, cast

from rapidfuzz.distance import Levenshtein

log = logging.getLogger(__name__)

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


#: A part-of-speech tagger: words in, (word, Penn Treebank tag) pairs out, in order.
Tagger = Callable[[list[str]], Iterable[tuple[str, str]]]
#: The entry-point group other taggers register under (``pos_tagger: <name>`` in a rounds policy).
TAGGER_GROUP = "hitforge.taggers"
#: Built-in tagger names: NLTK's (when its data is installed), and none at all.
BUILTIN_TAGGERS = ("nltk", "none")


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


def tagger_names() -> list[str]:
    """Every tagger name a rounds policy may give: the built-in ones and the installed entry points."""
    return sorted({*BUILTIN_TAGGERS, *(ep.name for ep in entry_points(group=TAGGER_GROUP))})


def tagger_named(name: str = "nltk") -> Tagger | None:
    """The tagger called ``name``: NLTK's (None without its data), none, or an entry point's callable.

    An entry point names a callable taking a list of words and answering
    ``(word, tag)`` pairs with Penn Treebank tags (NN*, VB*, JJ*, RB* are counted).
    Raises ``ValueError`` for a name nothing provides.
    """
    if name == "none":
        return None
    if name == "nltk":
        return cast("Tagger | None", _tagger())
    found = [ep for ep in entry_points(group=TAGGER_GROUP) if ep.name == name]
    if not found:
        raise ValueError(
            f"unknown part-of-speech tagger {name!r}; choose one of: {', '.join(tagger_names())}"
        )
    return cast(Tagger, found[0].load())


def tagger_available(name: str = "nltk") -> bool:
    """Whether part-of-speech counts are recorded with the tagger called ``name``."""
    return tagger_named(name) is not None


def pos_counts(text: str, tagger: Tagger | None | str = "nltk") -> dict[str, int] | None:
    """Nouns, verbs, adjectives and adverbs in the text; None without a tagger (never guessed)."""
    tag = tagger_named(tagger) if isinstance(tagger, str) else tagger
    if tag is None:
        return None
    words = _TOKEN.findall(text)
    counts: Counter[str] = Counter()
    for _word, label in tag(words):
        group = _POS_GROUPS.get(str(label)[:2])
        if group:
            counts[group] += 1
    return {name: counts.get(name, 0) for name in _POS_GROUPS.values()}


def round_metrics(previous: str, text: str, n: int = 2, tagger: str = "nltk") -> dict[str, Any]:
    """The figures recorded for one approved round (parts of speech by the tagger called ``tagger``)."""
    return {
        "tokens": len(tokens(text)),
        "previous_tokens": len(tokens(previous)),
        "jaccard": round(jaccard(previous, text, n), 4),
        "ngram": n,
        "edit_distance": edit_distance(previous, text),
        "pos": _pos_or_none(text, tagger),
    }


def _pos_or_none(text: str, tagger: str) -> dict[str, int] | None:
    """Counts by ``tagger``; None (and a warning) where it is not installed, not a stopped workflow."""
    try:
        return pos_counts(text, tagger)
    except ValueError as exc:  # checked at launch, but this worker's machine may lack the package
        log.warning("no part-of-speech counts: %s", exc)
        return None
