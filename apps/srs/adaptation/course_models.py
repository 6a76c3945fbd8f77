"""Training each course's population model on the workers from every learner's reviews, adopted only when better.

What it learns from: every standing review of the course's cards by every learner whose account
exists (a deleted account's reviews are gone with it, so they leave the next training). What it keeps:
the course's weights and each card's stability factor, per course and per card; for each learner, only
the decision, their one factor (how much longer than the course they remember) and their four first
stabilities (how long they remember a new card after each first rating), never a review.

Each learner's latest fifth of days is held out: the model is trained on the rest, then it and what
each learner is scheduled with now are scored on the held-out reviews. The course adopts the model
when it predicts them with a lower log loss (`adoption_refusal`); each learner with enough held-out
reviews of their own gets whichever predicted theirs better, the others follow the course.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Count

from apps.common.errors import Conflict
from apps.common.jobs import JobStatus, job_claim, job_finish, job_heartbeat, job_publish_after_commit
from apps.content.models import Card, Course
from apps.srs.adaptation.optimization import learner_day_function
from apps.srs.conf import MIN_LEARNER_HELD_OUT
from apps.srs.core.evaluation import (
    ExportedReview,
    PopulationModel,
    RevlogRow,
    held_out_predictions,
    population_model_train,
    revlog_split,
)
from apps.srs.core.optimizer import FitMetrics, RecallPrediction, adoption_refusal, predictions_score
from apps.srs.core.population import PopulationFactors, first_stability_offsets_in_use
from apps.srs.core.scheduling import DEFAULT_PARAMETERS
from apps.srs.jobs import COURSE_MODELS
from apps.srs.models import (
    CourseMemoryModel,
    CourseModelPhase,
    LearnerMemoryModel,
    RescheduleReason,
    ReviewLog,
    SchedulingSettings,
)
from apps.srs.settings.rules import scheduling_settings_in_force
from apps.srs.settings.services import learner_reschedule_start

logger = logging.getLogger(__name__)

# A population of fewer learners would let a card's factor describe one person's memory.
MIN_LEARNERS_TO_TRAIN = 5
MIN_REVIEWS_TO_TRAIN = 1000
# Retrain after this many new reviews of the course, or after RETRAIN_AFTER with at least one.
RETRAIN_AFTER_REVIEWS = 5000
RETRAIN_AFTER = timedelta(days=7)
TEST_FRACTION = 0.2
COURSE_MODELS_SHOWN = 5


class TrainingInProgress(Conflict):
    code = "training_in_progress"


def _course_reviews(course_id: int) -> list[tuple[int, int, datetime, int]]:
    rows = (
        ReviewLog.objects.standing()
        .of_course(course_id)
        .order_by("learner_id", "card_id", "reviewed_at")
        .values_list("learner_id", "card_id", "reviewed_at", "rating")
    )
    return [
        (learner_id, card_id, at, rating or 0) for learner_id, card_id, at, rating in rows.iterator(chunk_size=5000)
    ]


def course_model_request(*, course: Course) -> CourseMemoryModel:
    """Queue a training of the course's model now (the admin's action); a worker takes it once this commits."""
    try:
        with transaction.atomic():
            row = CourseMemoryModel.objects.create(course=course)
    except IntegrityError:
        raise TrainingInProgress(f"A training of {course.slug}'s memory model is already queued or running.") from None
    job_publish_after_commit(COURSE_MODELS, row)
    return row


def _training_due(*, recorded: int, last: CourseMemoryModel | None, recorded_at_last: int, now: datetime) -> bool:
    if recorded < MIN_REVIEWS_TO_TRAIN:
        return False
    if last is None or recorded - recorded_at_last >= RETRAIN_AFTER_REVIEWS:
        return True
    return last.created_at <= now - RETRAIN_AFTER and recorded > recorded_at_last


def course_models_dispatch(*, now: datetime) -> int:
    """Queue a training for each course due one; each is handed to a worker after commit. Returns how many."""
    queued = 0
    counts = dict(
        ReviewLog.objects.standing()
        .values("card__deck__lesson__course_id")
        .order_by()
        .annotate(recorded=Count("id"))
        .values_list("card__deck__lesson__course_id", "recorded")
    )
    for course_id, recorded in counts.items():
        if course_id is None:
            continue
        last = CourseMemoryModel.objects.filter(course_id=course_id).order_by("-created_at", "-pk").first()
        recorded_at_last = last.recorded_reviews if last is not None else 0
        if not _training_due(recorded=recorded, last=last, recorded_at_last=recorded_at_last, now=now):
            continue
        try:
            with transaction.atomic():
                row = CourseMemoryModel.objects.create(course_id=course_id)
        except IntegrityError:
            continue
        job_publish_after_commit(COURSE_MODELS, row)
        queued += 1
    return queued


@dataclass(frozen=True, slots=True)
class _LearnerOutcome:
    learner_id: int
    log_factor: float
    first_stability_log_factors: list[float]
    held_out: int
    model: FitMetrics | None
    in_use: FitMetrics | None
    # Whether the model predicted this learner's held-out reviews better than their weights did.
    better_for_them: bool


@dataclass(frozen=True, slots=True)
class _Trained:
    recorded: int
    model: PopulationModel | None = None
    learner_ids: tuple[int, ...] = ()
    evaluated: FitMetrics | None = None
    in_use: FitMetrics | None = None
    per_learner: list[_LearnerOutcome] = field(default_factory=list)
    refusal: str = ""


def _previous_model(course_id: int) -> tuple[PopulationModel | None, dict[int, LearnerMemoryModel]]:
    """The course's model in use now, and each learner's decision under it."""
    row = CourseMemoryModel.objects.in_use().filter(course_id=course_id).first()
    if row is None:
        return None, {}
    decisions = {decision.learner_id: decision for decision in row.learner_models.all()}
    return population_model_from_row(row, decisions=decisions.values()), decisions


def population_model_from_row(
    row: CourseMemoryModel, *, decisions: Iterable[LearnerMemoryModel] = ()
) -> PopulationModel:
    """A stored model as the core predicts with it, with these learners' factors and first stabilities."""
    decisions = list(decisions)
    return PopulationModel(
        parameters=tuple(float(weight) for weight in row.parameters or DEFAULT_PARAMETERS),
        factors=PopulationFactors(
            cards={card: float(value) for card, value in (row.card_factors or {}).items()},
            learners={str(decision.learner_id): decision.log_factor for decision in decisions},
            card_spread=row.card_spread or 0.0,
            learner_spread=row.learner_spread or 0.0,
        ),
        observations=row.trained_on_reviews,
        first_stabilities={
            str(decision.learner_id): first_stability_offsets_in_use(decision.first_stability_log_factors or ())
            for decision in decisions
        },
    )


