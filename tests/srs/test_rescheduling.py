"""Rescheduling review cards when a learner's desired retention or FSRS weights change."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import fsrs
import pytest
from django.contrib.auth import get_user_model
from fsrs import scheduler as fsrs_scheduler

from apps.common.jobs import jobs_recover, jobs_stalled
from apps.content.models import Card, Course, Deck, Lesson
from apps.srs.adaptation import rescheduling
from apps.srs.adaptation.rescheduling import due_under, reschedule_run
from apps.srs.core.scheduling import (
    DEFAULT_PARAMETERS,
    MemoryStage,
    MemoryState,
    Rating,
    SchedulerConfig,
    card_fuzz_seed,
    rescheduled_due,
    review,
)
from apps.srs.jobs import RESCHEDULES
from apps.srs.models import CardMemory, Reschedule, ReviewKind, ReviewLog
from apps.srs.reviews.memory import memory_state_of
from apps.srs.reviews.services import ReviewInput, reviews_submit
from apps.srs.settings.services import learner_reschedule_start, scheduling_settings_update
from tests.support.api import client_with_token, learner_with_token
from tests.support.reviews import run_together

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
# Good, Good, Good a few days apart: the card is in the review stage with intervals long enough to fuzz.
REVIEW_HISTORY = ((3, 40), (3, 39), (3, 30))
# Again first, then nothing: the card is still in its learning steps.
LEARNING_HISTORY = ((1, 1),)
# Reviewed into the review stage, then forgotten: relearning.
RELEARNING_HISTORY = ((3, 40), (3, 39), (1, 1))
# Valid FSRS-6 weights other than the defaults: a faster forgetting curve (w20) and other stabilities.
OTHER_PARAMETERS = [*DEFAULT_PARAMETERS[:4], 1.2, *DEFAULT_PARAMETERS[5:20], 0.45]


def make_cards(count: int, *, slug: str = "resched") -> list[int]:
    course = Course.objects.create(slug=f"{slug}-course", title="Course")
    lesson = Lesson.objects.create(course=course, slug=f"{slug}-lesson", title="Lesson", position=0)
    deck = Deck.objects.create(lesson=lesson, slug=f"{slug}-deck", title="Deck", position=0)
    cards = Card.objects.bulk_create(
        Card(deck=deck, slug=f"card-{i}", term=f"term {i}", definition=f"definition {i}", position=i)
        for i in range(count)
    )
    return [card.pk for card in cards]


def study(learner: Any, card_ids: list[int], history: tuple[tuple[int, int], ...]) -> None:
    """Each card reviewed through the service: (rating, days before NOW) in order."""
    reviews = [
        ReviewInput(
            card_id=card_id,
            rating=rating,
            client_review_id=uuid.uuid4(),
            reviewed_at=NOW - timedelta(days=days_ago, minutes=index),
        )
        for index, card_id in enumerate(card_ids)
        for rating, days_ago in history
    ]
    reviews_submit(learner=learner, reviews=reviews, now=NOW)


def fresh(learner: Any) -> Any:
    # The learner object caches their settings; a change is read through a fresh one.
    return get_user_model().objects.get(pk=learner.pk)


def memories(learner: Any) -> dict[int, CardMemory]:
    return {memory.card_id: memory for memory in CardMemory.objects.filter(learner=learner)}


def latest_review(learner: Any, card_id: int) -> ReviewLog:
    log = (
        ReviewLog.objects.filter(learner=learner, card_id=card_id, kind=ReviewKind.REVIEW, undone_by__isnull=True)
        .order_by("-reviewed_at", "-client_review_id")
        .first()
    )
    assert log is not None and log.rating is not None and log.state_before is not None
    return log


def state_after(log: ReviewLog) -> MemoryState:
    assert log.state_after is not None
    return MemoryState.from_dict(log.state_after)


def run_queued(learner: Any) -> Reschedule:
    row = Reschedule.objects.get(learner=learner, status="queued")
    ran = reschedule_run(reschedule_id=row.pk)
    assert ran is not None
    return ran


@pytest.fixture
def studied(db) -> tuple[Any, list[int], list[int], list[int]]:
    """A learner with review-stage, learning and relearning cards."""
    learner = get_user_model().objects.create_user(username="studier", password="a long enough passphrase")
    card_ids = make_cards(14)
    in_review, learning, relearning = card_ids[:10], card_ids[10:12], card_ids[12:]
    study(learner, in_review, REVIEW_HISTORY)
    study(learner, learning, LEARNING_HISTORY)
    study(learner, relearning, RELEARNING_HISTORY)
    return fresh(learner), in_review, learning, relearning


# --- due dates ---------------------------------------------------------------------------------------------------


def test_due_dates_are_those_the_library_gives_for_the_new_retention(studied):
    learner, in_review, _, _ = studied
    before = memories(learner)
    assert {before[card_id].stage for card_id in in_review} == {MemoryStage.REVIEW}

    scheduling_settings_update(learner=learner, changes={"desired_retention": 0.8})
    row = run_queued(learner)

    after = memories(learner)
    lower = SchedulerConfig(desired_retention=0.8)
    for card_id in in_review:
        # Retention does not enter the memory update: the last review made under 0.8, with the same fuzz draw,
        # leaves the same state with the due date fsrs gives for 0.8.
        last = latest_review(learner, card_id)
        assert last.state_before is not None and last.rating is not None
        state_before = MemoryState.from_dict(last.state_before)
        expected = review(
            state_before,
            rating=Rating(last.rating),
            reviewed_at=last.reviewed_at,
            config=lower,
            fuzz_seed=card_fuzz_seed(learner_id=learner.pk, card_id=card_id, state=state_before),
        )
        assert after[card_id].due == expected.due
        assert after[card_id].due > before[card_id].due  # a lower retention waits longer
        old_state = memory_state_of(before[card_id])
        assert old_state is not None and old_state.stability == expected.stability
        assert memory_state_of(after[card_id]) == replace(old_state, due=expected.due)
    assert (row.status, row.reason, row.cards_total, row.cards_examined, row.cards_moved) == (
        "done",
        "desired_retention",
        len(in_review),
        len(in_review),
        len(in_review),
    )
    assert row.to_profile is not None and row.to_profile.config["desired_retention"] == 0.8


def fuzz_bounds(scheduler: fsrs.Scheduler, days: int) -> tuple[int, int]:
    """The shortest and longest interval fsrs's fuzz can make of `days`."""
    original = fsrs_scheduler.random
    try:
        fsrs_scheduler.random = lambda: 0.0
        shortest = scheduler._get_fuzzed_interval(interval=timedelta(days=days)).days
        fsrs_scheduler.random = lambda: 0.999999
        longest = scheduler._get_fuzzed_interval(interval=timedelta(days=days)).days
    finally:
        fsrs_scheduler.random = original
    return shortest, longest


