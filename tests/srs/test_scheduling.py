"""The pure scheduling core: conversions, seeded fuzz, replay, previews and a pinned FSRS-6 history. No database."""

from __future__ import annotations

import copy
import json
import math
import random
import threading
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import fsrs
import pytest
from fsrs import scheduler as fsrs_scheduler

from apps.srs.core.scheduling import (
    DEFAULT_PARAMETERS,
    MemoryStage,
    MemoryState,
    Rating,
    ReviewEvent,
    SchedulerConfig,
    _seeded_fuzz,
    card_fuzz_seed,
    from_fsrs_card,
    parameters_valid,
    preview_intervals,
    replay,
    retrievability,
    review,
    to_fsrs_card,
    with_config,
)
from apps.srs.models import CardMemory
from apps.srs.reviews.memory import memory_state_of

CONFIG = SchedulerConfig()
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
# One seed for every generated history, so a failure reproduces exactly.
FUZZ_SEED = 20260105
FUZZ_HISTORIES = 300
# The learner and card of every history that does not say otherwise: the fuzz seed names both.
LEARNER_ID = 1
CARD_ID = 1
IDS: dict[str, Any] = {"learner_id": LEARNER_ID, "card_id": CARD_ID}

# A fixed sequence of ratings, each given exactly when the card falls due, and what FSRS-6 (fsrs 6.3.2,
# default parameters, retention 0.9, steps 1 min / 10 min, relearning 10 min) makes of it. The intervals
# are fuzzed as Anki fuzzes them, with learner 1's seed for card 1 at its i-th review, "card:1:1:{i}";
# `test_pinned_history_matches_fsrs_itself` recomputes every row from the fsrs package directly, so
# these numbers are checked, not merely recorded.
PINNED_RATINGS = [3, 3, 3, 3, 1, 3, 3, 2, 4, 3]
PINNED_HISTORY: list[tuple[MemoryStage, int | None, float, float, timedelta]] = [
    # stage, step, stability, difficulty, interval until due
    (MemoryStage.LEARNING, 1, 2.3065, 2.1181, timedelta(minutes=10)),
    (MemoryStage.REVIEW, None, 2.3065, 2.1112, timedelta(days=2)),
    (MemoryStage.REVIEW, None, 10.9710, 2.1043, timedelta(days=10)),
    (MemoryStage.REVIEW, None, 43.9660, 2.0975, timedelta(days=44)),
    (MemoryStage.RELEARNING, 0, 2.8751, 7.3877, timedelta(minutes=10)),
    (MemoryStage.REVIEW, None, 2.8751, 7.3756, timedelta(days=4)),
    (MemoryStage.REVIEW, None, 8.7823, 7.3634, timedelta(days=7)),
    (MemoryStage.REVIEW, None, 14.8838, 8.2349, timedelta(days=13)),
    (MemoryStage.REVIEW, None, 38.8889, 7.6304, timedelta(days=41)),
    (MemoryStage.REVIEW, None, 78.7225, 7.6180, timedelta(days=84)),
]


def _pinned_states() -> list[MemoryState]:
    states: list[MemoryState] = []
    state: MemoryState | None = None
    at = START
    for rating in PINNED_RATINGS:
        seed = card_fuzz_seed(learner_id=LEARNER_ID, card_id=CARD_ID, state=state)
        state = review(state, rating=Rating(rating), reviewed_at=at, config=CONFIG, fuzz_seed=seed)
        states.append(state)
        at = state.due
    return states


def _review_state(*, stability: float = 40.0, difficulty: float = 5.0, days_ago: int = 40) -> MemoryState:
    last = START - timedelta(days=days_ago)
    return MemoryState(
        stage=MemoryStage.REVIEW,
        step=None,
        stability=stability,
        difficulty=difficulty,
        due=last + timedelta(days=round(stability)),
        last_review=last,
        reps=4,
        lapses=1,
    )


def _random_history(rng: random.Random) -> list[ReviewEvent]:
    """A plausible history: ratings weighted toward Good, gaps from seconds to months, some early, some late."""
    events: list[ReviewEvent] = []
    at = START + timedelta(seconds=rng.randrange(0, 86_400))
    for index in range(rng.randint(1, 12)):
        rating = Rating(rng.choices([1, 2, 3, 4], weights=[2, 1, 5, 2])[0])
        events.append(ReviewEvent(reviewed_at=at, review_id=f"h{rng.random()}-{index}", rating=rating, config=CONFIG))
        at += rng.choice(
            [
                timedelta(seconds=rng.randrange(0, 120)),
                timedelta(minutes=rng.randrange(1, 60)),
                timedelta(hours=rng.randrange(1, 48)),
                timedelta(days=rng.randrange(1, 120)),
            ]
        )
    return events


