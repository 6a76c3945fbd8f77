"""Review reminder emails for 100,000 learners: time, SQL queries and how they grow.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizsite_bench python -m bench.emails [--learners N]
It creates (and afterwards drops) a test database. Every learner has opted in, their chosen hour has
come in their own timezone (12 zones) and two cards are due, so every one of them gets an email:
the worst case for one run. The beat job decides and claims (timed with its queries); the batches
it queues are then sent one after another in this process, each message fully built and serialized
as for SMTP, then dropped. A second beat run at the same moment shows a run with nothing left to do.
"""

from __future__ import annotations

import argparse
import email.policy
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
from django.db import connection  # noqa: E402
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


def send(claims: list[uuid.UUID]) -> None:
    """The workers' part, here in one process one batch after another."""
    SerializingBackend.sent_bytes = 0
    sent = 0
    with CaptureQueriesContext(connection) as captured:
        started = time.perf_counter()
        for index, claim in enumerate(claims, 1):
            sent += reminder_batch_send(claim=claim, now=NOW).sent
            print(f"\r  sending: batch {index}/{len(claims)}", end="", file=sys.stderr)
        elapsed = time.perf_counter() - started
    print("", file=sys.stderr)
    print(
        f"sending {sent:,} emails ({SerializingBackend.sent_bytes / 1e6:.0f} MB) in one process: {elapsed:.1f} s, "
        f"{elapsed / max(sent, 1) * 1000:.2f} ms per email, {len(captured.captured_queries)} SQL queries "
        f"({len(captured.captured_queries) / max(len(claims), 1):.0f} per batch task)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=100_000)
    args = parser.parse_args()
    settings.EMAIL_BACKEND = "bench.emails.SerializingBackend"
    settings.DEBUG = False
    old_config = setup_databases(verbosity=0, interactive=False)
    try:
        seed(args.learners)
        claims = decide("beat job", args.learners)
        send(claims)
        decide("beat job again at the same moment", args.learners)
    finally:
        teardown_databases(old_config, verbosity=0)


if __name__ == "__main__":
    main()
