"""The campaign file as a JSON Schema (draft 2020-12), generated from ``CampaignSpec``.

Editors use it to complete and check a campaign file as it is typed
(``hitforge campaign schema``); docs/campaigns.md is written from the same
models (``hits.requester.files.reference``). The loader stays the authority:
it also checks what a schema cannot say (the items against the template,
the gold pool, the budget).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import PydanticUndefined, to_jsonable_python

from hits.requester.files.campaign import CampaignSpec
from hits.requester.templates import TaskTemplate, available_templates

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "urn:hitforge:schema:campaign-file"
DESCRIPTION = (
    "A hitforge campaign file (campaign.yaml): the HITs' title, reward and times, the items and gold "
    "files, the template and its options, the budget and the quality policy. docs/campaigns.md "
    "describes every key."
)


def builtin_templates() -> dict[str, TaskTemplate]:
    """The templates hitforge ships (installed packages may add more): those the reference documents."""
    return {
        name: template
        for name, template in available_templates().items()
        if type(template).__module__.startswith("hits.requester.templates.")
    }


def _annotation_models(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in get_args(annotation) if get_origin(annotation) is not None or get_args(annotation) else ():
        yield from _annotation_models(arg)


def nested_models(model: type[BaseModel]) -> list[type[BaseModel]]:
    """``model`` and every model its fields hold, through lists, mappings and optionals, each once."""
    found: list[type[BaseModel]] = []
    todo = [model]
    while todo:
        current = todo.pop(0)
        if current in found:
            continue
        found.append(current)
        for field in current.model_fields.values():
            todo.extend(_annotation_models(field.annotation))
    return found


def field_defaults(model: type[BaseModel]) -> dict[str, dict[str, Any]]:
    """Model name -> key -> default as JSON, for every optional field of ``model`` and its nested models.

    pydantic leaves a ``default_factory``'s value out of its schema; a reader
    (and an editor's completion) needs it.
    """
    out: dict[str, dict[str, Any]] = {}
    for current in nested_models(model):
        own: dict[str, Any] = {}
        for name, field in current.model_fields.items():
            if field.is_required():
                continue
            value = field.get_default(call_default_factory=True)
            if value is not PydanticUndefined:
                own[field.alias or name] = to_jsonable_python(value)
        out[current.__name__] = own
    return out


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON Schema with every default filled in (also those from a factory)."""
    schema = model.model_json_schema()
    defaults = field_defaults(model)
    for name, body in [(model.__name__, schema), *schema.get("$defs", {}).items()]:
        for key, value in defaults.get(name, {}).items():
            prop = body.get("properties", {}).get(key)
            if prop is not None and "default" not in prop:
                prop["default"] = value
    return schema


def _prefixed(schema: Any, prefix: str) -> Any:
    """``schema`` with its ``$defs`` references renamed ``prefix + name`` (to merge several schemas' defs)."""
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                out[key] = "#/$defs/" + prefix + value.removeprefix("#/$defs/")
            else:
                out[key] = _prefixed(value, prefix)
        return out
    if isinstance(schema, list):
        return [_prefixed(v, prefix) for v in schema]
    return schema


def _template_rule(name: str, template: TaskTemplate, defs: dict[str, Any]) -> dict[str, Any]:
    """``if template is name then`` its options and its gold keys."""
    then: dict[str, Any] = {"properties": {}}
    if template.options_model is not None:
        options = _prefixed(model_schema(template.options_model), f"{name}.")
        for def_name, body in options.pop("$defs", {}).items():
            defs[f"{name}.{def_name}"] = body
        then["properties"]["template_options"] = options
    if template.has_gold:
        # gold_per_hit defaults to 1, so a gold file is needed unless gold_per_hit is 0.
        then["if"] = {"properties": {"gold_per_hit": {"const": 0}}, "required": ["gold_per_hit"]}
        then["else"] = {"required": ["gold"]}
    else:
        then["properties"]["gold"] = {"type": "null"}
        then["properties"]["gold_per_hit"] = {"const": 0}
    return {"if": {"properties": {"template": {"const": name}}, "required": ["template"]}, "then": then}


def campaign_schema() -> dict[str, Any]:
    """The JSON Schema of a campaign file: every key, and per template its options and gold keys."""
    body = model_schema(CampaignSpec)
    defs: dict[str, Any] = body.pop("$defs", {})
    templates = available_templates()
    body["properties"] = copy.deepcopy(body["properties"])
    body["properties"]["template"]["enum"] = sorted(templates)
    rules = [_template_rule(name, templates[name], defs) for name in sorted(templates)]
    return {
        "$schema": SCHEMA_DIALECT,
        "$id": SCHEMA_ID,
        "title": "hitforge campaign file",
        "description": DESCRIPTION,
        **{k: v for k, v in body.items() if k not in ("title", "description")},
        "allOf": rules,
        "$defs": defs,
    }
