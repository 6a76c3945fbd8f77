"""Anki packages built by the tests themselves: valid ones (genanki, and the newer anki21b form) and hostile ones."""

from __future__ import annotations

import io
import itertools
import json
import sqlite3
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import genanki
import zstandard

# Fixed ids and times, so a package built twice is the same package.
BUILD_TIMESTAMP = 1_767_225_600.0  # 2026-01-01T00:00:00Z
DECK_ID = 2_059_400_110
DECK_NAME = "Imported::Vocabulary"
STANDARD_TYPE_ID = genanki.BASIC_MODEL.model_id
REVERSED_TYPE_ID = genanki.BASIC_AND_REVERSED_CARD_MODEL.model_id
CLOZE_TYPE_ID = genanki.CLOZE_MODEL.model_id
UNKNOWN_TYPE_ID = 1_111_111_111

# The smallest valid files of each kind the importer accepts, recognised by their first bytes.
PNG_BYTES = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
    b"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82"
)
MP3_BYTES = b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xfb\x90\x00" + bytes(400)

NoteKind = Literal["basic", "reversed", "cloze"]


@dataclass(frozen=True)
class NoteSpec:
    """One note to put in a package: its kind picks the note type, `fields` fill it in order."""

    guid: str
    fields: Sequence[str]
    tags: Sequence[str] = ()
    kind: NoteKind = "basic"


@dataclass(frozen=True)
class ReviewRow:
    """A revlog row: `id` is the review time in ms since the epoch."""

    id: int
    card_id: int
    ease: int = 3
    interval: int = 1
    last_interval: int = 0
    factor: int = 2500
    taken_ms: int = 6000
    kind: int = 1


