"""All four ratings' outcomes at once, remembered per card state: always exactly what `review` gives. No database."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest
from fsrs import scheduler as fsrs_scheduler
from fsrs.scheduler import DEFAULT_PARAMETERS, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.srs.core import scheduling
from apps.srs.core.scheduling import (
    OUTCOME_MEMO_SIZE,
    MemoryStage,
    MemoryState,
    Rating,
    SchedulerConfig,
    card_fuzz_seed,
    preview_intervals,
    review,
    review_outcomes,
    review_outcomes_memo_clear,
)

DAY = timedelta(days=1)
EXAMPLES = 300
# Hypothesis bounds generated times with naive ones and attaches the zone itself.
EARLIEST_REVIEW = datetime(1990, 1, 1)  # noqa: DTZ001
LATEST_REVIEW = datetime(2090, 1, 1)  # noqa: DTZ001


def _parameters(draw: st.DrawFn) -> tuple[float, ...]:
    if draw(st.booleans()):
        return tuple(DEFAULT_PARAMETERS)
    return tuple(
        draw(st.floats(min_value=low, max_value=high, allow_nan=False))
        for low, high in zip(LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS, strict=True)
    )


@st.composite
def configs(draw: st.DrawFn) -> SchedulerConfig:
    steps = st.lists(st.integers(min_value=1, max_value=2 * 86_400), max_size=3).map(tuple)
    return SchedulerConfig(
        desired_retention=draw(st.sampled_from([0.7, 0.85, 0.9, 0.97]) | st.floats(min_value=0.7, max_value=0.99)),
        learning_steps=draw(st.sampled_from([(60, 600), (), (600,)]) | steps),
        relearning_steps=draw(st.sampled_from([(600,), ()]) | steps),
        maximum_interval=draw(st.sampled_from([36_500, 365, 30]) | st.integers(min_value=1, max_value=36_500)),
        parameters=_parameters(draw),
    )


@st.composite
def states(draw: st.DrawFn) -> MemoryState | None:
    stage = draw(st.sampled_from([None, *MemoryStage]))
    if stage is None:
        return None
    last_review = draw(st.datetimes(min_value=EARLIEST_REVIEW, max_value=LATEST_REVIEW, timezones=st.just(UTC)))
    return MemoryState(
        stage=stage,
        step=None if stage == MemoryStage.REVIEW else draw(st.integers(min_value=0, max_value=3)),
        stability=draw(
            st.sampled_from([0.001, 0.3, 2.3065, 40.0, 36_500.0, 1e6]) | st.floats(min_value=0.001, max_value=1e5)
        ),
        difficulty=draw(st.sampled_from([1.0, 5.0, 10.0]) | st.floats(min_value=1.0, max_value=10.0)),
        due=last_review + draw(st.timedeltas(min_value=timedelta(0), max_value=400 * DAY)),
        last_review=last_review,
        reps=draw(st.integers(min_value=0, max_value=200)),
        lapses=draw(st.integers(min_value=0, max_value=30)),
    )


# From seconds to years after the last review, as a learner reviews early, on time and very late.
elapsed = st.one_of(
    st.timedeltas(min_value=timedelta(0), max_value=timedelta(hours=30)),
    st.timedeltas(min_value=timedelta(0), max_value=60 * DAY),
    st.timedeltas(min_value=timedelta(0), max_value=10 * 365 * DAY),
)
offsets = st.sampled_from([UTC, timezone(timedelta(hours=9)), timezone(timedelta(hours=-5, minutes=-30))])


def _each_rating(
    state: MemoryState | None, *, reviewed_at: datetime, config: SchedulerConfig, seed: str
) -> dict[Rating, MemoryState] | type[Exception]:
    try:
        return {
            rating: review(state, rating=rating, reviewed_at=reviewed_at, config=config, fuzz_seed=seed)
            for rating in Rating
        }
    except (ArithmeticError, ValueError) as error:
        # Extreme parameters can overflow fsrs's arithmetic: the memoised path must fail alike.
        return type(error)


def _outcomes(
    state: MemoryState | None, *, reviewed_at: datetime, config: SchedulerConfig, seed: str
) -> dict[Rating, MemoryState] | type[Exception]:
    try:
        return review_outcomes(state, reviewed_at=reviewed_at, config=config, fuzz_seed=seed)
    except (ArithmeticError, ValueError) as error:
        return type(error)


def _same_whole_days_later(
    state: MemoryState | None, reviewed_at: datetime, *, shift: timedelta, within_day: float
) -> tuple[MemoryState | None, datetime]:
    """The same card state and review moved by `shift`, with the review elsewhere in the same whole days since."""
    if state is None:
        return None, reviewed_at + shift + within_day * DAY
    days = (reviewed_at - state.last_review).days
    moved = replace(state, last_review=state.last_review + shift, due=state.due + shift)
    later = moved.last_review + timedelta(days=days) + within_day * DAY
    assert (later - moved.last_review).days == days
    return moved, later


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    state=states(),
    config=configs(),
    since=elapsed,
    offset=offsets,
    seed=st.text(max_size=12) | st.builds(lambda n: f"card:1:{n}:3", st.integers(min_value=0)),
    shift=st.timedeltas(min_value=-3000 * DAY, max_value=3000 * DAY),
    within_day=st.floats(min_value=0.0, max_value=0.999_999),
)
def test_remembered_outcomes_are_each_ratings_review(state, config, since, offset, seed, shift, within_day):
    reviewed_at = ((state.last_review if state is not None else datetime(2030, 6, 1, tzinfo=UTC)) + since).astimezone(
        offset
    )
    review_outcomes_memo_clear()
    expected = _each_rating(state, reviewed_at=reviewed_at, config=config, seed=seed)
    assert _outcomes(state, reviewed_at=reviewed_at, config=config, seed=seed) == expected, "first, computed"
    assert _outcomes(state, reviewed_at=reviewed_at, config=config, seed=seed) == expected, "again, remembered"
    if isinstance(expected, dict):
        for rating, outcome in review_outcomes(state, reviewed_at=reviewed_at, config=config, fuzz_seed=seed).items():
            assert (repr(outcome), hash(outcome), outcome.to_dict()) == (
                repr(expected[rating]),
                hash(expected[rating]),
                expected[rating].to_dict(),
            )
            assert outcome.due.tzinfo is UTC and outcome.last_review.tzinfo is UTC

    # Another card with this state, reviewed at another time with the same whole days since its last
    # review: remembered from the first, and still exactly what its own reviews give.
    moved, later = _same_whole_days_later(state, reviewed_at, shift=shift, within_day=within_day)
    hits = scheduling._memoised_outcomes.cache_info().hits
    expected_later = _each_rating(moved, reviewed_at=later, config=config, seed=seed)
    assert _outcomes(moved, reviewed_at=later, config=config, seed=seed) == expected_later
    if isinstance(expected, dict) and isinstance(expected_later, dict):
        assert scheduling._memoised_outcomes.cache_info().hits > hits


@settings(max_examples=100, deadline=None)
@given(state=states(), since=elapsed, learner_id=st.integers(min_value=1, max_value=10**6))
def test_preview_intervals_are_each_ratings_interval(state, since, learner_id):
    now = (state.last_review if state is not None else datetime(2030, 6, 1, tzinfo=UTC)) + since
    config = SchedulerConfig()
    seed = card_fuzz_seed(learner_id=learner_id, card_id=5, state=state)
    for _ in range(2):
        intervals = preview_intervals(state, now=now, config=config, learner_id=learner_id, card_id=5)
        assert intervals == {
            rating: review(state, rating=rating, reviewed_at=now, config=config, fuzz_seed=seed).due - now
            for rating in Rating
        }


def test_a_review_before_the_last_one_is_refused_as_review_refuses_it():
    state = MemoryState(
        MemoryStage.REVIEW,
        None,
        10.0,
        5.0,
        due=datetime(2030, 1, 11, tzinfo=UTC),
        last_review=datetime(2030, 1, 1, tzinfo=UTC),
    )
    with pytest.raises(ValueError, match="replay"):
        review_outcomes(
            state, reviewed_at=state.last_review - timedelta(seconds=1), config=SchedulerConfig(), fuzz_seed="x"
        )
    with pytest.raises(ValueError, match="timezone-aware"):
        review_outcomes(None, reviewed_at=datetime(2030, 1, 1), config=SchedulerConfig(), fuzz_seed="x")  # noqa: DTZ001


def test_the_memo_is_bounded():
    """Past its size the memo forgets the card states seen longest ago, and recomputes them if asked again."""
    review_outcomes_memo_clear()
    at = datetime(2030, 1, 1, tzinfo=UTC)
    config = SchedulerConfig()
    for card_id in range(OUTCOME_MEMO_SIZE + 100):
        review_outcomes(None, reviewed_at=at, config=config, fuzz_seed=f"card:1:{card_id}:0")
    info = scheduling._memoised_outcomes.cache_info()
    assert (info.currsize, info.maxsize) == (OUTCOME_MEMO_SIZE, OUTCOME_MEMO_SIZE)
    review_outcomes(None, reviewed_at=at, config=config, fuzz_seed="card:1:0:0")
    assert scheduling._memoised_outcomes.cache_info().misses == info.misses + 1
    review_outcomes(None, reviewed_at=at, config=config, fuzz_seed=f"card:1:{OUTCOME_MEMO_SIZE + 99}:0")
    assert scheduling._memoised_outcomes.cache_info().hits == info.hits + 1
    review_outcomes_memo_clear()
    assert scheduling._memoised_outcomes.cache_info().currsize == 0


def test_an_outcome_changes_with_anything_fsrs_reads():
    """Each part of the memo's key matters: change one and the outcomes are those of the changed review."""
    rng = random.Random(4)  # noqa: S311
    base = MemoryState(
        MemoryStage.REVIEW,
        None,
        30.0,
        5.0,
        due=datetime(2030, 1, 31, tzinfo=UTC),
        last_review=datetime(2030, 1, 1, tzinfo=UTC),
        reps=5,
        lapses=1,
    )
    at = base.last_review + 31 * DAY
    config = SchedulerConfig()
    variants: list[tuple[MemoryState, datetime, SchedulerConfig, str]] = [
        (base, at, config, "s"),
        (base, at + DAY, config, "s"),
        (base, at, replace(config, desired_retention=0.8), "s"),
        (base, at, config, "t"),
        (replace(base, stability=31.0), at, config, "s"),
        (replace(base, difficulty=6.0), at, config, "s"),
        (replace(base, reps=6), at, config, "s"),
        (replace(base, lapses=2), at, config, "s"),
        (replace(base, stage=MemoryStage.RELEARNING, step=0), at, config, "s"),
        (replace(base, stage=MemoryStage.RELEARNING, step=1), at, config, "s"),
    ]
    rng.shuffle(variants)
    review_outcomes_memo_clear()
    for state, reviewed_at, variant_config, seed in variants * 2:
        assert review_outcomes(state, reviewed_at=reviewed_at, config=variant_config, fuzz_seed=seed) == {
            rating: review(state, rating=rating, reviewed_at=reviewed_at, config=variant_config, fuzz_seed=seed)
            for rating in Rating
        }
    assert scheduling._memoised_outcomes.cache_info().currsize == len(variants)


