"""Retention advice on the workers: the cached row a settings response shows, and the task that fills it.

FSRS's simulator takes 0.1 s for a deck of 100 cards and seconds for 10,000, too long for a request,
so a request only looks the advice up (`retention_advice_ensure`): when the row for the learner's
current inputs is missing it is created queued and handed to a worker once the request commits. The
row is the outbox, as with reschedules: one the broker did not take is handed over again by
`jobs_resume` (apps.common.jobs). Advice only: nothing here changes a setting.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Aggregate, Count, FloatField, IntegerField, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce
from django.utils import timezone

from apps.common.jobs import (
    JOB_IN_FLIGHT,
    JobStatus,
    job_claimable,
    job_finish,
    job_locked,
    job_publish_after_commit,
    job_start,
)
from apps.content.models import Card
from apps.srs.core.retention_advice import (
    MAX_DECK_SIZE,
    SimulatorSettings,
    retention_advice_compute,
    review_seconds_from_timings,
)
from apps.srs.core.scheduling import DEFAULT_PARAMETERS, MemoryStage
from apps.srs.jobs import RETENTION_ADVICE
from apps.srs.models import (
    CardMemory,
    ParametersSource,
    ReviewLog,
    ReviewSource,
    SchedulingSettings,
    StoredRetentionAdvice,
)
from apps.srs.settings.config import scheduler_config_from_settings, scheduling_settings_get
from apps.srs.settings.rules import scheduling_settings_in_force

logger = logging.getLogger(__name__)

# The simulated deck is the learner's rounded up to one of these sizes: the advice barely moves
# between them, and a learner adding a few cards does not set a worker simulating again.
DECK_SIZE_BUCKETS = (100, 200, 500, 1_000, 2_000, 5_000, MAX_DECK_SIZE)
# The learner's seconds per review drift as they study; advice this old is computed again (and
# shown meanwhile).
ADVICE_MAX_AGE = timedelta(days=30)
# A computation that failed is tried again on a request after this long, not on every request.
FAILED_RETRY_AFTER = timedelta(hours=1)
# Seconds per review are the learner's from their deck reviews of the last year: older ones describe
# a slower learner, and games and quizzes time something else than recalling a card.
TIMINGS_WINDOW = timedelta(days=365)
# Rows kept per learner: switching back to a recent setting finds its advice at once.
ADVICE_KEPT_PER_LEARNER = 5
_ENSURE_ATTEMPTS = 2

# What a computation stores with its outcome.
_FIGURE_FIELDS = (
    "advised_retention",
    "advised_reviews_per_day",
    "advised_minutes_per_day",
    "advised_seconds_per_remembered_card",
    "current_reviews_per_day",
    "current_minutes_per_day",
    "current_seconds_per_remembered_card",
    "review_seconds_source",
    "computed_at",
)


class _Median(Aggregate):
    """PostgreSQL's continuous median of the expression within each group."""

    function = "percentile_cont"
    template = "%(function)s(0.5) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()


@dataclass(frozen=True)
class AdviceInputs:
    """What a row of advice is keyed by: everything the simulation depends on besides the review timings."""

    parameters_digest: str
    parameters_source: str
    desired_retention: float
    deck_size_bucket: int
    limits_digest: str

    def lookup(self) -> dict[str, Any]:
        return {
            "parameters_digest": self.parameters_digest,
            "desired_retention": self.desired_retention,
            "deck_size_bucket": self.deck_size_bucket,
            "limits_digest": self.limits_digest,
        }


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def deck_size_bucket(cards: int) -> int:
    """The smallest bucket that holds `cards`; the largest one for more."""
    return next((size for size in DECK_SIZE_BUCKETS if cards <= size), DECK_SIZE_BUCKETS[-1])


def learner_deck_size(*, learner_id: int) -> int:
    """Cards a learner may study of the decks the learner has studied a card of: what they are working through."""
    studied_decks = CardMemory.objects.filter(learner_id=learner_id).values("card__deck_id")
    return Card.objects.visible().filter(deck_id__in=studied_decks).count()


