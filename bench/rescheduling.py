"""Rescheduling speed: one learner's review cards moved to a new desired retention, in cards per second.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizsite_bench python -m bench.rescheduling [--cards 20000]
It creates (and afterwards drops) a test database. The learner has `--cards` memory rows in the review
stage, each left by two reviews made through the scheduling core (random ratings and dates over the
last half year), so stabilities and due dates are what the service would have stored. The desired
retention then changes from 0.9 to 0.8 through the settings service, and the queued reschedule runs
in this process, as a worker would run it; a second run under the same settings shows the cost of
examining cards that do not move.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from datetime import UTC, datetime, timedelta

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.test_settings")

import django

django.setup()

from bench.stack import bench_database  # noqa: E402

# Ratings of the second review in the proportions learners give them: Hard, Good, Easy (no lapse: the
# card stays in the review stage).
RATING_WEIGHTS = (0.2, 0.65, 0.15)


def learner_seed(*, cards: int, rng: random.Random) -> int:
    """A learner with `cards` cards in the review stage; returns their id."""
    from django.contrib.auth import get_user_model

    from apps.content.models import Card, Course, Deck, Lesson
    from apps.srs.core.scheduling import Rating, SchedulerConfig, card_fuzz_seed, review
    from apps.srs.models import CardMemory
    from apps.srs.reviews.memory import memory_state_store

    course = Course.objects.create(slug="resched-course", title="Rescheduling course")
    lesson = Lesson.objects.create(course=course, slug="resched-lesson", title="Lesson", position=0)
    deck = Deck.objects.create(lesson=lesson, slug="resched-deck", title="Deck", position=0)
    card_ids = [
        card.pk
        for card in Card.objects.bulk_create(
            (
                Card(deck=deck, slug=f"card-{i}", term=f"term {i}", definition=f"definition {i}", position=i)
                for i in range(cards)
            ),
            batch_size=5000,
        )
    ]
    learner = get_user_model().objects.create_user(username="rescheduled", password=None)
    config = SchedulerConfig()
    now = datetime.now(UTC)
    memories = []
    for card_id in card_ids:
        first_at = now - timedelta(days=rng.uniform(20, 180))
        state = review(
            None,
            rating=Rating.EASY,
            reviewed_at=first_at,
            config=config,
            fuzz_seed=card_fuzz_seed(learner_id=learner.pk, card_id=card_id, state=None),
        )
        second_at = min(state.due + timedelta(days=rng.uniform(-2, 10)), now)
        rating = Rating(rng.choices((2, 3, 4), weights=RATING_WEIGHTS)[0])
        state = review(
            state,
            rating=rating,
            reviewed_at=max(second_at, state.last_review),
            config=config,
            fuzz_seed=card_fuzz_seed(learner_id=learner.pk, card_id=card_id, state=state),
        )
        memory = CardMemory(learner=learner, card_id=card_id, first_review=first_at)
        memory_state_store(memory, state)
        memories.append(memory)
    CardMemory.objects.bulk_create(memories, batch_size=5000)
    return learner.pk


def timed_run(learner_id: int, *, reason: str) -> tuple[float, object]:
    from apps.srs.adaptation.rescheduling import reschedule_run
    from apps.srs.models import Reschedule

    row = Reschedule.objects.get(learner_id=learner_id, status="queued")
    started = time.perf_counter()
    finished = reschedule_run(reschedule_id=row.pk)
    elapsed = time.perf_counter() - started
    assert finished is not None and finished.status == "done", finished
    print(
        f"{reason}: {finished.cards_examined} cards examined, {finished.cards_moved} moved in {elapsed:.2f} s "
        f"= {finished.cards_examined / elapsed:,.0f} cards/s"
    )
    return elapsed, finished


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cards", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    with bench_database():
        from django.contrib.auth import get_user_model

        from apps.srs.adaptation.rescheduling import RESCHEDULE_BATCH
        from apps.srs.settings.services import learner_reschedule_start, scheduling_settings_update

        started = time.perf_counter()
        learner_id = learner_seed(cards=args.cards, rng=random.Random(args.seed))
        print(f"seeded {args.cards} review cards in {time.perf_counter() - started:.1f} s; batch {RESCHEDULE_BATCH}")
        learner = get_user_model().objects.get(pk=learner_id)
        scheduling_settings_update(learner=learner, changes={"desired_retention": 0.8})
        timed_run(learner_id, reason="retention 0.9 -> 0.8")
        learner_reschedule_start(learner_id=learner_id, reason="desired_retention")
        timed_run(learner_id, reason="same settings again")


if __name__ == "__main__":
    main()
