"""Load balancing: a new review interval moved, within the days fuzz allows, to the learner's least loaded day. Pure.

`fsrs` fuzzes every review-stage interval of three days or more: it draws a day from a range around
the interval FSRS computed. Load balancing keeps that range and picks from it the day with the
fewest cards already due (each day's count divided by its easy-day share); among equally loaded
days it keeps the one nearest to the day fuzz drew, so with an even load the outcome is fuzz's own.
The pick is a function of the range, the due counts in it and the card's fuzz seed (through the
drawn day) alone, so a preview made with the same counts is the interval the review then gives.

Only due dates move: FSRS computes the next review from the last review and the memory state, never
from the due date, so a balanced review leaves every later state as it was.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from fsrs.scheduler import FUZZ_RANGES

from apps.srs.scheduling import (
    MemoryStage,
    MemoryState,
    Rating,
    SchedulerConfig,
    card_fuzz_seed,
    review,
)

# fsrs fuzzes no interval shorter than this many days (`Scheduler._get_fuzzed_interval`).
FUZZ_SHORTEST_DAYS = 2.5
# fsrs never fuzzes an interval below two days.
FUZZ_LOWEST_DAYS = 2
WEEKDAYS: tuple[str, ...] = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


@dataclass(frozen=True)
class DueLoad:
    """What load balancing knows of a learner's workload: review cards due per local day, and their easy days.

    `due_counts` need only hold the days an interval may land on; a day it lacks has nothing due.
    `easy_days`: weekday (0 Monday to 6 Sunday) to the share of a normal day's load the learner
    wants on it, 0 to 1; a weekday it lacks takes a full load.
    """

    due_counts: Mapping[date, int]
    timezone: str = "UTC"
    day_start_hour: int = 0
    easy_days: Mapping[int, float] = field(default_factory=dict)

    def day_of(self, moment: datetime) -> date:
        return local_day(moment, timezone=self.timezone, day_start_hour=self.day_start_hour)


def local_day(moment: datetime, *, timezone: str, day_start_hour: int) -> date:
    """The learner's day a moment falls in: local wall-clock time less the day-start hour, as config's day bounds."""
    return (moment.astimezone(ZoneInfo(timezone)) - timedelta(hours=day_start_hour)).date()


def fuzz_interval_range(interval_days: int, *, maximum_interval: int) -> tuple[int, int] | None:
    """The range of days `fsrs` 6.3.2 fuzzes an interval into; None for an interval it leaves alone.

    The same arithmetic as fsrs's own range (a band of 15% of the days from 2.5 to 7, 10% from 7 to
    20 and 5% beyond, plus one day each side), which it keeps private to its fuzzing method.
    """
    if interval_days < FUZZ_SHORTEST_DAYS:
        return None
    delta = 1.0
    for band in FUZZ_RANGES:
        delta += band["factor"] * max(min(float(interval_days), band["end"]) - band["start"], 0.0)
    high = min(round(interval_days + delta), maximum_interval)
    low = min(max(FUZZ_LOWEST_DAYS, round(interval_days - delta)), high)
    return low, high


def interval_balanced(*, low: int, high: int, drawn: int, day_of: Callable[[int], date], load: DueLoad) -> int:
    """The interval in `low`..`high` (and `drawn`) whose day has the least load; ties go to the one nearest `drawn`.

    A day's load is (cards due + 1) / its easy-day share, so a half-share day takes about half the
    cards of a full one, and an empty day still counts as less loaded the larger its share. Days
    with a share of 0 are taken only when the range holds nothing else; then shares are ignored.
    `drawn` is the interval fuzz drew (fsrs's draw may land one day past its own range's end).
    """
    candidates = range(min(low, drawn), max(high, drawn) + 1)
    days = {interval: day_of(interval) for interval in candidates}
    shares = {interval: load.easy_days.get(day.weekday(), 1.0) for interval, day in days.items()}
    if all(share <= 0 for share in shares.values()):
        shares = dict.fromkeys(candidates, 1.0)

    def burden(interval: int) -> tuple[float, int, int]:
        share = shares[interval]
        weight = (load.due_counts.get(days[interval], 0) + 1) / share if share > 0 else math.inf
        return weight, abs(interval - drawn), interval

    return min(candidates, key=burden)


def _scheduled_interval_days(state: MemoryState, *, config: SchedulerConfig) -> int:
    # fsrs's own interval for a stability, before fuzz; private to its Scheduler, as the fuzz range is.
    return int(config.scheduler()._next_interval(stability=state.stability))


def balance_days(
    after: MemoryState, *, reviewed_at: datetime, config: SchedulerConfig, load: DueLoad
) -> tuple[date, date] | None:
    """The first and last of the learner's days load balancing may move `after`'s due date to; None if it may not.

    Only `load`'s time zone and day-start hour are read: this is the span whose due counts it needs.
    """
    span = interval_span(after, reviewed_at=reviewed_at, config=config)
    if span is None:
        return None
    low, high = span
    return load.day_of(reviewed_at + timedelta(days=low)), load.day_of(reviewed_at + timedelta(days=high))


def interval_span(after: MemoryState, *, reviewed_at: datetime, config: SchedulerConfig) -> tuple[int, int] | None:
    """The intervals in days load balancing may choose among for `after`: fuzz's range, and the day fuzz drew."""
    if after.stage != MemoryStage.REVIEW:
        return None
    fuzz = fuzz_interval_range(_scheduled_interval_days(after, config=config), maximum_interval=config.maximum_interval)
    if fuzz is None:
        return None
    drawn = (after.due - reviewed_at).days
    return min(fuzz[0], drawn), max(fuzz[1], drawn)