def _fuzz_bounds(interval: timedelta) -> tuple[timedelta, timedelta]:
    """The shortest and longest fuzzed interval for an unfuzzed one, from fsrs's FUZZ_RANGES table (Anki's too)."""
    days = interval.days
    delta = 1.0 + sum(
        r["factor"] * max(min(float(days), r["end"]) - r["start"], 0.0) for r in fsrs_scheduler.FUZZ_RANGES
    )
    return timedelta(days=max(2, round(days - delta))), timedelta(days=round(days + delta))


def _seeded_fsrs_review(card: fsrs.Card, rating: int, at: datetime, seed: str) -> fsrs.Card:
    """fsrs itself without its fuzz, then fuzzed as Anki fuzzes: the range's first day plus the draw of
    `random.Random(seed)` times the days in it, floored (fsrs rounds, which can land a day past the range)."""
    reviewed, _ = fsrs.Scheduler(enable_fuzzing=False).review_card(card, fsrs.Rating(rating), at)
    interval = reviewed.due - at
    if reviewed.state == fsrs.State.Review and interval >= timedelta(days=2, hours=12):
        low, high = (bound.days for bound in _fuzz_bounds(interval))
        draw = random.Random(seed).random()  # noqa: S311 - scheduling fuzz, not security
        reviewed.due = at + timedelta(days=min(math.floor(low + draw * (high - low + 1)), high))
    return reviewed


# --- the pinned history -------------------------------------------------------------------------------------------


def test_pinned_history():
    states = _pinned_states()
    got = [(s.stage, s.step, s.stability, s.difficulty, s.due - s.last_review) for s in states]
    assert got == [
        (stage, step, pytest.approx(stability, abs=1e-4), pytest.approx(difficulty, abs=1e-4), interval)
        for stage, step, stability, difficulty, interval in PINNED_HISTORY
    ]
    assert [s.reps for s in states] == list(range(1, 11))
    # The only Again given to a card in Review is the fifth rating.
    assert [s.lapses for s in states] == [0, 0, 0, 0, 1, 1, 1, 1, 1, 1]
    # 205 days and 20 minutes after the first review: the sum of the pinned intervals.
    assert states[-1].due == datetime(2026, 7, 29, 9, 20, tzinfo=UTC)


def test_pinned_history_matches_fsrs_itself():
    """Every pinned row is what the fsrs package gives on its own, fuzzed as Anki fuzzes, within the fuzz range."""
    unfuzzed_scheduler = fsrs.Scheduler(enable_fuzzing=False)
    card = fsrs.Card(card_id=1, due=START)
    at = START
    for index, (rating, expected) in enumerate(zip(PINNED_RATINGS, PINNED_HISTORY, strict=True)):
        unfuzzed, _ = unfuzzed_scheduler.review_card(card, fsrs.Rating(rating), at)
        card = _seeded_fsrs_review(card, rating, at, f"card:1:1:{index}")
        stage, step, stability, difficulty, interval = expected
        assert (int(card.state), card.step) == (int(stage), step)
        assert card.stability == pytest.approx(stability, abs=1e-4)
        assert card.difficulty == pytest.approx(difficulty, abs=1e-4)
        assert card.due - at == interval
        # Fuzz moves only the due date, and only within fsrs's range around the unfuzzed interval.
        assert (unfuzzed.stability, unfuzzed.difficulty) == (card.stability, card.difficulty)
        if unfuzzed.due - at < timedelta(days=2, hours=12):
            assert card.due == unfuzzed.due, "fsrs does not fuzz intervals under 2.5 days"
        else:
            low, high = _fuzz_bounds(unfuzzed.due - at)
            assert low <= card.due - at <= high
        at = card.due