def test_new_weights_give_each_card_the_interval_of_its_stability_under_them(studied):
    learner, in_review, _, _ = studied
    before = memories(learner)

    # At a retention of 0.9 every FSRS-6 forgetting curve gives an interval equal to the stability: the
    # decay (w20) only tells curves apart at other retentions.
    scheduling_settings_update(learner=learner, changes={"fsrs_parameters": OTHER_PARAMETERS, "desired_retention": 0.8})
    row = run_queued(learner)

    assert row.reason == "parameters"
    scheduler = fsrs.Scheduler(parameters=OTHER_PARAMETERS, desired_retention=0.8)
    default_curve = fsrs.Scheduler(desired_retention=0.8)
    after = memories(learner)
    for card_id in in_review:
        old = before[card_id]
        days = scheduler._next_interval(stability=old.stability)
        shortest, longest = fuzz_bounds(scheduler, days)
        interval = after[card_id].due - old.last_review
        assert interval.seconds == 0 and shortest <= interval.days <= longest, (days, interval)
        assert days != default_curve._next_interval(stability=old.stability)
        # The memory itself is as the last review left it.
        assert (after[card_id].stability, after[card_id].reps, after[card_id].last_review) == (
            old.stability,
            old.reps,
            old.last_review,
        )
    assert row.cards_moved == len(in_review)


def test_the_maximum_interval_still_holds(studied):
    learner, in_review, _, _ = studied
    scheduling_settings_update(learner=learner, changes={"maximum_interval_days": 3})
    scheduling_settings_update(learner=fresh(learner), changes={"desired_retention": 0.75})
    run_queued(learner)

    for card_id in in_review:
        memory = CardMemory.objects.get(learner=learner, card_id=card_id)
        assert memory.due - memory.last_review <= timedelta(days=3)


def test_learning_and_relearning_cards_are_left_alone(studied):
    learner, _, learning, relearning = studied
    before = {card_id: vars(memory).copy() for card_id, memory in memories(learner).items()}

    scheduling_settings_update(learner=learner, changes={"desired_retention": 0.97})
    run_queued(learner)

    after = memories(learner)
    for card_id in learning + relearning:
        assert after[card_id].stage != MemoryStage.REVIEW
        assert vars(after[card_id]) | {"_state": None} == before[card_id] | {"_state": None}


