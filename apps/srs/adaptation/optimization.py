"""Fitting each learner's FSRS weights to their own reviews on the workers, and adopting only better ones.

What a fit learns from: every standing review of the learner (undone reviews and the undos are
left out; reviews of cards archived since count, they happened), from the deck, from Match the
pairs and from quizzes alike. Games and quizzes record real reviews that move the card's memory
state the scheduler works from; leaving them out would make the next deck review look later than
it was, and the fitted forgetting curve would be flatter than the learner's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Count, Q, QuerySet

from apps.common.errors import Conflict
from apps.common.jobs import JobStatus, job_finish, job_publish_after_commit, job_start, job_worker_name
from apps.srs.core.optimizer import (
    MIN_REVIEWS_TO_FIT,
    FitMetrics,
    LoggedReview,
    adoption_refusal,
    items_split_by_time,
    long_term_item_count,
    parameters_evaluate,
    parameters_fit,
)
from apps.srs.core.scheduling import DEFAULT_PARAMETERS, learner_day
from apps.srs.jobs import PARAMETER_FITS
from apps.srs.models import ParameterFit, ParameterFitTrigger, ReviewKind, ReviewLog, SchedulingSettings
from apps.srs.settings.config import scheduler_config_from_settings
from apps.srs.settings.rules import SettingsInvalid, scheduling_settings_in_force
from apps.srs.settings.services import scheduler_profile_ensure, scheduling_settings_update

logger = logging.getLogger(__name__)

# Refit after this many new reviews, or after REFIT_AFTER with at least one: a learner's memory
# changes slowly, and a nightly fit of everyone would cost the workers for no gain.
REFIT_AFTER_REVIEWS = 500
REFIT_AFTER = timedelta(days=30)
# The latest fifth of the long-term reviews is held out to score the fitted and the current weights.
TEST_FRACTION = 0.2
PARAMETER_FITS_SHOWN = 5
# Learners read per query when the nightly run looks for those due a fit.
DISPATCH_BATCH = 1000


class FitInProgress(Conflict):
    code = "fit_in_progress"


class NotEnoughReviews(Conflict):
    code = "not_enough_reviews"


def learner_day_function(settings: SchedulingSettings) -> Callable[[datetime], date]:
    """Maps a time to the learner's day: their local date, the day starting at their day_start_hour."""
    timezone, day_start_hour = settings.timezone, settings.day_start_hour

    def day_of(moment: datetime) -> date:
        return learner_day(moment, timezone=timezone, day_start_hour=day_start_hour)

    return day_of


def logged_reviews_list(*, learner_id: int) -> list[LoggedReview]:
    """The learner's standing reviews of every card, archived ones included."""
    rows = (
        ReviewLog.objects.standing()
        .filter(learner_id=learner_id)
        .order_by("card_id", "reviewed_at")
        .values_list("card_id", "reviewed_at", "rating")
    )
    # A standing review always has a rating (the review_log_kind_fields constraint).
    return [LoggedReview(card_id=card_id, reviewed_at=at, rating=rating or 0) for card_id, at, rating in rows]


def _recorded_reviews(learner_ids: list[int]) -> QuerySet[ReviewLog]:
    # Every review ever recorded, undone or not: a count that never goes down, cheap to take nightly.
    return ReviewLog.objects.filter(learner_id__in=learner_ids, kind=ReviewKind.REVIEW)


def _recorded_review_count(learner_id: int) -> int:
    return _recorded_reviews([learner_id]).count()


def _fit_due(*, recorded: int, optimized_at: datetime | None, reviews_at_last_fit: int, now: datetime) -> bool:
    if recorded < MIN_REVIEWS_TO_FIT:
        return False
    if optimized_at is None or recorded - reviews_at_last_fit >= REFIT_AFTER_REVIEWS:
        return True
    return optimized_at <= now - REFIT_AFTER and recorded > reviews_at_last_fit


def _settings_in_force(learner_id: int, *, locked: bool = False) -> SchedulingSettings:
    rows = SchedulingSettings.objects.select_for_update() if locked else SchedulingSettings.objects.all()
    found = rows.filter(learner_id=learner_id).first()
    return scheduling_settings_in_force(found) if found is not None else SchedulingSettings(learner_id=learner_id)


def _stalled_fits_fail(*, learner_id: int, now: datetime, queued_too: bool) -> None:
    """Mark failed the learner's fit whose worker stopped, and, with `queued_too`, one no worker took.

    A fit is quick, so one that stalled is not taken over: its learner's next fit starts afresh."""
    stalled_after = PARAMETER_FITS.stalled_after
    stalled = Q(status=JobStatus.RUNNING, updated_at__lt=now - stalled_after)
    if queued_too:
        stalled |= Q(status=JobStatus.QUEUED, created_at__lt=now - stalled_after)
    message = "No worker finished it in time."
    ParameterFit.objects.filter(stalled, learner_id=learner_id).update(
        status=JobStatus.FAILED, finished_at=now, reason=message, error_message=message, updated_at=now
    )


