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

import bisect
import functools
import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from types import EllipsisType

from apps.srs.core.scheduling import (
    MemoryStage,
    MemoryState,
    Rating,
    SchedulerConfig,
    card_fuzz_seed,
    fuzz_range,
    intervals_ordered,
    learner_day,
    review_outcomes,
    zone_named,
)

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
        return learner_day(moment, timezone=self.timezone, day_start_hour=self.day_start_hour)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_DAY_MICROSECONDS = 86_400_000_000
# Day starts are worked out this many days at a time, per time zone and start hour; a block takes about 10 kB.
_BLOCK_DAYS = 256


@functools.lru_cache(maxsize=256)
def _day_starts_block(timezone: str, day_start_hour: int, block: int) -> tuple[tuple[int | None, ...], tuple[int, ...]]:
    """When each day of a block of a learner's days starts, and which of its days are not plain 24-hour days.

    The block holds the days whose ordinals divided by _BLOCK_DAYS give `block`. Starts are in
    microseconds since the epoch, for the block's days and the day after; None where the zone skips
    or repeats the start hour. A day is irregular when its start or the next day's is None, or they
    are not exactly 24 hours apart (the clocks change that day).
    """
    zone = zone_named(timezone)
    hour = time(day_start_hour)
    first = block * _BLOCK_DAYS
    starts: list[int | None] = []
    for ordinal in range(first, first + _BLOCK_DAYS + 1):
        start: int | None = None
        try:
            local = datetime.combine(date.fromordinal(ordinal), hour, tzinfo=zone)
            if local.utcoffset() == local.replace(fold=1).utcoffset():
                start = (local - _EPOCH) // _MICROSECOND
        except (OverflowError, ValueError):
            start = None
        starts.append(start)
    irregular = tuple(
        first + offset
        for offset, (start, end) in enumerate(itertools.pairwise(starts))
        if start is None or end is None or end - start != _DAY_MICROSECONDS
    )
    return tuple(starts), irregular


def _day_start(timezone: str, day_start_hour: int, ordinal: int) -> int | None:
    block, offset = divmod(ordinal, _BLOCK_DAYS)
    return _day_starts_block(timezone, day_start_hour, block)[0][offset]


