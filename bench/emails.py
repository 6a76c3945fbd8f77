"""Review reminder emails for 100,000 learners: time, SQL queries and how they grow.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizsite_bench python -m bench.emails [--learners N]
It creates (and afterwards drops) a test database. Every learner has opted in, their chosen hour has
come in their own timezone (12 zones) and two cards are due, so every one of them gets an email:
the worst case for one run. The beat job decides and claims (timed with its queries); the batches
it queues are then sent by a pool of processes (--workers, default: one per core), as a worker's
prefork pool would, each message fully built and serialized as for SMTP, then dropped. A second
beat run at the same moment shows a run with nothing left to do.
"""

from __future__ import annotations

import argparse
import email.policy
import multiprocessing
import os
import random
import sys
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.test_settings")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.mail.backends.base import BaseEmailBackend  # noqa: E402
from django.db import connection, connections  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_databases, teardown_databases  # noqa: E402

from apps.content.models import Card, Course, Deck, Lesson  # noqa: E402
from apps.reminders.models import ReminderPreference  # noqa: E402
from apps.reminders.services import ReminderRun, reminder_batch_send, reminders_send  # noqa: E402
from apps.srs.models import CardMemory, SchedulingSettings  # noqa: E402

ZONES = (
    "UTC",
    "Europe/London",
    "Europe/Paris",
    "Europe/Moscow",
    "Asia/Kolkata",
    "Asia/Tokyo",
    "Australia/Sydney",
    "Pacific/Auckland",
    "America/Sao_Paulo",
    "America/New_York",
    "America/Chicago",
    "America/Los_Angeles",
)
DUE_CARDS_PER_LEARNER = 2
INSERT_BATCH = 5000
NOW = datetime(2026, 6, 10, 12, 7, tzinfo=UTC)


class SerializingBackend(BaseEmailBackend):
    """Builds each message's bytes exactly as the SMTP backend would, and sends nothing."""

    sent_bytes = 0

    def send_messages(self, email_messages: Sequence[Any]) -> int:
        for message in email_messages:
            SerializingBackend.sent_bytes += len(message.message(policy=email.policy.SMTP).as_bytes())
        return len(email_messages)


def seed(learners: int) -> None:
    started = time.perf_counter()
    course = Course.objects.create(slug="bench", title="Bench")
    lesson = Lesson.objects.create(course=course, slug="bench-lesson", title="Lesson", position=0)
    cards = []
    for deck_index in range(3):
        deck = Deck.objects.create(
            lesson=lesson, slug=f"deck-{deck_index}", title=f"Deck {deck_index}", position=deck_index
        )
        cards += Card.objects.bulk_create(
            Card(deck=deck, slug=f"c{index}", term=f"term {index}", definition="d", position=index)
            for index in range(20)
        )
    rng = random.Random(7)
    user_model = get_user_model()
    due = NOW - timedelta(hours=1)
    for start in range(0, learners, INSERT_BATCH):
        count = min(INSERT_BATCH, learners - start)
        users = user_model.objects.bulk_create(
            user_model(username=f"l{start + index}", email=f"l{start + index}@example.com", password="!")
            for index in range(count)
        )
        zones = [rng.choice(ZONES) for _ in users]
        SchedulingSettings.objects.bulk_create(
            SchedulingSettings(learner=user, timezone=zone) for user, zone in zip(users, zones, strict=True)
        )
        ReminderPreference.objects.bulk_create(
            ReminderPreference(learner=user, enabled=True, local_hour=NOW.astimezone(ZoneInfo(zone)).hour)
            for user, zone in zip(users, zones, strict=True)
        )
        CardMemory.objects.bulk_create(
            CardMemory(
                learner=user,
                card=card,
                stage=2,
                stability=4.0,
                difficulty=5.0,
                due=due,
                last_review=due - timedelta(days=4),
                first_review=due - timedelta(days=9),
                reps=3,
            )
            for user in users
            for card in rng.sample(cards, DUE_CARDS_PER_LEARNER)
        )
        print(f"\r  seeded {start + count:,}/{learners:,} learners", end="", file=sys.stderr, flush=True)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"\r  seeded {learners:,} learners in {time.perf_counter() - started:.1f} s", file=sys.stderr)


def decide(label: str, learners: int) -> list[uuid.UUID]:
    """The beat job's part: choose and claim, one batch task queued per claimed batch (collected here)."""
    claims: list[uuid.UUID] = []

    def progress(run: ReminderRun) -> None:
        print(f"\r  {label}: {run.candidates:,}/{learners:,} learners", end="", file=sys.stderr)

    with CaptureQueriesContext(connection) as captured:
        started = time.perf_counter()
        run = reminders_send(now=NOW, send_batch=claims.append, on_progress=progress)
        elapsed = time.perf_counter() - started
    print("", file=sys.stderr)
    print(
        f"{label}: {elapsed:.1f} s, {len(captured.captured_queries)} SQL queries "
        f"({run.groups} timezone groups, {run.batches} batches of up to {settings.REMINDER_BATCH_SIZE}), "
        f"{run.claimed:,} claimed, {run.skipped:,} skipped, {run.already_decided:,} already decided"
    )
    return claims


def _send_batch(claim: uuid.UUID) -> tuple[int, int, int]:
    """One batch task, as a worker runs it: emails sent, bytes built, SQL queries."""
    SerializingBackend.sent_bytes = 0
    with CaptureQueriesContext(connection) as captured:
        sent = reminder_batch_send(claim=claim, now=NOW).sent
    return sent, SerializingBackend.sent_bytes, len(captured.captured_queries)


def send(claims: list[uuid.UUID], *, workers: int) -> None:
    """The workers' part: the batch tasks, run by `workers` processes as a worker's pool would."""
    connections.close_all()  # each forked process opens its own
    started = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        results = []
        for index, result in enumerate(pool.imap_unordered(_send_batch, claims), 1):
            results.append(result)
            print(f"\r  sending: batch {index}/{len(claims)}", end="", file=sys.stderr)
    elapsed = time.perf_counter() - started
    print("", file=sys.stderr)
    sent = sum(result[0] for result in results)
    queries = sum(result[2] for result in results)
    print(
        f"sending {sent:,} emails ({sum(result[1] for result in results) / 1e6:.0f} MB built) with {workers} "
        f"worker process(es): {elapsed:.1f} s, {elapsed * workers / max(sent, 1) * 1000:.2f} ms of a process per "
        f"email, {queries} SQL queries ({queries / max(len(claims), 1):.0f} per batch task)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes sending batches")
    args = parser.parse_args()
    # This very module's class (run as __main__), so the pool's processes count into it.
    settings.EMAIL_BACKEND = f"{__name__}.SerializingBackend"
    settings.DEBUG = False
    old_config = setup_databases(verbosity=0, interactive=False)
    try:
        seed(args.learners)
        claims = decide("beat job", args.learners)
        send(claims, workers=args.workers)
        decide("beat job again at the same moment", args.learners)
    finally:
        teardown_databases(old_config, verbosity=0)


if __name__ == "__main__":
    main()
