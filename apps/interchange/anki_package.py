"""Reading Anki packages (.apkg, .colpkg) safely into plain dataclasses; no Django, no files named by the archive."""

from __future__ import annotations

import contextlib
import io
import json
import re
import sqlite3
import tempfile
import unicodedata
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import BinaryIO, Literal

import zstandard

MiB = 1024 * 1024

# An exported deck with a few thousand images and sound clips stays well under this; a larger upload is
# more likely a whole collection by mistake, and the package is held in memory while it is read.
MAX_PACKAGE_BYTES = 200 * MiB
# Everything inside once decompressed (collection + media). Media barely compresses, so this is a few
# times the package limit: room for a collection that shrinks well, not for a decompression bomb.
MAX_UNCOMPRESSED_BYTES = 1024 * MiB
# Deflate cannot beat about 1,032:1; SQLite pages full of zeros reach a few hundred. Past this a member is
# built to expand, not to carry data.
MAX_COMPRESSION_RATIO = 500
# Members smaller than this are never bombs whatever their ratio (an empty media map compresses 1000:1).
RATIO_CHECK_MIN_BYTES = 1 * MiB
# One member per media file plus a handful for the collection: generous for any real deck.
MAX_MEMBERS = 50_000
# Ten times the largest shared decks we know of; bounds the work one import can ask of the database.
MAX_NOTES = 100_000
# File systems and URLs commonly cap a path segment at 255 bytes.
MAX_MEDIA_NAME_BYTES = 255

COLLECTION_NAMES = ("collection.anki21b", "collection.anki21", "collection.anki2")
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# Anki's PackageMetadata.Version: VERSION_LATEST means a zstd collection, protobuf media map, zstd media.
PACKAGE_VERSION_LATEST = 3
FIELD_SEPARATOR = "\x1f"
_READ_CHUNK = 1 * MiB
_DRIVE_PATH = re.compile(r"^[A-Za-z]:")
_REQUIRED_TABLES = ("col", "notes", "cards")


