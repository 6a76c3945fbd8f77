"""Training a course's population model on the workers: what it learns, from whom, and when it is adopted."""

from __future__ import annotations

import math
import random
import statistics
import uuid
from datetime import datetime, timedelta
from typing import Any

import fsrs_rs_python
import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from apps.common.jobs import JobStatus
from apps.content.models import Card, Course, Deck, Lesson
from apps.srs.adaptation.course_models import (
    MIN_LEARNERS_TO_TRAIN,
    TrainingInProgress,
    course_model_request,
    course_model_run,
    course_models_dispatch,
)
from apps.srs.core.population import recall_with_factor
from apps.srs.core.scheduling import DEFAULT_PARAMETERS, SchedulerConfig
from apps.srs.models import CourseMemoryModel, LearnerMemoryModel, ReviewKind, ReviewLog
from apps.srs.settings.services import scheduler_profile_ensure

pytestmark = pytest.mark.django_db

CARDS = 40
# Every fourth card is remembered a third as long as FSRS's defaults say; the others 1.6 times as long.
HARD, EASY = math.log(1 / 3), math.log(1.6)
DAYS = 70


def _factor(position: int) -> float:
    return HARD if position % 4 == 0 else EASY


@pytest.fixture
def course_cards(db) -> list[Card]:
    course = Course.objects.create(slug="population-course", title="Population course")
    lesson = Lesson.objects.create(course=course, slug="population-lesson", title="Lesson", position=1)
    deck = Deck.objects.create(lesson=lesson, slug="population-deck", title="Deck", position=1)
    return Card.objects.bulk_create(
        Card(deck=deck, slug=f"term-{index}", term=f"Term {index}", definition="A definition.", position=index)
        for index in range(CARDS)
    )


def _learners_study(cards: list[Card], *, learners: int, seed: int) -> list[Any]:
    """Learners whose recall follows the defaults' memory with each card's factor; reviews stored as a log."""
    draw = random.Random(seed)  # noqa: S311 - simulated outcomes, not a secret
    model = fsrs_rs_python.FSRS(list(DEFAULT_PARAMETERS))
    profile_id = scheduler_profile_ensure(SchedulerConfig())
    start = timezone.now().replace(hour=18, minute=0, second=0, microsecond=0) - timedelta(days=DAYS)
    made = []
    rows = []
    for number in range(learners):
        learner = get_user_model().objects.create_user(username=f"population-{seed}-{number}", password="x" * 12)
        made.append(learner)
        for card in cards:
            day, state, elapsed = draw.randrange(10), None, 0
            while day < DAYS - 1:
                if state is None:
                    rating = draw.choice((1, 3, 3, 4))
                else:
                    decay = DEFAULT_PARAMETERS[20]
                    predicted = float((1 + (0.9 ** (-1 / decay) - 1) * elapsed / state.stability) ** -decay)
                    truth = recall_with_factor(predicted, decay=decay, log_factor=_factor(card.position))
                    rating = draw.choice((2, 3, 3, 4)) if draw.random() < truth else 1
                at: datetime = start + timedelta(days=day, minutes=draw.randrange(60))
                rows.append(
                    ReviewLog(
                        learner=learner,
                        card=card,
                        kind=ReviewKind.REVIEW,
                        client_review_id=uuid.uuid4(),
                        rating=rating,
                        reviewed_at=at,
                        profile_id=profile_id,
                    )
                )
                following = model.next_states(state, 0.9, elapsed)
                state = {1: following.again, 2: following.hard, 3: following.good, 4: following.easy}[rating].memory
                elapsed = max(1, round(state.stability * draw.uniform(0.6, 1.4)))
                day += elapsed
    ReviewLog.objects.bulk_create(rows)
    return made


def _trained(course: Course) -> CourseMemoryModel:
    queued = course_model_request(course=course)
    row = course_model_run(course_model_id=queued.pk, now=timezone.now())
    assert row is not None
    return row


def test_the_course_learns_which_cards_are_hard_and_is_adopted_over_the_default_weights(course_cards):
    learners = _learners_study(course_cards, learners=8, seed=1)
    course = course_cards[0].deck.lesson.course

    row = _trained(course)

    assert (row.status, row.adopted) == (JobStatus.DONE, True), row.reason
    assert row.learners == 8 and row.recorded_reviews == ReviewLog.objects.count()
    assert row.log_loss is not None and row.previous_log_loss is not None and row.log_loss < row.previous_log_loss
    assert row.evaluated_on_reviews > 0 and row.trained_on_reviews > row.evaluated_on_reviews
    factors = row.card_factors or {}
    assert set(factors) == {str(card.pk) for card in course_cards}
    hard = [factors[str(card.pk)] for card in course_cards if _factor(card.position) == HARD]
    easy = [factors[str(card.pk)] for card in course_cards if _factor(card.position) == EASY]
    # Eight learners see each card a few times: most hard cards, not every one, fall below the easy ones.
    assert sum(value < statistics.median(easy) for value in hard) >= 0.8 * len(hard)
    assert sum(hard) / len(hard) < sum(easy) / len(easy) - 0.4
    decisions = {decision.learner_id: decision for decision in LearnerMemoryModel.objects.filter(memory_model=row)}
    assert set(decisions) == {learner.pk for learner in learners}
    assert sum(decision.uses_course_model for decision in decisions.values()) >= 6
    assert CourseMemoryModel.objects.in_use().get(course=course) == row


def test_a_course_with_too_few_learners_is_not_trained_and_keeps_nothing(course_cards):
    _learners_study(course_cards, learners=MIN_LEARNERS_TO_TRAIN - 1, seed=2)

    row = _trained(course_cards[0].deck.lesson.course)

    assert (row.status, row.adopted) == (JobStatus.DONE, False)
    assert f"needs {MIN_LEARNERS_TO_TRAIN} learners" in row.reason
    assert row.card_factors is None and row.parameters is None
    assert not LearnerMemoryModel.objects.exists()
    assert not CourseMemoryModel.objects.in_use().exists()


def test_a_deleted_learners_reviews_leave_the_next_training(course_cards):
    learners = _learners_study(course_cards, learners=7, seed=3)
    course = course_cards[0].deck.lesson.course
    first = _trained(course)
    gone = learners[0]
    their_reviews = ReviewLog.objects.filter(learner=gone).count()

    gone.delete()
    second = _trained(course)

    assert (first.learners, second.learners) == (7, 6)
    assert second.recorded_reviews == first.recorded_reviews - their_reviews
    assert not LearnerMemoryModel.objects.filter(learner_id=gone.pk).exists()
    assert first.card_factors != second.card_factors


def test_one_training_at_a_time_and_the_nightly_run_queues_each_course_due_once(course_cards):
    _learners_study(course_cards, learners=5, seed=4)
    course = course_cards[0].deck.lesson.course

    assert course_models_dispatch(now=timezone.now()) == 1
    with pytest.raises(TrainingInProgress):
        course_model_request(course=course)
    assert course_models_dispatch(now=timezone.now()) == 0
    (queued,) = CourseMemoryModel.objects.filter(course=course)
    done = course_model_run(course_model_id=queued.pk, now=timezone.now())
    assert done is not None and done.status == JobStatus.DONE
    # Run again, the finished training does nothing; and nothing new was reviewed, so nothing is due.
    assert course_model_run(course_model_id=queued.pk, now=timezone.now()) is None
    assert course_models_dispatch(now=timezone.now()) == 0
    assert course_models_dispatch(now=timezone.now() + timedelta(days=8)) == 0
