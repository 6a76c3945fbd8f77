"""Load balancing gives what its plain definition gives, day for day, in every time zone. No database.

The reference below is the definition written the simplest way (each day converted to local time,
every candidate weighed afresh); the module computes the same with shared days and weights.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from apps.srs.core import load_balancing
from apps.srs.core.load_balancing import (
    DueLoad,
    balance_days,
    due_balanced,
    interval_balanced,
    interval_span,
    preview_intervals_balanced,
    preview_states,
    previews_balanced,
)
from apps.srs.core.scheduling import MemoryStage, MemoryState, Rating, SchedulerConfig, fuzz_range, learner_day

DAY = timedelta(days=1)
# Zones whose clocks change, some around midnight (Santiago, Havana, Beirut), by half an hour (Lord
# Howe), for Ramadan (Casablanca), or by a whole day (Apia skipped 30 December 2011).
ZONES = (
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "America/Santiago",
    "America/Havana",
    "Asia/Beirut",
    "Australia/Lord_Howe",
    "Africa/Casablanca",
    "Pacific/Apia",
    "Pacific/Chatham",
    "Asia/Kolkata",
)
# Hypothesis bounds generated times with naive ones and attaches the zone itself.
EARLIEST = datetime(1995, 1, 1)  # noqa: DTZ001
LATEST = datetime(2060, 1, 1)  # noqa: DTZ001


# --- the reference: the definition, spelled out --------------------------------------------------------------------


def reference_local_day(moment: datetime, *, timezone: str, day_start_hour: int) -> date:
    return (moment.astimezone(ZoneInfo(timezone)) - timedelta(hours=day_start_hour)).date()


def reference_interval_balanced(
    *, low: int, high: int, drawn: int, day_of: Callable[[int], date], load: DueLoad
) -> int:
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


def reference_day_of(load: DueLoad, moment: datetime) -> date:
    return reference_local_day(moment, timezone=load.timezone, day_start_hour=load.day_start_hour)


def reference_interval_span(
    after: MemoryState, *, reviewed_at: datetime, config: SchedulerConfig
) -> tuple[int, int] | None:
    if after.stage != MemoryStage.REVIEW:
        return None
    scheduled = int(config.scheduler()._next_interval(stability=after.stability))
    fuzz = fuzz_range(scheduled, maximum_interval=config.maximum_interval)
    if fuzz is None:
        return None
    drawn = (after.due - reviewed_at).days
    return min(fuzz[0], drawn), max(fuzz[1], drawn)


def reference_balance_days(
    after: MemoryState, *, reviewed_at: datetime, config: SchedulerConfig, load: DueLoad
) -> tuple[date, date] | None:
    span = reference_interval_span(after, reviewed_at=reviewed_at, config=config)
    if span is None:
        return None
    low, high = span
    return reference_day_of(load, reviewed_at + low * DAY), reference_day_of(load, reviewed_at + high * DAY)


def reference_due_balanced(
    before: MemoryState | None, after: MemoryState, *, reviewed_at: datetime, config: SchedulerConfig, load: DueLoad
) -> MemoryState:
    if after.stage != MemoryStage.REVIEW:
        return after
    scheduled = int(config.scheduler()._next_interval(stability=after.stability))
    fuzz = fuzz_range(scheduled, maximum_interval=config.maximum_interval)
    if fuzz is None:
        return after
    counts = load.due_counts
    if before is not None and before.stage == MemoryStage.REVIEW:
        leaving = reference_day_of(load, before.due)
        if counts.get(leaving, 0) > 0:
            counts = {**counts, leaving: counts[leaving] - 1}
    drawn = (after.due - reviewed_at).days
    chosen = reference_interval_balanced(
        low=fuzz[0],
        high=fuzz[1],
        drawn=drawn,
        day_of=lambda interval: reference_day_of(load, reviewed_at + timedelta(days=interval)),
        load=replace(load, due_counts=counts),
    )
    if chosen == drawn:
        return after
    return replace(after, due=reviewed_at + timedelta(days=chosen))


def reference_in_anki_order(
    state: MemoryState | None,
    afters: Mapping[Rating, MemoryState],
    intervals: dict[Rating, timedelta],
    config: SchedulerConfig,
) -> dict[Rating, timedelta]:
    """Anki's order of passing intervals, spelled out: in review, Hard >= 1 day, Good > Hard, Easy > Good;
    otherwise an Easy that graduates lies past Good's days (or the interval Good's stability would get)."""
    ordered = dict(intervals)
    cap = config.maximum_interval
    in_review = {rating for rating, after in afters.items() if after.stage == MemoryStage.REVIEW}
    if state is not None and state.stage == MemoryStage.REVIEW:
        floor = 1
        for rating in (Rating.HARD, Rating.GOOD, Rating.EASY):
            if rating in in_review:
                ordered[rating] = max(ordered[rating], timedelta(days=min(floor, cap)))
                floor = ordered[rating].days + 1
    elif Rating.EASY in in_review:
        good = afters[Rating.GOOD]
        good_days = (
            ordered[Rating.GOOD].days
            if Rating.GOOD in in_review
            else config.scheduler()._next_interval(stability=good.stability)
        )
        ordered[Rating.EASY] = max(ordered[Rating.EASY], timedelta(days=min(good_days + 1, cap)))
    return ordered


def reference_preview_intervals_balanced(
    state: MemoryState | None,
    afters: Mapping[Rating, MemoryState],
    *,
    reviewed_at: datetime,
    config: SchedulerConfig,
    load: DueLoad | None,
) -> dict[Rating, timedelta]:
    intervals = {
        rating: (
            reference_due_balanced(state, after, reviewed_at=reviewed_at, config=config, load=load)
            if load is not None
            else after
        ).due
        - reviewed_at
        for rating, after in afters.items()
    }
    return reference_in_anki_order(state, afters, intervals, config) if load is not None else intervals


# --- generated loads and outcomes ----------------------------------------------------------------------------------


def review_times(zones: st.SearchStrategy[tzinfo] | None = None) -> st.SearchStrategy[datetime]:
    return st.datetimes(min_value=EARLIEST, max_value=LATEST, timezones=st.just(UTC) if zones is None else zones)


other_zones = st.sampled_from([timezone(timedelta(hours=5, minutes=30)), ZoneInfo("America/Santiago")])
# Mostly UTC, as requests and stored times are; sometimes another zone, whose wall clock days are added to.
any_review_time = review_times() | review_times(other_zones)
shares = st.sampled_from([0.0, 0.5, 1.0]) | st.floats(min_value=0.0, max_value=1.0)
easy_days: st.SearchStrategy[dict[int, float]] = st.one_of(
    st.just({}),
    st.dictionaries(st.integers(min_value=0, max_value=6), shares, max_size=7),
    st.just(dict.fromkeys(range(7), 0.0)),
    st.just({5: 0.0, 6: 0.0}),
)
configs = st.builds(
    SchedulerConfig,
    desired_retention=st.sampled_from([0.8, 0.9, 0.95]),
    maximum_interval=st.sampled_from([36_500, 365, 40, 3]),
)


@st.composite
def outcomes(draw: st.DrawFn, reviewed_at: datetime, config: SchedulerConfig) -> MemoryState:
    """A state a review at `reviewed_at` may leave: in review with its due date anywhere fuzz may draw, or learning."""
    stability = draw(st.sampled_from([0.3, 2.0, 3.0, 11.0, 120.0]) | st.floats(min_value=0.01, max_value=3000.0))
    stage = draw(st.sampled_from([MemoryStage.REVIEW, MemoryStage.REVIEW, MemoryStage.LEARNING]))
    scheduled = int(config.scheduler()._next_interval(stability=stability))
    low, high = fuzz_range(scheduled, maximum_interval=config.maximum_interval) or (scheduled, scheduled)
    drawn = draw(st.integers(min_value=max(1, low - 1), max_value=high + 1))
    return MemoryState(
        stage=stage,
        step=None if stage == MemoryStage.REVIEW else 1,
        stability=stability,
        difficulty=5.0,
        due=(reviewed_at + timedelta(days=drawn)).astimezone(UTC),
        last_review=reviewed_at.astimezone(UTC),
        reps=3,
    )


@st.composite
def befores(draw: st.DrawFn, reviewed_at: datetime, spans: list[tuple[int, int]]) -> MemoryState | None:
    """The state before the review: new, learning, or in review due before, after or among the days a pick may take."""
    kind = draw(st.sampled_from(["new", "learning", "review"]))
    if kind == "new":
        return None
    among: bool = draw(st.booleans())
    if spans and among:
        first, last = draw(st.sampled_from(spans))
        days = draw(st.integers(min_value=first - 1, max_value=last + 1))
    else:
        days = draw(st.integers(min_value=-30, max_value=400))
    due = reviewed_at + days * DAY + draw(st.timedeltas(min_value=timedelta(0), max_value=DAY))
    return MemoryState(
        stage=MemoryStage.REVIEW if kind == "review" else MemoryStage.LEARNING,
        step=None if kind == "review" else 0,
        stability=10.0,
        difficulty=5.0,
        due=due.astimezone(UTC),
        last_review=(reviewed_at - 10 * DAY).astimezone(UTC),
        reps=2,
    )


@st.composite
def loads(draw: st.DrawFn, reviewed_at: datetime, spans: list[tuple[int, int]]) -> DueLoad:
    """One to three cards on most days around the spans, so ties are common and a card leaving a day tells."""
    zone = draw(st.sampled_from(ZONES))
    hour = draw(st.integers(min_value=0, max_value=23))
    rng = draw(st.randoms(use_true_random=False))
    counts: dict[date, int] = {}
    for first, last in spans:
        for interval in range(first - 2, last + 3):
            if rng.random() < 0.8:
                day = reference_local_day(reviewed_at + interval * DAY, timezone=zone, day_start_hour=hour)
                counts[day] = rng.randint(1, 3) if rng.random() < 0.9 else 0
    return DueLoad(due_counts=counts, timezone=zone, day_start_hour=hour, easy_days=draw(easy_days))


@st.composite
def cases(draw: st.DrawFn) -> tuple[datetime, SchedulerConfig, MemoryState | None, dict[Rating, MemoryState], DueLoad]:
    reviewed_at = draw(any_review_time)
    config = draw(configs)
    afters = {rating: draw(outcomes(reviewed_at, config)) for rating in Rating}
    spans = [
        span
        for after in afters.values()
        if (span := reference_interval_span(after, reviewed_at=reviewed_at, config=config)) is not None
    ]
    before = draw(befores(reviewed_at, spans))
    if before is not None and before.stage == MemoryStage.REVIEW:
        leaving = (before.due - reviewed_at).days
        spans.append((leaving, leaving))
    return reviewed_at, config, before, afters, draw(loads(reviewed_at, spans))


# --- the properties ------------------------------------------------------------------------------------------------


@settings(max_examples=250, deadline=None)
@given(case=cases())
def test_balancing_is_the_reference(case):
    reviewed_at, config, before, afters, load = case
    for after in afters.values():
        assert due_balanced(before, after, reviewed_at=reviewed_at, config=config, load=load) == reference_due_balanced(
            before, after, reviewed_at=reviewed_at, config=config, load=load
        )
        assert balance_days(after, reviewed_at=reviewed_at, config=config, load=load) == reference_balance_days(
            after, reviewed_at=reviewed_at, config=config, load=load
        )
        assert interval_span(after, reviewed_at=reviewed_at, config=config) == reference_interval_span(
            after, reviewed_at=reviewed_at, config=config
        )
    for balancing in (load, None):
        expected = reference_preview_intervals_balanced(
            before, afters, reviewed_at=reviewed_at, config=config, load=balancing
        )
        assert (
            preview_intervals_balanced(before, afters, reviewed_at=reviewed_at, config=config, load=balancing)
            == expected
        )
        assert previews_balanced({1: (reviewed_at, afters)}, {1: before}, config=config, load=balancing) == {
            1: expected
        }


@settings(max_examples=300, deadline=None)
@given(
    reviewed_at=any_review_time,
    low=st.integers(min_value=0, max_value=400),
    width=st.integers(min_value=0, max_value=40),
    drawn_at=st.integers(min_value=-1, max_value=41),
    case=st.data(),
)
def test_the_pick_is_the_reference(reviewed_at, low, width, drawn_at, case):
    high = low + width
    drawn = max(0, low + min(drawn_at, width + 1))
    load = case.draw(loads(reviewed_at, [(min(low, drawn), max(high, drawn))]))

    def day_of(interval: int) -> date:
        return reference_day_of(load, reviewed_at + interval * DAY)

    assert interval_balanced(low=low, high=high, drawn=drawn, day_of=day_of, load=load) == (
        reference_interval_balanced(low=low, high=high, drawn=drawn, day_of=day_of, load=load)
    )


@settings(max_examples=300, deadline=None)
@given(
    reviewed_at=any_review_time,
    zone=st.sampled_from(ZONES),
    hour=st.integers(min_value=0, max_value=23),
    first=st.integers(min_value=0, max_value=20_000) | st.integers(min_value=0, max_value=400),
    width=st.integers(min_value=0, max_value=400),
)
def test_the_days_after_a_review_are_the_local_days(reviewed_at, zone, hour, first, width):
    load = DueLoad(due_counts={}, timezone=zone, day_start_hour=hour)
    days = load_balancing._days_after(reviewed_at, load)
    expected = [
        reference_local_day(reviewed_at + interval * DAY, timezone=zone, day_start_hour=hour)
        for interval in range(first, first + width + 1)
    ]
    assert [date.fromordinal(ordinal) for ordinal in days.ordinals(first, first + width)] == expected
    assert [days(interval) for interval in range(first, first + width + 1)] == expected
    assert learner_day(reviewed_at, timezone=zone, day_start_hour=hour) == reference_local_day(
        reviewed_at, timezone=zone, day_start_hour=hour
    )


def test_the_days_around_every_clock_change_are_the_local_days():
    """Every zone and start hour, from review times either side of each day start over the years with odd changes."""
    for zone in ZONES:
        for hour in range(24):
            for year, month in ((2011, 12), (2019, 4), (2026, 3), (2026, 10)):
                start = datetime(year, month, 1, tzinfo=ZoneInfo(zone)).replace(hour=hour)
                for minutes in (-61, -1, 0, 30, 12 * 60):
                    reviewed_at = (start + timedelta(minutes=minutes)).astimezone(UTC)
                    load = DueLoad(due_counts={}, timezone=zone, day_start_hour=hour)
                    days = load_balancing._days_after(reviewed_at, load)
                    assert [date.fromordinal(ordinal) for ordinal in days.ordinals(0, 70)] == [
                        reference_local_day(reviewed_at + interval * DAY, timezone=zone, day_start_hour=hour)
                        for interval in range(71)
                    ], (zone, hour, reviewed_at)


@settings(max_examples=30, deadline=None)
@given(
    now=review_times(),
    stabilities=st.lists(st.floats(min_value=0.5, max_value=800.0), min_size=1, max_size=12),
    data=st.data(),
)
def test_a_queues_previews_are_each_cards_reference(now, stabilities, data):
    """A study queue's cards, balanced together on one load, each get what balancing that card alone gives."""
    config = SchedulerConfig()
    states: dict[int, MemoryState | None] = {100: None}
    for card_id, stability in enumerate(stabilities):
        last = now - timedelta(days=stability * data.draw(st.floats(min_value=0.5, max_value=1.5)))
        due_in = data.draw(st.integers(min_value=-5, max_value=30))
        states[card_id] = MemoryState(
            MemoryStage.REVIEW, None, stability, 5.0, due=now + due_in * DAY, last_review=last, reps=card_id + 1
        )
    previews = {
        card_id: preview_states(state, now=now, config=config, learner_id=1, card_id=card_id)
        for card_id, state in states.items()
    }
    spans = [
        span
        for at, afters in previews.values()
        for after in afters.values()
        if (span := reference_interval_span(after, reviewed_at=at, config=config)) is not None
    ]
    spans += [(n, n) for n in range(-5, 31)]
    load = data.draw(loads(now, spans))
    assert previews_balanced(previews, states, config=config, load=load) == {
        card_id: reference_preview_intervals_balanced(states[card_id], afters, reviewed_at=at, config=config, load=load)
        for card_id, (at, afters) in previews.items()
    }