class AnkiPackageInvalid(Exception):
    """The package cannot be read safely or completely; the message says why, for a person."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class PackageLimits:
    package_bytes: int = MAX_PACKAGE_BYTES
    uncompressed_bytes: int = MAX_UNCOMPRESSED_BYTES
    compression_ratio: int = MAX_COMPRESSION_RATIO
    members: int = MAX_MEMBERS
    notes: int = MAX_NOTES
    media_name_bytes: int = MAX_MEDIA_NAME_BYTES


DEFAULT_LIMITS = PackageLimits()


@dataclass(frozen=True)
class AnkiTemplate:
    """One card template of a note type: its name and its front and back formats."""

    name: str
    front: str
    back: str


@dataclass(frozen=True)
class AnkiNoteType:
    id: int
    name: str
    kind: Literal["standard", "cloze"]
    fields: list[str]
    templates: list[AnkiTemplate] = field(default_factory=list)
    css: str = ""
    # Seconds since the epoch of its last change; Anki's importer compares it with its own copy's.
    modified: int = 0
    sort_field: int = 0


@dataclass(frozen=True)
class AnkiNote:
    id: int
    guid: str
    note_type_id: int
    fields: list[str]
    tags: list[str]
    # Seconds since the epoch of the note's last edit.
    modified: int = 0


@dataclass(frozen=True)
class AnkiCard:
    id: int
    note_id: int
    ordinal: int
    deck_id: int
    # Anki's card type (0 new, 1 learning, 2 review, 3 relearning) and its due: a day number for a review card.
    kind: int = 0
    due: int = 0


@dataclass(frozen=True)
class AnkiReview:
    """One revlog row: `id` is the review time in ms since the epoch, as Anki stores it."""

    id: int
    card_id: int
    ease: int
    kind: int
    interval: int
    last_interval: int
    factor: int
    taken_ms: int


@dataclass(frozen=True)
class AnkiPackage:
    note_types: dict[int, AnkiNoteType]
    notes: list[AnkiNote]
    cards: list[AnkiCard]
    decks: dict[int, str]
    media: dict[str, bytes] = field(default_factory=dict)
    reviews: list[AnkiReview] = field(default_factory=list)
    # When the collection's day 0 began (col.crt, seconds): a review card's due counts days from it.
    day_zero: int = 0


def anki_package_read(file: BinaryIO | Path, *, limits: PackageLimits = DEFAULT_LIMITS) -> AnkiPackage:
    """Read a whole package, or raise AnkiPackageInvalid saying what is wrong with it."""
    with _opened(file) as stream:
        size = _stream_size(stream)
        if size > limits.package_bytes:
            raise AnkiPackageInvalid(
                f"The package is {_human(size)}, over the limit of {_human(limits.package_bytes)}."
            )
        try:
            archive = zipfile.ZipFile(stream)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise AnkiPackageInvalid("The file is not an Anki package: it is not a zip archive.") from exc
        with archive:
            return _package_from_archive(archive, limits)


@contextlib.contextmanager
def _opened(file: BinaryIO | Path) -> Iterator[BinaryIO]:
    if isinstance(file, Path):
        with file.open("rb") as stream:
            yield stream
    else:
        yield file


def _stream_size(stream: BinaryIO) -> int:
    start = stream.tell()
    size = stream.seek(0, io.SEEK_END) - start
    stream.seek(start)
    return size


def _human(size: int) -> str:
    return f"{size / MiB:.1f} MiB" if size >= MiB else f"{size:,} bytes"


class _Reader:
    """Reads members with the limits applied to what actually comes out, not only to what the archive claims."""

    def __init__(self, archive: zipfile.ZipFile, limits: PackageLimits) -> None:
        self.archive = archive
        self.limits = limits
        self.total = 0
        self.members = {info.filename: info for info in archive.infolist()}

    def check_declared(self) -> None:
        infos = self.archive.infolist()
        if len(infos) > self.limits.members:
            raise AnkiPackageInvalid(
                f"The package holds {len(infos):,} files, over the limit of {self.limits.members:,}."
            )
        if len(self.members) != len(infos):
            raise AnkiPackageInvalid("The package names the same file twice.")
        declared = 0
        for info in infos:
            if info.flag_bits & 0x1:
                raise AnkiPackageInvalid(f"The package's file {info.filename!r} is encrypted.")
            self._check_ratio(info.filename, info.file_size, info.compress_size)
            declared += info.file_size
        if declared > self.limits.uncompressed_bytes:
            raise AnkiPackageInvalid(
                f"The package would expand to {_human(declared)}, over the limit of "
                f"{_human(self.limits.uncompressed_bytes)}."
            )

    def _check_ratio(self, name: str, expanded: int, compressed: int) -> None:
        if expanded >= RATIO_CHECK_MIN_BYTES and expanded > self.limits.compression_ratio * max(compressed, 1):
            raise AnkiPackageInvalid(
                f"The package's file {name!r} expands {expanded // max(compressed, 1):,} times "
                f"(limit {self.limits.compression_ratio:,}): it looks like a decompression bomb."
            )

    def read(self, name: str) -> bytes:
        """A member's bytes, counted against the total."""
        chunks: list[bytes] = []
        try:
            with self.archive.open(self.members[name]) as member:
                while chunk := member.read(_READ_CHUNK):
                    self._count(len(chunk))
                    chunks.append(chunk)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError) as exc:
            raise AnkiPackageInvalid(f"The package's file {name!r} is damaged: {exc}") from exc
        return b"".join(chunks)

    def read_zstd(self, name: str) -> bytes:
        """A zstd-compressed member, decompressed in bounded steps."""
        compressed = self.read(name)
        if not compressed.startswith(ZSTD_MAGIC):
            raise AnkiPackageInvalid(f"The package's file {name!r} is not zstd-compressed as its format requires.")
        chunks: list[bytes] = []
        expanded = 0
        try:
            with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(compressed), read_across_frames=True) as reader:
                while chunk := reader.read(_READ_CHUNK):
                    expanded += len(chunk)
                    self._count(len(chunk))
                    self._check_ratio(name, expanded, len(compressed))
                    chunks.append(chunk)
        except zstandard.ZstdError as exc:
            raise AnkiPackageInvalid(f"The package's file {name!r} is damaged: {exc}") from exc
        return b"".join(chunks)

    def _count(self, size: int) -> None:
        self.total += size
        if self.total > self.limits.uncompressed_bytes:
            raise AnkiPackageInvalid(f"The package expands past the limit of {_human(self.limits.uncompressed_bytes)}.")