def advice_inputs_of(settings: SchedulingSettings, *, deck_size: int) -> AdviceInputs:
    parameters = scheduler_config_from_settings(settings).parameters
    return AdviceInputs(
        parameters_digest=_digest(list(parameters)),
        parameters_source=ParametersSource.FITTED if settings.fsrs_parameters else ParametersSource.DEFAULT,
        desired_retention=float(settings.desired_retention),
        deck_size_bucket=deck_size_bucket(deck_size),
        limits_digest=_digest(
            {
                "new_cards_per_day": settings.new_cards_per_day,
                "max_reviews_per_day": settings.max_reviews_per_day,
                "maximum_interval_days": settings.maximum_interval_days,
                "learning_steps": len(settings.learning_steps),
                "relearning_steps": len(settings.relearning_steps),
            }
        ),
    )


def retention_advice_ensure(
    *, learner: Any, settings: SchedulingSettings | None = None, now: datetime | None = None
) -> StoredRetentionAdvice:
    """The learner's advice for their settings as they are; queued for a worker when there is none yet.

    `settings`: the learner's settings when the caller has them (read with `scheduling_settings_get`
    otherwise). The row returned may still be computing; a row whose figures are older than
    ADVICE_MAX_AGE keeps them while they are computed again, and a failed one is tried again after
    FAILED_RETRY_AFTER. A computation already queued or running is never queued twice.
    """
    now = now or timezone.now()
    settings = settings if settings is not None else scheduling_settings_get(learner=learner)
    inputs = advice_inputs_of(settings, deck_size=learner_deck_size(learner_id=learner.pk))
    for attempt in range(_ENSURE_ATTEMPTS):
        row = StoredRetentionAdvice.objects.filter(learner_id=learner.pk, **inputs.lookup()).first()
        if row is not None:
            return _refreshed_if_due(row, now=now)
        try:
            with transaction.atomic():
                row = StoredRetentionAdvice.objects.create(
                    learner_id=learner.pk, parameters_source=inputs.parameters_source, requested_at=now,
                    **inputs.lookup(),
                )  # fmt: skip
        except IntegrityError:
            # A concurrent request created it: the next attempt finds it, queued by that request.
            if attempt == _ENSURE_ATTEMPTS - 1:
                raise
            continue
        # Robust: the row is stored whatever the broker does, and jobs_resume hands it over again.
        job_publish_after_commit(RETENTION_ADVICE, row)
        return row
    raise AssertionError("unreachable")


def _refreshed_if_due(row: StoredRetentionAdvice, *, now: datetime) -> StoredRetentionAdvice:
    stale = row.status == JobStatus.DONE and row.computed_at is not None
    stale = stale and row.computed_at < now - ADVICE_MAX_AGE  # type: ignore[operator]
    retry = row.status == JobStatus.FAILED and row.requested_at < now - FAILED_RETRY_AFTER
    if not (stale or retry):
        return row
    # Conditional on what was read: of two requests at once, one queues it.
    queued = StoredRetentionAdvice.objects.filter(pk=row.pk, status=row.status, requested_at=row.requested_at).update(
        status=JobStatus.QUEUED, requested_at=now, updated_at=now, started_at=None, finished_at=None
    )
    if queued:
        job_publish_after_commit(RETENTION_ADVICE, row)
        row.status, row.requested_at = JobStatus.QUEUED, now
    return row


def review_timings_get(*, learner_id: int, now: datetime) -> dict[tuple[int, int], tuple[int, float]]:
    """(stage before the review, rating) -> (timed reviews, median seconds) of the learner's recent deck reviews.

    A new card's first review counts as learning, as in FSRS's simulator. Undone reviews are left out.
    """
    stage_before = Coalesce(
        Cast(KT("state_before__stage"), IntegerField()), Value(int(MemoryStage.LEARNING)), output_field=IntegerField()
    )
    recent = (
        ReviewLog.objects.standing()
        .filter(
            learner_id=learner_id,
            source=ReviewSource.DECK,
            duration_ms__gt=0,
            reviewed_at__gte=now - TIMINGS_WINDOW,
        )
        .annotate(stage_before=stage_before)
        .order_by()
    )
    # A standing review always has a rating (the review_log_kind_fields constraint).
    rows = (
        recent.values("stage_before", "rating")
        .annotate(timed=Count("id"), median_ms=_Median("duration_ms"))
        .values_list("stage_before", "rating", "timed", "median_ms")
    )
    return {(stage, rating or 0): (timed, median_ms / 1000.0) for stage, rating, timed, median_ms in rows}


