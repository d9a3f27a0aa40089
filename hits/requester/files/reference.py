"""docs/campaigns.md, written from the code: every key of the campaign file and every template's files.

The tables come from the pydantic models (``CampaignSpec`` and what it holds,
each template's ``options_model``, ``item_model`` and ``answer_model``) and
the examples from ``hits.requester.files.examples``, checked as they are
written. Regenerate the page with::

    hitforge campaign reference > docs/campaigns.md
    python -m hits.requester.files.reference > docs/campaigns.md

and a test fails while the committed page differs from what this writes.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from hits.requester.files.campaign import MONEY_JSON_SCHEMA, CampaignSpec, load_campaign_file
from hits.requester.files.examples import EXAMPLES, MEDIA_DIR, example_files
from hits.requester.files.reference_text import INTRODUCTION, TEMPLATES_INTRO
from hits.requester.files.schema import builtin_templates, model_schema
from hits.requester.templates import TaskTemplate
from hits.requester.templates.options import NoOptions

REGENERATE = "hitforge campaign reference > docs/campaigns.md"
HEADER = (
    "<!-- Generated from the code by `" + REGENERATE + "` (hits/requester/files/reference.py).\n"
    "     Edit the models' descriptions or reference_text.py, not this file: a test compares them. -->\n"
)


def _cell(text: str) -> str:
    """Text safe in a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _code(value: Any) -> str:
    text = value if isinstance(value, str) and value else json.dumps(value, ensure_ascii=False)
    return "`" + text + "`"


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _type(schema: dict[str, Any], names: dict[str, str]) -> str:
    """A property's type as a reader says it (``names``: model name -> the section that describes it)."""
    if schema.get("anyOf") == MONEY_JSON_SCHEMA["anyOf"]:
        return 'money ("0.25")'
    if "$ref" in schema:
        name = _ref_name(schema["$ref"])
        return f"object ({names.get(name, name)})"
    if "anyOf" in schema:
        kinds = [_type(s, names) for s in schema["anyOf"] if s.get("type") != "null"]
        nullable = any(s.get("type") == "null" for s in schema["anyOf"])
        return " or ".join(kinds) + (" or null" if nullable else "")
    if "enum" in schema:
        return "one of " + ", ".join(_code(v) for v in schema["enum"])
    if "const" in schema:
        return _code(schema["const"])
    kind = schema.get("type", "any")
    if kind == "array":
        items = schema.get("items")
        return f"list of {_type(items, names)}" if items else "list"
    if kind == "object":
        values = schema.get("additionalProperties")
        if isinstance(values, dict) and values:
            return f"mapping of {_type(values, names)}"
        return "mapping"
    return str(kind)


def _limits(schema: dict[str, Any]) -> str:
    """The allowed values beyond the type: ranges, lengths, patterns (for one alternative or all)."""
    if schema.get("anyOf") == MONEY_JSON_SCHEMA["anyOf"]:
        return "two decimals at most"
    parts: list[str] = []
    for alternative in schema.get("anyOf", []):
        inner = _limits(alternative)
        if inner:
            parts.append(inner)
    bounds = [
        (sign, schema[key])
        for key, sign in (
            ("minimum", "≥"),
            ("exclusiveMinimum", ">"),
            ("maximum", "≤"),
            ("exclusiveMaximum", "<"),
        )
        if key in schema
    ]
    parts += [f"{sign} {value}" for sign, value in bounds]
    for what, low_key, high_key in (
        ("characters", "minLength", "maxLength"),
        ("entries", "minItems", "maxItems"),
        ("keys", "minProperties", "maxProperties"),
    ):
        low, high = schema.get(low_key), schema.get(high_key)
        if low and low == high:
            parts.append(f"exactly {low} {what}")
        elif low and high is not None:
            parts.append(f"{low} to {high} {what}")
        elif high is not None:
            parts.append(f"at most {high} {what}")
        elif low:
            parts.append(f"at least {low} {what[:-1] if low == 1 else what}")
    if "pattern" in schema:
        parts.append(f"matches {_code(schema['pattern'])}")
    items = schema.get("items")
    if isinstance(items, dict) and "enum" in items:
        parts.append("each one of " + ", ".join(_code(v) for v in items["enum"]))
    return "; ".join(parts)


def _table(body: dict[str, Any], names: dict[str, str]) -> list[str]:
    """A model's keys as a Markdown table: key, type, default, allowed values, meaning."""
    rows = ["| key | type | default | allowed | meaning |", "|---|---|---|---|---|"]
    required = set(body.get("required", []))
    for key, prop in body.get("properties", {}).items():
        default = "**required**" if key in required else _code(prop["default"]) if "default" in prop else ""
        rows.append(
            f"| `{key}` | {_cell(_type(prop, names))} | {_cell(default)} | {_cell(_limits(prop))} "
            f"| {_cell(prop.get('description', ''))} |"
        )
    return rows