def test_config_hash_is_kept_and_equal_configs_share_it():
    config = SchedulerConfig(desired_retention=0.85)
    assert hash(config) == hash(config) == hash(SchedulerConfig(desired_retention=0.85))
    assert config == SchedulerConfig(desired_retention=0.85)
    assert hash(config) == hash(
        (
            config.desired_retention,
            config.learning_steps,
            config.relearning_steps,
            config.maximum_interval,
            config.parameters,
            config.timezone,
            config.day_start_hour,
            config.stability_factor,
        )
    )
    for changed in (
        {"maximum_interval": 100},
        {"timezone": "Asia/Tokyo"},
        {"day_start_hour": 0},
        {"stability_factor": 1.05},
    ):
        assert hash(replace(config, **changed)) != hash(config)


def test_outcomes_drawn_from_a_replaced_fuzz_source_are_not_remembered():
    """A test forcing fsrs's draws gets forced outcomes, and later previews still get the seed's own."""
    state = MemoryState(
        MemoryStage.REVIEW,
        None,
        120.0,
        5.0,
        due=datetime(2030, 5, 1, tzinfo=UTC),
        last_review=datetime(2030, 1, 1, tzinfo=UTC),
        reps=4,
    )
    at = datetime(2030, 5, 1, tzinfo=UTC)
    config = SchedulerConfig()
    seeded = {rating: review(state, rating=rating, reviewed_at=at, config=config, fuzz_seed="s") for rating in Rating}
    review_outcomes_memo_clear()
    original = fsrs_scheduler.random
    fsrs_scheduler.random = lambda: 0.0
    try:
        forced = review_outcomes(state, reviewed_at=at, config=config, fuzz_seed="s")
    finally:
        fsrs_scheduler.random = original
    assert forced[Rating.GOOD].due < seeded[Rating.GOOD].due
    assert review_outcomes(state, reviewed_at=at, config=config, fuzz_seed="s") == seeded