def test_unchanged_settings_move_nothing_and_a_second_run_moves_nothing_more(studied):
    # Load balancing is on: several reviews moved their card off fuzz's own draw, within the days fuzz allows.
    learner, in_review, _, _ = studied
    untouched = {card_id: memory.due for card_id, memory in memories(learner).items()}
    learner_reschedule_start(learner_id=learner.pk, reason="parameters")
    first = run_queued(learner)
    # Each due date is one a review under these settings could give: it stands.
    assert (first.cards_examined, first.cards_moved) == (len(in_review), 0)
    assert {card_id: memory.due for card_id, memory in memories(learner).items()} == untouched

    scheduling_settings_update(learner=learner, changes={"desired_retention": 0.85})
    moved = run_queued(learner)
    rescheduled = {card_id: memory.due for card_id, memory in memories(learner).items()}
    learner_reschedule_start(learner_id=learner.pk, reason="desired_retention")
    again = run_queued(learner)

    assert moved.cards_moved == len(in_review)
    assert (again.cards_examined, again.cards_moved) == (len(in_review), 0)
    assert {card_id: memory.due for card_id, memory in memories(learner).items()} == rescheduled
    # A finished run delivered again does nothing.
    assert reschedule_run(reschedule_id=again.pk) is None


def test_a_run_goes_through_every_batch(studied, monkeypatch):
    learner, in_review, _, _ = studied
    monkeypatch.setattr(rescheduling, "RESCHEDULE_BATCH", 3)
    before = memories(learner)
    scheduling_settings_update(learner=learner, changes={"desired_retention": 0.8})
    row = run_queued(learner)

    assert (row.cards_examined, row.cards_moved, row.last_card_id) == (len(in_review), len(in_review), in_review[-1])
    expected = SchedulerConfig(desired_retention=0.8)
    for card_id, memory in memories(learner).items():
        if card_id in in_review:
            state = memory_state_of(before[card_id])
            assert state is not None
            assert memory.due == rescheduled_due(state, config=expected, learner_id=learner.pk, card_id=card_id)


def test_replays_after_a_reschedule_still_equal_the_log(studied):
    learner, in_review, _, _ = studied
    scheduling_settings_update(learner=learner, changes={"desired_retention": 0.8})
    run_queued(learner)
    card_id = in_review[0]
    # A late review replays the card's tail from the log: the review wins over the rescheduled date.
    late = ReviewInput(card_id=card_id, rating=2, client_review_id=uuid.uuid4(), reviewed_at=NOW - timedelta(days=35))
    (outcome,) = reviews_submit(learner=fresh(learner), reviews=[late], now=NOW)

    assert outcome.replayed
    latest = latest_review(learner, card_id)
    assert memory_state_of(CardMemory.objects.get(learner=learner, card_id=card_id)) == state_after(latest)


# --- what starts a run -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"desired_retention": 0.85}, "desired_retention"),
        ({"fsrs_parameters": OTHER_PARAMETERS}, "parameters"),
        ({"fsrs_parameters": OTHER_PARAMETERS, "desired_retention": 0.85}, "parameters"),
        ({"desired_retention": 0.9}, None),
        ({"fsrs_parameters": list(DEFAULT_PARAMETERS)}, None),
        ({"timezone": "Europe/Paris", "new_cards_per_day": 5}, None),
    ],
    ids=["retention", "weights", "both", "same retention", "the default weights spelt out", "other settings"],
)
def test_only_a_change_of_retention_or_weights_queues_a_run(learner, changes, reason):
    scheduling_settings_update(learner=learner, changes=changes)

    queued = list(Reschedule.objects.filter(learner=learner).values_list("reason", "status"))
    assert queued == ([(reason, "queued")] if reason else [])


def test_changes_while_a_run_is_queued_share_it(learner):
    scheduling_settings_update(learner=learner, changes={"desired_retention": 0.85})
    scheduling_settings_update(learner=fresh(learner), changes={"desired_retention": 0.8})
    learner_reschedule_start(learner_id=learner.pk, reason="parameters")

    assert Reschedule.objects.filter(learner=learner).count() == 1


def test_the_settings_show_the_latest_run(learner, learner_client, studied):
    assert learner_client.get("/api/v1/srs/settings/").json()["latest_reschedule"] is None

    patched = learner_client.patch("/api/v1/srs/settings/", {"desired_retention": 0.8}, format="json")
    assert patched.status_code == 200, patched.json()
    queued = patched.json()["latest_reschedule"]
    assert (queued["status"], queued["reason"], queued["progress"], queued["started_at"]) == (
        "queued",
        "desired_retention",
        0.0,
        None,
    )
    run_queued(learner)

    done = learner_client.get("/api/v1/srs/settings/").json()["latest_reschedule"]
    assert (done["status"], done["progress"], done["cards_total"], done["cards_moved"]) == ("done", 1.0, 0, 0)
    assert done["finished_at"] is not None


