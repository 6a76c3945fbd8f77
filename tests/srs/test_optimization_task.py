"""Fitting a learner's FSRS weights on the workers: adoption only when better, the task's guards, the nightly run."""

from __future__ import annotations

import io
import random
import threading
import uuid
from datetime import datetime, timedelta
from typing import Any

import fsrs_rs_python
import pytest
import yaml
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.common.jobs import JobStatus, jobs_stalled
from apps.content.models import Card, Course, Deck, Lesson
from apps.srs import tasks
from apps.srs.adaptation import optimization
from apps.srs.adaptation.optimization import (
    logged_reviews_list,
    parameter_fit_request,
    parameter_fit_run,
    parameter_fits_dispatch,
)
from apps.srs.adaptation.rescheduling import reschedule_run
from apps.srs.core.scheduling import DEFAULT_PARAMETERS, MemoryStage
from apps.srs.jobs import PARAMETER_FITS
from apps.srs.models import (
    CardMemory,
    ParameterFit,
    ParameterFitTrigger,
    Reschedule,
    RescheduleReason,
    ReviewLog,
    ReviewSource,
    SchedulingSettings,
)
from apps.srs.reviews.services import ReviewInput, review_undo, reviews_submit
from apps.srs.settings.config import scheduler_config_from_json
from apps.srs.settings.services import scheduling_settings_update
from tests.support.api import make_learner
from tests.support.reviews import JOIN_TIMEOUT_S, run_together

pytestmark = pytest.mark.django_db

SETTINGS_URL = "/api/v1/srs/settings/"
OPTIMIZE_URL = "/api/v1/srs/optimize/"
# A learner who forgets much faster than FSRS's defaults expect, and on a steeper curve.
TRUE_PARAMETERS = (0.05, 0.15, 0.3, 1.2, *DEFAULT_PARAMETERS[4:8], 0.8, *DEFAULT_PARAMETERS[9:20], 0.5)
KNOWN_CARDS = 300
NEW_CARDS_PER_DAY = 5
REVIEWS_PER_CARD = 5
# After its first review a card comes back after these days, by that review's rating (Again, Good, Easy).
FIRST_INTERVAL_DAYS = {1: 1, 3: 2, 4: 8}
EVENING = timedelta(hours=19)
# Submitted in batches no larger than the service takes at once.
SUBMIT_BATCH = 1000

Review = tuple[Card, datetime, int]


def _recall(parameters: tuple[float, ...], *, stability: float, elapsed_days: int) -> float:
    decay = -parameters[20]
    return float((1 + (0.9 ** (1 / decay) - 1) * elapsed_days / stability) ** decay)


def _next_memory(model: fsrs_rs_python.FSRS, state: Any, *, rating: int, elapsed_days: int) -> Any:
    following = model.next_states(state, 0.9, elapsed_days)
    return {1: following.again, 2: following.hard, 3: following.good, 4: following.easy}[rating].memory


def known_model_log(cards: list[Card], *, start: datetime, until: datetime, seed: int) -> list[Review]:
    """Cards scheduled as FSRS's defaults would, and recalled as TRUE_PARAMETERS predict (seeded draws).

    NEW_CARDS_PER_DAY cards start each day; each comes back after a fixed first interval, then after
    a half to twice the stability the defaults give it. Reviews after `until` are left out.
    """
    draw = random.Random(seed)  # noqa: S311 - seeded draws of a simulated learner, not a secret
    truth, defaults = fsrs_rs_python.FSRS(list(TRUE_PARAMETERS)), fsrs_rs_python.FSRS(list(DEFAULT_PARAMETERS))
    log: list[Review] = []
    for index, card in enumerate(cards):
        day, elapsed = index // NEW_CARDS_PER_DAY, 0
        true_state = default_state = None
        for review_number in range(REVIEWS_PER_CARD):
            at = start + timedelta(days=day) + EVENING
            if at > until:
                break
            if true_state is None:
                rating = draw.choice((1, 3, 3, 4))
            else:
                recall = _recall(TRUE_PARAMETERS, stability=true_state.stability, elapsed_days=elapsed)
                rating = draw.choice((2, 3, 3, 3, 4)) if draw.random() < recall else 1
            log.append((card, at, rating))
            true_state = _next_memory(truth, true_state, rating=rating, elapsed_days=elapsed)
            default_state = _next_memory(defaults, default_state, rating=rating, elapsed_days=elapsed)
            if review_number == 0:
                elapsed = FIRST_INTERVAL_DAYS[rating]
            else:
                elapsed = max(1, round(default_state.stability * draw.uniform(0.5, 2.0)))
            day += elapsed
    return log