def _phase(row: CourseMemoryModel, phase: str) -> None:
    """Say what the training is doing now; saving it is the heartbeat that tells others its worker is alive."""
    row.phase = phase
    job_heartbeat(COURSE_MODELS, row, fields=("phase",))


def _train(row: CourseMemoryModel) -> _Trained:
    course_id = row.course_id
    _phase(row, CourseModelPhase.READING)
    reviews = _course_reviews(course_id)
    learner_ids = sorted({learner_id for learner_id, _, _, _ in reviews})
    if len(learner_ids) < MIN_LEARNERS_TO_TRAIN or len(reviews) < MIN_REVIEWS_TO_TRAIN:
        return _Trained(
            recorded=len(reviews),
            learner_ids=tuple(learner_ids),
            refusal=f"{len(learner_ids)} learners and {len(reviews)} reviews: a training needs "
            f"{MIN_LEARNERS_TO_TRAIN} learners and {MIN_REVIEWS_TO_TRAIN} reviews.",
        )
    settings = {
        row.learner_id: scheduling_settings_in_force(row)
        for row in SchedulingSettings.objects.filter(learner_id__in=learner_ids)
    }
    day_functions: dict[str, Callable[[datetime], date]] = {
        str(learner_id): learner_day_function(settings.get(learner_id) or SchedulingSettings(learner_id=learner_id))
        for learner_id in learner_ids
    }

    def day_of(learner: str, moment: datetime) -> date:
        return day_functions[learner](moment)

    split = revlog_split(
        [
            ExportedReview(learner=str(learner_id), card=str(card_id), reviewed_at=at, rating=rating, duration_ms=None)
            for learner_id, card_id, at, rating in reviews
        ],
        test_fraction=TEST_FRACTION,
        day_of=day_of,
    )
    rows = [
        RevlogRow(
            learner=review.learner, card=review.card, reviewed_at=review.reviewed_at, rating=review.rating, split=name
        )
        for review, name in split
    ]
    _phase(row, CourseModelPhase.TRAINING)
    model = population_model_train(rows, day_of=day_of)
    _phase(row, CourseModelPhase.SCORING)
    previous, decisions = _previous_model(course_id)

    def weights_of(learner: str) -> tuple[float, ...]:
        found = settings.get(int(learner))
        return tuple(float(weight) for weight in (found.fsrs_parameters if found else None) or DEFAULT_PARAMETERS)

    held_out = held_out_predictions(rows, model=model, weights_of=weights_of, previous=previous, day_of=day_of)
    everyone_model: list[RecallPrediction] = []
    everyone_in_use: list[RecallPrediction] = []
    per_learner = []
    for learner, predicted in sorted(held_out.items()):
        learner_id = int(learner)
        decision = decisions.get(learner_id)
        on_previous = previous is not None and (decision is None or decision.uses_course_model)
        in_use = predicted.previous if on_previous and predicted.previous else predicted.weights
        everyone_model += predicted.model
        everyone_in_use += in_use
        if not predicted.model:
            continue
        model_metrics, weights_metrics = predictions_score(predicted.model), predictions_score(predicted.weights)
        per_learner.append(
            _LearnerOutcome(
                learner_id=learner_id,
                log_factor=model.factors.learners.get(learner, 0.0),
                first_stability_log_factors=[round(offset, 4) for offset in model.first_stabilities.get(learner, ())],
                held_out=len(predicted.model),
                model=model_metrics,
                in_use=weights_metrics,
                better_for_them=not adoption_refusal(model_metrics, weights_metrics),
            )
        )
    if not everyone_model:
        return _Trained(
            recorded=len(reviews),
            model=model,
            learner_ids=tuple(learner_ids),
            refusal="No held-out review could be predicted.",
        )
    return _Trained(
        recorded=len(reviews),
        model=model,
        learner_ids=tuple(learner_ids),
        evaluated=predictions_score(everyone_model),
        in_use=predictions_score(everyone_in_use),
        per_learner=per_learner,
    )


