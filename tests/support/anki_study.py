"""Anki's own library at work on collections, for the parity tests; run as a script, never imported by them.

python anki_study.py study OUT_DIR SEED
    Build a collection and study it over simulated days, under libfaketime: the clock it moves is
    the process's own (libfaketime reads FAKETIME_TIMESTAMP_FILE on every call, and this script
    writes it). Anki's Rust engine schedules every answer with FSRS on; the collection is then
    exported with its scheduling, and what Anki computes of each card's memory from its revlog
    is written beside it.
python anki_study.py import COLLECTION PACKAGE OUT_JSON
    Import a package into a collection (a new one if it does not exist) with the options Anki's
    import dialog starts with, and write what the import logged, the notes, note types, cards
    and what Check Media finds.
python anki_study.py export COLLECTION PACKAGE
    Export the whole collection as Anki's "Anki Deck Package" does by default: no scheduling, media.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path

START = 1_704_877_200  # 2024-01-10 09:00 UTC, a Wednesday
DAYS = 150
NOTES = 40
DAY = 86_400
# FSRS-6's published defaults, written into the deck options so both sides use the same weights.
PARAMETERS = [
    0.212, 1.2931, 2.3065, 8.2956, 6.4133, 0.8334, 3.0194, 0.001, 1.8722, 0.1666, 0.796,
    1.4835, 0.0614, 0.2629, 1.6483, 0.6014, 1.8729, 0.5425, 0.0912, 0.0658, 0.1542,
]  # fmt: skip
RATINGS = (1, 2, 3, 3, 3, 3, 3, 3, 4, 4)
# The first bytes of a PNG image and of an MP3 with an ID3 tag: enough for either side to take them as such.
PNG_BYTES = b"\x89PNG\r\n\x1a\n" + bytes(24)
MP3_BYTES = b"ID3\x04\x00\x00\x00\x00\x00\x00" + bytes(24)


def set_clock(moment: float) -> None:
    Path(os.environ["FAKETIME_TIMESTAMP_FILE"]).write_text(
        "@" + time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(moment)), encoding="utf-8"
    )


def study(out: Path, seed: int) -> None:
    set_clock(START)
    # Imported once the clock is set: the engine reads it as it starts.
    from anki.collection import Collection, ExportAnkiPackageOptions
    from anki.decks import DeckId

    rng = random.Random(seed)  # noqa: S311 - a simulated learner
    col = Collection(str(out / "study.anki2"))
    col.set_config("fsrs", True)
    deck_id = col.decks.id("Pipelines")
    assert deck_id is not None
    config = col.decks.config_dict_for_deck_id(deck_id)
    config["fsrsParams6"] = PARAMETERS
    config["desiredRetention"] = 0.9
    config["new"]["perDay"] = 12
    col.decks.update_config(config)
    basic = col.models.by_name("Basic")
    assert basic is not None
    for index in range(NOTES):
        note = col.new_note(basic)
        note["Front"] = f"Which tf.data transformation {index}?"
        note["Back"] = f"Answer {index}: <b>prefetch</b>"
        note.tags = ["tfdata", "marked"] if index % 7 == 0 else ["tfdata"]
        col.add_note(note, deck_id)
    # One note shows an image and plays a sound from the collection's media folder.
    col.media.write_data("pipeline chart.png", PNG_BYTES)
    col.media.write_data("say.mp3", MP3_BYTES)
    note = col.new_note(basic)
    note["Front"] = "Which picture shows the input pipeline?"
    note["Back"] = 'This one: <img src="pipeline chart.png"> [sound:say.mp3]'
    col.add_note(note, deck_id)
    card_ids = sorted(col.find_cards("deck:Pipelines"))
    forgotten_relearned, forgotten_left, due_set = card_ids[3], card_ids[4], card_ids[5]
    now = float(START)
    events: list[str] = []

    def study(limit: int) -> None:
        nonlocal now
        for _ in range(limit):
            card = col.sched.getCard()
            if card is None:
                return
            now += rng.randrange(4, 600)
            set_clock(now)
            card.start_timer()
            col.sched.answerCard(card, rng.choice(RATINGS))  # type: ignore[arg-type]

    def study_filtered(name: str, search: str, *, limit: int, reschedule: bool) -> None:
        filtered = col.sched.get_or_create_filtered_deck(deck_id=DeckId(0))
        filtered.name = name
        filtered.config.reschedule = reschedule
        del filtered.config.search_terms[:]
        filtered.config.search_terms.add(search=search, limit=limit, order=0)
        filtered_id = DeckId(col.sched.add_or_update_filtered_deck(filtered).id)
        col.decks.select(filtered_id)
        study(limit)
        col.sched.empty_filtered_deck(filtered_id)

    for day in range(DAYS):
        col.decks.select(deck_id)
        # One or two sessions a day, some late at night, so day starts (4:00) fall between reviews.
        for hour in sorted(rng.sample([7, 12, 19, 23, 26], k=rng.choice((1, 2)))):
            now = START + day * DAY + (hour - 9) * 3600 + rng.randrange(0, 3000)
            set_clock(now)
            study(60)
        if day == 60:
            col.sched.schedule_cards_as_new([forgotten_relearned], restore_position=True, reset_counts=False)
            events.append(f"forgot {forgotten_relearned} on day {day}")
        if day == 75:
            col.sched.set_due_date([due_set], "9")
            events.append(f"set due {due_set} on day {day}")
        if day == 90:
            # Reviewing ahead in a filtered deck that reschedules: answers count as reviews.
            study_filtered("Ahead", "deck:Pipelines prop:due>0 prop:due<6", limit=8, reschedule=True)
            events.append(f"reviewed ahead on day {day}")
        if day == 110:
            # A preview deck that does not reschedule: cramming, which leaves memory alone.
            study_filtered("Cram", "deck:Pipelines is:review", limit=6, reschedule=False)
            events.append(f"crammed on day {day}")
    # Forgotten on the last day and not studied again: new in Anki.
    col.sched.schedule_cards_as_new([forgotten_left], restore_position=True, reset_counts=False)
    events.append(f"forgot {forgotten_left} at the end")
    # Moved by Set due date after its last answer: due on the day set, its memory untouched.
    due_set_last = next(
        card_id for card_id in card_ids[6:] if col.get_card(card_id).type == 2 and col.get_card(card_id).ivl > 3
    )
    col.sched.set_due_date([due_set_last], "15")
    events.append(f"set due {due_set_last} at the end")

    today = col.sched.today
    db = col.db
    assert db is not None
    cards = []
    for card_id in card_ids:
        card = col.get_card(card_id)
        memory = col.compute_memory_state(card_id)
        cards.append(
            {
                "guid": card.note().guid,
                "type": card.type,
                "queue": card.queue,
                "interval": card.ivl,
                "due_in_days": card.due - today if card.type == 2 else None,
                "stability": memory.stability if memory.stability else None,
                "difficulty": memory.difficulty if memory.difficulty else None,
                "last_review_ms": db.scalar("select max(id) from revlog where cid = ? and ease > 0", card_id),
            }
        )
    kinds: dict[int, int] = {
        int(kind): int(count) for kind, count in db.all("select type, count() from revlog group by type")
    }
    resets = db.scalar("select count() from revlog where type = 4 and factor = 0")
    package = out / "study.apkg"
    col.export_anki_package(
        out_path=str(package),
        options=ExportAnkiPackageOptions(with_scheduling=True, with_deck_configs=True, with_media=True, legacy=False),
        limit=None,
    )
    summary = {
        "package": str(package),
        "now": now,
        "parameters": PARAMETERS,
        "cards": cards,
        "events": events,
        "revlog_kinds": {str(kind): count for kind, count in kinds.items()},
        "resets": resets,
        "revlog": db.scalar("select count() from revlog"),
        "special": {
            "relearned_after_reset": forgotten_relearned,
            "left_new": forgotten_left,
            "due_set": due_set,
            "due_set_last": due_set_last,
        },
        # The learner's date of Anki's "today" (the day starts at 4:00 UTC): review cards fall due days after it.
        "today": time.strftime("%Y-%m-%d", time.gmtime(now - 4 * 3600)),
        "guids": {str(card_id): col.get_card(card_id).note().guid for card_id in card_ids},
    }
    (out / "study.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    col.close()


def import_package(collection: Path, package: Path, out: Path) -> None:
    from anki.collection import Collection, ImportAnkiPackageOptions, ImportAnkiPackageRequest
    from anki.import_export_pb2 import ImportAnkiPackageUpdateCondition
    from anki.models import NotetypeId

    col = Collection(str(collection))
    if_newer = ImportAnkiPackageUpdateCondition.IMPORT_ANKI_PACKAGE_UPDATE_CONDITION_IF_NEWER
    options = ImportAnkiPackageOptions(
        merge_notetypes=False,
        update_notes=if_newer,
        update_notetypes=if_newer,
        with_scheduling=False,
        with_deck_configs=False,
    )
    log = col.import_anki_package(ImportAnkiPackageRequest(package_path=str(package), options=options)).log
    db = col.db
    assert db is not None
    notes = {}
    for note_id in col.find_notes(""):
        note = col.get_note(note_id)
        notes[note.guid] = {
            "note_type_id": note.mid,
            "fields": list(note.fields),
            "tags": list(note.tags),
            "modified": note.mod,
        }
    note_types = {}
    for entry in col.models.all_names_and_ids():
        model = col.models.get(NotetypeId(entry.id))
        assert model is not None
        note_types[str(entry.id)] = {
            "name": model["name"],
            "fields": [field["name"] for field in model["flds"]],
            "templates": [[template["name"], template["qfmt"], template["afmt"]] for template in model["tmpls"]],
            "css": model["css"],
        }
    cards = {
        str(guid): {"type": kind, "queue": queue, "interval": interval, "due": due}
        for guid, kind, queue, interval, due in db.all(
            "select n.guid, c.type, c.queue, c.ivl, c.due from cards c join notes n on n.id = c.nid"
        )
    }
    check = col.media.check()
    report = {
        "log": {
            name: len(getattr(log, name))
            for name in ("new", "updated", "duplicate", "conflicting", "first_field_match", "missing_notetype")
        },
        "notes": notes,
        "note_types": note_types,
        "cards": cards,
        "media_missing": list(check.missing),
        "media_unused": list(check.unused),
        "media_files": sorted(path.name for path in Path(col.media.dir()).iterdir()),
    }
    out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    col.close()


def export_package(collection: Path, package: Path) -> None:
    from anki.collection import Collection, ExportAnkiPackageOptions

    col = Collection(str(collection))
    col.export_anki_package(
        out_path=str(package),
        options=ExportAnkiPackageOptions(with_scheduling=False, with_deck_configs=False, with_media=True, legacy=False),
        limit=None,
    )
    col.close()


if __name__ == "__main__":
    command, *arguments = sys.argv[1:]
    if command == "study":
        study(Path(arguments[0]), int(arguments[1]))
    elif command == "import":
        import_package(Path(arguments[0]), Path(arguments[1]), Path(arguments[2]))
    elif command == "export":
        export_package(Path(arguments[0]), Path(arguments[1]))
    else:
        raise SystemExit(f"unknown command {command!r}")
