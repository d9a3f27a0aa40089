"""An unknown key is refused with file, line and field, and the key that was meant (issue 25)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hits.requester.fileerrors import InputFileError, InputFileErrors, unknown_key_message
from hits.requester.files.campaign import load_campaign_file
from tests.campaigns.test_campaign_file import GOOD, write


def _errors(path: Path) -> list[InputFileError]:
    with pytest.raises((InputFileError, InputFileErrors)) as caught:
        load_campaign_file(path)
    error = caught.value
    return error.errors if isinstance(error, InputFileErrors) else [error]


def test_a_misnamed_top_level_key_names_the_one_meant(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + "lifetime: 86400\n")
    [error] = _errors(path)
    assert (Path(error.path).name, error.line, error.field) == ("campaign.yaml", 12, "lifetime")
    assert error.message == "not a key of this file; did you mean lifetime_seconds?"
    assert "campaign.yaml, line 12, field 'lifetime': not a key of this file; did you mean" in str(error)


@pytest.mark.parametrize(
    ("extra", "field", "meant"),
    [
        ("quality:\n  acuracy_threshold: 0.7\n", "quality.acuracy_threshold", "accuracy_threshold"),
        ("quality:\n  spot_checks: {rat: 0.1}\n", "quality.spot_checks.rat", "rate"),
        ("quality:\n  bonus: {amount: '0.50', reson: hi}\n", "quality.bonus.reson", "reason"),
        ("template_options: {gold_tolerence: 1}\n", "template_options.gold_tolerence", "gold_tolerance"),
        ("titel: Rate\n", "titel", "title"),
    ],
)
def test_a_misnamed_nested_key_names_the_one_meant_at_its_level(
    tmp_path: Path, extra: str, field: str, meant: str
) -> None:
    [error] = _errors(write(tmp_path, GOOD + extra))
    assert error.field == field and error.line is not None and error.line >= 12
    where = field.rpartition(".")[0]
    assert error.message == f"not a key of {where or 'this file'}; did you mean {meant}?"


def test_a_key_like_no_other_lists_the_valid_ones(tmp_path: Path) -> None:
    [error] = _errors(write(tmp_path, GOOD + "quality:\n  zzz: 1\n"))
    assert error.field == "quality.zzz"
    assert error.message.startswith(
        "not a key of quality; the keys here are: accuracy_threshold, block_reason"
    )


def test_a_misnamed_key_of_an_item_line_names_the_one_meant(tmp_path: Path) -> None:
    items = [
        json.dumps({"id": f"i{i}", "item": {"image": "https://img/x.png", "sentance": "A dog."}})
        for i in range(4)
    ]
    errors = _errors(write(tmp_path, items=items))
    typo = [e for e in errors if e.field == "item.sentance"]
    assert typo and typo[0].line == 1 and Path(typo[0].path).name == "items.jsonl"
    assert typo[0].message == "not a key of item; did you mean sentence?"


def test_a_workflow_stage_key_is_matched_against_its_written_name(tmp_path: Path) -> None:
    extra = "workflow:\n  stages:\n    - {name: describe, template: refine, form: first}\n"
    errors = _errors(write(tmp_path, GOOD + extra))
    assert any(e.message.endswith("did you mean from?") for e in errors), [str(e) for e in errors]


def test_unknown_key_message_prefers_a_prefix_when_nothing_is_close() -> None:
    assert unknown_key_message("lifetime", ["lifetime_seconds", "name"]).endswith(
        "did you mean lifetime_seconds?"
    )
    assert (
        unknown_key_message("q", ["alpha", "beta"])
        == "not a key of this file; the keys here are: alpha, beta"
    )