def test_first_review_of_a_new_card_by_rating():
    """fsrs-6 defaults: initial stability is w[rating-1]; learning steps 1 and 10 minutes; Easy graduates."""
    outcomes = {
        rating: review(None, rating=rating, reviewed_at=START, config=CONFIG, fuzz_seed="first") for rating in Rating
    }
    for rating, state in outcomes.items():
        assert state.stability == pytest.approx(DEFAULT_PARAMETERS[rating - 1])
        assert state.last_review == START
        assert (state.reps, state.lapses) == (1, 0)
    assert outcomes[Rating.AGAIN].due - START == timedelta(minutes=1)
    assert outcomes[Rating.HARD].due - START == timedelta(minutes=5, seconds=30)  # halfway between the two steps
    assert outcomes[Rating.GOOD].due - START == timedelta(minutes=10)
    assert (outcomes[Rating.GOOD].stage, outcomes[Rating.GOOD].step) == (MemoryStage.LEARNING, 1)
    assert (outcomes[Rating.EASY].stage, outcomes[Rating.EASY].step) == (MemoryStage.REVIEW, None)
    # Stability 8.2956 days at 90% retention is an 8-day interval; fsrs fuzzes it to 6-11 days.
    assert timedelta(days=6) <= outcomes[Rating.EASY].due - START <= timedelta(days=11)
    assert (
        outcomes[Rating.AGAIN].difficulty
        > outcomes[Rating.HARD].difficulty
        > outcomes[Rating.GOOD].difficulty
        > outcomes[Rating.EASY].difficulty
    )


# --- conversions --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("state", _pinned_states(), ids=lambda s: f"{s.stage.name}-{s.reps}")
def test_memory_state_round_trips_through_fsrs_card_and_dict(state):
    card = to_fsrs_card(state, card_id=7)
    assert isinstance(card, fsrs.Card)
    assert (card.card_id, int(card.state), card.step) == (7, int(state.stage), state.step)
    assert (card.stability, card.difficulty, card.due, card.last_review) == (
        state.stability,
        state.difficulty,
        state.due,
        state.last_review,
    )
    assert from_fsrs_card(card, reps=state.reps, lapses=state.lapses) == state
    # fsrs's own serialisation loses nothing we store either.
    assert from_fsrs_card(fsrs.Card.from_dict(card.to_dict()), reps=state.reps, lapses=state.lapses) == state

    data = state.to_dict()
    assert json.loads(json.dumps(data)) == data, "state_before/state_after are stored as JSON"
    assert data["stage"] == int(state.stage)
    assert MemoryState.from_dict(json.loads(json.dumps(data))) == state
    assert MemoryState.from_dict(data).due.tzinfo == UTC


def test_a_memory_row_reads_as_its_state():
    """The database row's side of the conversion; an unsaved row, so no database is involved."""
    state = _review_state()
    row = CardMemory(
        stage=int(state.stage),
        step=state.step,
        stability=state.stability,
        difficulty=state.difficulty,
        due=state.due,
        last_review=state.last_review,
        first_review=state.last_review - timedelta(days=90),
        reps=state.reps,
        lapses=state.lapses,
    )
    assert memory_state_of(row) == state
    assert memory_state_of(None) is None


def test_conversion_is_pure():
    """The same state converts to equal fsrs cards every time: no clock, no generated ids."""
    state = _review_state()
    assert to_fsrs_card(state) == to_fsrs_card(state)
    assert to_fsrs_card(state).card_id == to_fsrs_card(state, card_id=0).card_id


def test_a_new_card_is_fsrs_learning_at_step_zero_with_no_memory():
    card = to_fsrs_card(None, card_id=3)
    assert (card.card_id, card.state, card.step) == (3, fsrs.State.Learning, 0)
    assert (card.stability, card.difficulty, card.last_review) == (None, None, None)


def test_from_dict_normalises_offsets_to_utc_and_defaults_counts():
    data = _review_state().to_dict()
    paris = timezone(timedelta(hours=2))
    shifted = {
        **data,
        "due": datetime.fromisoformat(data["due"]).astimezone(paris).isoformat(),
        "last_review": datetime.fromisoformat(data["last_review"]).astimezone(paris).isoformat(),
    }
    restored = MemoryState.from_dict(shifted)
    assert restored == _review_state()
    assert restored.due.tzinfo == UTC and restored.last_review.tzinfo == UTC
    del shifted["reps"], shifted["lapses"]
    assert (MemoryState.from_dict(shifted).reps, MemoryState.from_dict(shifted).lapses) == (0, 0)