def shifted_log(cards: list[Card], *, start: datetime, days: int, forgotten_from: int) -> list[Review]:
    """Every card recalled every third day until `forgotten_from`, then forgotten at every review."""
    return [
        (card, start + timedelta(days=day) + EVENING, 3 if day < forgotten_from else 1)
        for index, card in enumerate(cards)
        for day in range(index % 3, days, 3)
    ]


def reviews_record(learner: Any, log: list[Review]) -> None:
    """Record the reviews through the review service, oldest first."""
    ordered = sorted(log, key=lambda review: (review[1], review[0].pk))
    for first in range(0, len(ordered), SUBMIT_BATCH):
        reviews = [
            ReviewInput(card_id=card.pk, rating=rating, client_review_id=uuid.uuid4(), reviewed_at=at)
            for card, at, rating in ordered[first : first + SUBMIT_BATCH]
        ]
        reviews_submit(learner=learner, reviews=reviews, now=timezone.now())


def log_start(days: int) -> datetime:
    today = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    return today - timedelta(days=days)


@pytest.fixture
def many_cards(db) -> list[Card]:
    course = Course.objects.create(slug="memory-course", title="Memory course")
    lesson = Lesson.objects.create(course=course, slug="memory-lesson", title="Memory lesson", position=1)
    deck = Deck.objects.create(lesson=lesson, slug="memory-deck", title="Memory deck", position=1)
    return Card.objects.bulk_create(
        Card(deck=deck, slug=f"term-{index}", term=f"Term {index}", definition="A definition.", position=index)
        for index in range(KNOWN_CARDS)
    )


@pytest.fixture
def known_learner(learner, many_cards) -> Any:
    """A learner whose log was drawn from TRUE_PARAMETERS, the last review a day ago.

    Their desired retention is 0.85: at 0.9, the one every forgetting curve meets at its stability,
    new weights would leave the intervals of stored stabilities as they are.
    """
    scheduling_settings_update(learner=learner, changes={"desired_retention": 0.85})
    (queued,) = Reschedule.objects.filter(learner=learner)
    reschedule_run(reschedule_id=queued.pk)
    log = known_model_log(many_cards, start=log_start(100), until=timezone.now() - timedelta(days=1), seed=7)
    reviews_record(learner, log)
    return learner


def figures(fit: ParameterFit) -> tuple[float, float, float, float]:
    """Log loss and RMSE(bins) of the fitted weights, then of the weights in use, on the held-out reviews."""
    log_loss, rmse_bins = fit.log_loss, fit.rmse_bins
    previous_log_loss, previous_rmse_bins = fit.previous_log_loss, fit.previous_rmse_bins
    assert log_loss is not None and rmse_bins is not None
    assert previous_log_loss is not None and previous_rmse_bins is not None
    return log_loss, rmse_bins, previous_log_loss, previous_rmse_bins


def settings_of(learner: Any) -> SchedulingSettings:
    return SchedulingSettings.objects.get(learner=learner)


