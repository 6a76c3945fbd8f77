"""Reads of a learner's review load per day, for load balancing new intervals, and the previews that use it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Count, DateField, Func, Q
from django.db.models.sql.compiler import SQLCompiler

from apps.srs.load_balancing import (
    WEEKDAYS,
    DueLoad,
    balance_days,
    local_day,
    preview_states,
    previews_balanced,
)
from apps.srs.models import CardMemory, SchedulingSettings
from apps.srs.scheduling import MemoryStage, MemoryState, Rating, SchedulerConfig


class _LearnerDay(Func):
    """A time's day for the learner, on PostgreSQL: as `load_balancing.local_day`, local time less the start hour."""

    output_field = DateField()

    def __init__(self, expression: Any, *, timezone: str, day_start_hour: int) -> None:
        super().__init__(expression)
        self.timezone = timezone
        self.day_start_hour = day_start_hour

    def as_sql(
        self,
        compiler: SQLCompiler,
        connection: BaseDatabaseWrapper,
        function: str | None = None,
        template: str | None = None,
        arg_joiner: str | None = None,
        **extra_context: Any,
    ) -> tuple[str, tuple[str | int, ...]]:
        sql, params = compiler.compile(self.source_expressions[0])
        return (
            f"(({sql} AT TIME ZONE %s) - make_interval(hours => %s))::date",
            (*params, self.timezone, self.day_start_hour),
        )


def due_load_basis(settings: SchedulingSettings) -> DueLoad:
    """The learner's day boundary and easy days, with no counts yet: enough to say which days need counting."""
    return DueLoad(
        due_counts={},
        timezone=settings.timezone,
        day_start_hour=settings.day_start_hour,
        easy_days={WEEKDAYS.index(day): float(share) for day, share in (settings.easy_days or {}).items()},
    )


def _merged(spans: Iterable[tuple[date, date]]) -> list[tuple[date, date]]:
    merged: list[tuple[date, date]] = []
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1] + timedelta(days=1):
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def due_load_get(*, learner_id: int, settings: SchedulingSettings, spans: Iterable[tuple[date, date]]) -> DueLoad:
    """The learner's review cards due on each of their days in `spans` (first and last day, inclusive): one query.

    Counted are the cards a study session would show that day: in the review stage, not suspended,
    not archived. Days with nothing due are left out.
    """
    basis = due_load_basis(settings)
    zone = ZoneInfo(settings.timezone)

    def start_of(day: date) -> datetime:
        # As config.learner_day_bounds: the local calendar date at the day-start hour.
        return datetime.combine(day, time(settings.day_start_hour), tzinfo=zone)

    windows = Q()
    for first, last in _merged(spans):
        windows |= Q(due__gte=start_of(first), due__lt=start_of(last + timedelta(days=1)))
    if not windows:
        return basis
    due = CardMemory.objects.filter(
        windows, learner_id=learner_id, stage=MemoryStage.REVIEW, suspended=False, card__archived=False
    )
    if connection.vendor == "postgresql":
        day = _LearnerDay("due", timezone=settings.timezone, day_start_hour=settings.day_start_hour)
        counts: Mapping[date, int] = dict(
            due.annotate(day=day).values("day").annotate(cards=Count("pk")).values_list("day", "cards")
        )
    else:
        counts = Counter(
            local_day(moment, timezone=settings.timezone, day_start_hour=settings.day_start_hour)
            for moment in due.values_list("due", flat=True)
        )
    return DueLoad(
        due_counts=dict(counts),
        timezone=basis.timezone,
        day_start_hour=basis.day_start_hour,
        easy_days=basis.easy_days,
    )


def next_intervals_preview(
    *,
    learner_id: int,
    settings: SchedulingSettings,
    config: SchedulerConfig,
    now: datetime,
    states: Mapping[int, MemoryState | None],
) -> dict[int, dict[Rating, timedelta]]:
    """Per card (by id, with its memory state): how long until due for each rating, if reviewed now.

    Each outcome is load balanced as the review itself will be, on the learner's due counts read in
    one query for every card; so each interval is the one the review gives while those counts hold.
    """
    previews = {
        card_id: preview_states(state, now=now, config=config, learner_id=learner_id, card_id=card_id)
        for card_id, state in states.items()
    }
    load: DueLoad | None = None
    if settings.load_balancing:
        basis = due_load_basis(settings)
        spans = [
            span
            for at, afters in previews.values()
            for after in afters.values()
            if (span := balance_days(after, reviewed_at=at, config=config, load=basis)) is not None
        ]
        if spans:
            load = due_load_get(learner_id=learner_id, settings=settings, spans=spans)
    return previews_balanced(previews, states, config=config, load=load)