def test_from_fsrs_card_converts_offsets_to_utc():
    plus_five = timezone(timedelta(hours=5))
    card = fsrs.Card(
        card_id=1,
        state=fsrs.State.Review,
        stability=3.0,
        difficulty=4.0,
        due=datetime(2026, 1, 10, 14, 0, tzinfo=plus_five),
        last_review=datetime(2026, 1, 7, 14, 0, tzinfo=plus_five),
    )
    state = from_fsrs_card(card, reps=2, lapses=0)
    assert state.due == datetime(2026, 1, 10, 9, 0, tzinfo=UTC) and state.due.tzinfo == UTC
    assert state.last_review.tzinfo == UTC


# --- timezone-naive datetimes -------------------------------------------------------------------------------------

NAIVE = datetime(2026, 1, 5, 9, 0)  # noqa: DTZ001 - the point of these tests


def test_review_rejects_a_naive_time():
    with pytest.raises(ValueError, match="timezone-aware"):
        review(None, rating=Rating.GOOD, reviewed_at=NAIVE, config=CONFIG, fuzz_seed="x")


def test_preview_and_retrievability_reject_a_naive_time():
    with pytest.raises(ValueError, match="timezone-aware"):
        preview_intervals(_review_state(), now=NAIVE, config=CONFIG, **IDS)
    with pytest.raises(ValueError, match="timezone-aware"):
        retrievability(_review_state(), now=NAIVE, config=CONFIG)


def test_replay_rejects_a_naive_event():
    with pytest.raises(ValueError, match="timezone-aware"):
        replay([ReviewEvent(reviewed_at=NAIVE, review_id="a", rating=Rating.GOOD)], **IDS)


def test_memory_state_rejects_naive_times():
    with pytest.raises(ValueError, match="timezone-aware"):
        MemoryState(stage=MemoryStage.REVIEW, step=None, stability=1.0, difficulty=5.0, due=NAIVE, last_review=START)
    with pytest.raises(ValueError, match="timezone-aware"):
        MemoryState.from_dict({**_review_state().to_dict(), "last_review": NAIVE.isoformat()})


def test_review_accepts_any_offset_and_stores_utc():
    tokyo = timezone(timedelta(hours=9))
    state = review(None, rating=Rating.GOOD, reviewed_at=START.astimezone(tokyo), config=CONFIG, fuzz_seed="x")
    assert state.last_review == START and state.last_review.tzinfo == UTC
    assert state.due.tzinfo == UTC


# --- seeded fuzz --------------------------------------------------------------------------------------------------


def test_same_seed_gives_the_same_due_date():
    state = _review_state(stability=120.0, days_ago=120)
    first = review(state, rating=Rating.GOOD, reviewed_at=START, config=CONFIG, fuzz_seed="same")
    again = review(state, rating=Rating.GOOD, reviewed_at=START, config=CONFIG, fuzz_seed="same")
    assert first == again


def test_different_seeds_spread_long_intervals():
    state = _review_state(stability=120.0, days_ago=120)
    dues = {
        review(state, rating=Rating.GOOD, reviewed_at=START, config=CONFIG, fuzz_seed=f"seed-{n}").due
        for n in range(20)
    }
    assert len(dues) > 1
    unfuzzed, _ = fsrs.Scheduler(enable_fuzzing=False).review_card(to_fsrs_card(state), fsrs.Rating.Good, START)
    low, high = _fuzz_bounds(unfuzzed.due - START)
    assert all(low <= due - START <= high for due in dues)
    assert high - low >= timedelta(days=10), "a 120-day interval has a wide fuzz range"


def test_short_intervals_are_never_fuzzed():
    dues = {
        review(None, rating=Rating.GOOD, reviewed_at=START, config=CONFIG, fuzz_seed=f"seed-{n}").due for n in range(10)
    }
    assert dues == {START + timedelta(minutes=10)}


def test_seeded_fuzz_leaves_the_global_random_alone():
    """fsrs's fuzz source is installed once, not swapped per review; outside a review it is Python's own random()."""
    installed = fsrs_scheduler.random
    state = random.getstate()
    try:
        review(
            _review_state(stability=120.0, days_ago=120),
            rating=Rating.GOOD,
            reviewed_at=START,
            config=CONFIG,
            fuzz_seed="x",
        )
        assert fsrs_scheduler.random is installed
        random.seed(FUZZ_SEED)
        unseeded = [fsrs_scheduler.random() for _ in range(3)]
        random.seed(FUZZ_SEED)
        assert unseeded == [random.random() for _ in range(3)]  # noqa: S311
    finally:
        random.setstate(state)