def _package_from_archive(archive: zipfile.ZipFile, limits: PackageLimits) -> AnkiPackage:
    reader = _Reader(archive, limits)
    reader.check_declared()
    collection_name = next((name for name in COLLECTION_NAMES if name in reader.members), None)
    if collection_name is None:
        raise AnkiPackageInvalid(
            "The zip archive holds no Anki collection (collection.anki21b, collection.anki21 or collection.anki2)."
        )
    latest = collection_name == "collection.anki21b" or _meta_version(reader) >= PACKAGE_VERSION_LATEST
    if collection_name == "collection.anki21b":
        database = reader.read_zstd(collection_name)
    else:
        database = reader.read(collection_name)
    package = _collection_read(database, limits)
    return replace(package, media=_media_read(reader, latest=latest))


def _meta_version(reader: _Reader) -> int:
    if "meta" not in reader.members:
        return 0
    for number, _, value in _protobuf_fields(reader.read("meta"), "meta"):
        if number == 1 and isinstance(value, int):
            return value
    return 0


# --- media -------------------------------------------------------------------------------------------------


def media_name_problem(name: str, *, max_bytes: int = MAX_MEDIA_NAME_BYTES) -> str | None:
    """Why a media name is refused, or None. Names that try to leave a folder are refused, never repaired."""
    if not name or name in {".", ".."}:
        return "is empty or a folder name"
    if len(name.encode("utf-8", "surrogatepass")) > max_bytes:
        return f"is longer than {max_bytes} bytes"
    if "/" in name or "\\" in name:
        return "contains a path separator"
    if ".." in name:
        return "contains '..'"
    if _DRIVE_PATH.match(name):
        return "is a drive path"
    if any(unicodedata.category(char) in {"Cc", "Cs"} for char in name):
        return "contains a control character"
    return None


def _media_read(reader: _Reader, *, latest: bool) -> dict[str, bytes]:
    if "media" not in reader.members:
        return {}
    raw = reader.read("media")
    if latest or raw.startswith(ZSTD_MAGIC):
        entries = _media_entries_latest(_zstd_bytes(reader, "media", raw))
        compressed_members = True
    else:
        entries = _media_entries_legacy(raw)
        compressed_members = False
    media: dict[str, bytes] = {}
    for member, name in entries:
        problem = media_name_problem(name, max_bytes=reader.limits.media_name_bytes)
        if problem is not None:
            raise AnkiPackageInvalid(f"The media file name {name!r} {problem}; the package is refused.")
        if name in media:
            raise AnkiPackageInvalid(f"The media file name {name!r} appears twice in the package.")
        if member not in reader.members:
            raise AnkiPackageInvalid(f"The media file {name!r} is listed but missing from the package.")
        media[name] = reader.read_zstd(member) if compressed_members else reader.read(member)
    return media


def _zstd_bytes(reader: _Reader, name: str, raw: bytes) -> bytes:
    if not raw.startswith(ZSTD_MAGIC):
        raise AnkiPackageInvalid(f"The package's file {name!r} is not zstd-compressed as its format requires.")
    chunks: list[bytes] = []
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True) as stream:
            while chunk := stream.read(_READ_CHUNK):
                reader._count(len(chunk))
                chunks.append(chunk)
    except zstandard.ZstdError as exc:
        raise AnkiPackageInvalid(f"The package's file {name!r} is damaged: {exc}") from exc
    return b"".join(chunks)


def _media_entries_legacy(raw: bytes) -> list[tuple[str, str]]:
    try:
        mapping = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AnkiPackageInvalid(f"The package's media list is not valid JSON: {exc}") from exc
    if not isinstance(mapping, dict) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in mapping.items()
    ):
        raise AnkiPackageInvalid("The package's media list is not a map of file numbers to names.")
    return sorted(mapping.items(), key=lambda item: item[0])