@dataclass
class PackageParts:
    """A package's members, to be zipped; hostile tests edit them before zipping."""

    members: dict[str, bytes] = field(default_factory=dict)

    def zipped(self, *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
            for name, data in self.members.items():
                archive.writestr(name, data)
        return buffer.getvalue()


def sample_notes() -> list[NoteSpec]:
    return [
        NoteSpec("guid-basic-1", ["<b>prefetch</b>", "Overlaps input and training"], tags=["tf-data", "perf"]),
        NoteSpec("guid-reversed-1", ["shuffle", "Randomises element order <i>within a buffer</i>"], kind="reversed"),
        NoteSpec("guid-cloze-1", ["{{c1::Batching}} groups elements", ""], kind="cloze"),
    ]


def _genanki_model(kind: NoteKind) -> genanki.Model:
    return {
        "basic": genanki.BASIC_MODEL,
        "reversed": genanki.BASIC_AND_REVERSED_CARD_MODEL,
        "cloze": genanki.CLOZE_MODEL,
    }[kind]


def _legacy_collection(notes: Iterable[NoteSpec], *, deck_name: str) -> bytes:
    """A collection.anki2 database as genanki writes it."""
    deck = genanki.Deck(DECK_ID, deck_name)
    for spec in notes:
        deck.add_note(
            genanki.Note(
                model=_genanki_model(spec.kind), fields=list(spec.fields), tags=list(spec.tags), guid=spec.guid
            )
        )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "collection.anki2"
        connection = sqlite3.connect(path)
        genanki.Package(deck).write_to_db(
            connection.cursor(), BUILD_TIMESTAMP, itertools.count(int(BUILD_TIMESTAMP * 1000))
        )
        connection.commit()
        connection.close()
        return path.read_bytes()


def legacy_parts(
    notes: Iterable[NoteSpec] | None = None,
    *,
    media: dict[str, bytes] | None = None,
    deck_name: str = DECK_NAME,
    collection_name: str = "collection.anki2",
) -> PackageParts:
    """The members of a package in the legacy form genanki writes: SQLite, JSON media map, raw media."""
    media = media or {}
    parts = PackageParts()
    parts.members[collection_name] = _legacy_collection(sample_notes() if notes is None else notes, deck_name=deck_name)
    parts.members["media"] = json.dumps({str(index): name for index, name in enumerate(media)}).encode()
    for index, data in enumerate(media.values()):
        parts.members[str(index)] = data
    return parts


def legacy_package(
    notes: Iterable[NoteSpec] | None = None,
    *,
    media: dict[str, bytes] | None = None,
    deck_name: str = DECK_NAME,
    collection_name: str = "collection.anki2",
) -> bytes:
    """A valid .apkg as genanki writes it (collection.anki2; pass collection_name for collection.anki21)."""
    return legacy_parts(notes, media=media, deck_name=deck_name, collection_name=collection_name).zipped()


# --- the newer form: zstd-compressed schema-18 collection, protobuf media map ---------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _proto_varint(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _proto_bytes(number: int, value: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(value)) + value


_SCHEMA_18 = """
CREATE TABLE col (id integer primary key, crt integer not null, mod integer not null, scm integer not null,
  ver integer not null, dty integer not null, usn integer not null, ls integer not null, conf text not null,
  models text not null, decks text not null, dconf text not null, tags text not null);
CREATE TABLE notes (id integer primary key, guid text not null, mid integer not null, mod integer not null,
  usn integer not null, tags text not null, flds text not null, sfld integer not null, csum integer not null,
  flags integer not null, data text not null);
CREATE TABLE cards (id integer primary key, nid integer not null, did integer not null, ord integer not null,
  mod integer not null, usn integer not null, type integer not null, queue integer not null, due integer not null,
  ivl integer not null, factor integer not null, reps integer not null, lapses integer not null,
  left integer not null, odue integer not null, odid integer not null, flags integer not null, data text not null);
CREATE TABLE revlog (id integer primary key, cid integer not null, usn integer not null, ease integer not null,
  ivl integer not null, lastIvl integer not null, factor integer not null, time integer not null,
  type integer not null);
CREATE TABLE graves (oid integer not null, type integer not null, usn integer not null,
  primary key (oid, type)) without rowid;
CREATE TABLE fields (ntid integer not null, ord integer not null, name text not null collate unicase,
  config blob not null, primary key (ntid, ord)) without rowid;
CREATE UNIQUE INDEX idx_fields_name_ntid on fields (name, ntid);
CREATE TABLE templates (ntid integer not null, ord integer not null, name text not null collate unicase,
  mtime_secs integer not null, usn integer not null, config blob not null, primary key (ntid, ord)) without rowid;
CREATE TABLE notetypes (id integer not null primary key, name text not null collate unicase,
  mtime_secs integer not null, usn integer not null, config blob not null);
CREATE UNIQUE INDEX idx_notetypes_name on notetypes (name);
CREATE TABLE decks (name text not null primary key collate unicase, id integer not null,
  mtime_secs integer not null, usn integer not null, common blob not null, kind blob not null);
CREATE UNIQUE INDEX idx_decks_id on decks (id);
CREATE TABLE tags (tag text not null primary key collate unicase, usn integer not null,
  collapsed boolean not null, config blob null) without rowid;
"""

_LATEST_TYPES: dict[NoteKind, tuple[int, str, int, list[str], int]] = {
    # kind -> (id, name, Anki's kind code, fields, number of card templates)
    "basic": (STANDARD_TYPE_ID, "Basic", 0, ["Front", "Back"], 1),
    "reversed": (REVERSED_TYPE_ID, "Basic (and reversed card)", 0, ["Front", "Back"], 2),
    "cloze": (CLOZE_TYPE_ID, "Cloze", 1, ["Text", "Back Extra"], 1),
}


def _casefold_compare(left: str, right: str) -> int:
    a, b = left.casefold(), right.casefold()
    return (a > b) - (a < b)


def _latest_collection(notes: Iterable[NoteSpec], *, deck_name: str) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "collection.sqlite"
        connection = sqlite3.connect(path)
        connection.create_collation("unicase", _casefold_compare)
        connection.executescript(_SCHEMA_18)
        connection.execute(
            "INSERT INTO col VALUES (1, 0, 0, 0, 18, 0, 0, 0, '', '', '', '', '')",
        )
        for type_id, name, kind_code, field_names, templates in _LATEST_TYPES.values():
            config = _proto_varint(1, kind_code) if kind_code else b""
            connection.execute("INSERT INTO notetypes VALUES (?, ?, 0, 0, ?)", (type_id, name, config))
            for ordinal, field_name in enumerate(field_names):
                connection.execute("INSERT INTO fields VALUES (?, ?, ?, ?)", (type_id, ordinal, field_name, b""))
            for ordinal in range(templates):
                connection.execute(
                    "INSERT INTO templates VALUES (?, ?, ?, 0, 0, ?)", (type_id, ordinal, f"Card {ordinal + 1}", b"")
                )
        connection.execute(
            "INSERT INTO decks VALUES (?, ?, 0, 0, ?, ?)", (deck_name.replace("::", "\x1f"), DECK_ID, b"", b"")
        )
        ids = itertools.count(int(BUILD_TIMESTAMP * 1000))
        for spec in notes:
            type_id, _, _, _, templates = _LATEST_TYPES[spec.kind]
            note_id = next(ids)
            tags = f" {' '.join(spec.tags)} " if spec.tags else ""
            connection.execute(
                "INSERT INTO notes VALUES (?, ?, ?, 0, -1, ?, ?, ?, 0, 0, '')",
                (note_id, spec.guid, type_id, tags, "\x1f".join(spec.fields), spec.fields[0]),
            )
            for ordinal in range(templates):
                connection.execute(
                    "INSERT INTO cards VALUES (?, ?, ?, ?, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '')",
                    (next(ids), note_id, DECK_ID, ordinal),
                )
        connection.commit()
        connection.close()
        return path.read_bytes()


def latest_parts(
    notes: Iterable[NoteSpec] | None = None, *, media: dict[str, bytes] | None = None, deck_name: str = DECK_NAME
) -> PackageParts:
    """The members of a package as current Anki exports it: collection.anki21b, meta, zstd everywhere."""
    media = media or {}
    compressor = zstandard.ZstdCompressor()
    parts = PackageParts()
    parts.members["collection.anki21b"] = compressor.compress(
        _latest_collection(sample_notes() if notes is None else notes, deck_name=deck_name)
    )
    # Anki adds a legacy collection telling old versions to upgrade; the newer file must win over it.
    parts.members["collection.anki2"] = _legacy_collection(
        [NoteSpec("upgrade-notice", ["Please update to the latest Anki version.", ""])], deck_name="Default"
    )
    parts.members["meta"] = _proto_varint(1, 3)
    entries = b"".join(
        _proto_bytes(1, _proto_bytes(1, name.encode()) + _proto_varint(2, len(data))) for name, data in media.items()
    )
    parts.members["media"] = compressor.compress(entries)
    for index, data in enumerate(media.values()):
        parts.members[str(index)] = compressor.compress(data)
    return parts


def latest_package(
    notes: Iterable[NoteSpec] | None = None, *, media: dict[str, bytes] | None = None, deck_name: str = DECK_NAME
) -> bytes:
    return latest_parts(notes, media=media, deck_name=deck_name).zipped()


# --- editing a built package -----------------------------------------------------------------------------------


def _collection_member(parts: PackageParts) -> str:
    return next(
        name for name in ("collection.anki21b", "collection.anki21", "collection.anki2") if name in parts.members
    )


def collection_edit(package: bytes, edit: Callable[[sqlite3.Connection], None]) -> bytes:
    """The package with its collection database changed by `edit` (a connection, committed afterwards)."""
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        parts = PackageParts({info.filename: archive.read(info) for info in archive.infolist()})
    name = _collection_member(parts)
    compressed = name == "collection.anki21b"
    database = parts.members[name]
    if compressed:
        database = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(database)).read()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "collection.sqlite"
        path.write_bytes(database)
        connection = sqlite3.connect(path)
        connection.create_collation("unicase", _casefold_compare)
        edit(connection)
        connection.commit()
        connection.close()
        database = path.read_bytes()
    parts.members[name] = zstandard.ZstdCompressor().compress(database) if compressed else database
    return parts.zipped()


