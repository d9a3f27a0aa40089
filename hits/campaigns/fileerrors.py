"""Loading YAML and JSONL files so that every error names file, line and field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError


class InputFileError(ValueError):
    """A problem in an input file, located precisely."""

    def __init__(self, path: Path | str, line: int | None, field: str | None, message: str):
        self.path, self.line, self.field, self.message = str(path), line, field, message
        where = str(path) + (f", line {line}" if line else "") + (f", field '{field}'" if field else "")
        super().__init__(f"{where}: {message}")


class InputFileErrors(ValueError):
    """Several problems found in one pass, reported together."""

    def __init__(self, errors: list[InputFileError]):
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))


def _line_map(node: yaml.Node, path: tuple[Any, ...], out: dict[tuple[Any, ...], int]) -> None:
    out[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            out[(*path, key.value)] = key.start_mark.line + 1
            _line_map(value, (*path, key.value), out)
            out[(*path, key.value)] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for index, child in enumerate(node.value):
            _line_map(child, (*path, index), out)


def load_yaml(path: Path) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """The YAML document in ``path`` and a map from field paths to line numbers."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputFileError(path, None, None, f"cannot read file: {exc.strerror}") from exc
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise InputFileError(path, line, None, f"not valid YAML: {exc.problem}") from exc
    lines: dict[tuple[Any, ...], int] = {}
    if node is not None:
        _line_map(node, (), lines)
    return data, lines


def _field_name(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) if loc else ""


def validation_errors(
    path: Path | str,
    exc: ValidationError,
    lines: dict[tuple[Any, ...], int] | None,
    line: int | None = None,
    prefix: tuple[Any, ...] = (),
) -> InputFileErrors:
    """Turn a pydantic ``ValidationError`` into located file errors."""
    out = []
    for err in exc.errors():
        loc = (*prefix, *err["loc"])
        at = line
        if lines is not None:
            probe = loc
            while probe and probe not in lines:
                probe = probe[:-1]
            at = lines.get(probe, lines.get((), None))
        out.append(InputFileError(path, at, _field_name(loc), err["msg"]))
    return InputFileErrors(out)


M = TypeVar("M", bound=BaseModel)


def parse_model(model: type[M], path: Path, data: Any, lines: dict[tuple[Any, ...], int]) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_errors(path, exc, lines) from exc


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSON Lines file."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise InputFileError(path, None, None, f"cannot read file: {exc.strerror}") from exc
    with handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputFileError(path, number, None, f"not valid JSON: {exc.msg}") from exc
            if not isinstance(obj, dict):
                raise InputFileError(path, number, None, "each line must be a JSON object")
            yield number, obj
