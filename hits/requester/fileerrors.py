"""Loading YAML and JSONL files so that every error names file, line and field."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError


class InputFileError(ValueError):
    """A problem in an input file, located precisely."""

    def __init__(
        self,
        path: Path | str,
        line: int | None,
        field: str | None,
        message: str,
        *,
        column: int | None = None,
    ):
        self.path, self.line, self.field, self.message = str(path), line, field, message
        self.column = column
        where = (
            str(path)
            + (f", line {line}" if line else "")
            + (f", column {column}" if column else "")
            + (f", field '{field}'" if field else "")
        )
        super().__init__(f"{where}: {message}")


class InputFileErrors(ValueError):
    """Several problems found in one pass, reported together."""

    def __init__(self, errors: list[InputFileError]):
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))


#: The largest YAML document read, in bytes: campaign files and banks are a few kilobytes.
MAX_YAML_BYTES = 1_000_000
#: The most nodes a YAML document may stand for once its aliases are expanded. An alias
#: re-uses a node, so nine lines of nine aliases each ("billion laughs") stand for 9**9
#: nodes: walking or validating that ran out of memory.
MAX_YAML_NODES = 100_000
_MERGE_TAG = "tag:yaml.org,2002:merge"


def _decode(path: Path, raw: bytes, first_line: int = 1) -> str:
    """``raw`` as UTF-8, or an error naming the line and column of the first bad byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = first_line + before.count(b"\n")
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise InputFileError(
            path,
            line,
            None,
            f"not UTF-8: byte 0x{raw[exc.start]:02x} cannot start or continue a character "
            "(save the file as UTF-8)",
            column=column,
        ) from exc


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """How many nodes ``node`` stands for with every alias expanded (memoised per node)."""
    known = memo.get(id(node))
    if known is not None:
        return known
    memo[id(node)] = 1  # a recursive alias (&a [*a]) counts once instead of looping
    size = 1
    if isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    elif isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, memo) for child in node.value)
    size = min(size, MAX_YAML_NODES + 1)  # enough to know it is too big; keeps the sums small
    memo[id(node)] = size
    return size


def _line_map(path: Path, node: yaml.Node, at: tuple[Any, ...], out: dict[tuple[Any, ...], int]) -> None:
    """Record the line of every field under ``at``; refuse a key given twice in one mapping."""
    out[at] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        first: dict[tuple[str, Any], int] = {}
        for key, value in node.value:
            line = key.start_mark.line + 1
            if key.tag != _MERGE_TAG and isinstance(key, yaml.ScalarNode):
                # Without this, the last of two "reward:" lines silently won.
                ident = (key.tag, key.value)
                if ident in first:
                    raise InputFileError(
                        path,
                        line,
                        _field_name((*at, key.value)),
                        f"this key was already given on line {first[ident]}; give each key once",
                    )
                first[ident] = line
            _line_map(path, value, (*at, key.value), out)
            out[(*at, key.value)] = line
    elif isinstance(node, yaml.SequenceNode):
        for index, child in enumerate(node.value):
            _line_map(path, child, (*at, index), out)


def load_yaml(path: Path) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """The YAML document in ``path`` and a map from field paths to line numbers.

    Refused with file and line: a document over ``MAX_YAML_BYTES``, bytes
    that are not UTF-8 (with the column), a key given twice in one mapping
    (with the field), and aliases expanding past ``MAX_YAML_NODES`` nodes.
    """
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_YAML_BYTES + 1)
    except OSError as exc:
        raise InputFileError(path, None, None, f"cannot read file: {exc.strerror}") from exc
    if len(raw) > MAX_YAML_BYTES:
        raise InputFileError(path, None, None, f"the file is larger than {MAX_YAML_BYTES:,} bytes")
    text = _decode(path, raw)
    loader = yaml.SafeLoader(text)
    try:
        try:
            node = loader.get_single_node()
            if node is None:
                return None, {}
            if _expanded_size(node, {}) > MAX_YAML_NODES:
                raise InputFileError(
                    path,
                    None,
                    None,
                    f"the document stands for more than {MAX_YAML_NODES:,} values once its "
                    "aliases (*name) are expanded; write the values out or use fewer aliases",
                )
            lines: dict[tuple[Any, ...], int] = {}
            _line_map(path, node, (), lines)
            data = loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise InputFileError(path, line, None, f"not valid YAML: {exc.problem}") from exc
    except yaml.YAMLError as exc:  # the reader's errors (a control character) carry no mark
        raise InputFileError(path, None, None, f"not valid YAML: {exc}") from exc
    except RecursionError as exc:
        raise InputFileError(path, None, None, "not valid YAML: nested too deeply") from exc
    return data, lines


def _field_name(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) if loc else ""