def package_reviews_add(package: bytes, reviews: Iterable[ReviewRow]) -> bytes:
    """The package with these revlog rows added (learners' review history, as Anki exports it with scheduling)."""

    def insert(connection: sqlite3.Connection) -> None:
        connection.executemany(
            "INSERT INTO revlog (id, cid, usn, ease, ivl, lastIvl, factor, time, type)"
            " VALUES (?, ?, -1, ?, ?, ?, ?, ?, ?)",
            [(r.id, r.card_id, r.ease, r.interval, r.last_interval, r.factor, r.taken_ms, r.kind) for r in reviews],
        )

    return collection_edit(package, insert)


def package_card_ids(package: bytes) -> dict[str, list[int]]:
    """Each note's card ids, by note GUID, in template order: what revlog rows refer to."""
    card_ids: dict[str, list[int]] = {}

    def collect(connection: sqlite3.Connection) -> None:
        for guid, card_id in connection.execute(
            "SELECT notes.guid, cards.id FROM cards JOIN notes ON notes.id = cards.nid ORDER BY cards.nid, cards.ord"
        ):
            card_ids.setdefault(guid, []).append(card_id)

    collection_edit(package, collect)
    return card_ids


# --- hostile packages --------------------------------------------------------------------------------------------


def zip_bomb_package(*, expanded_bytes: int = 64 * 1024 * 1024) -> bytes:
    """A valid package whose one media member is megabytes of zeros squeezed a thousandfold."""
    parts = legacy_parts()
    parts.members["media"] = json.dumps({"0": "bomb.png"}).encode()
    parts.members["0"] = bytes(expanded_bytes)
    return parts.zipped()


