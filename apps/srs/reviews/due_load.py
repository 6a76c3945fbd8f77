"""Reads of a learner's review load per day, for load balancing new intervals, and the previews that use it."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.db import connection

from apps.common.prepared import prepared_cursor
from apps.content.models import Card
from apps.srs.core.load_balancing import (
    WEEKDAYS,
    DueLoad,
    balance_days,
    preview_states,
    previews_balanced,
)
from apps.srs.core.population import CardConfigs
from apps.srs.core.scheduling import MemoryStage, MemoryState, Rating
from apps.srs.models import CardMemory, ReviewKind, ReviewLog, SchedulingSettings


def due_load_basis(settings: SchedulingSettings) -> DueLoad:
    """The learner's day boundary and easy days, with no counts yet: enough to say which days need counting."""
    return DueLoad(
        due_counts={},
        timezone=settings.timezone,
        day_start_hour=settings.day_start_hour,
        easy_days={WEEKDAYS.index(day): float(share) for day, share in (settings.easy_days or {}).items()},
    )


def _start_of(day: date, settings: SchedulingSettings) -> datetime:
    # As config.learner_day_bounds: the local calendar date at the day-start hour.
    return datetime.combine(day, time(settings.day_start_hour), tzinfo=ZoneInfo(settings.timezone))


def _merged(spans: Iterable[tuple[date, date]]) -> list[tuple[date, date]]:
    merged: list[tuple[date, date]] = []
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1] + timedelta(days=1):
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


# A moment's learner day, as scheduling.learner_day tells it, in SQL (parameters: time zone, day-start hour).
_DAY = "(({moment} AT TIME ZONE %s) - make_interval(hours => %s))::date"

# A learner's review cards due in a window, counted per learner day by the database (parameters: time
# zone and hour for the day, the learner, the window's start and end, then the visibility rule's).
_DUE_COUNTS_SQL = """
SELECT {day}, COUNT(*) FROM {memory} AS memory
WHERE memory.learner_id = %s AND memory.stage = {review} AND NOT memory.suspended
    AND memory.due >= %s AND memory.due < %s AND memory.card_id IN ({visible})
GROUP BY 1
"""


@functools.cache
def _due_counts_sql() -> tuple[str, tuple[Any, ...]]:
    """_DUE_COUNTS_SQL with the visibility rule as `visible_card_filter` compiles it: built once."""
    # Unordered: a sorted subquery cannot be joined into the query, and would list every visible card.
    visible, params = Card.objects.visible().order_by().values("pk").query.sql_with_params()
    sql = _DUE_COUNTS_SQL.format(
        day=_DAY.format(moment="memory.due"),
        memory=CardMemory._meta.db_table,
        review=int(MemoryStage.REVIEW),
        visible=visible,
    )
    return sql, tuple(params)


def due_load_get(
    *,
    learner_id: int,
    settings: SchedulingSettings,
    spans: Iterable[tuple[date, date]],
) -> DueLoad:
    """The learner's review cards due on each of their days in `spans` (first and last day, inclusive): one query.

    Counted are the cards a study session would show that day: in the review stage, not suspended,
    not archived. Days with nothing due are left out. The database counts the days, in one prepared
    statement over the days from the first span's to the last's.
    """
    basis = due_load_basis(settings)
    merged = _merged(spans)
    if not merged:
        return basis
    sql, visible_params = _due_counts_sql()
    start, end = _start_of(merged[0][0], settings), _start_of(merged[-1][1] + timedelta(days=1), settings)
    params = [settings.timezone, settings.day_start_hour, learner_id, start, end, *visible_params]
    with prepared_cursor(connection) as cursor:
        cursor.execute(sql, params)
        every_day: Mapping[date, int] = dict(cursor.fetchall())
    counts = {day: cards for day, cards in every_day.items() if _within(day, merged)}
    return DueLoad(
        due_counts=counts,
        timezone=basis.timezone,
        day_start_hour=basis.day_start_hour,
        easy_days=basis.easy_days,
    )


@dataclass(frozen=True)
class DayStartLoad:
    """A learner's due counts as they stood when their day began, which the day's own reviews do not shift.

    `counted_on`: each card reviewed since then, and the day it is counted on (its due day at the
    day's start; None where it was not in review then). Every other card is counted on its due day now.
    """

    load: DueLoad
    counted_on: dict[int, date | None]

    def leaving_day(self, card_id: int, before: MemoryState | None) -> date | None:
        """The day the card weighs on in these counts, which it leaves when reviewed."""
        if card_id in self.counted_on:
            return self.counted_on[card_id]
        if before is None or before.stage != MemoryStage.REVIEW:
            return None
        return self.load.day_of(before.due)