def _media_entries_latest(raw: bytes) -> list[tuple[str, str]]:
    entries: list[tuple[str, str]] = []
    for number, _, value in _protobuf_fields(raw, "media list"):
        if number != 1 or not isinstance(value, bytes):
            continue
        name: str | None = None
        member: str | None = None
        for entry_number, _, entry_value in _protobuf_fields(value, "media list"):
            if entry_number == 1 and isinstance(entry_value, bytes):
                name = _utf8(entry_value, "media list")
            elif entry_number == 255 and isinstance(entry_value, int):
                member = str(entry_value)
        if name is None:
            raise AnkiPackageInvalid("The package's media list has an entry without a name.")
        entries.append((member if member is not None else str(len(entries)), name))
    return entries


def _utf8(value: bytes, where: str) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AnkiPackageInvalid(f"The package's {where} holds text that is not UTF-8.") from exc


def _protobuf_fields(data: bytes, where: str) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of one protobuf message; enough of the wire format for Anki's metadata."""
    position = 0
    while position < len(data):
        key, position = _varint(data, position, where)
        number, wire_type = key >> 3, key & 0x7
        value: int | bytes
        if wire_type == 0:
            value, position = _varint(data, position, where)
        elif wire_type == 1:
            value, position = int.from_bytes(data[position : position + 8], "little"), position + 8
        elif wire_type == 2:
            length, position = _varint(data, position, where)
            value, position = data[position : position + length], position + length
        elif wire_type == 5:
            value, position = int.from_bytes(data[position : position + 4], "little"), position + 4
        else:
            raise AnkiPackageInvalid(f"The package's {where} is damaged (unknown protobuf wire type {wire_type}).")
        if position > len(data):
            raise AnkiPackageInvalid(f"The package's {where} is damaged (truncated).")
        yield number, wire_type, value


def _varint(data: bytes, position: int, where: str) -> tuple[int, int]:
    result = shift = 0
    while True:
        if position >= len(data) or shift > 63:
            raise AnkiPackageInvalid(f"The package's {where} is damaged (bad varint).")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, position


# --- the collection ----------------------------------------------------------------------------------------


def _collection_read(database: bytes, limits: PackageLimits) -> AnkiPackage:
    with tempfile.TemporaryDirectory(prefix="anki-package-") as folder:
        path = Path(folder) / "collection.sqlite"
        path.write_bytes(database)
        try:
            connection = sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True)
        except sqlite3.Error as exc:
            raise AnkiPackageInvalid(f"The package's collection cannot be opened: {exc}") from exc
        try:
            # Anki declares its name columns with this collation; comparisons need it registered to run.
            connection.create_collation("unicase", _unicase)
            connection.execute("PRAGMA query_only = ON")
            connection.execute("PRAGMA trusted_schema = OFF")
            return _collection_from_connection(connection, limits)
        except sqlite3.Error as exc:
            raise AnkiPackageInvalid(
                f"The package's collection is not a readable Anki database ({exc}); the file may be corrupt."
            ) from exc
        finally:
            connection.close()


def _unicase(left: str, right: str) -> int:
    a, b = left.casefold(), right.casefold()
    return (a > b) - (a < b)