def traversal_package(media_name: str) -> bytes:
    """A valid package whose media list names a file by a path that tries to leave the media folder."""
    parts = legacy_parts(media={"x.png": PNG_BYTES})
    parts.members["media"] = json.dumps({"0": media_name}).encode()
    return parts.zipped()


def corrupt_collection_package() -> bytes:
    """The right members, but the collection is a damaged SQLite file."""
    parts = legacy_parts()
    database = parts.members["collection.anki2"]
    parts.members["collection.anki2"] = database[:100] + b"\xde\xad\xbe\xef" * 64 + database[356:2048]
    return parts.zipped()


def garbage_collection_package() -> bytes:
    """The right members, but the collection is not a SQLite file at all."""
    parts = legacy_parts()
    parts.members["collection.anki2"] = b"this is not a database" * 50
    return parts.zipped()


def unknown_note_type_package() -> bytes:
    """A note pointing at a note type the collection does not define."""

    def retarget(connection: sqlite3.Connection) -> None:
        connection.execute("UPDATE notes SET mid = ? WHERE guid = 'guid-basic-1'", (UNKNOWN_TYPE_ID,))

    return collection_edit(legacy_package(), retarget)


def unsupported_note_type_package() -> bytes:
    """A note type of a kind that is neither standard nor cloze (Anki knows only those two)."""

    def odd_kind(connection: sqlite3.Connection) -> None:
        (models_json,) = connection.execute("SELECT models FROM col").fetchone()
        models = json.loads(models_json)
        models[str(STANDARD_TYPE_ID)]["type"] = 7
        connection.execute("UPDATE col SET models = ?", (json.dumps(models),))

    return collection_edit(legacy_package(), odd_kind)


def not_a_zip_package() -> bytes:
    return b"SQLite format 3\x00 but no zip around it" * 10


def no_collection_package() -> bytes:
    return PackageParts({"media": b"{}", "readme.txt": b"hello"}).zipped()


def large_package(note_count: int, *, latest: bool = False) -> bytes:
    """Many basic notes with tags: for benchmarks and limit tests."""
    notes = [
        NoteSpec(
            f"bulk-{index:06d}", [f"term {index}", f"definition <b>{index}</b>"], tags=["bulk", f"group-{index % 10}"]
        )
        for index in range(note_count)
    ]
    return latest_package(notes) if latest else legacy_package(notes)