def due_balanced(
    before: MemoryState | None, after: MemoryState, *, reviewed_at: datetime, config: SchedulerConfig, load: DueLoad
) -> MemoryState:
    """`after`, the state a review at `reviewed_at` left, with its due date moved to the least loaded day fuzz allows.

    The card itself does not weigh on the day it leaves: reviewed early, its old due day is counted
    without it, in a preview as in the review.
    """
    if after.stage != MemoryStage.REVIEW:
        return after
    fuzz = fuzz_interval_range(_scheduled_interval_days(after, config=config), maximum_interval=config.maximum_interval)
    if fuzz is None:
        return after
    counts = load.due_counts
    if before is not None and before.stage == MemoryStage.REVIEW:
        leaving = load.day_of(before.due)
        if counts.get(leaving, 0) > 0:
            counts = {**counts, leaving: counts[leaving] - 1}
    drawn = (after.due - reviewed_at).days
    chosen = interval_balanced(
        low=fuzz[0],
        high=fuzz[1],
        drawn=drawn,
        day_of=lambda interval: load.day_of(reviewed_at + timedelta(days=interval)),
        load=replace(load, due_counts=counts),
    )
    if chosen == drawn:
        return after
    return replace(after, due=reviewed_at + timedelta(days=chosen))


def preview_states(
    state: MemoryState | None, *, now: datetime, config: SchedulerConfig, learner_id: int, card_id: int
) -> tuple[datetime, dict[Rating, MemoryState]]:
    """The time a review now would be made at, and the state each rating would leave, before load balancing.

    As `scheduling.preview_intervals`: a review cannot precede the card's last one, so it counts from there.
    """
    at = max(now, state.last_review) if state is not None else now
    seed = card_fuzz_seed(learner_id=learner_id, card_id=card_id, state=state)
    return at, {
        rating: review(state, rating=rating, reviewed_at=at, config=config, fuzz_seed=seed) for rating in Rating
    }


def preview_intervals_balanced(
    state: MemoryState | None,
    afters: Mapping[Rating, MemoryState],
    *,
    reviewed_at: datetime,
    config: SchedulerConfig,
    load: DueLoad | None,
) -> dict[Rating, timedelta]:
    """How long after `reviewed_at` the card falls due for each rating, balanced on `load` (None: not balanced)."""
    return {
        rating: (
            due_balanced(state, after, reviewed_at=reviewed_at, config=config, load=load) if load is not None else after
        ).due
        - reviewed_at
        for rating, after in afters.items()
    }
