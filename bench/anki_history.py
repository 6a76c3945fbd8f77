"""Replaying an Anki review history: reading the package, matching its revlog to cards, recording the reviews.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizsite_bench python -m bench.anki_history \\
         [--cards 2000] [--entries 100000]
It creates (and afterwards drops) a test database. A learner and a deck of CARDS cards, each from an
Anki note; a package (as genanki writes it) with those notes and a revlog of ENTRIES entries over them,
about one in fifty a manual or rescheduling entry, the rest learning, review and relearning answers
spread over years. Times the reader, the matching, and the whole import service (read, match, replay
through the batch review path), then the same package uploaded again (nothing left to record).
"""

from __future__ import annotations

import argparse
import io
import os
import random
import time
from datetime import UTC, datetime, timedelta

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.test_settings")

import django

django.setup()

from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.stack import bench_database  # noqa: E402

HISTORY_START = datetime(2016, 1, 4, 8, tzinfo=UTC)
# Ratings in the proportions learners give them: Again, Hard, Good, Easy.
RATING_WEIGHTS = (0.1, 0.15, 0.6, 0.15)
# A share of entries that are no recall attempt (manual due dates, rescheduling): skipped by the import.
NOT_ANSWERS = 0.02


def _deck_with_cards(count: int) -> list[str]:
    from apps.content.models import Card, Course, Deck, Lesson

    course = Course.objects.create(slug="bench-course", title="Bench course")
    lesson = Lesson.objects.create(course=course, slug="bench-lesson", title="Bench lesson", position=1)
    deck = Deck.objects.create(lesson=lesson, slug="bench-deck", title="Bench deck", position=1)
    guids = [f"bench-note-{index:06d}" for index in range(count)]
    Card.objects.bulk_create(
        Card(
            deck=deck,
            slug=f"card-{index}",
            term=f"term {index}",
            definition=f"definition {index}",
            position=index + 1,
            anki_guid=guid,
        )
        for index, guid in enumerate(guids)
    )
    return guids


def _package(guids: list[str], entries: int) -> bytes:
    from tests.support.anki_packages import NoteSpec, ReviewRow, legacy_package, package_card_ids, package_reviews_add

    base = legacy_package([NoteSpec(guid, [f"term {guid}", f"definition {guid}"]) for guid in guids])
    card_ids = package_card_ids(base)
    draw = random.Random(7)
    per_card = entries // len(guids)
    rows: list[ReviewRow] = []
    used: set[int] = set()
    for index, guid in enumerate(guids):
        moment = HISTORY_START + timedelta(minutes=index)
        for position in range(per_card + (1 if index < entries % len(guids) else 0)):
            if draw.random() < NOT_ANSWERS:
                kind, ease = draw.choice((4, 5)), 0
            else:
                kind = 0 if position < 2 else draw.choice((1, 1, 1, 1, 2))
                ease = draw.choices((1, 2, 3, 4), RATING_WEIGHTS)[0]
            # A revlog id is its time in ms and unique: two reviews in the same millisecond are a millisecond apart.
            revlog_id = int(moment.timestamp() * 1000)
            while revlog_id in used:
                revlog_id += 1
            used.add(revlog_id)
            rows.append(
                ReviewRow(
                    id=revlog_id, card_id=card_ids[guid][0], ease=ease, kind=kind, taken_ms=draw.randint(1500, 30_000)
                )
            )
            moment += timedelta(hours=draw.uniform(2, 24 * 40))
    return package_reviews_add(base, rows)


def main(cards: int, entries: int) -> None:
    from django.contrib.auth import get_user_model

    from apps.interchange.anki_history import (
        _matching_cards,
        anki_history_import_create,
        anki_history_import_run,
        anki_history_plan,
    )
    from apps.interchange.anki_package import anki_package_read
    from apps.srs.models import ReviewLog

    learner = get_user_model().objects.create_user(username="bench", password="bench-password-1")
    guids = _deck_with_cards(cards)
    started = time.perf_counter()
    data = _package(guids, entries)
    print(
        f"database: {connection.vendor}; {cards:,} cards; package {len(data) / 1e6:.1f} MB "
        f"(built in {time.perf_counter() - started:.1f} s)"
    )

    started = time.perf_counter()
    package = anki_package_read(io.BytesIO(data))
    read_s = time.perf_counter() - started
    started = time.perf_counter()
    cards_by_guid, archived = _matching_cards({note.guid for note in package.notes})
    plan = anki_history_plan(
        learner_id=learner.pk, package=package, cards_by_guid=cards_by_guid, archived_guids=archived, now=timezone.now()
    )
    match_s = time.perf_counter() - started
    print(
        f"{'read package':>26}: {read_s:7.2f} s  ({len(package.reviews):,} revlog entries, "
        f"{len(package.reviews) / read_s:,.0f}/s)"
    )
    print(f"{'match and map':>26}: {match_s:7.2f} s  ({len(plan.reviews):,} to record, skipped {dict(plan.skipped)})")

    for label in ("import (read+match+replay)", "same package again"):
        row = anki_history_import_create(learner=learner, package=io.BytesIO(data), size=len(data))
        started = time.perf_counter()
        anki_history_import_run(import_id=row.pk, now=timezone.now())
        elapsed = time.perf_counter() - started
        row.refresh_from_db()
        print(
            f"{label:>26}: {elapsed:7.2f} s  ({row.total_entries / elapsed:,.0f} entries/s; status {row.status}, "
            f"applied {row.applied:,}, skipped {row.skipped})"
        )
    print(f"{'review log rows':>26}: {ReviewLog.objects.filter(learner=learner).count():,}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=2000)
    parser.add_argument("--entries", type=int, default=100_000)
    arguments = parser.parse_args()
    with bench_database():
        main(arguments.cards, arguments.entries)
