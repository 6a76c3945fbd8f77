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
from rest_framework.test import APIClient

from apps.accounts.devices import device_token_issue
from apps.common.jobs import JobStatus
from apps.content.models import Card, Course, Deck, Lesson
from apps.srs.adaptation.course_models import (
    MIN_LEARNERS_TO_TRAIN,
    TrainingInProgress,
    course_model_request,
    course_model_run,
    course_models_dispatch,
)
from apps.srs.adaptation.rescheduling import reschedule_run
from apps.srs.conf import MIN_LEARNER_HELD_OUT
from apps.srs.core.population import recall_with_factor, stability_factor_of
from apps.srs.core.scheduling import DEFAULT_PARAMETERS, SchedulerConfig
from apps.srs.models import (
    CardMemory,
    CourseMemoryModel,
    CourseModelPhase,
    LearnerMemoryModel,
    Reschedule,
    RescheduleReason,
    ReviewKind,
    ReviewLog,
)
from apps.srs.settings.config import scheduler_config_from_json
from apps.srs.settings.services import scheduler_profile_ensure, scheduling_settings_update
from tests.support.api import make_learner
from tests.support.reviews import post_review, review_body

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


def _learners_study(
    cards: list[Card],
    *,
    learners: int,
    seed: int,
    parameters: tuple[float, ...] = DEFAULT_PARAMETERS,
    card_factor_sign: float = 1.0,
    wait: float = 1.0,
) -> list[Any]:
    """Learners whose recall follows `parameters`' memory with each card's factor (times `card_factor_sign`),
    coming back after about `wait` times a card's stability; their reviews stored as a log."""
    draw = random.Random(seed)  # noqa: S311 - simulated outcomes, not a secret
    model = fsrs_rs_python.FSRS(list(parameters))
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
                    decay = parameters[20]
                    predicted = float((1 + (0.9 ** (-1 / decay) - 1) * elapsed / state.stability) ** -decay)
                    factor = _factor(card.position) * card_factor_sign
                    truth = recall_with_factor(predicted, decay=decay, log_factor=factor)
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
                elapsed = max(1, round(state.stability * wait * draw.uniform(0.6, 1.4)))
                day += elapsed
    ReviewLog.objects.bulk_create(rows)
    return made


# A learner who forgets much faster than the defaults expect, on a steeper curve.
FAST_FORGETTER = (0.05, 0.15, 0.3, 1.2, *DEFAULT_PARAMETERS[4:8], 0.8, *DEFAULT_PARAMETERS[9:20], 0.5)


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
    # Most learners are better predicted by the course than by the defaults they use.
    assert sum(decision.uses_course_model for decision in decisions.values()) >= 5
    assert CourseMemoryModel.objects.in_use().get(course=course) == row


def test_a_learner_whose_own_weights_predict_them_better_keeps_them(course_cards):
    # The course's learners forget fast, on a steep curve, and find some cards hard.
    _learners_study(course_cards, learners=6, seed=8, parameters=FAST_FORGETTER)
    # One learner remembers as FSRS's defaults say, every card alike: the weights they use are their own.
    (steady,) = _learners_study(course_cards, learners=1, seed=9, card_factor_sign=0.0, wait=0.5)

    row = _trained(course_cards[0].deck.lesson.course)

    assert row.adopted, row.reason
    decisions = {decision.learner_id: decision for decision in LearnerMemoryModel.objects.filter(memory_model=row)}
    theirs = decisions[steady.pk]
    assert theirs.evaluated_on_reviews >= MIN_LEARNER_HELD_OUT
    assert theirs.log_loss is not None and theirs.previous_log_loss is not None
    assert theirs.previous_log_loss < theirs.log_loss
    assert theirs.uses_course_model is False
    # The course's model is in use for the others, not for them.
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {device_token_issue(user=steady, device_name=None).key}")
    (shown,) = client.get("/api/v1/srs/settings/").json()["memory_models"]
    assert shown["in_use"] is False and shown["your_log_loss"] == theirs.log_loss


# Learners who remember a card rated Good on first sight ten times as long as FSRS's defaults say.
LONG_FIRST_GOOD = (*DEFAULT_PARAMETERS[:2], DEFAULT_PARAMETERS[2] * 10, *DEFAULT_PARAMETERS[3:])