def test_a_log_drawn_from_a_known_model_is_fitted_better_than_the_defaults_and_adopted(known_learner, many_cards):
    now = timezone.now()

    fit = parameter_fit_run(learner_id=known_learner.pk, now=now)

    assert fit is not None
    assert (fit.status, fit.trigger, fit.adopted) == (JobStatus.DONE, ParameterFitTrigger.SCHEDULE, True)
    log_loss, rmse_bins, previous_log_loss, previous_rmse_bins = figures(fit)
    assert log_loss < previous_log_loss
    assert rmse_bins < previous_rmse_bins
    assert fit.previous_parameters == pytest.approx(list(DEFAULT_PARAMETERS))
    assert fit.fitted_on_reviews >= 300
    assert fit.evaluated_on_reviews >= 60
    # The fit moved toward the learner's weak memory: a Good first review is remembered for less than by default.
    assert fit.parameters is not None
    assert fit.parameters[2] < DEFAULT_PARAMETERS[2]
    settings = settings_of(known_learner)
    assert settings.fsrs_parameters == fit.parameters
    assert settings.profile_id == fit.profile_id
    assert fit.profile is not None
    assert scheduler_config_from_json(fit.profile.config).parameters == pytest.approx(fit.parameters)
    recorded = ReviewLog.objects.filter(learner=known_learner).count()
    assert (settings.optimized_at, settings.reviews_at_last_fit) == (now, recorded)
    # The review cards move to the due dates the new weights give, in the background.
    reschedule = Reschedule.objects.filter(learner=known_learner).latest("created_at")
    assert (reschedule.reason, reschedule.status) == (RescheduleReason.PARAMETERS, JobStatus.QUEUED)
    review_cards = CardMemory.objects.filter(learner=known_learner, stage=MemoryStage.REVIEW)
    due_before = dict(review_cards.values_list("card_id", "due"))
    done = reschedule_run(reschedule_id=reschedule.pk)
    assert done is not None
    assert (done.status, done.to_profile_id) == (JobStatus.DONE, fit.profile_id)
    due_after = dict(review_cards.values_list("card_id", "due"))
    assert done.cards_examined == len(due_before) > 0
    assert done.cards_moved == sum(1 for card_id, due in due_after.items() if due != due_before[card_id]) > 0
    # The next review (read afresh, as a request would) is scheduled with the adopted weights.
    reviews_record(get_user_model().objects.get(pk=known_learner.pk), [(many_cards[0], timezone.now(), 3)])
    assert ReviewLog.objects.filter(learner=known_learner).latest("reviewed_at").profile_id == fit.profile_id


def test_a_fit_that_predicts_the_later_reviews_worse_is_kept_with_its_figures_but_not_adopted(learner, many_cards):
    # Everything recalled for 60 days, then everything forgotten: a fit on the first part expects recall.
    reviews_record(learner, shifted_log(many_cards[:40], start=log_start(80), days=75, forgotten_from=62))

    fit = parameter_fit_run(learner_id=learner.pk, now=timezone.now())

    assert fit is not None
    assert (fit.status, fit.adopted) == (JobStatus.DONE, False)
    assert "did not predict the later reviews with a lower log loss" in fit.reason
    assert fit.parameters is not None and len(fit.parameters) == 21
    log_loss, _, previous_log_loss, _ = figures(fit)
    assert log_loss > previous_log_loss
    assert fit.profile_id is None
    settings = settings_of(learner)
    assert settings.fsrs_parameters is None
    assert settings.optimized_at is not None
    assert not Reschedule.objects.filter(learner=learner).exists()


def test_pinned_weights_are_fitted_when_asked_but_never_replaced(known_learner):
    pinned = [*DEFAULT_PARAMETERS[:20], 0.2]
    scheduling_settings_update(learner=known_learner, changes={"fsrs_parameters": pinned, "parameters_pinned": True})
    fit = parameter_fit_request(learner=known_learner, now=timezone.now())

    done = parameter_fit_run(learner_id=known_learner.pk, now=timezone.now())

    assert done is not None and done.pk == fit.pk
    assert (done.status, done.trigger, done.adopted) == (JobStatus.DONE, ParameterFitTrigger.REQUEST, False)
    assert done.reason == "The weights in use are pinned."
    assert done.previous_parameters == pytest.approx(pinned)
    assert done.log_loss is not None and done.previous_log_loss is not None
    assert settings_of(known_learner).fsrs_parameters == pinned
    # The nightly run leaves a pinned learner alone.
    assert parameter_fit_run(learner_id=known_learner.pk, now=timezone.now() + timedelta(days=60)) is None


def test_a_second_run_finds_nothing_to_do_until_enough_new_reviews_or_time_have_passed(
    learner, many_cards, monkeypatch
):
    reviews_record(learner, shifted_log(many_cards[:40], start=log_start(80), days=75, forgotten_from=62))
    now = timezone.now()
    assert parameter_fit_run(learner_id=learner.pk, now=now) is not None

    assert parameter_fit_run(learner_id=learner.pk, now=now) is None
    assert parameter_fit_run(learner_id=learner.pk, now=now + optimization.REFIT_AFTER) is None
    assert ParameterFit.objects.filter(learner=learner).count() == 1
    # A month later with one new review, or as soon as REFIT_AFTER_REVIEWS new reviews came, it is due again.
    reviews_record(learner, [(many_cards[0], now - timedelta(minutes=1), 3)])
    assert parameter_fit_run(learner_id=learner.pk, now=now + timedelta(days=29)) is None
    assert parameter_fit_run(learner_id=learner.pk, now=now + optimization.REFIT_AFTER) is not None
    monkeypatch.setattr(optimization, "REFIT_AFTER_REVIEWS", 2)
    later = now + optimization.REFIT_AFTER + timedelta(minutes=1)
    reviews_record(learner, [(many_cards[1], timezone.now(), 3)])
    assert parameter_fit_run(learner_id=learner.pk, now=later) is None
    reviews_record(learner, [(many_cards[2], timezone.now(), 3)])
    assert parameter_fit_run(learner_id=learner.pk, now=later) is not None
    assert ParameterFit.objects.filter(learner=learner, status=JobStatus.DONE).count() == 3