def test_a_seeded_review_draws_its_seeds_sequence():
    generator = random.Random("sequence")  # noqa: S311
    with _seeded_fuzz("sequence"):
        assert [fsrs_scheduler.random() for _ in range(4)] == [generator.random() for _ in range(4)]
        with _seeded_fuzz("inner"):
            assert fsrs_scheduler.random() == random.Random("inner").random()  # noqa: S311
        # Back to the outer seed where it left off.
        assert fsrs_scheduler.random() == generator.random()


def test_threads_draw_from_their_own_seeds_at_once():
    """A review on one thread neither waits for nor sees the seed of a review running on another."""
    first_seeded = threading.Event()
    others_done = threading.Event()
    draws: dict[str, Any] = {}
    state = random.getstate()

    def first() -> None:
        with _seeded_fuzz("first"):
            first_seeded.set()
            draws["others finished meanwhile"] = others_done.wait(timeout=10)
            draws["first"] = fsrs_scheduler.random()

    def second() -> None:
        assert first_seeded.wait(timeout=10)
        with _seeded_fuzz("second"):
            draws["second"] = fsrs_scheduler.random()

    def unseeded() -> None:
        assert first_seeded.wait(timeout=10)
        draws["unseeded"] = fsrs_scheduler.random()

    try:
        random.seed(FUZZ_SEED)
        threads = [threading.Thread(target=target) for target in (first, second, unseeded)]
        for thread in threads:
            thread.start()
        for thread in threads[1:]:
            thread.join(timeout=10)
        others_done.set()
        threads[0].join(timeout=10)
        random.seed(FUZZ_SEED)
        expected_unseeded = random.random()  # noqa: S311
    finally:
        random.setstate(state)
    assert draws == {
        "others finished meanwhile": True,
        "first": random.Random("first").random(),  # noqa: S311
        "second": random.Random("second").random(),  # noqa: S311
        "unseeded": expected_unseeded,
    }


def test_a_replaced_fuzz_source_wins():
    """Code that replaces fsrs's source (a test forcing draws) is obeyed, by reviews too."""
    state = _review_state(stability=120.0, days_ago=120)
    unfuzzed, _ = fsrs.Scheduler(enable_fuzzing=False).review_card(to_fsrs_card(state), fsrs.Rating.Good, START)
    low, _ = _fuzz_bounds(unfuzzed.due - START)
    original = fsrs_scheduler.random
    fsrs_scheduler.random = lambda: 0.0
    try:
        after = review(state, rating=Rating.GOOD, reviewed_at=START, config=CONFIG, fuzz_seed="x")
    finally:
        fsrs_scheduler.random = original
    assert after.due - START == low
    assert review(state, rating=Rating.GOOD, reviewed_at=START, config=CONFIG, fuzz_seed="x").due - START != low


# --- replay -------------------------------------------------------------------------------------------------------


def test_replay_is_sequential_review():
    events = [
        ReviewEvent(reviewed_at=s.last_review, review_id=f"review-{i}", rating=Rating(r))
        for i, (s, r) in enumerate(zip(_pinned_states(), PINNED_RATINGS, strict=True))
    ]
    assert replay(events, **IDS) == _pinned_states()


def test_replay_is_independent_of_arrival_order():
    rng = random.Random(FUZZ_SEED)  # noqa: S311
    events = [
        ReviewEvent(reviewed_at=s.last_review, review_id=f"review-{i}", rating=Rating(r))
        for i, (s, r) in enumerate(zip(_pinned_states(), PINNED_RATINGS, strict=True))
    ]
    for _ in range(20):
        shuffled = events[:]
        rng.shuffle(shuffled)
        assert replay(shuffled, **IDS) == _pinned_states()
    assert replay(reversed(events), **IDS) == _pinned_states()


def test_replay_breaks_ties_by_review_id():
    same_time = [
        ReviewEvent(reviewed_at=START, review_id="b", rating=Rating.AGAIN),
        ReviewEvent(reviewed_at=START, review_id="a", rating=Rating.EASY),
    ]
    assert replay(same_time, **IDS) == replay(list(reversed(same_time)), **IDS)
    # "a" (Easy) first, then "b" (Again) on a card that is by then in Review: a lapse.
    assert replay(same_time, **IDS)[-1].lapses == 1