# --- the outbox --------------------------------------------------------------------------------------------------


def test_runs_no_worker_took_are_handed_over_again(learner, studied):
    other = studied[0]
    scheduling_settings_update(learner=learner, changes={"desired_retention": 0.85})
    scheduling_settings_update(learner=other, changes={"desired_retention": 0.85})
    never_taken = Reschedule.objects.get(learner=learner)
    just_queued = Reschedule.objects.get(learner=other)
    now = just_queued.updated_at
    Reschedule.objects.filter(pk=never_taken.pk).update(updated_at=now - timedelta(minutes=5))

    assert jobs_stalled(RESCHEDULES, now=now) == [(never_taken.pk, never_taken.pk)]
    assert jobs_recover(RESCHEDULES, now=now).handed_over == 1
    # Handed over now, it waits another interval before the next round takes it again.
    assert jobs_stalled(RESCHEDULES, now=now) == []
    assert reschedule_run(reschedule_id=never_taken.pk) is not None


def test_a_run_whose_worker_died_goes_on_where_it_stopped(studied, monkeypatch):
    learner, in_review, _, _ = studied
    scheduling_settings_update(learner=learner, changes={"desired_retention": 0.8})
    row = Reschedule.objects.get(learner=learner)
    monkeypatch.setattr(rescheduling, "RESCHEDULE_BATCH", 4)
    claimed = rescheduling._claim(row.pk)
    assert claimed is not None
    rescheduling._batch_reschedule(claimed[0], configs=claimed[1])
    # The worker dies here; a second delivery leaves a live run alone.
    assert reschedule_run(reschedule_id=row.pk) is None
    stale = claimed[0].updated_at - RESCHEDULES.stalled_after - timedelta(minutes=1)
    Reschedule.objects.filter(pk=row.pk).update(updated_at=stale)
    assert jobs_stalled(RESCHEDULES, now=claimed[0].updated_at) == [(row.pk, row.pk)]

    finished = reschedule_run(reschedule_id=row.pk)

    assert finished is not None
    assert (finished.status, finished.cards_examined, finished.cards_moved) == ("done", len(in_review), len(in_review))


# --- reviews arriving meanwhile ----------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("round_", range(3))
def test_a_review_arriving_during_a_run_is_never_overwritten(monkeypatch, round_):
    learner, token = learner_with_token(f"racer-{round_}")
    card_ids = make_cards(60, slug=f"race-{round_}")
    study(learner, card_ids, REVIEW_HISTORY)
    scheduling_settings_update(learner=fresh(learner), changes={"desired_retention": 0.8})
    row = Reschedule.objects.get(learner=learner)
    # Small batches: the run takes the learner's turn many times while the reviews come in.
    monkeypatch.setattr(rescheduling, "RESCHEDULE_BATCH", 2)
    client = client_with_token(token)
    reviewed = card_ids[::3]
    before = memories(learner)

    def work(index: int) -> Any:
        if index == 0:
            return reschedule_run(reschedule_id=row.pk)
        for card_id in reviewed[index - 1 :: 3]:
            body = {"card": card_id, "rating": 1 + card_id % 4, "client_review_id": str(uuid.uuid4())}
            response = client.post("/api/v1/reviews/", body, format="json")
            assert response.status_code == 201, response.json()
        return None

    results = run_together(4, work)

    assert results[0] is not None and results[0].status == "done"
    expected = SchedulerConfig(desired_retention=0.8)
    for card_id, memory in memories(learner).items():
        state = memory_state_of(memory)
        if card_id in reviewed:
            # The state the review stored in the log is the card's, due date included.
            assert state == state_after(latest_review(learner, card_id))
        else:
            old = memory_state_of(before[card_id])
            assert old is not None
            assert memory.due == due_under(old, config=expected, learner_id=learner.pk, card_id=card_id)


@pytest.mark.django_db(transaction=True)
def test_a_run_delivered_twice_at_once_runs_once():
    learner, _ = learner_with_token("twice")
    card_ids = make_cards(20, slug="twice")
    study(learner, card_ids, REVIEW_HISTORY)
    scheduling_settings_update(learner=fresh(learner), changes={"desired_retention": 0.8})
    row = Reschedule.objects.get(learner=learner)

    results = run_together(2, lambda _: reschedule_run(reschedule_id=row.pk))

    assert sum(result is not None for result in results) == 1
    row.refresh_from_db()
    assert (row.status, row.cards_examined, row.cards_moved) == ("done", 20, 20)
