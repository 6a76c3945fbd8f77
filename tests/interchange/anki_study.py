"""Build and study a collection with Anki's own library over simulated days; run under libfaketime.

Run as a script by `tests.interchange.real_anki`, never imported by the tests: the clock it moves is
the process's own (libfaketime reads FAKETIME_TIMESTAMP_FILE on every call, and this script writes
it). Anki's Rust engine schedules every answer with FSRS on; the script then exports the collection
with its scheduling and writes, per card, what Anki itself computes of its memory from the revlog.

    python anki_study.py OUT_DIR SEED
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


def set_clock(moment: float) -> None:
    Path(os.environ["FAKETIME_TIMESTAMP_FILE"]).write_text(
        "@" + time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(moment)), encoding="utf-8"
    )


def main(out: Path, seed: int) -> None:
    set_clock(START)
    from anki.collection import Collection, ExportAnkiPackageOptions

    rng = random.Random(seed)  # noqa: S311 - a simulated learner
    col = Collection(str(out / "study.anki2"))
    col.set_config("fsrs", True)
    deck_id = col.decks.id("Pipelines")
    config = col.decks.config_dict_for_deck_id(deck_id)
    config["fsrsParams6"] = PARAMETERS
    config["desiredRetention"] = 0.9
    config["new"]["perDay"] = 12
    col.decks.update_config(config)
    basic = col.models.by_name("Basic")
    for index in range(NOTES):
        note = col.new_note(basic)
        note["Front"] = f"Which tf.data transformation {index}?"
        note["Back"] = f"Answer {index}: <b>prefetch</b>"
        note.tags = ["tfdata", "marked"] if index % 7 == 0 else ["tfdata"]
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
            col.sched.answerCard(card, rng.choice(RATINGS))

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
            early = col.sched.get_or_create_filtered_deck(deck_id=0)
            early.name = "Ahead"
            early.config.reschedule = True
            del early.config.search_terms[:]
            early.config.search_terms.add(search="deck:Pipelines prop:due>0 prop:due<6", limit=8, order=0)
            ahead = col.sched.add_or_update_filtered_deck(early).id
            col.decks.select(ahead)
            study(8)
            col.sched.empty_filtered_deck(ahead)
            events.append(f"reviewed ahead on day {day}")
        if day == 110:
            # A preview deck that does not reschedule: cramming, which leaves memory alone.
            cram = col.sched.get_or_create_filtered_deck(deck_id=0)
            cram.name = "Cram"
            cram.config.reschedule = False
            del cram.config.search_terms[:]
            cram.config.search_terms.add(search="deck:Pipelines is:review", limit=6, order=0)
            crammed = col.sched.add_or_update_filtered_deck(cram).id
            col.decks.select(crammed)
            study(6)
            col.sched.empty_filtered_deck(crammed)
            events.append(f"crammed on day {day}")
    # Forgotten on the last day and not studied again: new in Anki.
    col.sched.schedule_cards_as_new([forgotten_left], restore_position=True, reset_counts=False)
    events.append(f"forgot {forgotten_left} at the end")

    today = col.sched.today
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
                "last_review_ms": col.db.scalar("select max(id) from revlog where cid = ? and ease > 0", card_id),
            }
        )
    kinds = dict(col.db.all("select type, count() from revlog group by type"))
    resets = col.db.scalar("select count() from revlog where type = 4 and factor = 0")
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
        "revlog": col.db.scalar("select count() from revlog"),
        "special": {"relearned_after_reset": forgotten_relearned, "left_new": forgotten_left, "due_set": due_set},
        "guids": {str(card_id): col.get_card(card_id).note().guid for card_id in card_ids},
    }
    (out / "study.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    col.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
