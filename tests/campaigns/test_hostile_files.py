"""Campaign and item files that are broken or hostile: located errors, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hits.requester.fileerrors import MAX_YAML_BYTES, InputFileError
from hits.requester.files.campaign import load_campaign_file
from tests.campaigns.test_campaign_file import GOOD, write

REPO = Path(__file__).resolve().parents[2]

BILLION_LAUGHS = """\
template_options:
  a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
  f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
  g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
  h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
  i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
"""


def test_a_non_utf8_byte_in_the_campaign_file_is_located(tmp_path: Path) -> None:
    path = write(tmp_path)
    path.write_bytes(GOOD.encode().replace(b"title: Rate pictures", b"title: Rate p\xe9ctures"))
    with pytest.raises(InputFileError) as caught:
        load_campaign_file(path)
    error = caught.value
    assert (error.path, error.line, error.column) == (str(path), 3, 14)
    assert "not UTF-8" in error.message and "0xe9" in error.message
    assert "line 3, column 14" in str(error)


def test_a_non_utf8_byte_in_the_items_file_is_located(tmp_path: Path) -> None:
    path = write(tmp_path)
    rows = (tmp_path / "items.jsonl").read_bytes().splitlines()
    rows[2] = rows[2].replace(b"A dog.", b"A d\xffg.")
    (tmp_path / "items.jsonl").write_bytes(b"\n".join(rows) + b"\n")
    with pytest.raises(InputFileError) as caught:
        load_campaign_file(path)
    error = caught.value
    assert error.path.endswith("items.jsonl")
    assert error.line == 3 and error.column == rows[2].index(b"\xff") + 1
    assert "not UTF-8" in error.message


def test_an_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + BILLION_LAUGHS)
    started = time.monotonic()
    with pytest.raises(InputFileError) as caught:
        load_campaign_file(path)
    assert time.monotonic() - started < 5
    assert "aliases" in caught.value.message and caught.value.path == str(path)


def test_a_few_aliases_are_still_fine(tmp_path: Path) -> None:
    # In a free-form mapping: template_options are now checked against the template's own keys.
    requirement = "{QualificationTypeId: 000000000000000000L0, Comparator: GreaterThan, IntegerValues: [95]}"
    campaign = GOOD + f"qualification_requirements:\n  - &base {requirement}\n  - *base\n"
    loaded = load_campaign_file(write(tmp_path, campaign))
    assert loaded.spec.qualification_requirements[1] == loaded.spec.qualification_requirements[0]
    assert loaded.spec.qualification_requirements[1]["IntegerValues"] == [95]


def test_an_oversized_campaign_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + "#" + "x" * MAX_YAML_BYTES + "\n")
    with pytest.raises(InputFileError) as caught:
        load_campaign_file(path)
    assert "larger than" in caught.value.message


def test_a_key_given_twice_is_refused_with_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + 'reward: "5.00"\n')
    with pytest.raises(InputFileError) as caught:
        load_campaign_file(path)
    error = caught.value
    assert (error.line, error.field) == (12, "reward")
    assert "already given on line 5" in error.message


def test_a_nested_key_given_twice_names_its_field(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + "quality:\n  min_gold: 3\n  confidence: 0.9\n  min_gold: 1\n")
    with pytest.raises(InputFileError) as caught:
        load_campaign_file(path)
    assert (caught.value.line, caught.value.field) == (15, "quality.min_gold")


def test_a_key_given_twice_in_an_item_line_is_refused(tmp_path: Path) -> None:
    rows = [
        json.dumps({"id": f"i{i}", "item": {"image": f"{i}.png", "sentence": "A dog."}}) for i in range(3)
    ]
    rows[1] = '{"id": "i1", "item": {"image": "1.png", "sentence": "A dog."}, "id": "i9"}'
    with pytest.raises(InputFileError) as caught:
        load_campaign_file(write(tmp_path, items=rows))
    assert (caught.value.line, caught.value.field) == (2, "id")
    assert caught.value.path.endswith("items.jsonl")


def test_launch_reports_a_bad_byte_without_a_traceback(tmp_path: Path) -> None:
    path = write(tmp_path)
    path.write_bytes(GOOD.encode() + b"keywords: caf\xe9\n")
    result = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "server.cli", "launch", str(path)],
        cwd=tmp_path,
        env={
            **os.environ,
            "PYTHONPATH": str(REPO),
            "HITFORGE_VAR_DIR": str(tmp_path / "var"),
            "COLUMNS": "200",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "line 12, column 14: not UTF-8" in result.stdout