def test_automatic_fits_stop_when_turned_off_and_a_running_fit_sees_the_change(learner, many_cards):
    reviews_record(learner, shifted_log(many_cards[:40], start=log_start(80), days=75, forgotten_from=62))
    scheduling_settings_update(learner=learner, changes={"auto_optimize": False})

    assert parameter_fit_run(learner_id=learner.pk, now=timezone.now()) is None
    assert not ParameterFit.objects.exists()
    # Asked for, a fit still runs.
    parameter_fit_request(learner=learner, now=timezone.now())
    fit = parameter_fit_run(learner_id=learner.pk, now=timezone.now())
    assert fit is not None and fit.status == JobStatus.DONE


def test_a_fit_whose_worker_stopped_is_marked_failed_and_the_next_run_starts_afresh(learner, many_cards):
    reviews_record(learner, shifted_log(many_cards[:40], start=log_start(80), days=75, forgotten_from=62))
    now = timezone.now()
    stopped = ParameterFit.objects.create(learner=learner, status=JobStatus.RUNNING, started_at=now)
    # Its worker saved nothing since it started, as long ago as a fit may stay quiet.
    ParameterFit.objects.filter(pk=stopped.pk).update(updated_at=now - PARAMETER_FITS.stalled_after)
    assert parameter_fit_run(learner_id=learner.pk, now=now - timedelta(minutes=1)) is None

    fit = parameter_fit_run(learner_id=learner.pk, now=now + timedelta(seconds=1))

    assert fit is not None and fit.pk != stopped.pk
    stopped.refresh_from_db()
    assert (stopped.status, stopped.reason) == (JobStatus.FAILED, "No worker finished it in time.")


def race_learner() -> Any:
    """A learner due a fit, made in committed transactions that other connections see."""
    learner, _ = make_learner("racer")
    course = Course.objects.create(slug="race-course", title="Race course")
    lesson = Lesson.objects.create(course=course, slug="race-lesson", title="Race lesson", position=1)
    deck = Deck.objects.create(lesson=lesson, slug="race-deck", title="Race deck", position=1)
    cards = Card.objects.bulk_create(
        Card(deck=deck, slug=f"race-{index}", term=f"Race {index}", definition="A definition.", position=index)
        for index in range(40)
    )
    reviews_record(learner, shifted_log(cards, start=log_start(80), days=75, forgotten_from=62))
    return learner


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("asked_for", [False, True], ids=["nightly", "asked for"])
def test_two_runs_at_once_make_one_fit(asked_for):
    learner = race_learner()
    if asked_for:
        parameter_fit_request(learner=learner, now=timezone.now())

    results = run_together(2, lambda _: parameter_fit_run(learner_id=learner.pk, now=timezone.now()))

    assert sorted(result is None for result in results) == [False, True]
    (fit,) = ParameterFit.objects.filter(learner=learner)
    assert fit.status == JobStatus.DONE
    assert fit.trigger == (ParameterFitTrigger.REQUEST if asked_for else ParameterFitTrigger.SCHEDULE)


@pytest.mark.django_db(transaction=True)
def test_a_run_that_finds_the_fit_being_claimed_by_another_worker_does_nothing_without_waiting():
    learner = race_learner()
    queued = parameter_fit_request(learner=learner, now=timezone.now())
    held, run_over = threading.Event(), threading.Event()

    def other_worker() -> None:
        # Holds the fit's row as a claim in progress does, until the run below is over.
        try:
            with transaction.atomic():
                ParameterFit.objects.select_for_update().get(pk=queued.pk)
                held.set()
                run_over.wait(timeout=5)
        finally:
            connection.close()

    worker = threading.Thread(target=other_worker)
    worker.start()
    assert held.wait(timeout=JOIN_TIMEOUT_S)
    try:
        result = parameter_fit_run(learner_id=learner.pk, now=timezone.now())
    finally:
        run_over.set()
        worker.join(timeout=JOIN_TIMEOUT_S)

    assert result is None
    queued.refresh_from_db()
    assert queued.status == JobStatus.QUEUED
    assert ParameterFit.objects.filter(learner=learner).count() == 1


