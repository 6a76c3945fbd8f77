"""Reading cards from CSV and TSV files: a header row, one card per row, errors that name the line."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import BinaryIO

from apps.interchange.anki_package import MAX_NOTES, MAX_PACKAGE_BYTES

REQUIRED_COLUMNS = ("term", "definition")
OPTIONAL_COLUMNS = ("example", "tags", "slug")
DELIMITERS = {".csv": ",", ".tsv": "\t", ".txt": "\t"}
# A cell larger than this is not a card's text; csv's own default (128 KiB) is close, this says it plainly.
MAX_CELL_CHARS = 128 * 1024


class TabularInvalid(Exception):
    """The file cannot be read as cards; the message names the line where that is known."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class TabularLimits:
    file_bytes: int = MAX_PACKAGE_BYTES
    rows: int = MAX_NOTES


@dataclass(frozen=True)
class TabularRow:
    line: int
    term: str
    definition: str
    example: str = ""
    tags: list[str] = field(default_factory=list)
    slug: str = ""


def tabular_delimiter(name: str) -> str | None:
    """The delimiter a file name's suffix implies, or None when it is not a table."""
    return DELIMITERS.get(PurePath(name).suffix.lower())


def tabular_read(file: BinaryIO, *, name: str, limits: TabularLimits = TabularLimits()) -> list[TabularRow]:
    """Every data row of a CSV (comma) or TSV/TXT (tab) file with a header row naming its columns."""
    delimiter = tabular_delimiter(name)
    if delimiter is None:
        raise TabularInvalid(f"{name}: not a .csv, .tsv or .txt file.")
    raw = file.read(limits.file_bytes + 1)
    if len(raw) > limits.file_bytes:
        raise TabularInvalid(f"{name}: the file is over the limit of {limits.file_bytes:,} bytes.")
    try:
        # utf-8-sig drops the byte-order mark spreadsheet programs put first.
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise TabularInvalid(f"{name}:{line}: the file is not UTF-8 text.") from exc
    if "\x00" in text:
        raise TabularInvalid(f"{name}:{text[: text.index(chr(0))].count(chr(10)) + 1}: the file holds a NUL character.")

    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise TabularInvalid(f"{name}: the file is empty; it needs a header row (term, definition, …).")
        columns = _columns(name, header)
        rows: list[TabularRow] = []
        # A quoted cell may span lines: a row is named by the line it starts on.
        start = reader.line_num + 1
        for cells in reader:
            line, start = start, reader.line_num + 1
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) != len(header):
                raise TabularInvalid(f"{name}:{line}: {len(cells)} column(s), but the header names {len(header)}.")
            if any(len(cell) > MAX_CELL_CHARS for cell in cells):
                raise TabularInvalid(f"{name}:{line}: a cell is longer than {MAX_CELL_CHARS:,} characters.")
            if len(rows) >= limits.rows:
                raise TabularInvalid(f"{name}:{line}: more than {limits.rows:,} rows.")
            values = {column: cells[index] for column, index in columns.items()}
            rows.append(
                TabularRow(
                    line=line,
                    term=values["term"],
                    definition=values["definition"],
                    example=values.get("example", ""),
                    tags=values.get("tags", "").split(),
                    slug=values.get("slug", "").strip(),
                )
            )
    except csv.Error as exc:
        raise TabularInvalid(f"{name}:{reader.line_num}: {exc}.") from exc
    return rows


def _columns(name: str, header: list[str]) -> dict[str, int]:
    names = [cell.strip().lower() for cell in header]
    known = set(REQUIRED_COLUMNS) | set(OPTIONAL_COLUMNS)
    unknown = [cell for cell in names if cell not in known]
    if unknown:
        raise TabularInvalid(
            f"{name}:1: unknown column(s) {', '.join(map(repr, unknown))}; "
            f"the columns are {', '.join(REQUIRED_COLUMNS + OPTIONAL_COLUMNS)}."
        )
    repeated = sorted({cell for cell in names if names.count(cell) > 1})
    if repeated:
        raise TabularInvalid(f"{name}:1: column(s) {', '.join(map(repr, repeated))} named twice.")
    missing = [column for column in REQUIRED_COLUMNS if column not in names]
    if missing:
        raise TabularInvalid(f"{name}:1: the header row lacks {' and '.join(missing)}.")
    return {cell: index for index, cell in enumerate(names)}
