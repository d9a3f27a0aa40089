"""Fixtures for the qualification tests: the default bank, and small bank files to break."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from qualification.bank import DEFAULT_BANK, Bank, load_bank


@pytest.fixture(scope="session")
def bank() -> Bank:
    return load_bank(DEFAULT_BANK)


def small_bank_data() -> dict[str, Any]:
    """A valid two-section bank as plain data, for tests to break one thing at a time."""
    return {
        "title": "Tiny test",
        "overall_pass": 50,
        "sections": [
            {
                "id": "spelling",
                "kind": "spelling",
                "instructions": "Spelled right?",
                "sample": 2,
                "pass_threshold": 1,
            },
            {
                "id": "grammar",
                "kind": "grammar",
                "instructions": "Good English?",
                "sample": 2,
                "pass_threshold": 1,
            },
        ],
        "items": [
            {"id": "s1", "section": "spelling", "sentence": "A red kite flies high.", "answer": "correct"},
            {"id": "s2", "section": "spelling", "sentence": "A grean hat.", "answer": "incorrect"},
            {"id": "g1", "section": "grammar", "sentence": "The cats sleeps.", "answer": "incorrect"},
            {"id": "g2", "section": "grammar", "sentence": "A cat asleep on a mat.", "answer": "correct"},
        ],
    }


def write_bank(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "bank.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path