def _collection_from_connection(connection: sqlite3.Connection, limits: PackageLimits) -> AnkiPackage:
    tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    # Views or triggers posing as Anki's tables could make a plain SELECT run arbitrary work; only tables count.
    missing = [name for name in _REQUIRED_TABLES if name not in tables]
    if missing:
        raise AnkiPackageInvalid(f"The package's collection lacks the table(s) {', '.join(missing)}.")
    (note_count,) = connection.execute("SELECT count(*) FROM notes").fetchone()
    if note_count > limits.notes:
        raise AnkiPackageInvalid(f"The package holds {note_count:,} notes, over the limit of {limits.notes:,}.")

    if "notetypes" in tables and connection.execute("SELECT 1 FROM notetypes LIMIT 1").fetchone():
        note_types, unsupported = _note_types_latest(connection, tables)
        decks = _decks_latest(connection) if "decks" in tables else {}
    else:
        models_json, decks_json = _col_row(connection)
        note_types, unsupported = _note_types_legacy(models_json)
        decks = _decks_legacy(decks_json)

    notes = [
        AnkiNote(
            id=int(note_id),
            guid=str(guid),
            note_type_id=int(note_type_id),
            fields=str(fields).split(FIELD_SEPARATOR),
            tags=str(tags).split(),
            modified=_int_or_zero(modified),
        )
        for note_id, guid, note_type_id, fields, tags, modified in connection.execute(
            "SELECT id, guid, mid, flds, tags, mod FROM notes ORDER BY id"
        )
    ]
    _refuse_unknown_note_types(notes, note_types, unsupported)
    cards = [
        AnkiCard(
            id=int(card_id),
            note_id=int(note_id),
            ordinal=int(ordinal),
            deck_id=int(deck_id),
            kind=_int_or_zero(kind),
            due=_int_or_zero(due),
        )
        for card_id, note_id, ordinal, deck_id, kind, due in connection.execute(
            "SELECT id, nid, ord, did, type, due FROM cards ORDER BY id"
        )
    ]
    created = connection.execute("SELECT crt FROM col LIMIT 1").fetchone() if "col" in tables else None
    reviews: list[AnkiReview] = []
    if "revlog" in tables:
        reviews = [
            AnkiReview(
                id=int(row[0]),
                card_id=int(row[1]),
                ease=int(row[2]),
                kind=int(row[3]),
                interval=int(row[4]),
                last_interval=int(row[5]),
                factor=int(row[6]),
                taken_ms=int(row[7]),
            )
            for row in connection.execute(
                "SELECT id, cid, ease, type, ivl, lastIvl, factor, time FROM revlog ORDER BY id"
            )
        ]
    return AnkiPackage(
        note_types=note_types,
        notes=notes,
        cards=cards,
        decks=decks,
        media={},
        reviews=reviews,
        day_zero=_int_or_zero(created[0]) if created else 0,
    )


def _refuse_unknown_note_types(
    notes: list[AnkiNote], note_types: dict[int, AnkiNoteType], unsupported: dict[int, str]
) -> None:
    counts: dict[int, int] = {}
    for note in notes:
        if note.note_type_id not in note_types:
            counts[note.note_type_id] = counts.get(note.note_type_id, 0) + 1
    if not counts:
        return
    problems = []
    for type_id, count in sorted(counts.items()):
        if type_id in unsupported:
            what = f"note type {unsupported[type_id]!r} (id {type_id}), which is neither standard nor cloze"
        else:
            what = f"note type id {type_id}, which the collection does not define"
        problems.append(f"{count:,} note(s) use {what}")
    raise AnkiPackageInvalid("The package cannot be imported: " + "; ".join(problems) + ".")


def _col_row(connection: sqlite3.Connection) -> tuple[str, str]:
    row = connection.execute("SELECT models, decks FROM col LIMIT 1").fetchone()
    if row is None:
        raise AnkiPackageInvalid("The package's collection has no collection row (table col is empty).")
    return str(row[0] or ""), str(row[1] or "")