def _first_irregular(timezone: str, day_start_hour: int, first: int, last: int) -> int | None:
    """The first of the days `first`..`last` (ordinals) that is not a plain 24-hour day; None if none is."""
    for block in range(first // _BLOCK_DAYS, last // _BLOCK_DAYS + 1):
        irregular = _day_starts_block(timezone, day_start_hour, block)[1]
        index = bisect.bisect_left(irregular, first)
        if index < len(irregular) and irregular[index] <= last:
            return irregular[index]
    return None


class _DaysAfter:
    """The learner's day a review time plus a whole number of days falls on, as `learner_day` gives it.

    Balancing looks at every day of each card's fuzz range for each rating, and a study queue's
    cards are all reviewed at one time: they share one of these. After a UTC review time a day is
    found among the learner's day starts (kept per time zone and start hour) rather than converted
    to local time: a moment between the starts of two consecutive days whose start hour the zone
    neither skips nor repeats is on the first of them, as the wall clock reads that hour at no other
    moment; and through a run of days each exactly 24 hours long, each day later is the next day.
    Other moments, and every day after a review time in another zone, are converted.
    """

    __slots__ = (
        "_day_start_hour",
        "_first_ordinal",
        "_moment",
        "_ordinals",
        "_reviewed_at",
        "_start",
        "_timezone",
        "_zone",
    )

    def __init__(self, reviewed_at: datetime, *, timezone: str, day_start_hour: int) -> None:
        self._reviewed_at = reviewed_at
        self._timezone = timezone
        self._day_start_hour = day_start_hour
        self._zone = zone_named(timezone)
        self._start = timedelta(hours=day_start_hour)
        self._ordinals: dict[int, int] = {}
        # Adding days to a UTC time adds 24 hours each; in other zones it adds them to the local wall clock.
        self._moment = (reviewed_at - _EPOCH) // _MICROSECOND if reviewed_at.tzinfo is UTC else None
        self._first_ordinal = self._converted(0)

    def _converted(self, interval: int) -> int:
        moment = self._reviewed_at + timedelta(days=interval)
        return (moment.astimezone(self._zone) - self._start).date().toordinal()

    def _placed(self, interval: int) -> int:
        if self._moment is not None:
            moment = self._moment + interval * _DAY_MICROSECONDS
            guess = self._first_ordinal + interval
            for ordinal in (guess, guess - 1, guess + 1):
                begins = _day_start(self._timezone, self._day_start_hour, ordinal)
                ends = _day_start(self._timezone, self._day_start_hour, ordinal + 1)
                if begins is not None and ends is not None and begins <= moment < ends:
                    return ordinal
        return self._converted(interval)

    def ordinal(self, interval: int) -> int:
        """The ordinal of the day `interval` days after the review time falls on."""
        ordinal = self._ordinals.get(interval)
        if ordinal is None:
            ordinal = self._ordinals[interval] = self._placed(interval)
        return ordinal

    def __call__(self, interval: int) -> date:
        return date.fromordinal(self.ordinal(interval))

    def ordinals(self, first: int, last: int) -> list[int]:
        """The ordinals of the days `first`..`last` days after the review time fall on, in that order."""
        if self._moment is None:
            return [self.ordinal(interval) for interval in range(first, last + 1)]
        ordinals: list[int] = []
        interval = first
        while interval <= last:
            ordinal = self.ordinal(interval)
            # Days ordinal..ordinal+n plain: the n intervals after this one fall on the n days after its.
            end = ordinal + last - interval
            irregular = _first_irregular(self._timezone, self._day_start_hour, ordinal, end)
            run = end - ordinal if irregular is None else max(irregular - ordinal - 1, 0)
            ordinals.extend(range(ordinal, ordinal + run + 1))
            interval += run + 1
        return ordinals


@functools.lru_cache(maxsize=64)
def _shared_days_after(reviewed_at: datetime, timezone: str, day_start_hour: int) -> _DaysAfter:
    return _DaysAfter(reviewed_at, timezone=timezone, day_start_hour=day_start_hour)


def _days_after(reviewed_at: datetime, load: DueLoad) -> _DaysAfter:
    # Shared only for UTC times: equal times in other zones can differ in the wall clock days are added to.
    if reviewed_at.tzinfo is UTC:
        return _shared_days_after(reviewed_at, load.timezone, load.day_start_hour)
    return _DaysAfter(reviewed_at, timezone=load.timezone, day_start_hour=load.day_start_hour)


@functools.lru_cache(maxsize=8192)
def _stability_fuzz_range(config: SchedulerConfig, stability: float) -> tuple[int, int] | None:
    # fsrs's own interval for a stability, before fuzz, is private to its Scheduler, as the fuzz range is.
    # Memoised: a study queue asks for it twice per review-stage outcome, for the days to count and the pick.
    return fuzz_range(
        int(config.scheduler()._next_interval(stability=stability)), maximum_interval=config.maximum_interval
    )


def interval_balanced(*, low: int, high: int, drawn: int, day_of: Callable[[int], date], load: DueLoad) -> int:
    """The interval in `low`..`high` (and `drawn`) whose day has the least load; ties go to the one nearest `drawn`.

    A day's load is (cards due + 1) / its easy-day share, so a half-share day takes about half the
    cards of a full one, and an empty day still counts as less loaded the larger its share. Days
    with a share of 0 are taken only when the range holds nothing else; then shares are ignored.
    `drawn` is the interval fuzz drew (fsrs's draw may land one day past its own range's end).
    """
    first, last = min(low, drawn), max(high, drawn)
    days = [day_of(interval) for interval in range(first, last + 1)]
    shares = _weekday_shares(load)
    weights = [_weight(load.due_counts.get(day, 0), shares[day.weekday()]) for day in days]
    if math.inf in weights and all(shares[day.weekday()] <= 0 for day in days):
        weights = [_weight(load.due_counts.get(day, 0), 1.0) for day in days]
    return first + _least_index(weights, drawn - first)


def _weekday_shares(load: DueLoad) -> tuple[float, ...]:
    return tuple(load.easy_days.get(weekday, 1.0) for weekday in range(7))


def _weight(count: int, share: float) -> float:
    return (count + 1) / share if share > 0 else math.inf


def _least_index(weights: list[float], drawn: int) -> int:
    """The index of the least weight; among equals, the one nearest `drawn` (an index), then the earlier."""
    least = min(weights)
    if weights.count(least) == 1:
        return weights.index(least)
    for distance in range(len(weights)):
        if distance <= drawn and weights[drawn - distance] == least:
            return drawn - distance
        if drawn + distance < len(weights) and weights[drawn + distance] == least:
            return drawn + distance
    # Unreachable: `least` is one of the weights, and every index lies within `len(weights)` of `drawn`.
    return weights.index(least)


def _ordinal_counts(load: DueLoad) -> dict[int, int]:
    """The load's counts by day ordinal: a plain date's, as a date looks them up (a datetime is no date to it)."""
    return {
        day.toordinal(): count
        for day, count in load.due_counts.items()
        if isinstance(day, date) and not isinstance(day, datetime)
    }


class _Balancer:
    """Balances the outcomes of reviews at one time on one DueLoad.

    The load must not change while it is in use: a study queue's previews share one, a review makes its own.
    `ordinal_counts` is `_ordinal_counts(load)`, for the many picks that repay reading every count once.
    """

    __slots__ = ("_counts", "_days", "_ordinal_counts", "_shares", "config", "reviewed_at")

    def __init__(
        self,
        load: DueLoad,
        *,
        reviewed_at: datetime,
        config: SchedulerConfig,
        ordinal_counts: Mapping[int, int] | None = None,
    ) -> None:
        self.reviewed_at = reviewed_at
        self.config = config
        self._counts = load.due_counts
        self._ordinal_counts = ordinal_counts
        shares = _weekday_shares(load)
        # By weekday of a day ordinal (ordinal 1 is a Monday); None: every day takes a full load.
        self._shares = None if all(share == 1.0 for share in shares) else tuple(shares[(o + 6) % 7] for o in range(7))
        self._days = _days_after(reviewed_at, load)

    def interval(self, after: MemoryState, *, leaving: date | None) -> int | None:
        """The interval in days balancing moves `after` to; None where it stays as it is.

        `leaving`: the day the reviewed card was due on, if it was in review: it weighs there no more.
        """
        span = _balance_span(after, reviewed_at=self.reviewed_at, config=self.config)
        if span is None:
            return None
        first, last, drawn = span
        ordinals = self._days.ordinals(first, last)
        counts: list[float]
        if self._ordinal_counts is not None:
            count_of = self._ordinal_counts.get
            counts = [count_of(ordinal, 0) for ordinal in ordinals]
        else:
            count_on = self._counts.get
            counts = [count_on(date.fromordinal(ordinal), 0) for ordinal in ordinals]
        shares = self._shares
        # With full shares a day's weight is its count + 1 over 1.0: the counts order and tie as the weights do.
        weights: list[float] = (
            counts
            if shares is None
            # As _weight(), spelled out: this is the innermost loop of a study queue's previews.
            else [
                (count + 1) / share if (share := shares[ordinal % 7]) > 0 else math.inf
                for count, ordinal in zip(counts, ordinals, strict=True)
            ]
        )
        if leaving is not None and (leaving_count := self._counts.get(leaving, 0)) > 0:
            leaving_ordinal = leaving.toordinal()
            if leaving_ordinal in ordinals:
                weight = (
                    leaving_count - 1 if shares is None else _weight(leaving_count - 1, shares[leaving_ordinal % 7])
                )
                for index, ordinal in enumerate(ordinals):
                    if ordinal == leaving_ordinal:
                        weights[index] = weight
        if shares is not None and math.inf in weights and all(shares[ordinal % 7] <= 0 for ordinal in ordinals):
            days = [date.fromordinal(ordinal) for ordinal in ordinals]
            weights = []
            for day in days:
                count = self._counts.get(day, 0)
                weights.append(_weight(count - 1 if count > 0 and day == leaving else count, 1.0))
        chosen = first + _least_index(weights, drawn - first)
        return None if chosen == drawn else chosen


def _balance_span(after: MemoryState, *, reviewed_at: datetime, config: SchedulerConfig) -> tuple[int, int, int] | None:
    """The first and last interval in days balancing may choose for `after`, and the one fuzz drew; None: none."""
    if after.stage != MemoryStage.REVIEW:
        return None
    fuzz = _stability_fuzz_range(config, after.stability)
    if fuzz is None:
        return None
    drawn = (after.due - reviewed_at).days
    return min(fuzz[0], drawn), max(fuzz[1], drawn), drawn


def _leaving_day(before: MemoryState | None, load: DueLoad) -> date | None:
    if before is None or before.stage != MemoryStage.REVIEW:
        return None
    return load.day_of(before.due)


def balance_days(
    after: MemoryState, *, reviewed_at: datetime, config: SchedulerConfig, load: DueLoad
) -> tuple[date, date] | None:
    """The first and last of the learner's days load balancing may move `after`'s due date to; None if it may not.

    Only `load`'s time zone and day-start hour are read: this is the span whose due counts it needs.
    """
    span = _balance_span(after, reviewed_at=reviewed_at, config=config)
    if span is None:
        return None
    day_of = _days_after(reviewed_at, load)
    return day_of(span[0]), day_of(span[1])


def interval_span(after: MemoryState, *, reviewed_at: datetime, config: SchedulerConfig) -> tuple[int, int] | None:
    """The intervals in days load balancing may choose among for `after`: fuzz's range, and the day fuzz drew."""
    span = _balance_span(after, reviewed_at=reviewed_at, config=config)
    return None if span is None else (span[0], span[1])


def due_balanced(
    before: MemoryState | None,
    after: MemoryState,
    *,
    reviewed_at: datetime,
    config: SchedulerConfig,
    load: DueLoad,
    rating: Rating | None = None,
    outcomes: Mapping[Rating, MemoryState] | None = None,
    leaving: date | EllipsisType | None = ...,
) -> MemoryState:
    """`after`, the state a review at `reviewed_at` left, with its due date moved to the least loaded day fuzz allows.

    The card itself does not weigh on the day it leaves: reviewed early, its old due day is counted
    without it, in a preview as in the review. With the review's `rating` and every rating's
    `outcomes` (`review_outcomes`), the intervals are balanced as a preview balances them, all
    ratings together in Anki's order, and the one `rating` gives is taken. `leaving`: the day the card
    weighs on in `load`, where that is not `before`'s due day.
    """
    if _balance_span(after, reviewed_at=reviewed_at, config=config) is None:
        return after
    balancer = _Balancer(load, reviewed_at=reviewed_at, config=config)
    if isinstance(leaving, EllipsisType):
        leaving = _leaving_day(before, load)
    if rating is not None and outcomes is not None:
        interval = _intervals_balanced(outcomes, balancer=balancer, leaving=leaving, before=before)[rating]
        return after if interval == after.due - reviewed_at else replace(after, due=reviewed_at + interval)
    chosen = balancer.interval(after, leaving=leaving)
    if chosen is None:
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
    return at, review_outcomes(state, reviewed_at=at, config=config, fuzz_seed=seed)


def preview_intervals_balanced(
    state: MemoryState | None,
    afters: Mapping[Rating, MemoryState],
    *,
    reviewed_at: datetime,
    config: SchedulerConfig,
    load: DueLoad | None,
) -> dict[Rating, timedelta]:
    """How long after `reviewed_at` the card falls due for each rating, balanced on `load` (None: not balanced)."""
    if load is None:
        return {rating: after.due - reviewed_at for rating, after in afters.items()}
    balancer = _Balancer(load, reviewed_at=reviewed_at, config=config)
    return _intervals_balanced(afters, balancer=balancer, leaving=_leaving_day(state, load), before=state)


def previews_balanced(
    previews: Mapping[int, tuple[datetime, Mapping[Rating, MemoryState]]],
    states: Mapping[int, MemoryState | None],
    *,
    config: SchedulerConfig,
    load: DueLoad | None,
    leaving_days: Mapping[int, date | None] | None = None,
    card_configs: Mapping[int, SchedulerConfig] | None = None,
) -> dict[int, dict[Rating, timedelta]]:
    """`preview_intervals_balanced` for many cards: by card id, its review time and outcomes, and its memory state.

    Cards reviewed at the same time share the days their intervals land on and the load's counts.
    `leaving_days`: by card id, the day each weighs on in `load` (default: its state's due day).
    `card_configs`: by card id, a config of its own (a course's memory model) in place of `config`.
    """
    if load is None:
        return {
            card_id: {rating: after.due - at for rating, after in afters.items()}
            for card_id, (at, afters) in previews.items()
        }
    ordinal_counts = _ordinal_counts(load)
    # Keyed by zone and fold too: equal times on other wall clocks can land on other days.
    balancers: dict[tuple[datetime, object, int, SchedulerConfig], _Balancer] = {}
    intervals: dict[int, dict[Rating, timedelta]] = {}
    for card_id, (at, afters) in previews.items():
        card_config = card_configs.get(card_id, config) if card_configs is not None else config
        key = (at, at.tzinfo, at.fold, card_config)
        balancer = balancers.get(key)
        if balancer is None:
            balancer = balancers[key] = _Balancer(
                load, reviewed_at=at, config=card_config, ordinal_counts=ordinal_counts
            )
        state = states[card_id]
        leaving = (
            leaving_days[card_id] if leaving_days is not None and card_id in leaving_days else _leaving_day(state, load)
        )
        intervals[card_id] = _intervals_balanced(afters, balancer=balancer, leaving=leaving, before=state)
    return intervals


def _intervals_balanced(
    afters: Mapping[Rating, MemoryState], *, balancer: _Balancer, leaving: date | None, before: MemoryState | None
) -> dict[Rating, timedelta]:
    """Each rating's interval balanced on its own, then put back in Anki's order (`intervals_ordered`)."""
    reviewed_at = balancer.reviewed_at
    intervals: dict[Rating, timedelta] = {}
    for rating, after in afters.items():
        chosen = balancer.interval(after, leaving=leaving)
        intervals[rating] = after.due - reviewed_at if chosen is None else timedelta(days=chosen)
    if len(intervals) < len(Rating):
        return intervals
    return intervals_ordered(
        intervals,
        stages={rating: after.stage for rating, after in afters.items()},
        before=before.stage if before is not None else None,
        good_stability=afters[Rating.GOOD].stability,
        config=balancer.config,
    )
