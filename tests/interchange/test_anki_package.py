"""The Anki package reader: every collection version it supports, and every hostile package refused with a reason."""

from __future__ import annotations

import io
import json
import sqlite3
import zipfile
from pathlib import Path

import pytest

from apps.interchange.anki_package import (
    AnkiPackageInvalid,
    PackageLimits,
    anki_package_read,
    media_name_problem,
)
from tests.support import anki_packages
from tests.support.anki_packages import NoteSpec, ReviewRow


def read(data: bytes, **limits: int):
    return anki_package_read(io.BytesIO(data), limits=PackageLimits(**limits))


def refusal(data: bytes, **limits: int) -> str:
    with pytest.raises(AnkiPackageInvalid) as caught:
        read(data, **limits)
    return caught.value.message


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda **kw: anki_packages.legacy_package(**kw), id="anki2"),
        pytest.param(lambda **kw: anki_packages.legacy_package(collection_name="collection.anki21", **kw), id="anki21"),
        pytest.param(lambda **kw: anki_packages.latest_package(**kw), id="anki21b"),
    ],
)
def test_each_collection_version_reads_notes_types_cards_decks_and_media(build):
    package = read(build(media={"chart.png": anki_packages.PNG_BYTES, "clip.mp3": anki_packages.MP3_BYTES}))

    notes = {note.guid: note for note in package.notes}
    assert set(notes) == {"guid-basic-1", "guid-reversed-1", "guid-cloze-1"}
    basic = notes["guid-basic-1"]
    assert basic.fields == ["<b>prefetch</b>", "Overlaps input and training"]
    assert basic.tags == ["tf-data", "perf"]
    assert package.note_types[basic.note_type_id].kind == "standard"
    assert package.note_types[basic.note_type_id].fields == ["Front", "Back"]
    assert package.note_types[notes["guid-cloze-1"].note_type_id].kind == "cloze"
    reversed_cards = [card for card in package.cards if card.note_id == notes["guid-reversed-1"].id]
    assert sorted(card.ordinal for card in reversed_cards) == [0, 1]
    assert package.decks[reversed_cards[0].deck_id] == "Imported::Vocabulary"
    assert package.media == {"chart.png": anki_packages.PNG_BYTES, "clip.mp3": anki_packages.MP3_BYTES}


def test_the_newest_collection_wins_over_the_upgrade_notice_beside_it():
    package = read(anki_packages.latest_package())
    assert "upgrade-notice" not in {note.guid for note in package.notes}
    assert len(package.notes) == 3


def test_a_path_and_a_file_object_read_the_same(tmp_path: Path):
    data = anki_packages.legacy_package()
    path = tmp_path / "deck.apkg"
    path.write_bytes(data)
    assert anki_package_read(path) == read(data)


def test_review_history_is_read_from_the_revlog():
    package = anki_packages.latest_package()
    card_id = anki_packages.package_card_ids(package)["guid-basic-1"][0]
    with_reviews = anki_packages.package_reviews_add(
        package, [ReviewRow(id=1_767_225_600_000, card_id=card_id, ease=1, kind=0, taken_ms=4200)]
    )
    (review,) = read(with_reviews).reviews
    assert (review.id, review.card_id, review.ease, review.kind, review.taken_ms) == (
        1_767_225_600_000,
        card_id,
        1,
        0,
        4200,
    )


def test_a_zip_bomb_is_refused_before_it_is_expanded():
    message = refusal(anki_packages.zip_bomb_package())
    assert "decompression bomb" in message and "'0'" in message


def test_a_package_expanding_past_the_total_limit_is_refused():
    media = {f"img{index}.png": anki_packages.PNG_BYTES + bytes(400_000) for index in range(3)}
    message = refusal(anki_packages.legacy_package(media=media), uncompressed_bytes=1_000_000)
    assert "expand" in message and "limit" in message


@pytest.mark.parametrize(
    "name", ["../../etc/passwd", "/abs", "a\\b", "..", "C:evil.png", "bell\x07.png", "nul\x00.png", ""]
)
def test_media_names_that_try_to_leave_the_folder_refuse_the_whole_package(name):
    message = refusal(anki_packages.traversal_package(name))
    assert "media file name" in message and "refused" in message


def test_ordinary_media_names_pass():
    for name in ["chart.png", "my picture (1).jpg", "日本語.mp3", "a.b.c.ogg"]:
        assert media_name_problem(name) is None


def test_a_corrupt_collection_is_refused():
    assert "corrupt" in refusal(anki_packages.corrupt_collection_package())
    assert "corrupt" in refusal(anki_packages.garbage_collection_package())


def test_a_collection_without_anki_tables_is_refused(tmp_path: Path):
    database = tmp_path / "empty.sqlite"
    sqlite3.connect(database).execute("CREATE TABLE unrelated (x)").connection.commit()
    data = anki_packages.PackageParts({"collection.anki2": database.read_bytes(), "media": b"{}"}).zipped()
    assert "lacks the table(s) col, notes, cards" in refusal(data)


def test_notes_of_an_undefined_note_type_refuse_the_package_naming_type_and_count():
    message = refusal(anki_packages.unknown_note_type_package())
    assert f"1 note(s) use note type id {anki_packages.UNKNOWN_TYPE_ID}" in message


def test_notes_of_a_kind_neither_standard_nor_cloze_refuse_the_package():
    message = refusal(anki_packages.unsupported_note_type_package())
    assert "'Basic (genanki)'" in message and "neither standard nor cloze" in message


def test_not_a_zip_and_no_collection_are_refused():
    assert "not a zip archive" in refusal(anki_packages.not_a_zip_package())
    assert "holds no Anki collection" in refusal(anki_packages.no_collection_package())


def test_an_oversize_package_is_refused_by_size_alone():
    data = anki_packages.legacy_package()
    assert "over the limit of 1,000 bytes" in refusal(data, package_bytes=1000)


def test_too_many_members_or_notes_are_refused():
    assert "files, over the limit of 2" in refusal(
        anki_packages.legacy_package(media={"a.png": anki_packages.PNG_BYTES}), members=2
    )
    notes = [NoteSpec(f"n{index}", [f"term {index}", "back"]) for index in range(5)]
    assert "5 notes, over the limit of 4" in refusal(anki_packages.legacy_package(notes), notes=4)


def test_a_media_list_naming_a_missing_member_is_refused():
    parts = anki_packages.legacy_parts()
    parts.members["media"] = json.dumps({"7": "ghost.png"}).encode()
    assert "missing from the package" in refusal(parts.zipped())


def test_an_encrypted_member_is_refused():
    data = bytearray(anki_packages.legacy_package())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        infos = archive.infolist()
    # Set the "encrypted" flag bit in the central directory entry of the first member.
    central = data.rfind(b"PK\x01\x02", 0, len(data))
    while central > 0 and data[central + 46 : central + 46 + len(infos[0].filename)] != infos[0].filename.encode():
        central = data.rfind(b"PK\x01\x02", 0, central)
    data[central + 8] |= 0x1
    assert "encrypted" in refusal(bytes(data))
