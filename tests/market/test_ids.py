"""Identifiers: MTurk's shapes, every character of the alphabet equally likely."""

from __future__ import annotations

import re
from collections import Counter

from hits.market import ids


def test_ids_have_mturks_shapes() -> None:
    assert re.fullmatch(r"3[A-Z0-9]{29}", ids.new_entity_id())
    assert re.fullmatch(r"A[A-Z0-9]{13}", ids.new_customer_id())
    assert re.fullmatch(r"AKIA[A-Z0-9]{16}", ids.new_access_key_id())
    assert len({ids.new_entity_id() for _ in range(1000)}) == 1000


def test_every_character_is_equally_likely() -> None:
    counts = Counter("".join(ids.new_entity_id()[1:] for _ in range(4000)))  # 116,000 characters
    assert set(counts) == set(ids._ALPHABET)
    expected = 116_000 / 36  # about 3,222 each; a bias of 1/7 (bytes mod 36 unchecked) would show
    assert all(abs(n - expected) < 0.08 * expected for n in counts.values()), counts
