"""Which memory model schedules each of a learner's cards: their own weights, or their course's population model.

A course's model is in use for a learner's cards of that course when it is the course's latest
adopted one (apps.srs.adaptation.course_models) and its training did not find the learner's own
weights better for them; a learner who began after the training follows it with no factor of their
own. Pinned weights are never replaced. Reads only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from django.db.models import FilteredRelation, Q, QuerySet

from apps.common.prepared import PreparedQuery
from apps.srs.conf import MIN_LEARNER_HELD_OUT
from apps.srs.core.population import (
    CardConfigs,
    CourseModelInUse,
    first_stabilities_applied,
    first_stability_offsets_in_use,
)
from apps.srs.models import CourseMemoryModel, LearnerMemoryModel, SchedulingSettings
from apps.srs.settings.config import scheduler_config_from_settings, scheduling_settings_get

# A trained model never changes: its weights and card factors are read once per process, keyed with the
# time it finished so a row id reused (a rolled-back test database) is never confused with another.
_stored: dict[tuple[int, datetime | None], tuple[tuple[float, ...], dict[int, float]]] = {}
_STORED_KEPT = 64


def _model_read(memory_model_id: int, finished_at: datetime | None) -> tuple[tuple[float, ...], dict[int, float]]:
    key = (memory_model_id, finished_at)
    found = _stored.get(key)
    if found is None:
        parameters, card_factors = CourseMemoryModel.objects.values_list("parameters", "card_factors").get(
            pk=memory_model_id
        )
        found = (
            tuple(float(weight) for weight in parameters or ()),
            {int(card): float(value) for card, value in (card_factors or {}).items()},
        )
        if len(_stored) >= _STORED_KEPT:
            _stored.clear()
        _stored[key] = found
    return found


def course_models_in_use_query(*, learner_id: int) -> QuerySet[CourseMemoryModel, tuple[Any, ...]]:
    """Each course's model in use, with this learner's decision under it: the rows `card_configs_from` reads."""
    # One outer join on the learner's decision (a decision is unique per model and learner).
    return (
        CourseMemoryModel.objects.in_use()
        .annotate(decision=FilteredRelation("learner_models", condition=Q(learner_models__learner_id=learner_id)))
        .order_by("course_id")
        .values_list(
            "pk",
            "course_id",
            "finished_at",
            "decision__uses_course_model",
            "decision__log_factor",
            "decision__first_stability_log_factors",
        )
    )


# Read on every study queue and review: compiled once per connection (the ORM's compile of the outer join
# and the in-use subquery costs more than the query).
COURSE_MODELS_IN_USE = PreparedQuery(lambda learner_id: course_models_in_use_query(learner_id=learner_id), -53_004)


@lru_cache(maxsize=1024)
def _learner_parameters_of(parameters: tuple[float, ...], offsets: tuple[float, ...]) -> tuple[float, ...]:
    return first_stabilities_applied(parameters, offsets)


def _learner_parameters(parameters: tuple[float, ...], first_stabilities: Any) -> tuple[float, ...]:
    """The course's weights with the learner's own first stabilities, as scheduling uses them (rounded)."""
    if not first_stabilities:
        return parameters
    # One tuple per distinct learner weights: the scheduler and preview memos hash configs by identity first.
    return _learner_parameters_of(parameters, first_stability_offsets_in_use(first_stabilities))


def card_configs_from(rows: Iterable[tuple[Any, ...]], *, settings: SchedulingSettings) -> CardConfigs:
    """The config of each of the learner's cards, from their settings and `course_models_in_use_query`'s rows."""
    base = scheduler_config_from_settings(settings)
    if settings.parameters_pinned:
        return CardConfigs(base=base)
    models = []
    for memory_model_id, course_id, finished_at, uses, learner_factor, first_stabilities in rows:
        if uses is False:
            continue
        parameters, card_factors = _model_read(memory_model_id, finished_at)
        models.append(
            CourseModelInUse(
                memory_model_id=memory_model_id,
                course_id=course_id,
                parameters=_learner_parameters(parameters, first_stabilities),
                card_factors=card_factors,
                learner_factor=learner_factor or 0.0,
            )
        )
    return CardConfigs(base=base, models=tuple(models))


def card_configs_get(*, learner: Any, settings: SchedulingSettings | None = None) -> CardConfigs:
    """The config of each of the learner's cards: one query for the course models in use and their decision."""
    settings = settings if settings is not None else scheduling_settings_get(learner=learner)
    if settings.parameters_pinned:
        return CardConfigs(base=scheduler_config_from_settings(settings))
    return card_configs_from(COURSE_MODELS_IN_USE.all(learner.pk), settings=settings)


@dataclass(frozen=True, slots=True)
class LearnerCourseModel:
    """A course's model in use, and what it means for this learner: whether it schedules their cards, and why."""

    course_model: CourseMemoryModel
    # The training's decision for this learner; None when they began after it.
    decision: LearnerMemoryModel | None
    in_use: bool
    why: str


def learner_course_models_list(*, learner: Any, settings: SchedulingSettings) -> list[LearnerCourseModel]:
    """Each course's model in use, with the learner's decision: what GET /srs/settings/ shows."""
    rows = CourseMemoryModel.objects.in_use().select_related("course").order_by("course__slug")
    decisions = {
        decision.memory_model_id: decision
        for decision in LearnerMemoryModel.objects.filter(
            learner_id=learner.pk, memory_model__in=[row.pk for row in rows]
        )
    }
    found = []
    for row in rows:
        decision = decisions.get(row.pk)
        if settings.parameters_pinned:
            in_use, why = False, "Your weights are pinned: the course's model never replaces them."
        elif decision is None:
            in_use, why = True, "You began after the course's model was trained: it schedules your cards of the course."
        elif decision.uses_course_model:
            in_use = True
            why = (
                "The course's model predicted your later reviews better than your own weights."
                if decision.evaluated_on_reviews >= MIN_LEARNER_HELD_OUT
                else "Too few of your reviews were held out to tell the two apart: you follow the course's choice."
            )
        else:
            in_use, why = False, "Your own weights predicted your later reviews better than the course's model."
        found.append(LearnerCourseModel(course_model=row, decision=decision, in_use=in_use, why=why))
    return found
