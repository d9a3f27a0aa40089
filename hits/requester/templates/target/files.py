"""Per-system files of the target template: CSV in, campaign items out; labels back to CSV and HTML.

A research group hands over one CSV per system (the file stem names the
system) holding the same targets, each with that system's expression. The
import turns them into one items file (JSONL) for a campaign; the export
writes, per system, the same CSV with a ``category`` column filled from the
aggregated labels, and an HTML page showing each photo with its box.

CSV columns (header required, in any order on import, in this order on export)::

    id, image, expression, box_x, box_y, box_w, box_h, image_width, image_height[, category]

``box_*`` are pixels from the image's top left corner; ``image`` is a path
relative to the campaign's media folder or a URL. A ``category`` column may
be present on import: empty cells are fine; filled ones (A, O, M or F) make
the row a gold item when a gold file is asked for, and are ignored otherwise.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import mimetypes
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.requester.answers import AggregatedItem
from hits.requester.fileerrors import InputFileError, InputFileErrors
from hits.requester.tables.campaigns import Campaign, Item
from hits.requester.templates.target import CATEGORIES, TargetItem, describe_box

COLUMNS = ["id", "image", "expression", "box_x", "box_y", "box_w", "box_h", "image_width", "image_height"]
CATEGORY_COLUMN = "category"
#: Item ids in the campaign are "<system>/<id>": the same target appears once per system.
MAX_EXTERNAL_ID = 128

#: Where each payload field comes from in the CSV, so that errors name the column.
_COLUMN_OF: dict[tuple[Any, ...], str] = {
    ("item_id",): "id",
    ("image",): "image",
    ("expression",): "expression",
    ("box", "x"): "box_x",
    ("box", "y"): "box_y",
    ("box", "width"): "box_w",
    ("box", "height"): "box_h",
    ("width",): "image_width",
    ("height",): "image_height",
}


def external_id(system: str, item_id: str) -> str:
    """The campaign item id of one system's row."""
    return f"{system}/{item_id}"


@dataclass
class SystemRow:
    """One validated CSV row: the item payload and the category cell (may be empty)."""

    line: int
    payload: dict[str, Any]
    category: str = ""


@dataclass
class ImportReport:
    items: int = 0
    gold: int = 0
    systems: list[str] = field(default_factory=list)


def _payload(row: dict[str, str], system: str) -> dict[str, Any]:
    return {
        "image": row["image"].strip(),
        "width": row["image_width"].strip(),
        "height": row["image_height"].strip(),
        "box": {
            "x": row["box_x"].strip(),
            "y": row["box_y"].strip(),
            "width": row["box_w"].strip(),
            "height": row["box_h"].strip(),
        },
        "expression": row["expression"].strip(),
        "item_id": row["id"].strip(),
        "system": system,
    }


def _column(loc: tuple[Any, ...]) -> str:
    # A whole-item check (the box reaching outside the image) is about the box columns.
    return _COLUMN_OF.get(tuple(loc), "box" if not loc else ".".join(str(p) for p in loc))


def _check_image(path: Path, line: int, image: str, media_dir: Path | None) -> InputFileError | None:
    if media_dir is None or image.startswith(("http://", "https://")):
        return None
    if not (media_dir / image).is_file():
        return InputFileError(path, line, "image", f"{image!r} is not a file in {media_dir}")
    return None