def test_review_refuses_to_go_back_in_time():
    state = review(None, rating=Rating.GOOD, reviewed_at=START, config=CONFIG, fuzz_seed="x")
    with pytest.raises(ValueError, match="replay"):
        review(state, rating=Rating.GOOD, reviewed_at=START - timedelta(seconds=1), config=CONFIG, fuzz_seed="y")
    # The same instant is allowed: two devices can stamp the same second.
    assert review(state, rating=Rating.GOOD, reviewed_at=START, config=CONFIG, fuzz_seed="y").reps == 2


def test_each_event_replays_with_its_own_config():
    strict = with_config(CONFIG, desired_retention=0.97)
    easy = ReviewEvent(reviewed_at=START, review_id="a", rating=Rating.EASY, config=CONFIG)
    later = START + timedelta(days=8)
    relaxed_good = ReviewEvent(reviewed_at=later, review_id="b", rating=Rating.GOOD, config=CONFIG)
    strict_good = ReviewEvent(reviewed_at=later, review_id="b", rating=Rating.GOOD, config=strict)
    # Higher desired retention means a shorter interval for the same memory.
    assert replay([easy, strict_good], **IDS)[-1].due < replay([easy, relaxed_good], **IDS)[-1].due
    assert replay([easy, strict_good], **IDS)[-1].stability == replay([easy, relaxed_good], **IDS)[-1].stability


# --- previews -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("state", [None, *_pinned_states()], ids=lambda s: "new" if s is None else s.stage.name)
def test_preview_intervals_are_ordered(state):
    now = START if state is None else state.due
    intervals = preview_intervals(state, now=now, config=CONFIG, **IDS)
    assert list(intervals) == [Rating.AGAIN, Rating.HARD, Rating.GOOD, Rating.EASY]
    assert intervals[Rating.AGAIN] < intervals[Rating.HARD] <= intervals[Rating.GOOD] <= intervals[Rating.EASY]
    seed = card_fuzz_seed(state=state, **IDS)
    for rating, interval in intervals.items():
        assert review(state, rating=rating, reviewed_at=now, config=CONFIG, fuzz_seed=seed).due - now == interval


def test_preview_of_a_new_card():
    intervals = preview_intervals(None, now=START, config=CONFIG, **IDS)
    assert intervals[Rating.AGAIN] == timedelta(minutes=1)
    assert intervals[Rating.HARD] == timedelta(minutes=5, seconds=30)
    assert intervals[Rating.GOOD] == timedelta(minutes=10)
    assert intervals[Rating.EASY] >= timedelta(days=6)


def test_preview_before_the_last_review_is_measured_from_the_last_review():
    state = _pinned_states()[3]
    early = preview_intervals(state, now=state.last_review - timedelta(hours=3), config=CONFIG, **IDS)
    assert early == preview_intervals(state, now=state.last_review, config=CONFIG, **IDS)


# --- retrievability and parameters ---------------------------------------------------------------------------------


def test_retrievability_falls_with_time_and_is_zero_for_new_cards():
    state = _pinned_states()[3]
    assert retrievability(None, now=START, config=CONFIG) == 0.0
    assert retrievability(state, now=state.last_review, config=CONFIG) == pytest.approx(1.0)
    # By definition stability is the time for recall to fall to 90%.
    at_stability = state.last_review + timedelta(days=round(state.stability))
    assert retrievability(state, now=at_stability, config=CONFIG) == pytest.approx(0.9, abs=0.002)
    values = [retrievability(state, now=state.last_review + timedelta(days=d), config=CONFIG) for d in (1, 10, 100)]
    assert values == sorted(values, reverse=True)


def test_parameters_valid():
    assert parameters_valid(DEFAULT_PARAMETERS)
    assert not parameters_valid(DEFAULT_PARAMETERS[:-1])
    assert not parameters_valid((999.0, *DEFAULT_PARAMETERS[1:]))


def test_schedulers_are_shared_per_config():
    assert SchedulerConfig().scheduler() is CONFIG.scheduler()
    assert with_config(CONFIG, desired_retention=0.85).scheduler() is not CONFIG.scheduler()
    assert CONFIG.scheduler().desired_retention == 0.9


# --- seeded fuzz over many histories ------------------------------------------------------------------------------


