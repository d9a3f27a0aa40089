"""The memoised Beta posterior gives exactly what scipy gives."""

from __future__ import annotations

from scipy.stats import beta

from hits.requester.quality import policy
from hits.requester.quality.policy import GoldRecord, probability_below


def test_the_cached_posterior_equals_scipy_bit_for_bit() -> None:
    for threshold in (0.5, 0.6, 0.8):
        for total in range(0, 61):
            for correct in range(0, total + 1):
                expected = float(beta.cdf(threshold, 1 + correct, 1 + total - correct))
                # Twice: the first call fills the cache, the second reads it.
                assert probability_below(GoldRecord(correct, total), threshold) == expected
                assert probability_below(GoldRecord(correct, total), threshold) == expected


def test_repeated_records_are_served_from_the_cache() -> None:
    probability_below(GoldRecord(7, 9), 0.61)
    before = policy._beta_cdf.cache_info().hits
    probability_below(GoldRecord(7, 9), 0.61)
    assert policy._beta_cdf.cache_info().hits == before + 1


def test_an_integer_threshold_and_a_float_one_share_an_entry() -> None:
    # 1 and 1.0 are the same threshold: the answer must not depend on how it was spelt.
    assert probability_below(GoldRecord(3, 4), 1) == probability_below(GoldRecord(3, 4), 1.0) == 1.0


def test_thresholds_at_or_outside_the_unit_interval_match_scipy() -> None:
    for threshold in (-0.5, 0.0, 1.0, 1.5):
        for correct, total in ((0, 0), (3, 4), (10, 10)):
            expected = float(beta.cdf(threshold, 1 + correct, 1 + total - correct))
            assert probability_below(GoldRecord(correct, total), threshold) == expected
