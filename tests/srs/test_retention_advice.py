"""Retention advice from FSRS's simulator: the pure computation, and the cached advice the settings serve."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator

from apps.common.clock import time_text
from apps.common.jobs import jobs_publish, jobs_recover, jobs_stalled
from apps.content.models import Card, Course, Deck, Lesson
from apps.srs.adaptation import retention_advising
from apps.srs.core.retention_advice import (
    MIN_TIMED_REVIEWS,
    ReviewSeconds,
    SimulatorSettings,
    default_seconds_per_review,
    retention_advice_compute,
    review_seconds_from_timings,
)
from apps.srs.core.scheduling import DEFAULT_PARAMETERS, MemoryStage, Rating
from apps.srs.jobs import RETENTION_ADVICE
from apps.srs.models import ReviewSource, SchedulingSettings, StoredRetentionAdvice
from apps.srs.reviews.services import ReviewInput, review_undo, reviews_submit
from apps.srs.settings.rules import RETENTION_RANGE
from apps.srs.settings.services import scheduling_settings_update


def _settings(seconds: ReviewSeconds | None = None) -> SimulatorSettings:
    return SimulatorSettings(
        deck_size=100,
        new_cards_per_day=20,
        max_reviews_per_day=200,
        maximum_interval_days=36_500,
        learning_steps=2,
        relearning_steps=1,
        seconds=seconds if seconds is not None else review_seconds_from_timings({}),
    )


def test_thin_timing_cells_keep_the_defaults_and_full_ones_use_the_learners_median():
    defaults = default_seconds_per_review()
    review_good = (int(MemoryStage.REVIEW), int(Rating.GOOD))
    seconds = review_seconds_from_timings(
        {review_good: (MIN_TIMED_REVIEWS, 4.5), (int(MemoryStage.LEARNING), 1): (MIN_TIMED_REVIEWS - 1, 99.0)}
    )
    assert seconds.table[1][2] == 4.5
    assert seconds.table[0][0] == defaults[0][0]
    assert (seconds.own_cells, seconds.source) == (1, "mixed")
    assert review_seconds_from_timings({}).source == "default"


def test_the_advice_costs_no_more_per_remembered_card_than_the_current_setting():
    advice = retention_advice_compute(DEFAULT_PARAMETERS, desired_retention=0.95, settings=_settings())
    assert RETENTION_RANGE[0] <= advice.recommended.desired_retention <= RETENTION_RANGE[1]
    assert advice.current.desired_retention == 0.95
    assert advice.recommended.seconds_per_remembered_card <= advice.current.seconds_per_remembered_card
    # A lower retention means fewer reviews a day for the same cards.
    assert advice.recommended.reviews_per_day < advice.current.reviews_per_day
    assert advice.current.minutes_per_day > 0


def test_the_same_inputs_give_the_same_advice():
    first = retention_advice_compute(DEFAULT_PARAMETERS, desired_retention=0.9, settings=_settings())
    assert retention_advice_compute(DEFAULT_PARAMETERS, desired_retention=0.9, settings=_settings()) == first


def test_slower_reviews_cost_more_minutes_a_day():
    slow = {(int(stage), int(rating)): (MIN_TIMED_REVIEWS, 60.0) for stage in MemoryStage for rating in Rating}
    quick = retention_advice_compute(DEFAULT_PARAMETERS, desired_retention=0.9, settings=_settings())
    slowed = retention_advice_compute(
        DEFAULT_PARAMETERS, desired_retention=0.9, settings=_settings(seconds=review_seconds_from_timings(slow))
    )
    assert slowed.current.minutes_per_day > quick.current.minutes_per_day


# --- on the workers, served with the settings ----------------------------------------------------------------------

URL = "/api/v1/srs/settings/"
NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
OTHER_PARAMETERS = [*DEFAULT_PARAMETERS[:4], 1.2, *DEFAULT_PARAMETERS[5:20], 0.45]
_WRITES = ("INSERT", "UPDATE", "DELETE")


def make_cards(count: int, *, slug: str = "advice") -> list[int]:
    course = Course.objects.create(slug=f"{slug}-course", title="Course")
    lesson = Lesson.objects.create(course=course, slug=f"{slug}-lesson", title="Lesson", position=0)
    deck = Deck.objects.create(lesson=lesson, slug=f"{slug}-deck", title="Deck", position=0)
    cards = Card.objects.bulk_create(
        Card(deck=deck, slug=f"card-{i}", term=f"term {i}", definition=f"definition {i}", position=i)
        for i in range(count)
    )
    return [card.pk for card in cards]


def review(card_id: int, *, duration_ms: int, source: str = ReviewSource.DECK, minutes_ago: int = 60) -> ReviewInput:
    return ReviewInput(
        card_id=card_id,
        rating=int(Rating.GOOD),
        client_review_id=uuid.uuid4(),
        reviewed_at=NOW - timedelta(minutes=minutes_ago),
        duration_ms=duration_ms,
        source=source,
    )


def writes_of(captured: CaptureQueriesContext) -> list[str]:
    return [query["sql"] for query in captured.captured_queries if query["sql"].lstrip().upper().startswith(_WRITES)]


def published(callbacks: list[Any]) -> list[tuple[Any, ...]]:
    """What each on-commit callback hands to the broker: (task name, ids)."""
    return [(callback.func, *callback.args) for callback in callbacks]


def queued_once(callbacks: list[Any], row: StoredRetentionAdvice) -> bool:
    return published(callbacks) == [(jobs_publish, RETENTION_ADVICE, [(row.pk, row.pk)])]


def test_the_first_get_queues_the_advice_once_and_answers_computing(
    learner_client, learner, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as first_callbacks:
        first = learner_client.get(URL).json()["retention_advice"]
    with django_capture_on_commit_callbacks() as second_callbacks:
        second = learner_client.get(URL).json()["retention_advice"]

    row = StoredRetentionAdvice.objects.get(learner=learner)
    assert queued_once(first_callbacks, row)
    assert second_callbacks == []
    assert first == second
    assert (first["status"], first["advised_retention"], first["advised"], first["current"]) == (
        "computing",
        None,
        None,
        None,
    )
    assert first["requested_at"] == time_text(row.requested_at)
    assert (first["parameters_source"], first["deck_size"]) == ("default", 100)


def test_a_get_writes_only_the_queued_row_and_then_nothing(learner_client, learner):
    with CaptureQueriesContext(connection) as first:
        assert learner_client.get(URL).status_code == 200
    with CaptureQueriesContext(connection) as second:
        assert learner_client.get(URL).status_code == 200

    written = writes_of(first)
    assert len(written) == 1 and '"srs_storedretentionadvice"' in written[0], written
    assert writes_of(second) == []
    assert not SchedulingSettings.objects.filter(learner=learner).exists()


def test_the_worker_computes_it_and_the_settings_serve_it(learner_client, learner, django_capture_on_commit_callbacks):
    learner_client.get(URL)
    row = StoredRetentionAdvice.objects.get(learner=learner)

    done = retention_advising.retention_advice_run(advice_id=row.pk)
    with django_capture_on_commit_callbacks() as callbacks:
        served = learner_client.get(URL).json()

    assert done is not None and done.status == "done"
    advice = served["retention_advice"]
    assert callbacks == []
    assert advice["status"] == "ready"
    # FSRS-6's default weights: the cheapest retention is the bottom of the search range.
    assert advice["advised_retention"] == 0.7
    assert advice["advised"]["reviews_per_day"] < advice["current"]["reviews_per_day"]
    assert advice["advised"]["seconds_per_remembered_card"] <= advice["current"]["seconds_per_remembered_card"]
    assert advice["computed_at"] is not None and advice["review_seconds_source"] == "default"
    # Advice only: the learner's retention is theirs.
    assert served["desired_retention"] == 0.9
    assert StoredRetentionAdvice.objects.count() == 1


def test_a_task_delivered_twice_computes_once(learner):
    row = retention_advising.retention_advice_ensure(learner=learner, now=NOW)

    assert retention_advising.retention_advice_run(advice_id=row.pk) is not None
    assert retention_advising.retention_advice_run(advice_id=row.pk) is None


def test_new_retention_or_weights_queue_new_advice_and_old_advice_is_found_again(
    learner_client, learner, django_capture_on_commit_callbacks
):
    learner_client.get(URL)
    first = StoredRetentionAdvice.objects.get(learner=learner)
    retention_advising.retention_advice_run(advice_id=first.pk)

    with django_capture_on_commit_callbacks() as callbacks:
        retention = learner_client.patch(URL, {"desired_retention": 0.85}, format="json").json()["retention_advice"]
    by_retention = StoredRetentionAdvice.objects.get(learner=learner, desired_retention=0.85)
    assert retention["status"] == "computing"
    assert (jobs_publish, RETENTION_ADVICE, [(by_retention.pk, by_retention.pk)]) in published(callbacks)

    weights = learner_client.patch(URL, {"fsrs_parameters": OTHER_PARAMETERS}, format="json").json()
    assert weights["retention_advice"]["status"] == "computing"
    assert weights["retention_advice"]["parameters_source"] == "fitted"
    assert StoredRetentionAdvice.objects.filter(learner=learner).count() == 3

    back = learner_client.patch(URL, {"desired_retention": 0.9, "fsrs_parameters": None}, format="json").json()
    assert back["retention_advice"]["status"] == "ready"
    first.refresh_from_db()
    assert first.computed_at is not None
    assert back["retention_advice"]["computed_at"] == time_text(first.computed_at)


def test_a_row_whose_inputs_changed_before_it_ran_is_dropped(learner):
    row = retention_advising.retention_advice_ensure(learner=learner, now=NOW)
    scheduling_settings_update(learner=learner, changes={"new_cards_per_day": 5})

    assert retention_advising.retention_advice_run(advice_id=row.pk) is None
    assert not StoredRetentionAdvice.objects.filter(pk=row.pk).exists()


def test_old_advice_is_shown_while_it_is_computed_again(learner_client, learner, django_capture_on_commit_callbacks):
    row = retention_advising.retention_advice_ensure(learner=learner, now=NOW)
    retention_advising.retention_advice_run(advice_id=row.pk)
    old = timezone.now() - retention_advising.ADVICE_MAX_AGE - timedelta(days=1)
    StoredRetentionAdvice.objects.filter(pk=row.pk).update(computed_at=old)

    with django_capture_on_commit_callbacks() as callbacks:
        first = learner_client.get(URL).json()["retention_advice"]
    with django_capture_on_commit_callbacks() as again:
        learner_client.get(URL)

    assert (first["status"], first["computed_at"]) == ("ready", time_text(old))
    assert queued_once(callbacks, row) and again == []
    assert StoredRetentionAdvice.objects.get(pk=row.pk).status == "queued"


def test_rows_no_worker_took_are_handed_over_again(learner):
    row = retention_advising.retention_advice_ensure(learner=learner, now=NOW)
    now = row.updated_at + RETENTION_ADVICE.republish_after + timedelta(seconds=1)

    assert jobs_stalled(RETENTION_ADVICE, now=now) == [(row.pk, row.pk)]
    assert jobs_recover(RETENTION_ADVICE, now=now).handed_over == 1
    assert jobs_stalled(RETENTION_ADVICE, now=now) == []
    assert retention_advising.retention_advice_run(advice_id=row.pk, now=now) is not None


def test_the_deck_size_is_the_studied_decks_rounded_up_to_a_bucket(learner):
    studied, _ = make_cards(150, slug="studied"), make_cards(30, slug="untouched")
    reviews_submit(learner=learner, reviews=[review(studied[0], duration_ms=1000)], now=NOW)
    Card.objects.filter(pk=studied[1]).update(archived=True)

    assert retention_advising.learner_deck_size(learner_id=learner.pk) == 149
    assert retention_advising.retention_advice_ensure(learner=learner, now=NOW).deck_size_bucket == 200
    assert [retention_advising.deck_size_bucket(size) for size in (0, 100, 101, 20_000)] == [100, 100, 200, 10_000]


def test_review_timings_are_the_medians_of_standing_deck_reviews(learner):
    card_ids = make_cards(MIN_TIMED_REVIEWS + 3)
    timed = [review(card_id, duration_ms=4000 + 10 * (index % 3 - 1)) for index, card_id in enumerate(card_ids[:-3])]
    undone = review(card_ids[-3], duration_ms=90_000)
    game = review(card_ids[-2], duration_ms=90_000, source=ReviewSource.MATCH)
    old = review(card_ids[-1], duration_ms=90_000, minutes_ago=int(retention_advising.TIMINGS_WINDOW.total_seconds()))
    outcomes = reviews_submit(learner=learner, reviews=[*timed, undone, game, old], now=NOW)
    undone_log = next(outcome.log for outcome in outcomes if outcome.log.card_id == card_ids[-3])
    review_undo(learner=learner, review_id=undone_log.pk, now=NOW)

    timings = retention_advising.review_timings_get(learner_id=learner.pk, now=NOW)

    learning_good = (int(MemoryStage.LEARNING), int(Rating.GOOD))
    assert timings == {learning_good: (MIN_TIMED_REVIEWS, 4.0)}
    assert review_seconds_from_timings(timings).table[0][2] == 4.0


def test_the_schema_describes_the_advice():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    settings = components["SchedulingSettingsOutput"]
    assert "retention_advice" in settings["required"]
    advice = components["RetentionAdviceOutput"]
    assert set(advice["properties"]) == {
        "status",
        "advised_retention",
        "advised",
        "current",
        "computed_at",
        "requested_at",
        "parameters_source",
        "review_seconds_source",
        "deck_size",
    }
    described = {name for name, field in advice["properties"].items() if field.get("description")}
    assert described >= {"status", "advised_retention", "computed_at", "requested_at", "parameters_source"}
    workload = components["WorkloadOutput"]["properties"]
    assert set(workload) == {"reviews_per_day", "minutes_per_day", "seconds_per_remembered_card"}
    assert all(field.get("description") for field in workload.values())
