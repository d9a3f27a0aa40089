"""`hitforge quality simulate --compare`: today's rule against the worker model, pooled, with intervals."""

from __future__ import annotations

import re

from click.testing import CliRunner

from demo.simulation.cli import quality


def test_simulate_compare_prints_the_before_after_table_with_intervals() -> None:
    result = CliRunner().invoke(quality, ["simulate", "--compare", "issue", "--seeds", "1"])
    assert result.exit_code == 0, result.output
    assert "| metric | target | before (today's rule) | after (worker model) |" in result.output
    assert "min_gold 4; seeds 1..1; pooled, 95% Wilson intervals" in result.output
    # Every rate is pooled counts with its interval, for both rules.
    row = next(line for line in result.output.splitlines() if line.startswith("| precision of flags"))
    assert len(re.findall(r"\d\.\d{3} \(\d+/\d+; \d\.\d{3}-\d\.\d{3}\)", row)) == 2