def _learner_with_reviews(username: str, cards: list[Card], count: int, **settings: Any) -> Any:
    learner, _ = make_learner(username)
    start = log_start(10)
    reviews_record(learner, [(cards[index], start + timedelta(days=index % 5), 3) for index in range(count)])
    if settings:
        SchedulingSettings.objects.filter(learner=learner).update(**settings)
    return learner


def test_the_nightly_run_sends_each_due_learner_once_reading_learners_in_keyset_batches(many_cards, monkeypatch):
    monkeypatch.setattr(optimization, "MIN_REVIEWS_TO_FIT", 3)
    monkeypatch.setattr(optimization, "REFIT_AFTER_REVIEWS", 4)
    now = timezone.now()
    never_fitted = _learner_with_reviews("never-fitted", many_cards, 3)
    _learner_with_reviews("too-few", many_cards, 2)
    _learner_with_reviews("turned-off", many_cards, 5, auto_optimize=False)
    _learner_with_reviews("pinned", many_cards, 5, parameters_pinned=True)
    _learner_with_reviews("fitted-lately", many_cards, 5, optimized_at=now - timedelta(days=1), reviews_at_last_fit=4)
    month_ago = _learner_with_reviews(
        "fitted-a-month-ago", many_cards, 5, optimized_at=now - optimization.REFIT_AFTER, reviews_at_last_fit=4
    )
    many_new = _learner_with_reviews(
        "many-new-reviews", many_cards, 8, optimized_at=now - timedelta(days=1), reviews_at_last_fit=4
    )
    lost_message = _learner_with_reviews("lost-message", many_cards, 2)
    queued = ParameterFit.objects.create(learner=lost_message, trigger=ParameterFitTrigger.REQUEST)
    long_ago = now - PARAMETER_FITS.stalled_after - timedelta(seconds=1)
    ParameterFit.objects.filter(pk=queued.pk).update(created_at=long_ago, updated_at=long_ago)
    sent: list[int] = []

    with CaptureQueriesContext(connection) as queries:
        count = parameter_fits_dispatch(now=now, send=sent.append, batch_size=2)

    assert sent == [never_fitted.pk, month_ago.pk, many_new.pk]
    assert count == 3
    # The fit whose message was lost is the background jobs' round's to hand over again, by its learner.
    assert jobs_stalled(PARAMETER_FITS, now=now) == [(queued.pk, lost_message.pk)]
    settings_reads = [query["sql"] for query in queries if 'FROM "srs_schedulingsettings"' in query["sql"]]
    # Six learners may be due (those who turned fits off or pinned are not read), two at a time; then none left.
    assert len(settings_reads) == 4
    assert all('"learner_id" >' in sql and "LIMIT 2" in sql for sql in settings_reads)


def test_the_task_sends_nothing_when_no_learner_is_due(learner):
    assert tasks.parameter_fits_dispatch() == 0
    assert tasks.parameter_fit(learner.pk) is None


def test_the_log_a_fit_learns_from_leaves_out_undone_reviews_and_keeps_archived_cards_and_games(learner, many_cards):
    first, second, third = many_cards[:3]
    start = log_start(20)
    reviews_record(
        learner,
        [
            (first, start, 3),
            (first, start + timedelta(days=2), 3),
            (first, start + timedelta(days=6), 1),
            (second, start, 4),
            (second, start + timedelta(days=5), 3),
        ],
    )
    reviews_submit(
        learner=learner,
        reviews=[
            ReviewInput(
                card_id=third.pk,
                rating=2,
                client_review_id=uuid.uuid4(),
                reviewed_at=start + timedelta(days=1),
                source=ReviewSource.MATCH,
            )
        ],
        now=timezone.now(),
    )
    undone = ReviewLog.objects.get(learner=learner, card=first, rating=1)
    review_undo(learner=learner, review_id=undone.pk, now=timezone.now())
    Card.objects.filter(pk=second.pk).update(archived=True)

    logged = logged_reviews_list(learner_id=learner.pk)

    assert sorted((review.card_id, review.reviewed_at, review.rating) for review in logged) == sorted(
        [
            (first.pk, start, 3),
            (first.pk, start + timedelta(days=2), 3),
            (second.pk, start, 4),
            (second.pk, start + timedelta(days=5), 3),
            (third.pk, start + timedelta(days=1), 2),
        ]
    )