def _invariants(events: list[ReviewEvent], states: list[MemoryState]) -> None:
    lapses = 0
    previous: MemoryState | None = None
    for event, state in zip(sorted(events), states, strict=True):
        if previous is not None and previous.stage == MemoryStage.REVIEW and event.rating == Rating.AGAIN:
            lapses += 1
        assert state.last_review == event.reviewed_at
        assert state.due > state.last_review
        assert state.due.tzinfo == UTC and state.last_review.tzinfo == UTC
        assert 1.0 <= state.difficulty <= 10.0
        assert state.stability >= 0.001
        assert (state.step is None) == (state.stage == MemoryStage.REVIEW)
        assert state.lapses == lapses
        assert state.due - state.last_review <= timedelta(days=CONFIG.maximum_interval)
        previous = state
    assert [s.reps for s in states] == list(range(1, len(events) + 1))


def test_fuzzed_histories():
    rng = random.Random(FUZZ_SEED)  # noqa: S311
    for _ in range(FUZZ_HISTORIES):
        events = _random_history(rng)
        states = replay(events, **IDS)
        _invariants(events, states)

        shuffled = events[:]
        rng.shuffle(shuffled)
        assert replay(shuffled, **IDS) == states, "arrival order must not matter"
        assert replay(events, **IDS) == states, "the same seeds give the same history"

        for state in states:
            assert MemoryState.from_dict(json.loads(json.dumps(state.to_dict()))) == state
            assert from_fsrs_card(to_fsrs_card(state), reps=state.reps, lapses=state.lapses) == state

        last = states[-1]
        now = last.last_review + timedelta(seconds=rng.randrange(0, 200 * 86_400))
        intervals = preview_intervals(last, now=now, config=CONFIG, **IDS)
        assert intervals[Rating.AGAIN] < intervals[Rating.HARD] <= intervals[Rating.GOOD] <= intervals[Rating.EASY]


def _anki_days_between(earlier: datetime, later: datetime) -> int:
    """Anki's elapsed days for CONFIG's learner (UTC, day start 4): day starts crossed between the two moments."""
    day_start = timedelta(hours=4)
    return ((later - day_start).date() - (earlier - day_start).date()).days


def test_fuzzed_histories_agree_with_fsrs_step_by_step():
    """Every state along a generated history is fsrs's own card after the same review and fuzz draw, elapsed
    time counted in learner days: fsrs is handed a last review that many whole days back. Only an interval
    Anki's order raises (Good past Hard, Easy past Good) may fall due later than fsrs's."""
    rng = random.Random(FUZZ_SEED + 1)  # noqa: S311
    raised = 0
    for _ in range(50):
        events = _random_history(rng)
        card = fsrs.Card(card_id=1, due=events[0].reviewed_at)
        for count, (event, state) in enumerate(zip(sorted(events), replay(events, **IDS), strict=True)):
            given = copy.copy(card)
            if card.last_review is not None:
                given.last_review = event.reviewed_at - timedelta(
                    days=_anki_days_between(card.last_review, event.reviewed_at)
                )
            card = _seeded_fsrs_review(given, int(event.rating), event.reviewed_at, f"card:1:1:{count}")
            expected: dict[str, Any] = {
                "stage": int(card.state),
                "step": card.step,
                "stability": card.stability,
                "difficulty": card.difficulty,
                "last_review": event.reviewed_at,
            }
            assert {key: getattr(state, key) for key in expected} == expected
            if event.rating in (Rating.AGAIN, Rating.HARD):
                assert state.due == card.due
            else:
                assert state.due >= card.due
                raised += state.due > card.due
    assert raised > 0, "the generated histories never met Anki's order; the check above proved nothing"


# --- previews tell the truth --------------------------------------------------------------------------------------

PREVIEW_CARDS = 1000


def test_the_fuzz_seed_is_the_learner_the_card_and_its_review_count():
    state = _pinned_states()[3]
    assert card_fuzz_seed(learner_id=7, card_id=12, state=None) == "card:7:12:0"
    assert card_fuzz_seed(learner_id=7, card_id=12, state=state) == f"card:7:12:{state.reps}"
    seeds = {
        card_fuzz_seed(learner_id=learner, card_id=card, state=state) for learner in (1, 2, 12) for card in (1, 2, 21)
    }
    assert len(seeds) == 9, "no two learners or cards share a seed, even where the digits run together"