def _inner_types(annotation: Any) -> list[Any]:
    """The types a field's annotation may hold a value of: ``X | None`` and ``Annotated[X, ...]`` opened."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _inner_types(get_args(annotation)[0])
    if origin is Union or origin is UnionType:
        return [t for arg in get_args(annotation) for t in _inner_types(arg)]
    return [annotation]


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model whose keys are valid at ``loc`` under ``model``, through lists and mappings, or None."""
    current: Any = model
    parts = list(loc)
    while parts:
        part = parts.pop(0)
        if isinstance(current, type) and issubclass(current, BaseModel):
            fields = {f.alias or name: f for name, f in current.model_fields.items()}
            found = fields.get(str(part))
            if found is None:
                return None
            candidates = _inner_types(found.annotation)
        else:
            origin = get_origin(current)
            if origin in (list, tuple, dict) and get_args(current):
                candidates = _inner_types(get_args(current)[-1])  # a list's items, a mapping's values
            else:
                return None
        nested = [
            c for c in candidates if get_origin(c) or (isinstance(c, type) and issubclass(c, BaseModel))
        ]
        if not nested:
            return None
        current = nested[0]
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def model_keys(model: type[BaseModel]) -> list[str]:
    """The keys a file may give for ``model``, as written in the file (aliases where a field has one)."""
    return [field.alias or name for name, field in model.model_fields.items()]


def unknown_key_message(key: str, known: list[str], where: tuple[Any, ...] = ()) -> str:
    """Why ``key`` is refused, with the closest valid key (or all of them when none is close)."""
    place = f"of {_field_name(where)}" if where else "of this file"
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    if not close:
        # A prefix ("lifetime" for "lifetime_seconds") is often not "close" by ratio, yet meant.
        close = [k for k in known if k.startswith(key) or key.startswith(k)][:1]
    if close:
        return f"not a key {place}; did you mean {close[0]}?"
    return f"not a key {place}; the keys here are: {', '.join(sorted(known))}"


def _message(err: Any, model: type[BaseModel] | None, prefix: tuple[Any, ...]) -> str:
    if err["type"] == "extra_forbidden" and model is not None and err["loc"]:
        # pydantic says "Extra inputs are not permitted" and no more: name the key that was meant.
        known_at = _model_at(model, tuple(err["loc"][:-1]))
        if known_at is not None:
            return unknown_key_message(str(err["loc"][-1]), model_keys(known_at), (*prefix, *err["loc"][:-1]))
    return str(err["msg"])


def validation_errors(
    path: Path | str,
    exc: ValidationError,
    lines: dict[tuple[Any, ...], int] | None,
    line: int | None = None,
    prefix: tuple[Any, ...] = (),
    model: type[BaseModel] | None = None,
) -> InputFileErrors:
    """Turn a pydantic ``ValidationError`` into located file errors.

    With ``model`` (the one validated), an unknown key is reported with the
    closest valid key at its level, or the list of valid keys.
    """
    out = []
    for err in exc.errors():
        loc = (*prefix, *err["loc"])
        at = line
        if lines is not None:
            probe = loc
            while probe and probe not in lines:
                probe = probe[:-1]
            at = lines.get(probe, lines.get((), None))
        out.append(InputFileError(path, at, _field_name(loc), _message(err, model, prefix)))
    return InputFileErrors(out)


M = TypeVar("M", bound=BaseModel)


def parse_model(
    model: type[M], path: Path, data: Any, lines: dict[tuple[Any, ...], int], prefix: tuple[Any, ...] = ()
) -> M:
    """``data`` validated as ``model``; errors name file, line and field (``prefix``: where ``data`` sits)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_errors(path, exc, lines, prefix=prefix, model=model) from exc


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSON Lines file.

    A line that is not UTF-8 (reported with its column), not JSON, not an
    object, or that gives a key twice (JSON's last-one-wins would hide one)
    is an error naming the file and line.
    """
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InputFileError(path, None, None, f"cannot read file: {exc.strerror}") from exc
    with handle:
        for number, raw_bytes in enumerate(handle, start=1):
            raw = _decode(path, raw_bytes, first_line=number)
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw, object_pairs_hook=_unique_keys)
            except json.JSONDecodeError as exc:
                raise InputFileError(path, number, None, f"not valid JSON: {exc.msg}") from exc
            except _DuplicateKey as exc:
                raise InputFileError(
                    path, number, exc.key, f"the key {exc.key!r} is given twice; give each key once"
                ) from exc
            except RecursionError as exc:
                raise InputFileError(path, number, None, "not valid JSON: nested too deeply") from exc
            if not isinstance(obj, dict):
                raise InputFileError(path, number, None, "each line must be a JSON object")
            yield number, obj