def test_asking_for_a_fit_through_the_api_queues_it_refuses_a_second_and_shows_the_outcome(
    known_learner, learner_client
):
    response = learner_client.post(OPTIMIZE_URL)

    assert response.status_code == 202, response.json()
    body = response.json()
    assert (body["status"], body["trigger"], body["parameters"], body["adopted"]) == ("queued", "request", None, False)
    again = learner_client.post(OPTIMIZE_URL)
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "fit_in_progress"
    shown = learner_client.get(SETTINGS_URL).json()
    assert [fit["status"] for fit in shown["parameter_fits"]] == ["queued"]

    assert tasks.parameter_fit(known_learner.pk) == JobStatus.DONE

    shown = learner_client.get(SETTINGS_URL).json()
    (fit,) = shown["parameter_fits"]
    assert (fit["id"], fit["status"], fit["adopted"]) == (body["id"], "done", True)
    assert fit["log_loss"] < fit["previous_log_loss"] and fit["rmse_bins"] < fit["previous_rmse_bins"]
    assert fit["fitted_on_reviews"] > 0 and fit["evaluated_on_reviews"] > 0
    assert shown["fsrs_parameters"] == fit["parameters"] == shown["fsrs_parameters_in_use"]
    assert shown["reviews_at_last_fit"] == ReviewLog.objects.filter(learner=known_learner).count()
    assert shown["optimized_at"] is not None
    assert shown["latest_reschedule"]["reason"] == "parameters"


def test_asking_for_a_fit_with_too_few_reviews_is_a_409(learner, learner_client, many_cards):
    reviews_record(learner, [(many_cards[0], log_start(3), 3)])

    response = learner_client.post(OPTIMIZE_URL)

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "not_enough_reviews"
    assert not ParameterFit.objects.exists()


def test_asking_for_fits_too_often_is_a_429(learner, learner_client, many_cards, monkeypatch, settings):
    monkeypatch.setattr(optimization, "MIN_REVIEWS_TO_FIT", 1)
    reviews_record(learner, [(many_cards[0], log_start(3), 3)])
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "optimize_learner": "2/day"},
    }

    statuses = [learner_client.post(OPTIMIZE_URL).status_code for _ in range(3)]

    assert statuses == [202, 409, 429]
    assert ParameterFit.objects.count() == 1


def test_the_learner_turns_automatic_fits_off_and_pins_weights_through_settings(learner_client):
    response = learner_client.patch(SETTINGS_URL, {"auto_optimize": False, "parameters_pinned": True}, format="json")

    assert response.status_code == 200, response.json()
    assert (response.json()["auto_optimize"], response.json()["parameters_pinned"]) == (False, True)
    wrong = learner_client.patch(SETTINGS_URL, {"auto_optimize": "no"}, format="json")
    assert wrong.status_code == 400
    assert set(wrong.json()["error"]["fields"]) == {"auto_optimize"}


@pytest.fixture(scope="module")
def schema(django_db_blocker) -> dict[str, Any]:
    out = io.StringIO()
    with django_db_blocker.unblock():
        call_command("spectacular", "--format", "openapi", stdout=out)
    loaded: dict[str, Any] = yaml.safe_load(out.getvalue())
    return loaded


def test_the_schema_describes_the_fit_request_and_the_fits_in_the_settings(schema):
    operation = schema["paths"]["/api/v1/srs/optimize/"]["post"]
    assert {"202", "409", "429"} <= set(operation["responses"])
    fit = schema["components"]["schemas"]["ParameterFitOutput"]["properties"]
    for name in ("parameters", "fitted_on_reviews", "log_loss", "rmse_bins", "previous_log_loss", "adopted", "reason"):
        assert fit[name].get("description") or fit[name].get("allOf"), name
    settings = schema["components"]["schemas"]["SchedulingSettingsOutput"]["properties"]
    for name in ("auto_optimize", "parameters_pinned", "optimized_at", "reviews_at_last_fit", "parameter_fits"):
        assert settings[name]["description"], name
    patch = schema["components"]["schemas"]["PatchedSchedulingSettingsInputRequest"]["properties"]
    assert {"auto_optimize", "parameters_pinned"} <= set(patch)