# The cards a learner reviewed since their day began, on PostgreSQL: one prepared statement, the days
# counted by the database as scheduling.learner_day counts them (parameters: time zone and hour for the day now,
# the same for the day then, then the review kind, the day's start, the learner, the day's start).
# Columns: the card; its learner day now if in review; its day when the day began if in review then;
# whether it weighs on the counts (not suspended, not archived); whether its earlier state is readable.
_REVIEWED_SINCE_SQL = f"""
SELECT memory.card_id,
    CASE WHEN memory.stage = {int(MemoryStage.REVIEW)} THEN {_DAY.format(moment="memory.due")} END,
    CASE WHEN jsonb_typeof(first.state_before) = 'object'
            AND (first.state_before ->> 'stage')::int = {int(MemoryStage.REVIEW)}
        THEN {_DAY.format(moment="(first.state_before ->> 'due')::timestamptz")} END,
    NOT memory.suspended AND NOT card.archived,
    first.state_before IS NULL OR jsonb_typeof(first.state_before) IN ('object', 'null')
FROM {CardMemory._meta.db_table} AS memory
INNER JOIN {Card._meta.db_table} AS card ON card.id = memory.card_id
INNER JOIN LATERAL (
    SELECT log.state_before FROM {ReviewLog._meta.db_table} AS log
    WHERE log.learner_id = memory.learner_id AND log.card_id = memory.card_id AND log.kind = %s
        AND log.reviewed_at >= %s
        AND NOT EXISTS (SELECT 1 FROM {ReviewLog._meta.db_table} AS undo WHERE undo.undo_of_id = log.id)
    ORDER BY log.reviewed_at, log.id
    LIMIT 1
) AS first ON true
WHERE memory.learner_id = %s AND memory.last_review >= %s
"""  # noqa: S608 - table names and stage numbers are ours; values are parameters


@dataclass(frozen=True)
class ReviewedSince:
    """A card reviewed since the learner's day began: its due day now and when the day began (each only
    if in review then), and whether it weighs on the due counts (not suspended, not archived)."""

    card_id: int
    day_now: date | None
    day_then: date | None
    weighs: bool


def reviewed_since(*, learner_id: int, settings: SchedulingSettings, day_start: datetime) -> list[ReviewedSince]:
    """The learner's cards reviewed since `day_start` (their first review since then not undone).

    The database reads the states and counts the days. Rows whose earlier state is not a state are
    left out, as they tell no day.
    """
    zone, hour = settings.timezone, settings.day_start_hour
    params = [zone, hour, zone, hour, ReviewKind.REVIEW.value, day_start, learner_id, day_start]
    with prepared_cursor(connection) as cursor:
        cursor.execute(_REVIEWED_SINCE_SQL, params)
        rows = cursor.fetchall()
    return [ReviewedSince(card, now, then, weighs) for card, now, then, weighs, readable in rows if readable]


def due_load_at_day_start(
    *, learner_id: int, settings: SchedulingSettings, spans: Iterable[tuple[date, date]], moment: datetime
) -> DayStartLoad:
    """`due_load_get`'s counts as at the start of the learner's day that holds `moment`: two queries.

    A card reviewed since the day began counts where its state before its first review of the day
    put it, so every preview and review of one day balances against the same counts: the interval a
    button shows is the one its review gives, however many reviews come between. The next day's
    counts hold this day's reviews.
    """
    spans = list(spans)
    load = due_load_get(learner_id=learner_id, settings=settings, spans=spans)
    day_start = _start_of(load.day_of(moment), settings)
    counts = dict(load.due_counts)
    counted_on: dict[int, date | None] = {}
    for reviewed in reviewed_since(learner_id=learner_id, settings=settings, day_start=day_start):
        counted_on[reviewed.card_id] = reviewed.day_then
        if not reviewed.weighs:
            continue
        now_day, then = reviewed.day_now, reviewed.day_then
        if now_day is not None and now_day in counts:
            counts[now_day] -= 1
            if counts[now_day] <= 0:
                del counts[now_day]
        if then is not None and _within(then, spans):
            counts[then] = counts.get(then, 0) + 1
    return DayStartLoad(load=replace(load, due_counts=counts), counted_on=counted_on)


def _within(day: date, spans: Iterable[tuple[date, date]]) -> bool:
    return any(first <= day <= last for first, last in spans)


def next_intervals_preview(
    *,
    learner_id: int,
    settings: SchedulingSettings,
    configs: CardConfigs,
    now: datetime,
    states: Mapping[int, MemoryState | None],
) -> dict[int, dict[Rating, timedelta]]:
    """Per card (by id, with its memory state): how long until due for each rating, if reviewed now.

    Each outcome is load balanced as the review itself will be, on the learner's due counts as their
    day began (`due_load_at_day_start`), read once for every card: each interval is the one the
    review gives on this learner day, whatever other reviews come first.
    """
    card_configs = {card_id: configs.of(card_id) for card_id in states}
    previews = {
        card_id: preview_states(state, now=now, config=card_configs[card_id], learner_id=learner_id, card_id=card_id)
        for card_id, state in states.items()
    }
    day_start: DayStartLoad | None = None
    if settings.load_balancing:
        basis = due_load_basis(settings)
        spans = [
            span
            for card_id, (at, afters) in previews.items()
            for after in afters.values()
            if (span := balance_days(after, reviewed_at=at, config=card_configs[card_id], load=basis)) is not None
        ]
        if spans:
            day_start = due_load_at_day_start(learner_id=learner_id, settings=settings, spans=spans, moment=now)
    if day_start is None:
        return previews_balanced(previews, states, config=configs.base, load=None)
    leaving = {card_id: day_start.leaving_day(card_id, state) for card_id, state in states.items()}
    return previews_balanced(
        previews,
        states,
        config=configs.base,
        load=day_start.load,
        leaving_days=leaving,
        card_configs=card_configs,
    )