def retention_advice_run(*, advice_id: int, now: datetime | None = None) -> StoredRetentionAdvice | None:
    """Compute a queued row's advice; None when there is nothing to do.

    Nothing to do: the row is gone or finished (a task delivered twice), another worker is computing
    it, or the learner's inputs changed since it was queued (the row is removed: no response shows it).
    """
    now = now or timezone.now()
    claimed = _claim(advice_id, now=now)
    if claimed is None:
        return None
    row, settings = claimed
    try:
        seconds = review_seconds_from_timings(review_timings_get(learner_id=row.learner_id, now=now))
        simulated = SimulatorSettings(
            deck_size=row.deck_size_bucket,
            new_cards_per_day=settings.new_cards_per_day,
            max_reviews_per_day=settings.max_reviews_per_day,
            maximum_interval_days=settings.maximum_interval_days,
            learning_steps=len(settings.learning_steps),
            relearning_steps=len(settings.relearning_steps),
            seconds=seconds,
        )
        parameters = tuple(float(weight) for weight in settings.fsrs_parameters or DEFAULT_PARAMETERS)
        advice = retention_advice_compute(parameters, desired_retention=row.desired_retention, settings=simulated)
    except Exception as error:
        # Whatever the simulator raised: the row says so, and a later request tries again.
        logger.exception("Retention advice %s failed", advice_id)
        job_finish(
            RETENTION_ADVICE, row, status=JobStatus.FAILED, now=timezone.now(), error=f"The simulation failed: {error}"
        )
        return row
    advised, current = advice.recommended, advice.current
    row.advised_retention = advised.desired_retention
    row.advised_reviews_per_day = advised.reviews_per_day
    row.advised_minutes_per_day = advised.minutes_per_day
    row.advised_seconds_per_remembered_card = advised.seconds_per_remembered_card
    row.current_reviews_per_day = current.reviews_per_day
    row.current_minutes_per_day = current.minutes_per_day
    row.current_seconds_per_remembered_card = current.seconds_per_remembered_card
    row.review_seconds_source = seconds.source
    row.computed_at = timezone.now()
    job_finish(RETENTION_ADVICE, row, status=JobStatus.DONE, now=row.computed_at, fields=_FIGURE_FIELDS)
    _prune(learner_id=row.learner_id)
    return row


def _claim(advice_id: int, *, now: datetime) -> tuple[StoredRetentionAdvice, SchedulingSettings] | None:
    with job_locked(RETENTION_ADVICE, advice_id) as row:
        if row is None or not job_claimable(RETENTION_ADVICE, row, now=now):
            return None
        found = SchedulingSettings.objects.filter(learner_id=row.learner_id).first()
        settings = (
            scheduling_settings_in_force(found) if found is not None else SchedulingSettings(learner_id=row.learner_id)
        )
        inputs = advice_inputs_of(settings, deck_size=learner_deck_size(learner_id=row.learner_id))
        if inputs.lookup() != {name: getattr(row, name) for name in inputs.lookup()}:
            row.delete()
            return None
        job_start(RETENTION_ADVICE, row, now=now)
    return row, settings


def _prune(*, learner_id: int) -> None:
    kept = StoredRetentionAdvice.objects.filter(learner_id=learner_id).order_by("-requested_at", "-pk")
    kept_ids = list(kept.values_list("pk", flat=True)[:ADVICE_KEPT_PER_LEARNER])
    StoredRetentionAdvice.objects.filter(learner_id=learner_id).exclude(pk__in=kept_ids).exclude(
        status__in=JOB_IN_FLIGHT
    ).delete()
