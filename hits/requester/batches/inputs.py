"""Reading a batch's input CSV (and an edited results CSV) with errors that name
the file, the line and the field, as MTurk's upload page did."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from hits.requester.fileerrors import InputFileError


@dataclass(frozen=True)
class CsvRow:
    """One data row: the physical line it starts on, and its cells by column name."""

    line: int
    cells: dict[str, str]


@dataclass(frozen=True)
class CsvTable:
    """A CSV file's header and rows."""

    path: str
    columns: list[str]
    rows: list[CsvRow]


def decode_utf8(path: Path | str, data: bytes) -> str:
    """The file's text; a byte that is not UTF-8 is an error naming its line and column."""
    try:
        # MTurk's own downloads, and Excel's "CSV UTF-8", start with a byte-order mark.
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputFileError(
            path,
            line,
            None,
            f"byte 0x{data[exc.start]:02x} at column {column} is not UTF-8 (save the file as UTF-8 CSV)",
        ) from exc


def read_csv(path: Path | str, data: bytes | None = None) -> CsvTable:
    """Parse a CSV file with a header row; refuse blank or repeated column names and ragged rows."""
    if data is None:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise InputFileError(path, None, None, f"cannot read file: {exc.strerror}") from exc
    text = decode_utf8(path, data)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise InputFileError(path, None, None, "the file is empty: it needs a header row")
        columns = [name.strip() for name in header]
        seen: dict[str, int] = {}
        for index, name in enumerate(columns, start=1):
            if not name:
                raise InputFileError(path, 1, None, f"column {index} of the header has no name")
            if name in seen:
                raise InputFileError(
                    path, 1, name, f"the column name is repeated (columns {seen[name]} and {index})"
                )
            seen[name] = index
        rows = []
        line = reader.line_num + 1
        for cells in reader:
            if any(cell.strip() for cell in cells):
                if len(cells) != len(columns):
                    raise InputFileError(
                        path, line, None, f"the row has {len(cells)} fields, the header {len(columns)}"
                    )
                rows.append(CsvRow(line, dict(zip(columns, cells, strict=True))))
            line = reader.line_num + 1
    except csv.Error as exc:
        raise InputFileError(path, reader.line_num or None, None, f"not valid CSV: {exc}") from exc
    return CsvTable(str(path), columns, rows)
