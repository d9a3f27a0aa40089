"""docs/campaigns.md and the JSON Schema are generated from the campaign model, and stay so (issue 25)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from hits.requester.files.campaign import load_campaign_file
from hits.requester.files.examples import EXAMPLES, example_files
from hits.requester.files.reference import REGENERATE, reference_markdown
from hits.requester.files.schema import builtin_templates, campaign_schema
from server.cli.main import main
from tests.helpers import REPO

DOC = REPO / "docs" / "campaigns.md"


def test_the_committed_reference_is_the_generated_one() -> None:
    generated = reference_markdown()
    assert DOC.read_text(encoding="utf-8") == generated, (
        f"docs/campaigns.md differs from what the code generates; regenerate it with: {REGENERATE}"
    )


def test_hitforge_campaign_reference_prints_the_page(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["campaign", "reference"], env={"HITFORGE_VAR_DIR": str(tmp_path)}, catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert result.output == reference_markdown()


def test_the_reference_lists_every_key_of_every_model() -> None:
    text = reference_markdown()
    from hits.requester.files.campaign import CampaignSpec, QualityPolicy

    for model in (CampaignSpec, QualityPolicy):
        for name in model.model_fields:
            assert f"| `{name}` |" in text, name
    for name, template in builtin_templates().items():
        assert f"### `{name}`" in text
        for key in template.item_model.model_fields:
            assert f"| `{key}` |" in text, (name, key)
        for key in template.options_model.model_fields if template.options_model else {}:
            assert f"| `{key}` |" in text, (name, key)
    # What the tester had to guess: these keys, and that items_per_hit leaves gold out.
    for key in ("gold", "media_dir", "title", "lifetime_seconds"):
        assert f"| `{key}` |" in text
    assert "`items_per_hit` counts items from the items file only" in text


def test_every_builtin_template_has_an_example() -> None:
    assert set(builtin_templates()) == set(EXAMPLES)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_each_example_loads_as_shown(name: str, tmp_path: Path) -> None:
    files = example_files(name)
    loaded = load_campaign_file(files.write(tmp_path))
    assert loaded.spec.template == name
    assert len(loaded.items) == len(EXAMPLES[name].items)
    assert len(loaded.gold) == len(EXAMPLES[name].gold)
    text = reference_markdown()
    # The page shows the very files that were loaded.
    assert files.campaign.rstrip("\n") in text and files.items.splitlines()[0] in text


def _validator() -> jsonschema.Draft202012Validator:
    schema = campaign_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_schema_describes_itself() -> None:
    schema = campaign_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] and schema["title"] and schema["description"]
    assert schema["properties"]["template"]["enum"] == sorted(builtin_templates())


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_schema_takes_every_example(name: str) -> None:
    errors = list(_validator().iter_errors(yaml.safe_load(example_files(name).campaign)))
    assert errors == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d.update(lifetime=86400), "'lifetime' was unexpected"),
        (lambda d: d["quality"].update(acuracy_threshold=0.7), "'acuracy_threshold' was unexpected"),
        (lambda d: d["template_options"].update(gold_tolerence=1), "'gold_tolerence' was unexpected"),
        (lambda d: d.update(reward=0.1), "0.1 is not valid"),
        (lambda d: d.pop("gold"), "'gold' is a required property"),
    ],
)
def test_the_schema_refuses_what_the_loader_refuses(change, expected: str) -> None:  # type: ignore[no-untyped-def]
    data = yaml.safe_load(example_files("rating").campaign)
    data.setdefault("quality", {})
    change(data)
    messages = [e.message for e in _validator().iter_errors(data)]
    assert any(expected in m for m in messages), messages


def test_hitforge_campaign_schema_prints_it(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["campaign", "schema"], env={"HITFORGE_VAR_DIR": str(tmp_path)}, catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == campaign_schema()
