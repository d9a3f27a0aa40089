"""``python -m bench`` rewrites only its sections of docs/benchmarks.md, between their markers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench import doc_blocks
from bench.suite import SUITE

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "benchmarks.md"
CHEAP = ("grading_core", "cli_startup")


def _without(text: str, names: tuple[str, ...]) -> str:
    """``text`` with the insides of ``names``' sections emptied: what the runner must leave alone."""
    for name in names:
        text = doc_blocks.replace_block(text, name, "")
    return text


def test_every_benchmark_has_a_section_in_the_doc() -> None:
    text = DOC.read_text()
    missing = [b.name for b in SUITE if doc_blocks.block(text, b.name) is None]
    assert not missing


def test_quick_run_rewrites_its_sections_and_nothing_else(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    before = DOC.read_text()
    # Mark the sections' old insides, so that a section left as it was cannot pass for rewritten.
    for name in CHEAP:
        before = doc_blocks.replace_block(before, name, "OLD FIGURES")
    doc.write_text(before)
    result = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--only", ",".join(CHEAP), "--doc", str(doc)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    after = doc.read_text()
    assert _without(after, CHEAP) == _without(before, CHEAP)
    grading = doc_blocks.block(after, "grading_core")
    startup = doc_blocks.block(after, "cli_startup")
    assert grading is not None and startup is not None
    assert "OLD FIGURES" not in grading + startup
    assert "python -m bench.grading_core --assignments 3000 --uncached-slice 300" in grading
    assert "| cached, warm cache |" in grading
    assert "| `hitforge --help` |" in startup
    for section in (grading, startup):
        assert (
            "Machine: " in section and " cores" in section and "Python " in section and "SQLite " in section
        )


def test_no_write_leaves_the_doc_alone(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text(DOC.read_text())
    subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--only", "grading_core", "--no-write", "--doc", str(doc)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=600,
    )
    assert doc.read_text() == DOC.read_text()


def test_a_section_without_markers_is_refused_before_anything_runs() -> None:
    with pytest.raises(doc_blocks.MissingMarkers):
        doc_blocks.replace_block("# Benchmarks\n", "grading_core", "figures")
    text = "a\n<!-- bench:x begin -->\nold\n<!-- bench:x end -->\nb\n"
    assert (
        doc_blocks.replace_block(text, "x", "new")
        == "a\n<!-- bench:x begin -->\nnew\n<!-- bench:x end -->\nb\n"
    )