def test_each_learner_gets_their_own_first_stabilities_and_a_new_card_is_scheduled_with_them(course_cards):
    # A first stability is measured by the reviews after a first rating: a few dozen cards per rating.
    deck = course_cards[0].deck
    cards = course_cards + Card.objects.bulk_create(
        Card(deck=deck, slug=f"more-{index}", term=f"More {index}", definition="A definition.", position=index)
        for index in range(CARDS, 3 * CARDS)
    )
    _learners_study(cards, learners=4, seed=11)
    slow_to_forget = _learners_study(cards, learners=4, seed=12, parameters=LONG_FIRST_GOOD)

    row = _trained(course_cards[0].deck.lesson.course)

    assert row.adopted, row.reason
    decisions = {decision.learner_id: decision for decision in LearnerMemoryModel.objects.filter(memory_model=row)}
    good = {learner_id: decision.first_stability_log_factors[2] for learner_id, decision in decisions.items()}
    assert all(len(decision.first_stability_log_factors) == 4 for decision in decisions.values())
    theirs = [good[learner.pk] for learner in slow_to_forget]
    slow_ids = {learner.pk for learner in slow_to_forget}
    others = [value for learner_id, value in good.items() if learner_id not in slow_ids]
    # The course's weights are a typical learner's (the median of the fits of those with enough reviews);
    # each learner's reviews after a first Good move theirs apart, every long rememberer's above the
    # course's and above every other learner's.
    assert min(theirs) > max(0.0, max(others)), good
    assert statistics.mean(theirs) - statistics.mean(others) > 1.0, good

    # A new card rated Good: it comes back later for them than for a newcomer, who has the course's weights.
    learner = max(slow_to_forget, key=lambda learner: good[learner.pk])
    LearnerMemoryModel.objects.filter(memory_model=row, learner=learner).update(uses_course_model=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {device_token_issue(user=learner, device_name=None).key}")
    newcomer, newcomer_client = make_learner("first-sight")
    new_card = Card.objects.create(
        deck=deck, slug="new-term", term="New term", definition="Seen by nobody yet.", position=3 * CARDS
    )
    row.card_factors = {**(row.card_factors or {}), str(new_card.pk): 0.0}
    row.save(update_fields=["card_factors"])
    stabilities = {}
    for who in (client, newcomer_client):
        response = post_review(who, review_body(new_card, 3))
        assert response.status_code == 201, response.json()
        stabilities[who] = response.json()["state"]["stability"]
    assert stabilities[client] > 1.5 * stabilities[newcomer_client], stabilities
    log = ReviewLog.objects.get(learner=learner, card=new_card)
    assert log.profile is not None
    config = scheduler_config_from_json(log.profile.config)
    in_use = round(decisions[learner.pk].first_stability_log_factors[2] / 0.05) * 0.05
    assert config.parameters[2] == pytest.approx((row.parameters or [])[2] * math.exp(in_use), rel=1e-5)
    assert config.parameters[4:] == tuple(row.parameters or ())[4:]
    newcomer_log = ReviewLog.objects.get(learner=newcomer, card=new_card)
    assert newcomer_log.profile is not None
    assert scheduler_config_from_json(newcomer_log.profile.config).parameters == tuple(row.parameters or ())


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


def _hardest_and_easiest(row: CourseMemoryModel, cards: list[Card]) -> tuple[Card, Card]:
    factors = row.card_factors or {}
    ordered = sorted(cards, key=lambda card: factors[str(card.pk)])
    return ordered[0], ordered[-1]


def _first_seen(client: Any, cards: tuple[Card, ...], *, days_ago: int) -> None:
    """Each card rated Easy once, `days_ago` days ago: in the review stage, with the same memory state."""
    at = timezone.now() - timedelta(days=days_ago)
    for card in cards:
        response = post_review(client, review_body(card, 4, at))
        assert response.status_code == 201, response.json()


def _study(client: Any) -> dict[int, dict[str, Any]]:
    response = client.get("/api/v1/decks/population-deck/study/", {"limit": 50})
    assert response.status_code == 200, response.json()
    return {item["card"]["id"]: item for item in response.json()["cards"]}


def test_a_newcomer_is_scheduled_with_the_courses_model_a_hard_card_sooner_than_an_easy_one(course_cards):
    _learners_study(course_cards, learners=8, seed=5)
    row = _trained(course_cards[0].deck.lesson.course)
    assert row.adopted, row.reason
    hard, easy = _hardest_and_easiest(row, course_cards)
    newcomer, client = make_learner("newcomer")

    _first_seen(client, (hard, easy), days_ago=20)
    shown = _study(client)

    # Same state, same weights: only the cards' factors tell them apart.
    assert shown[hard.pk]["state"]["stability"] == shown[easy.pk]["state"]["stability"]
    assert shown[hard.pk]["recall_probability"] < shown[easy.pk]["recall_probability"]
    good = {card.pk: shown[card.pk]["next_intervals"]["good"] for card in (hard, easy)}
    assert good[hard.pk] < good[easy.pk], good
    after = {}
    for card in (hard, easy):
        response = post_review(client, review_body(card, 3))
        assert response.status_code == 201, response.json()
        after[card.pk] = datetime.fromisoformat(response.json()["due"])
    assert after[hard.pk] < after[easy.pk]
    # Each review is stored with the config it was made with (the course's weights and the card's factor),
    # so an undo or a late review replays it exactly.
    for card in (hard, easy):
        log = ReviewLog.objects.filter(learner=newcomer, card=card).latest("reviewed_at")
        assert log.profile is not None
        config = scheduler_config_from_json(log.profile.config)
        assert config.parameters == tuple(row.parameters or ())
        assert config.stability_factor == stability_factor_of((row.card_factors or {})[str(card.pk)])
    settings = client.get("/api/v1/srs/settings/").json()
    (shown_model,) = settings["memory_models"]
    assert (shown_model["course"], shown_model["in_use"], shown_model["your_held_out_reviews"]) == (
        "population-course",
        True,
        0,
    )
    assert shown_model["log_loss"] == row.log_loss and "began after" in shown_model["why"]


def test_pinned_weights_and_a_learner_whose_own_weights_won_keep_their_own_model(course_cards):
    learners = _learners_study(course_cards, learners=8, seed=6)
    row = _trained(course_cards[0].deck.lesson.course)
    assert row.adopted, row.reason
    hard, easy = _hardest_and_easiest(row, course_cards)
    veteran = learners[0]
    LearnerMemoryModel.objects.filter(memory_model=row, learner=veteran).update(uses_course_model=False)
    pinned, pinned_client = make_learner("pinned")
    scheduling_settings_update(learner=pinned, changes={"parameters_pinned": True})
    veteran_client = APIClient()
    veteran_client.credentials(HTTP_AUTHORIZATION=f"Token {device_token_issue(user=veteran, device_name=None).key}")
    _first_seen(pinned_client, (hard, easy), days_ago=20)
    shown = _study(pinned_client)
    # No factor: the same state is recalled alike, and the reviews were made under the learner's own config.
    assert shown[hard.pk]["recall_probability"] == shown[easy.pk]["recall_probability"]
    for log in ReviewLog.objects.filter(learner=pinned).select_related("profile"):
        assert log.profile is not None
        config = scheduler_config_from_json(log.profile.config)
        assert (config.parameters, config.stability_factor) == (DEFAULT_PARAMETERS, 1.0)
    veterans_card = ReviewLog.objects.filter(learner=veteran).values_list("card_id", flat=True).first()
    assert veterans_card is not None
    veteran_study = veteran_client.get("/api/v1/decks/population-deck/study/", {"limit": 50})
    assert veteran_study.status_code == 200
    (for_pinned,) = pinned_client.get("/api/v1/srs/settings/").json()["memory_models"]
    assert for_pinned["in_use"] is False and "pinned" in for_pinned["why"]
    (for_veteran,) = veteran_client.get("/api/v1/srs/settings/").json()["memory_models"]
    assert for_veteran["in_use"] is False and "own weights predicted" in for_veteran["why"]
    assert for_veteran["your_held_out_reviews"] > 0


def test_adopting_a_model_moves_the_learners_review_cards_under_it(course_cards):
    _learners_study(course_cards, learners=6, seed=17)
    course = course_cards[0].deck.lesson.course
    # A first training tells which cards are hard; it is then set aside, as if it had not been adopted.
    first = _trained(course)
    hard, easy = _hardest_and_easiest(first, course_cards)
    CourseMemoryModel.objects.filter(pk=first.pk).update(adopted=False)
    Reschedule.objects.all().delete()
    # A learner new to the course saw two cards once, 20 days ago, under their own (default) weights. Too
    # few of their reviews are held out to judge them alone: they follow the course's decision.
    learner, client = make_learner("fresh")
    _first_seen(client, (hard, easy), days_ago=20)
    before = dict(CardMemory.objects.filter(learner=learner, card__in=(hard, easy)).values_list("card_id", "due"))

    row = _trained(course)

    assert row.adopted, row.reason
    assert not LearnerMemoryModel.objects.filter(memory_model=row, learner=learner, uses_course_model=False).exists()
    queued = Reschedule.objects.filter(reason=RescheduleReason.MEMORY_MODEL)
    assert queued.count() == 7
    reschedule_run(reschedule_id=queued.get(learner=learner).pk)
    after = dict(CardMemory.objects.filter(learner=learner, card__in=(hard, easy)).values_list("card_id", "due"))
    factors = row.card_factors or {}
    assert factors[str(hard.pk)] < 0 < factors[str(easy.pk)]
    assert after[hard.pk] < before[hard.pk]
    # An easy card's interval grows by less than a hard one's shrinks (the factors are shrunk toward 0):
    # it may still lie in the range fuzz allows, where a reschedule leaves a due date alone.
    assert after[easy.pk] >= before[easy.pk]


def test_a_finished_training_says_so_and_a_queued_one_is_waiting(course_cards):
    _learners_study(course_cards, learners=5, seed=10)
    queued = course_model_request(course=course_cards[0].deck.lesson.course)
    assert queued.phase == CourseModelPhase.WAITING
    done = course_model_run(course_model_id=queued.pk, now=timezone.now())
    assert done is not None
    assert CourseMemoryModel.objects.values_list("phase", flat=True).get(pk=queued.pk) == CourseModelPhase.FINISHED
