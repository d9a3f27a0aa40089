"""``make test``'s two halves: every test runs in at least one, and one that reaches the backend in both."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import _runs_in_half

TESTS = Path(__file__).resolve().parent
HALVES = ("embedded", "postgres")


@dataclass
class FakeItem:
    """What the selection reads of a collected test."""

    path: Path
    fixturenames: tuple[str, ...] = ()
    markers: tuple[str, ...] = ()

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.markers else None


def halves(item: FakeItem) -> set[str]:
    seen: dict[Path, bool] = {}
    return {half for half in HALVES if _runs_in_half(item, half, seen)}  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        # Through the settings fixture (directly or under another fixture): both backends.
        (FakeItem(TESTS / "market" / "test_clocks.py", ("mturk", "settings")), {"embedded", "postgres"}),
        # Naming the test services itself, or through a helper module that does.
        (FakeItem(TESTS / "deploy" / "test_stack.py"), {"embedded", "postgres"}),
        (FakeItem(TESTS / "deploy" / "test_backup_restore.py"), {"embedded", "postgres"}),
        # Pages in Chromium: once, on the embedded default.
        (FakeItem(TESTS / "browser" / "test_worker_flow.py", ("settings",), ("browser",)), {"embedded"}),
        # Neither: once. A demo run as a user runs it (its own embedded files) beside the PostgreSQL run.
        (FakeItem(TESTS / "templates" / "test_rank_demo.py", (), ("celery",)), {"postgres"}),
        (FakeItem(TESTS / "test_layers.py", ("tmp_path",)), {"embedded"}),
    ],
)
def test_each_test_runs_in_the_halves_its_backend_needs(item: FakeItem, expected: set[str]) -> None:
    assert halves(item) == expected


def test_every_module_of_the_suite_runs_somewhere() -> None:
    for path in TESTS.rglob("test_*.py"):
        for fixtures in ((), ("settings",)):
            for markers in ((), ("celery",)):
                assert halves(FakeItem(path, fixtures, markers)), path