def _refs(schema: Any) -> Iterator[tuple[str, str]]:
    """(how the key reaches it, model name) for every model a property schema refers to."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            yield "", _ref_name(schema["$ref"])
        for alternative in schema.get("anyOf", []):
            yield from _refs(alternative)
        if isinstance(schema.get("items"), dict):
            yield from ((f"[]{path}", name) for path, name in _refs(schema["items"]))
        if isinstance(schema.get("additionalProperties"), dict):
            yield from ((f".<name>{path}", name) for path, name in _refs(schema["additionalProperties"]))


def model_sections(
    model: type[BaseModel], root: str, level: str = "###", *, describe_root: bool = True
) -> list[str]:
    """A table for ``model`` under the name ``root``, then one for each model it holds, by key path."""
    schema = model_schema(model)
    defs = schema.get("$defs", {})
    bodies = {model.__name__: schema, **defs}
    order = [(root, model.__name__)]
    names = {model.__name__: f"`{root}`" if root else "this table"}
    for path, name in order:  # grows as nested models are found: a breadth-first walk
        for key, prop in bodies[name].get("properties", {}).items():
            for suffix, inner in _refs(prop):
                if inner not in names:
                    where = f"{path}.{key}{suffix}" if path else f"{key}{suffix}"
                    names[inner] = f"`{where}`"
                    order.append((where, inner))
    out: list[str] = []
    for path, name in order:
        body = bodies[name]
        if path != root:
            out += [f"{level} `{path}`" if path else f"{level} Top level", ""]
        if body.get("description") and (describe_root or path != root):
            out += [_first_paragraph(body["description"]), ""]
        out += [*_table(body, names), ""]
    return out


def _first_paragraph(text: str) -> str:
    return " ".join(text.strip().split("\n\n")[0].split()).replace("``", "`")


def _fenced(kind: str, text: str) -> list[str]:
    return [f"```{kind}", text.rstrip("\n"), "```", ""]


def _checked_example(name: str) -> Any:
    """The template's example files, loaded with ``load_campaign_file`` (which raises if they drifted)."""
    files = example_files(name)
    with tempfile.TemporaryDirectory() as folder:
        load_campaign_file(files.write(Path(folder)))
    return files


def template_section(name: str, template: TaskTemplate) -> list[str]:
    """One template: what it does, its options, its items and gold lines, and a complete example."""
    doc = _first_paragraph(type(template).__doc__ or "")
    out = [f"### `{name}`", "", doc, ""]
    out += ["#### Options (`template_options`)", ""]
    if template.options_model is None:
        out += ["This template declares no options model: the mapping is passed to it as written.", ""]
    elif template.options_model is NoOptions or not template.options_model.model_fields:
        out += ["None: leave `template_options` out.", ""]
    else:
        out += model_sections(template.options_model, "template_options", "#####", describe_root=False)
    out += [
        "#### The items file",
        "",
        'One JSON object a line: `{"id": "...", "item": {...}}`. `id` is any text, unique in the file; '
        "`item` holds these keys:",
        "",
        *model_sections(template.item_model, "item", "#####"),
    ]
    files = _checked_example(name) if name in EXAMPLES else None
    if files is not None:
        out += ["A line:", "", *_fenced("json", files.items.splitlines()[0])]
    if template.has_gold:
        out += [
            "#### The gold file",
            "",
            'Lines like the items file\'s, each with the right answer: `{"id": "...", "item": {...}, '
            '"answer": {...}}`. Ids are unique in the gold file. `answer` holds these keys:',
            "",
            *model_sections(template.answer_model, "answer", "#####"),
        ]
        if files is not None and files.gold:
            out += ["A line:", "", *_fenced("json", files.gold.splitlines()[0])]
    else:
        out += [
            "#### No gold file",
            "",
            "There is no single right answer to check against: leave out `gold` and `gold_per_hit`.",
            "",
        ]
    if files is not None:
        out += _example(files)
    return out


def _example(files: Any) -> list[str]:
    listing = ["campaign.yaml", "items.jsonl"] + (["gold.jsonl"] if files.gold else [])
    listing += [f"{MEDIA_DIR}/{p}" for p in files.pictures]
    out = ["#### A complete example", "", "The folder:", "", *_fenced("text", "\n".join(listing))]
    out += [
        "`campaign.yaml`:",
        "",
        *_fenced("yaml", files.campaign),
        "`items.jsonl`:",
        "",
        *_fenced("json", files.items),
    ]
    if files.gold:
        out += ["`gold.jsonl`:", "", *_fenced("json", files.gold)]
    return out


def reference_markdown() -> str:
    """The text of docs/campaigns.md."""
    lines = [HEADER, INTRODUCTION.strip(), "", "## Every key", ""]
    lines += model_sections(CampaignSpec, "")
    lines += ["## Templates", "", TEMPLATES_INTRO.strip(), ""]
    for name, template in builtin_templates().items():
        lines += template_section(name, template)
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> None:
    """Print the reference (``python -m hits.requester.files.reference > docs/campaigns.md``)."""
    print(reference_markdown(), end="")


if __name__ == "__main__":
    main()