def _json_object(text: str, what: str) -> dict[str, object]:
    try:
        value = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise AnkiPackageInvalid(f"The package's {what} are not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise AnkiPackageInvalid(f"The package's {what} are not a JSON object.")
    return value


def _note_types_legacy(models_json: str) -> tuple[dict[int, AnkiNoteType], dict[int, str]]:
    note_types: dict[int, AnkiNoteType] = {}
    unsupported: dict[int, str] = {}
    for key, model in _json_object(models_json, "note types").items():
        if not isinstance(model, dict):
            raise AnkiPackageInvalid(f"The package's note type {key!r} is not a JSON object.")
        try:
            type_id = int(model.get("id", key))
            name = str(model.get("name", ""))
            kind_code = int(model.get("type", 0))
            fields = sorted(model.get("flds", []), key=lambda f: int(f.get("ord", 0)))
            field_names = [str(f["name"]) for f in fields]
            templates = [
                AnkiTemplate(name=str(t.get("name", "")), front=str(t.get("qfmt", "")), back=str(t.get("afmt", "")))
                for t in sorted(model.get("tmpls", []), key=lambda t: int(t.get("ord", 0)))
            ]
            css, modified, sort_field = str(model.get("css", "")), int(model.get("mod", 0)), int(model.get("sortf", 0))
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise AnkiPackageInvalid(f"The package's note type {key!r} is malformed: {exc!r}") from exc
        kind = _KINDS.get(kind_code)
        if kind is None:
            unsupported[type_id] = name
            continue
        note_types[type_id] = AnkiNoteType(
            id=type_id,
            name=name,
            kind=kind,
            fields=field_names,
            templates=templates,
            css=css,
            modified=modified,
            sort_field=sort_field,
        )
    return note_types, unsupported


_KINDS: dict[int, Literal["standard", "cloze"]] = {0: "standard", 1: "cloze"}


def _note_types_latest(
    connection: sqlite3.Connection, tables: set[str]
) -> tuple[dict[int, AnkiNoteType], dict[int, str]]:
    fields: dict[int, list[tuple[int, str]]] = {}
    if "fields" in tables:
        for type_id, ordinal, name in connection.execute("SELECT ntid, ord, name FROM fields"):
            fields.setdefault(int(type_id), []).append((int(ordinal), str(name)))
    templates: dict[int, list[tuple[int, AnkiTemplate]]] = {}
    if "templates" in tables:
        for type_id, ordinal, name, config in connection.execute("SELECT ntid, ord, name, config FROM templates"):
            formats = {1: "", 2: ""}  # Template.Config: q_format = 1, a_format = 2
            for number, _, value in _protobuf_fields(bytes(config or b""), f"template {name!r}"):
                if number in formats and isinstance(value, bytes):
                    formats[number] = _utf8(value, f"template {name!r}")
            template = AnkiTemplate(name=str(name), front=formats[1], back=formats[2])
            templates.setdefault(int(type_id), []).append((int(ordinal), template))
    note_types: dict[int, AnkiNoteType] = {}
    unsupported: dict[int, str] = {}
    for type_id, name, modified, config in connection.execute("SELECT id, name, mtime_secs, config FROM notetypes"):
        # Notetype.Config: kind = 1 (proto3 leaves the default, KIND_NORMAL, out), sort_field_idx = 2, css = 3.
        kind_code, sort_field, css = 0, 0, ""
        for number, _, value in _protobuf_fields(bytes(config or b""), f"note type {name!r}"):
            if number == 1 and isinstance(value, int):
                kind_code = value
            elif number == 2 and isinstance(value, int):
                sort_field = value
            elif number == 3 and isinstance(value, bytes):
                css = _utf8(value, f"note type {name!r}")
        kind = _KINDS.get(kind_code)
        if kind is None:
            unsupported[int(type_id)] = str(name)
            continue
        names = [field_name for _, field_name in sorted(fields.get(int(type_id), []))]
        note_types[int(type_id)] = AnkiNoteType(
            id=int(type_id),
            name=str(name),
            kind=kind,
            fields=names,
            templates=[template for _, template in sorted(templates.get(int(type_id), []), key=lambda t: t[0])],
            css=css,
            modified=_int_or_zero(modified),
            sort_field=sort_field,
        )
    return note_types, unsupported


def _int_or_zero(value: object) -> int:
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 0


def _decks_legacy(decks_json: str) -> dict[int, str]:
    decks: dict[int, str] = {}
    for key, deck in _json_object(decks_json, "decks").items():
        if isinstance(deck, dict):
            try:
                decks[int(deck.get("id", key))] = str(deck.get("name", ""))
            except (TypeError, ValueError) as exc:
                raise AnkiPackageInvalid(f"The package's deck {key!r} is malformed.") from exc
    return decks


def _decks_latest(connection: sqlite3.Connection) -> dict[int, str]:
    # The newer schema separates nested deck names with \x1f where the JSON form used "::".
    return {
        int(deck_id): str(name).replace(FIELD_SEPARATOR, "::")
        for deck_id, name in connection.execute("SELECT id, name FROM decks")
    }