def read_system_csv(path: Path, media_dir: Path | None = None) -> list[SystemRow]:
    """The validated rows of one system's CSV, in file order.

    Raises ``InputFileErrors`` listing every problem with file, line and column;
    with ``media_dir``, images given as paths must exist there.
    """
    system = path.stem
    try:
        text = path.read_text(encoding="utf-8-sig")  # -sig: spreadsheets often add a byte-order mark
    except OSError as exc:
        raise InputFileError(path, None, None, f"cannot read file: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise InputFileError(path, None, None, "the file is not UTF-8 text; save it as UTF-8 CSV") from exc
    reader = csv.reader(io.StringIO(text, newline=""))
    header = [column.strip() for column in next(reader, [])]
    errors = [
        InputFileError(path, 1, column, "this column is missing from the header")
        for column in COLUMNS
        if column not in header
    ]
    errors += [
        InputFileError(path, 1, column or "(empty)", f"unknown column; expected {', '.join(COLUMNS)}")
        for column in header
        if column not in COLUMNS and column != CATEGORY_COLUMN
    ]
    errors += [
        InputFileError(path, 1, column, "this column appears twice in the header")
        for column in sorted({c for c in header if header.count(c) > 1})
    ]
    if errors:
        raise InputFileErrors(errors)
    rows: list[SystemRow] = []
    seen: dict[str, int] = {}
    start = reader.line_num + 1  # the line a record begins on; quoted cells may span lines
    for record in reader:
        line, start = start, reader.line_num + 1
        if len(record) > len(header):
            errors.append(InputFileError(path, line, None, f"more cells than the {len(header)} columns"))
            continue
        cells = dict(zip(header, record + [""] * (len(header) - len(record)), strict=True))
        if not any(v.strip() for v in cells.values()):
            continue
        try:
            payload = TargetItem.model_validate(_payload(cells, system)).model_dump()
        except ValidationError as exc:
            errors += [InputFileError(path, line, _column(e["loc"]), e["msg"]) for e in exc.errors()]
            continue
        ident = payload["item_id"]
        if ident in seen:
            errors.append(InputFileError(path, line, "id", f"id {ident!r} is already on line {seen[ident]}"))
            continue
        seen[ident] = line
        if len(external_id(system, ident)) > MAX_EXTERNAL_ID:
            errors.append(
                InputFileError(
                    path, line, "id", f"file name and id together exceed {MAX_EXTERNAL_ID} characters"
                )
            )
            continue
        category = cells.get(CATEGORY_COLUMN, "").strip().upper()
        if category and category not in CATEGORIES:
            errors.append(InputFileError(path, line, CATEGORY_COLUMN, f"{category!r} is not A, O, M or F"))
            continue
        problem = _check_image(path, line, payload["image"], media_dir)
        if problem:
            errors.append(problem)
            continue
        rows.append(SystemRow(line, payload, category))
    if errors:
        raise InputFileErrors(errors)
    if not rows:
        raise InputFileError(path, None, None, "the file holds no rows")
    return rows


def import_system_csvs(
    paths: Sequence[Path], items_out: Path, gold_out: Path | None = None, media_dir: Path | None = None
) -> ImportReport:
    """Write the campaign items file (and optionally a gold file) from per-system CSVs.

    Every file is checked before anything is written; all problems are raised
    together as ``InputFileErrors``. With ``gold_out``, rows whose ``category``
    is filled become gold items (``{"category": ...}``) instead of ordinary ones.
    """
    errors: list[InputFileError] = []
    by_system: dict[str, list[SystemRow]] = {}
    for path in paths:
        if path.stem in by_system:
            errors.append(InputFileError(path, None, None, f"another file is already system {path.stem!r}"))
            continue
        try:
            by_system[path.stem] = read_system_csv(path, media_dir)
        except InputFileErrors as exc:
            errors += exc.errors
        except InputFileError as exc:
            errors.append(exc)
    if errors:
        raise InputFileErrors(errors)
    report = ImportReport(systems=list(by_system))
    items_lines, gold_lines = [], []
    for system, rows in by_system.items():
        for row in rows:
            entry: dict[str, Any] = {"id": external_id(system, row.payload["item_id"]), "item": row.payload}
            if gold_out is not None and row.category:
                entry["answer"] = {"category": row.category}
                gold_lines.append(json.dumps(entry, ensure_ascii=False))
            else:
                items_lines.append(json.dumps(entry, ensure_ascii=False))
    items_out.write_text("".join(line + "\n" for line in items_lines), encoding="utf-8")
    report.items = len(items_lines)
    if gold_out is not None:
        gold_out.write_text("".join(line + "\n" for line in gold_lines), encoding="utf-8")
        report.gold = len(gold_lines)
    return report


@dataclass
class ExportEntry:
    """What the HTML export shows of one item."""

    item: dict[str, Any]
    category: str
    confidence: float
    votes: int
    src: str
    where: str


@dataclass
class ExportedSystem:
    system: str
    csv_path: Path
    html_path: Path
    rows: int
    labelled: int


def _number(value: Any) -> str:
    """Pixels as written by people: 12 rather than 12.0."""
    number = float(value)
    return str(int(number)) if number.is_integer() else repr(number)


def csv_row(payload: dict[str, Any], category: str) -> list[str]:
    """One export row in ``COLUMNS`` order, then the category."""
    box = payload["box"]
    return [
        payload["item_id"],
        payload["image"],
        payload["expression"],
        *(_number(box[k]) for k in ("x", "y", "width", "height")),
        _number(payload["width"]),
        _number(payload["height"]),
        category,
    ]


def _image_src(image: str, media: Path | None, out_dir: Path, embed: bool) -> str:
    """A data: URI of the image (self-contained), or a link relative to the export folder."""
    if image.startswith(("http://", "https://")) or media is None:
        return image
    media = media.resolve()
    file = (media / image).resolve()
    if not file.is_relative_to(media):
        return ""  # an image path must not reach out of the media folder
    mime = mimetypes.guess_type(file.name)[0] or ""
    if embed and file.is_file() and mime.startswith("image/"):
        return f"data:{mime};base64," + base64.b64encode(file.read_bytes()).decode("ascii")
    return Path(os.path.relpath(file, out_dir.resolve())).as_posix()


def _environment() -> Environment:
    folder = Path(__file__).parent
    return Environment(loader=FileSystemLoader(str(folder)), autoescape=select_autoescape(default=True))


def export_system_files(
    session: Session,
    campaign_id: int,
    out_dir: Path,
    labels: Iterable[AggregatedItem],
    *,
    embed_images: bool = True,
) -> list[ExportedSystem]:
    """Write ``<system>.csv`` and ``<system>.html`` into ``out_dir`` for each system in the campaign.

    Rows keep the import order; ``category`` is the item's aggregated label from
    ``labels`` (the caller aggregates: ``quality.aggregation.aggregate_campaign``),
    empty for an item nobody has labelled yet. Gold items are not part of any
    system's file.
    """
    campaign = session.get(Campaign, campaign_id)
    if campaign is None:
        raise ValueError(f"campaign {campaign_id} does not exist")
    if campaign.template != "target":
        raise ValueError(f"campaign {campaign.name!r} uses template {campaign.template!r}, not 'target'")
    by_item = {a.item_id: a for a in labels}
    by_system: dict[str, list[Item]] = {}
    for item in session.scalars(select(Item).where(Item.campaign_id == campaign_id).order_by(Item.id)):
        by_system.setdefault(item.payload["system"], []).append(item)
    media_path = campaign.spec.get("media_path")
    media = Path(media_path) if media_path else None
    out_dir.mkdir(parents=True, exist_ok=True)
    page = _environment().get_template("export.html")
    written = []
    for system, items in by_system.items():
        entries = []
        for item in items:
            label = by_item.get(item.external_id)
            entries.append(
                ExportEntry(
                    item=item.payload,
                    category=str(label.label) if label else "",
                    confidence=label.confidence if label else 0.0,
                    votes=label.votes if label else 0,
                    src=_image_src(item.payload["image"], media, out_dir, embed_images),
                    where=describe_box(item.payload),
                )
            )
        csv_path, html_path = out_dir / f"{system}.csv", out_dir / f"{system}.html"
        with csv_path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow([*COLUMNS, CATEGORY_COLUMN])
            writer.writerows(csv_row(e.item, e.category) for e in entries)
        html_path.write_text(
            page.render(
                system=system,
                campaign=campaign.name,
                entries=entries,
                categories=CATEGORIES,
                counts=_counts(e.category for e in entries),
            ),
            encoding="utf-8",
        )
        labelled = sum(1 for e in entries if e.category)
        written.append(ExportedSystem(system, csv_path, html_path, len(entries), labelled))
    return written


def _counts(categories: Iterable[str]) -> list[tuple[str, int]]:
    found = list(categories)
    return [(letter, found.count(letter)) for letter in CATEGORIES] + [("unlabelled", found.count(""))]
