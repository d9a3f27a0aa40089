"""Item analysis flags easy, hard and mis-keyed items."""

from __future__ import annotations

import math
import random

import pytest

from qualification.analysis import item_analysis


def _simulated_attempts(n: int = 400) -> list[dict[str, bool]]:
    """Workers of varying skill; ``bad`` is keyed wrongly, so skilled workers miss it."""
    rng = random.Random(42)
    attempts = []
    for _ in range(n):
        skill = rng.random()
        row = {f"good-{i}": rng.random() < 0.3 + 0.65 * skill for i in range(12)}
        row["bad"] = rng.random() < 0.9 - 0.7 * skill
        row["easy"] = rng.random() < 0.99
        row["hard"] = rng.random() < 0.1
        attempts.append(row)
    return attempts


def test_planted_bad_item_is_flagged() -> None:
    rows = {r.item_id: r for r in item_analysis(_simulated_attempts())}
    assert rows["bad"].flags == ("negative discrimination",)
    assert rows["bad"].discrimination is not None and rows["bad"].discrimination < -0.2
    assert "too easy" in rows["easy"].flags
    assert "too hard" in rows["hard"].flags
    for i in range(12):
        good = rows[f"good-{i}"]
        assert good.flags == ()
        assert good.discrimination is not None and good.discrimination > 0.1
        assert 0.3 < good.p_value < 0.95
    assert all(r.responses == 400 for r in rows.values())


def test_p_value_and_undefined_correlation() -> None:
    attempts = [{"a": True, "b": True}, {"a": True, "b": False}, {"a": True, "b": True}]
    rows = {r.item_id: r for r in item_analysis(attempts, min_flag_responses=3)}
    assert rows["a"].p_value == 1.0 and rows["a"].discrimination is None  # no variance
    assert rows["a"].flags == ("too easy",)
    assert rows["b"].p_value == pytest.approx(2 / 3)


def test_rest_score_excludes_the_item_itself() -> None:
    # Item x is right exactly when the rest is weak: a perfectly negative correlation.
    attempts = [
        {"x": True, "y": False, "z": False},
        {"x": False, "y": True, "z": True},
        {"x": True, "y": False, "z": False},
        {"x": False, "y": True, "z": True},
    ]
    x = next(r for r in item_analysis(attempts, min_flag_responses=4) if r.item_id == "x")
    assert x.discrimination is not None and math.isclose(x.discrimination, -1.0)
    assert "negative discrimination" in x.flags


def test_an_item_is_not_judged_on_one_answer() -> None:
    """One right answer made an item "too easy" on the dashboard: too few answers say nothing."""
    rows = {r.item_id: r for r in item_analysis([{"a": True, "b": False}])}
    assert rows["a"].flags == rows["b"].flags == ("too few answers to judge",)
    five = [{"a": True, "b": False}] * 5
    assert {r.item_id: r.flags for r in item_analysis(five)} == {"a": ("too easy",), "b": ("too hard",)}