# What a finished fit stores with its outcome.
_OUTCOME_FIELDS = (
    "adopted",
    "reason",
    "parameters",
    "fitted_on_reviews",
    "previous_parameters",
    "evaluated_on_reviews",
    "log_loss",
    "rmse_bins",
    "previous_log_loss",
    "previous_rmse_bins",
    "profile",
)


def parameter_fit_request(*, learner: Any, now: datetime) -> ParameterFit:
    """Queue a fit of the learner's weights now; a worker takes it once this commits.

    Pinned weights are fitted too (the figures are shown), but never replaced.
    """
    recorded = _recorded_review_count(learner.pk)
    if recorded < MIN_REVIEWS_TO_FIT:
        raise NotEnoughReviews(
            f"A fit needs at least {MIN_REVIEWS_TO_FIT} reviews on a later day than the card's review before; "
            f"you have recorded {recorded} reviews in all."
        )
    _stalled_fits_fail(learner_id=learner.pk, now=now, queued_too=True)
    try:
        with transaction.atomic():
            fit = ParameterFit.objects.create(learner=learner, trigger=ParameterFitTrigger.REQUEST)
    except IntegrityError:
        raise FitInProgress(
            "A fit of your weights is already queued or running; its outcome will show in GET /srs/settings/."
        ) from None
    job_publish_after_commit(PARAMETER_FITS, fit)
    return fit


def _claim(*, learner_id: int, now: datetime) -> ParameterFit | None:
    """The learner's queued fit, or a new one when they are due, marked running; None when there is nothing to do."""
    with transaction.atomic():
        # A queued fit is taken whatever its age: the nightly run hands over again those whose message was lost.
        _stalled_fits_fail(learner_id=learner_id, now=now, queued_too=False)
        queued = (
            ParameterFit.objects.select_for_update(skip_locked=True)
            .filter(learner_id=learner_id, status=JobStatus.QUEUED)
            .first()
        )
        if queued is not None:
            job_start(PARAMETER_FITS, queued, now=now)
            return queued
        # Locked as _finish locks it: a fit that finishes meanwhile is seen (not due any more), and one still
        # running makes the insert below fail, so two runs at once never make two fits in a row.
        settings = _settings_in_force(learner_id, locked=True)
        due = (
            settings.auto_optimize
            and not settings.parameters_pinned
            and _fit_due(
                recorded=_recorded_review_count(learner_id),
                optimized_at=settings.optimized_at,
                reviews_at_last_fit=settings.reviews_at_last_fit,
                now=now,
            )
        )
        if not due:
            return None
        try:
            # Another worker's fit of this learner, queued or running, makes this insert fail: it does nothing.
            with transaction.atomic():
                return ParameterFit.objects.create(
                    learner_id=learner_id,
                    trigger=ParameterFitTrigger.SCHEDULE,
                    status=JobStatus.RUNNING,
                    started_at=now,
                    attempts=1,
                    worker=job_worker_name(),
                )
        except IntegrityError:
            return None


@dataclass(frozen=True, slots=True)
class _Fitted:
    recorded: int
    current: tuple[float, ...]
    fitted: tuple[float, ...] | None = None
    fitted_on: int = 0
    fitted_metrics: FitMetrics | None = None
    current_metrics: FitMetrics | None = None
    refusal: str = ""


def _fit(learner_id: int) -> _Fitted:
    # Counted first: reviews arriving during the fit count toward the next one.
    recorded = _recorded_review_count(learner_id)
    settings = _settings_in_force(learner_id)
    current = tuple(float(weight) for weight in settings.fsrs_parameters or DEFAULT_PARAMETERS)
    split = items_split_by_time(
        logged_reviews_list(learner_id=learner_id),
        day_start=learner_day_function(settings),
        test_fraction=TEST_FRACTION,
    )
    fitted_on, tested = long_term_item_count(split.train), long_term_item_count(split.test)
    if fitted_on + tested < MIN_REVIEWS_TO_FIT or not fitted_on or not tested:
        return _Fitted(
            recorded=recorded,
            current=current,
            refusal=f"Only {fitted_on + tested} reviews came on a later day than the card's review before; "
            f"a fit needs {MIN_REVIEWS_TO_FIT}.",
        )
    fitted = parameters_fit(split.train, num_relearning_steps=len(settings.relearning_steps))
    return _Fitted(
        recorded=recorded,
        current=current,
        fitted=fitted,
        fitted_on=fitted_on,
        fitted_metrics=parameters_evaluate(fitted, split.test),
        current_metrics=parameters_evaluate(current, split.test),
    )


def _refusal(fit: ParameterFit, outcome: _Fitted, settings: SchedulingSettings) -> str:
    """Why the fitted weights are not adopted; empty when they are."""
    if outcome.refusal:
        return outcome.refusal
    if settings.parameters_pinned:
        return "The weights in use are pinned."
    if fit.trigger == ParameterFitTrigger.SCHEDULE and not settings.auto_optimize:
        return "Automatic optimization was turned off during the fit."
    if tuple(float(weight) for weight in settings.fsrs_parameters or DEFAULT_PARAMETERS) != outcome.current:
        return "The weights in use changed during the fit."
    new, old = outcome.fitted_metrics, outcome.current_metrics
    if new is None or old is None:
        return "The fit has no figures to compare."
    refusal = adoption_refusal(new, old)
    return f"The fitted weights {refusal}." if refusal else ""