def _random_config(rng: random.Random) -> SchedulerConfig:
    return with_config(
        CONFIG,
        desired_retention=rng.choice([0.7, 0.8, 0.85, 0.9, 0.95, 0.99]),
        maximum_interval=rng.choice([30, 365, 36_500]),
    )


def test_every_preview_is_the_interval_the_review_then_gives():
    """Over many cards, histories and moments: each rating's preview is exactly the interval that review gets.

    The review is recorded as the service records a late one, by replaying the card's whole history
    with it, so the preview is checked against the other path that draws a card's fuzz.
    """
    rng = random.Random(FUZZ_SEED + 2)  # noqa: S311
    fuzzed = 0
    for _ in range(PREVIEW_CARDS):
        ids: dict[str, Any] = {"learner_id": rng.randrange(1, 10**6), "card_id": rng.randrange(1, 10**6)}
        config = _random_config(rng)
        events = [replace(event, config=config) for event in _random_history(rng)] if rng.random() < 0.9 else []
        last = replay(events, **ids)[-1] if events else None
        since = last.last_review if last else START
        now = since + rng.choice(
            [
                timedelta(seconds=rng.randrange(0, 3600)),
                last.due - since if last else timedelta(0),
                timedelta(seconds=rng.randrange(0, 400 * 86_400)),
            ]
        )
        intervals = preview_intervals(last, now=now, config=config, **ids)
        for rating, interval in intervals.items():
            event = ReviewEvent(reviewed_at=now, review_id="~next", rating=rating, config=config)
            after = replay([*events, event], **ids)[-1]
            assert after.last_review == now
            assert after.due - now == interval, (ids, rating, events, now)
            fuzzed += after.stage == MemoryStage.REVIEW and interval >= timedelta(days=3)
    assert fuzzed > PREVIEW_CARDS, "most cards must reach intervals long enough for fsrs to fuzz"


def test_a_preview_holds_for_the_rest_of_the_whole_day_since_the_last_review():
    """A review made hours after the preview, with the same whole days since the last review, gets the preview."""
    state = _review_state(stability=120.0, days_ago=120)
    seen = preview_intervals(state, now=START, config=CONFIG, **IDS)
    later = START + timedelta(hours=5)
    assert (later - state.last_review).days == (START - state.last_review).days
    seed = card_fuzz_seed(state=state, **IDS)
    for rating, interval in seen.items():
        assert review(state, rating=rating, reviewed_at=later, config=CONFIG, fuzz_seed=seed).due - later == interval


def test_other_learners_and_cards_draw_other_fuzz():
    state = _review_state(stability=120.0, days_ago=120)
    goods = {
        preview_intervals(state, now=START, config=CONFIG, learner_id=learner, card_id=card)[Rating.GOOD]
        for learner in range(1, 6)
        for card in range(1, 6)
    }
    assert len(goods) > 1


def test_every_state_keeps_ankis_order_of_intervals():
    """In review Hard < Good < Easy in days; a (re)learning card's graduating Easy lies past Good: relearning
    cards once showed Good 2 d and Easy 2 d. Each preview is also what the review then gives."""
    rng = random.Random(FUZZ_SEED + 2)  # noqa: S311
    checked: Counter[MemoryStage] = Counter()
    for _ in range(150):
        for state in replay(_random_history(rng), **IDS):
            now = state.last_review + timedelta(seconds=rng.randrange(0, 90 * 86_400))
            intervals = preview_intervals(state, now=now, config=CONFIG, **IDS)
            seed = card_fuzz_seed(state=state, **IDS)
            afters = {
                rating: review(state, rating=rating, reviewed_at=now, config=CONFIG, fuzz_seed=seed)
                for rating in Rating
            }
            assert {rating: after.due - now for rating, after in afters.items()} == intervals
            graduated = {rating for rating, after in afters.items() if after.stage == MemoryStage.REVIEW}
            if state.stage == MemoryStage.REVIEW:
                hard, good, easy = (intervals[rating].days for rating in (Rating.HARD, Rating.GOOD, Rating.EASY))
                assert 1 <= hard < good < easy, (state, intervals)
            elif {Rating.GOOD, Rating.EASY} <= graduated:
                assert intervals[Rating.EASY].days > intervals[Rating.GOOD].days, (state, intervals)
            checked[state.stage] += 1
    assert min(checked.values()) >= 50, checked