_OUTCOME_FIELDS = (
    "parameters",
    "card_factors",
    "card_spread",
    "learner_spread",
    "learners",
    "recorded_reviews",
    "trained_on_reviews",
    "evaluated_on_reviews",
    "log_loss",
    "rmse_bins",
    "previous_log_loss",
    "previous_rmse_bins",
    "adopted",
    "reason",
    "phase",
)


def _finish(row: CourseMemoryModel, outcome: _Trained, *, now: datetime) -> CourseMemoryModel:
    refusal = outcome.refusal
    if not refusal and outcome.evaluated is not None and outcome.in_use is not None:
        found = adoption_refusal(outcome.evaluated, outcome.in_use)
        refusal = f"The model {found}, against what the learners are scheduled with." if found else ""
    row.learners, row.recorded_reviews = len(outcome.learner_ids), outcome.recorded
    if outcome.model is not None:
        row.parameters = list(outcome.model.parameters)
        # Every card of the course gets a factor, 0 for one nobody has reviewed yet: the course's model
        # schedules all its cards, not only those it has seen.
        learned = outcome.model.factors.cards
        row.card_factors = {
            str(card_id): round(learned.get(str(card_id), 0.0), 4)
            for card_id in Card.objects.filter(deck__lesson__course_id=row.course_id)
            .order_by("pk")
            .values_list("pk", flat=True)
        }
        row.card_spread = outcome.model.factors.card_spread
        row.learner_spread = outcome.model.factors.learner_spread
        row.trained_on_reviews = outcome.model.observations
    if outcome.evaluated is not None and outcome.in_use is not None:
        row.evaluated_on_reviews = outcome.evaluated.reviews
        row.log_loss, row.rmse_bins = outcome.evaluated.log_loss, outcome.evaluated.rmse_bins
        row.previous_log_loss, row.previous_rmse_bins = outcome.in_use.log_loss, outcome.in_use.rmse_bins
    row.phase = CourseModelPhase.FINISHED
    row.adopted = not refusal and outcome.model is not None
    row.reason = refusal or "Adopted: it predicted the learners' later reviews with a lower log loss."
    with transaction.atomic():
        LearnerMemoryModel.objects.bulk_create(
            [
                LearnerMemoryModel(
                    memory_model=row,
                    learner_id=learner.learner_id,
                    # With too few held-out reviews of their own, a learner follows the course.
                    uses_course_model=learner.better_for_them or learner.held_out < MIN_LEARNER_HELD_OUT,
                    log_factor=learner.log_factor,
                    first_stability_log_factors=learner.first_stability_log_factors,
                    evaluated_on_reviews=learner.held_out,
                    log_loss=learner.model.log_loss if learner.model else None,
                    previous_log_loss=learner.in_use.log_loss if learner.in_use else None,
                )
                for learner in outcome.per_learner
            ],
            ignore_conflicts=True,
        )
        finished = job_finish(COURSE_MODELS, row, status=JobStatus.DONE, now=now, fields=_OUTCOME_FIELDS)
        if finished and row.adopted:
            # Every learner of the course: their cards move under the new model, or back to their own weights.
            for learner_id in outcome.learner_ids:
                learner_reschedule_start(learner_id=learner_id, reason=RescheduleReason.MEMORY_MODEL)
    return row


def course_model_run(*, course_model_id: int, now: datetime) -> CourseMemoryModel | None:
    """Train the queued model; None when another worker has it or it is finished. Safe to run twice."""
    row = job_claim(COURSE_MODELS, course_model_id, now=now)
    if row is None:
        return None
    try:
        outcome = _train(row)
    except Exception as error:
        logger.exception("Training %s of course %s failed", row.pk, row.course_id)
        row.reason = f"The training failed: {error}"
        job_finish(COURSE_MODELS, row, status=JobStatus.FAILED, now=now, error=row.reason, fields=("reason",))
        return row
    return _finish(row, outcome, now=now)


def course_models_list(*, course: Course, limit: int = COURSE_MODELS_SHOWN) -> list[CourseMemoryModel]:
    return list(CourseMemoryModel.objects.filter(course=course).order_by("-created_at", "-pk")[:limit])