def _finish(fit: ParameterFit, outcome: _Fitted, *, now: datetime) -> ParameterFit:
    learner_id = fit.learner_id
    with transaction.atomic():
        row = SchedulingSettings.objects.select_for_update().filter(learner_id=learner_id).first()
        settings = scheduling_settings_in_force(row) if row is not None else SchedulingSettings(learner_id=learner_id)
        reason = _refusal(fit, outcome, settings)
        if not reason and outcome.fitted is not None:
            try:
                learner = get_user_model().objects.get(pk=learner_id)
                # The settings path also queues the reschedule of the learner's review cards (reason "parameters").
                row = scheduling_settings_update(learner=learner, changes={"fsrs_parameters": list(outcome.fitted)})
            except SettingsInvalid as error:
                reason = f"The fitted weights were refused: {error.message}"
            else:
                fit.profile_id = scheduler_profile_ensure(
                    scheduler_config_from_settings(scheduling_settings_in_force(row))
                )
                SchedulingSettings.objects.filter(pk=row.pk).update(profile_id=fit.profile_id)
        if row is None:
            row, _ = SchedulingSettings.objects.get_or_create(learner_id=learner_id)
        SchedulingSettings.objects.filter(pk=row.pk).update(optimized_at=now, reviews_at_last_fit=outcome.recorded)
        fit.adopted = not reason
        fit.reason = reason or "Adopted: the fitted weights predicted the later reviews with a lower log loss."
        fit.parameters = list(outcome.fitted) if outcome.fitted is not None else None
        fit.fitted_on_reviews = outcome.fitted_on
        fit.previous_parameters = list(outcome.current)
        if outcome.fitted_metrics is not None and outcome.current_metrics is not None:
            fit.evaluated_on_reviews = outcome.fitted_metrics.reviews
            fit.log_loss, fit.rmse_bins = outcome.fitted_metrics.log_loss, outcome.fitted_metrics.rmse_bins
            fit.previous_log_loss = outcome.current_metrics.log_loss
            fit.previous_rmse_bins = outcome.current_metrics.rmse_bins
        job_finish(PARAMETER_FITS, fit, status=JobStatus.DONE, now=now, fields=_OUTCOME_FIELDS)
    return fit


def parameter_fit_run(*, learner_id: int, now: datetime) -> ParameterFit | None:
    """Run the learner's queued fit, or a fit when they are due; None when there is nothing to do.

    Safe to run twice at once or twice in a row: one run claims the fit, the other does nothing.
    """
    fit = _claim(learner_id=learner_id, now=now)
    if fit is None:
        return None
    try:
        outcome = _fit(learner_id)
    except Exception as error:
        # Whatever the optimizer raised: the fit records it, and the learner keeps the weights in use.
        logger.exception("Fit %s of learner %s failed", fit.pk, learner_id)
        fit.reason = f"The fit failed: {error}"
        job_finish(PARAMETER_FITS, fit, status=JobStatus.FAILED, now=now, error=fit.reason, fields=("reason",))
        return fit
    return _finish(fit, outcome, now=now)


def parameter_fits_due_batch(*, now: datetime, after_learner_id: int, limit: int) -> tuple[list[int], int | None]:
    """Learners after `after_learner_id`, in id order, that are due a fit; and the last id read (None at the end)."""
    rows = list(
        SchedulingSettings.objects.filter(learner_id__gt=after_learner_id, auto_optimize=True, parameters_pinned=False)
        .order_by("learner_id")
        .values_list("learner_id", "optimized_at", "reviews_at_last_fit")[:limit]
    )
    if not rows:
        return [], None
    counts = dict(
        _recorded_reviews([learner_id for learner_id, _, _ in rows])
        .values("learner_id")
        .order_by()
        .annotate(recorded=Count("id"))
        .values_list("learner_id", "recorded")
    )
    due = [
        learner_id
        for learner_id, optimized_at, at_last_fit in rows
        if _fit_due(
            recorded=counts.get(learner_id, 0), optimized_at=optimized_at, reviews_at_last_fit=at_last_fit, now=now
        )
    ]
    return due, rows[-1][0]


def parameter_fits_dispatch(*, now: datetime, send: Callable[[int], object], batch_size: int = DISPATCH_BATCH) -> int:
    """Hand each learner due a fit to `send` (one call per learner, id only), reading learners in keyset batches.

    Returns how many were sent. (Fits asked for whose message was lost are jobs_resume's.)
    """
    sent = 0
    after: int | None = 0
    while after is not None:
        due, after = parameter_fits_due_batch(now=now, after_learner_id=after, limit=batch_size)
        for learner_id in due:
            send(learner_id)
        sent += len(due)
    return sent


def parameter_fits_list(*, learner: Any, limit: int = PARAMETER_FITS_SHOWN) -> list[ParameterFit]:
    return list(ParameterFit.objects.filter(learner=learner).order_by("-created_at", "-pk")[:limit])
