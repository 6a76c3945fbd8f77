"""The scheduling core: FSRS memory states in and out of the `fsrs` package. Pure: no Django, no I/O.

Everything the database stores about a learner's memory of a card converts to and from `fsrs`
objects here and nowhere else. Times are timezone-aware UTC.
"""

from __future__ import annotations

import functools
import math
import random
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from enum import IntEnum
from typing import Any
from zoneinfo import ZoneInfo

import fsrs
from fsrs import scheduler as fsrs_scheduler

DEFAULT_PARAMETERS: tuple[float, ...] = tuple(fsrs.Scheduler().parameters)
DEFAULT_LEARNING_STEPS_SECONDS: tuple[int, ...] = (60, 600)
DEFAULT_RELEARNING_STEPS_SECONDS: tuple[int, ...] = (600,)
DEFAULT_MAXIMUM_INTERVAL_DAYS = 36_500
# Anki's default: a learner's day starts at 4 in the morning, local time.
DEFAULT_DAY_START_HOUR = 4
# FSRS-6's last weight is its forgetting curve's decay.
DECAY_WEIGHT = 20


class Rating(IntEnum):
    AGAIN = 1
    HARD = 2
    GOOD = 3
    EASY = 4


class MemoryStage(IntEnum):
    """FSRS's states; a card a learner has never reviewed has no memory state at all ("new")."""

    LEARNING = 1
    REVIEW = 2
    RELEARNING = 3


@functools.lru_cache(maxsize=1024)
def zone_named(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def learner_day(moment: datetime, *, timezone: str, day_start_hour: int) -> date:
    """The learner's day a moment falls in: their local wall-clock time less the day-start hour."""
    return (moment.astimezone(zone_named(timezone)) - timedelta(hours=day_start_hour)).date()


def learner_days_between(earlier: datetime, later: datetime, *, timezone: str, day_start_hour: int) -> int:
    """Days elapsed from one moment to a later one as Anki counts them: day starts crossed, never negative.

    Two reviews on the same learner day are 0 days apart however many hours lie between them, and a
    review at 23:00 and one at 05:00 the next morning (day start 4) are 1 apart. This is the one rule
    for elapsed time: the scheduler, previews, replays, recall and the optimizer's input all use it.
    """
    days = (
        learner_day(later, timezone=timezone, day_start_hour=day_start_hour)
        - learner_day(earlier, timezone=timezone, day_start_hour=day_start_hour)
    ).days
    return max(days, 0)


@dataclass(frozen=True)
class SchedulerConfig:
    desired_retention: float = 0.9
    learning_steps: tuple[int, ...] = DEFAULT_LEARNING_STEPS_SECONDS
    relearning_steps: tuple[int, ...] = DEFAULT_RELEARNING_STEPS_SECONDS
    maximum_interval: int = DEFAULT_MAXIMUM_INTERVAL_DAYS
    parameters: tuple[float, ...] = DEFAULT_PARAMETERS
    # Where the learner's days begin, which is what elapsed time is counted in.
    timezone: str = "UTC"
    day_start_hour: int = DEFAULT_DAY_START_HOUR
    # How much longer than the weights say the card is remembered: the course's population model's factor
    # for this learner and card (apps.srs.core.population), 1.0 where none is in use. The memory state
    # still moves as the weights say; recall, and so every interval, is read at the stability times this.
    stability_factor: float = 1.0

    def __hash__(self) -> int:
        # Kept once computed: every scheduler and preview memo lookup hashes the config, 21 parameters and all.
        cached: int | None = self.__dict__.get("_hash")
        if cached is None:
            cached = hash(
                (
                    self.desired_retention,
                    self.learning_steps,
                    self.relearning_steps,
                    self.maximum_interval,
                    self.parameters,
                    self.timezone,
                    self.day_start_hour,
                    self.stability_factor,
                )
            )
            object.__setattr__(self, "_hash", cached)
        return cached

    def elapsed_days(self, earlier: datetime, later: datetime) -> int:
        return learner_days_between(earlier, later, timezone=self.timezone, day_start_hour=self.day_start_hour)

    def scheduler(self) -> fsrs.Scheduler:
        return _scheduler_for(self)


_scheduler_cache: dict[SchedulerConfig, fsrs.Scheduler] = {}


def _scheduler_for(config: SchedulerConfig) -> fsrs.Scheduler:
    scheduler = _scheduler_cache.get(config)
    if scheduler is None:
        scheduler = fsrs.Scheduler(
            parameters=config.parameters,
            desired_retention=_retention_at_weights(config),
            learning_steps=[timedelta(seconds=s) for s in config.learning_steps],
            relearning_steps=[timedelta(seconds=s) for s in config.relearning_steps],
            maximum_interval=config.maximum_interval,
            # The fuzz is drawn here (`fuzzed_days`), as Anki draws it.
            enable_fuzzing=False,
        )
        if len(_scheduler_cache) > 256:
            _scheduler_cache.clear()
        _scheduler_cache[config] = scheduler
    return scheduler


def _retention_at_weights(config: SchedulerConfig) -> float:
    """The retention the weights' own curve must reach for the card's curve to reach the desired one then.

    fsrs reads retention only to size intervals: asking it for this one gives the interval at which
    recall at the stability times the factor is the desired retention.
    """
    if config.stability_factor == 1.0:
        return config.desired_retention
    decay = config.parameters[DECAY_WEIGHT]
    return float((1 + (config.desired_retention ** (-1 / decay) - 1) * config.stability_factor) ** -decay)


@dataclass(frozen=True)
class MemoryState:
    """One learner's memory of one card after at least one review."""

    stage: MemoryStage
    step: int | None
    stability: float
    difficulty: float
    due: datetime
    last_review: datetime
    reps: int = 0
    lapses: int = 0

    def __post_init__(self) -> None:
        if self.due.tzinfo is None or self.last_review.tzinfo is None:
            raise ValueError("datetimes must be timezone-aware")

    def to_dict(self) -> dict[str, Any]:
        # Spelled out rather than dataclasses.asdict, which deep-copies field by field: replaying a
        # card's tail stores a state for every review in it.
        return {
            "stage": int(self.stage),
            "step": self.step,
            "stability": self.stability,
            "difficulty": self.difficulty,
            # Written as responses write times (with Z); fromisoformat reads both forms.
            "due": self.due.isoformat().replace("+00:00", "Z"),
            "last_review": self.last_review.isoformat().replace("+00:00", "Z"),
            "reps": self.reps,
            "lapses": self.lapses,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MemoryState:
        return cls(
            stage=MemoryStage(data["stage"]),
            step=data["step"],
            stability=float(data["stability"]),
            difficulty=float(data["difficulty"]),
            # astimezone() would read a naive time as the server's local time; naive is refused instead.
            due=_require_utc(datetime.fromisoformat(data["due"])),
            last_review=_require_utc(datetime.fromisoformat(data["last_review"])),
            reps=int(data.get("reps", 0)),
            lapses=int(data.get("lapses", 0)),
        )


_FSRS_STATES: dict[int, fsrs.State] = {int(stage): fsrs.State(int(stage)) for stage in MemoryStage}
_STAGES: dict[int, MemoryStage] = {int(stage): stage for stage in MemoryStage}
_FSRS_RATINGS: dict[int, fsrs.Rating] = {int(rating): fsrs.Rating(int(rating)) for rating in Rating}
_RATINGS: tuple[Rating, ...] = tuple(Rating)


def _fsrs_rating(rating: Rating) -> fsrs.Rating:
    return _FSRS_RATINGS.get(rating) or fsrs.Rating(int(rating))


def _memory_state(
    stage: MemoryStage,
    step: int | None,
    stability: float,
    difficulty: float,
    due: datetime,
    last_review: datetime,
    reps: int,
    lapses: int,
) -> MemoryState:
    """A MemoryState built without its checked __init__, for times known to be timezone-aware.

    Every review and preview builds states (four per card shown for study), and the frozen
    dataclass's __init__ with its check costs three times as much as this.
    """
    state: MemoryState = object.__new__(MemoryState)
    object.__setattr__(
        state,
        "__dict__",
        {
            "stage": stage,
            "step": step,
            "stability": stability,
            "difficulty": difficulty,
            "due": due,
            "last_review": last_review,
            "reps": reps,
            "lapses": lapses,
        },
    )
    return state


def to_fsrs_card(state: MemoryState | None, *, card_id: int = 0, last_review: datetime | None = None) -> fsrs.Card:
    """The state as an `fsrs` card, with `last_review` in place of the state's own where given."""
    # card_id is always given: with None, fsrs reads the clock for an id and sleeps a millisecond.
    if state is None:
        # FSRS-6 has no "new" state: a never-reviewed card is Learning at step 0 with no memory yet.
        return fsrs.Card(card_id=card_id, state=fsrs.State.Learning, step=0)
    return fsrs.Card(
        card_id=card_id,
        state=_FSRS_STATES.get(state.stage) or fsrs.State(int(state.stage)),
        step=state.step,
        stability=state.stability,
        difficulty=state.difficulty,
        due=state.due,
        last_review=state.last_review if last_review is None else last_review,
    )


def from_fsrs_card(card: fsrs.Card, *, reps: int, lapses: int) -> MemoryState:
    assert card.stability is not None and card.difficulty is not None and card.last_review is not None  # noqa: S101
    # astimezone() always gives an aware time (it reads a naive one as local), so the state needs no check.
    return _memory_state(
        _STAGES[card.state],
        card.step,
        float(card.stability),
        float(card.difficulty),
        card.due.astimezone(UTC),
        card.last_review.astimezone(UTC),
        reps,
        lapses,
    )


class _FuzzSource(threading.local):
    """The fuzz seed of the review running on this thread (None outside one), and how far it has drawn."""

    seed: str | None = None
    draws: int = 0
    generator: random.Random | None = None


_fuzz_source = _FuzzSource()
_unseeded_random = random.random


@functools.lru_cache(maxsize=4096)
def _first_draw(seed: str) -> float:
    # A review draws at most once, so this is nearly every draw; seeding a generator costs far more than drawing.
    return random.Random(seed).random()  # noqa: S311 - scheduling fuzz, not security


def _fuzz_random() -> float:
    """The fuzz source: the current review's seeded generator on this thread, else Python's global one."""
    source = _fuzz_source
    seed = source.seed
    if seed is None:
        return _unseeded_random()
    draws = source.draws
    source.draws = draws + 1
    if draws == 0:
        return _first_draw(seed)
    generator = source.generator
    if generator is None:
        generator = source.generator = random.Random(seed)  # noqa: S311 - scheduling fuzz, not security
        generator.random()
    return generator.random()


# The fuzz source lives where fsrs keeps its own, the module global `random()` of its scheduler, and
# `fuzzed_days` draws through it: installed once, so reviews on several threads draw each from their
# own seed with nothing swapped or locked, and a replacement set later (a test forcing draws) still wins.
fsrs_scheduler.random = _fuzz_random


@contextmanager
def _seeded_fuzz(seed: str) -> Iterator[None]:
    """Make the interval fuzz a function of `seed` on this thread, so replaying a history gives the same dates.

    Draws are those of `random.Random(seed)`, made only when an interval is fuzzed.
    """
    source = _fuzz_source
    # Restored afterwards, so seeded blocks may nest.
    previous = (source.seed, source.draws, source.generator)
    source.seed, source.draws, source.generator = seed, 0, None
    try:
        yield
    finally:
        source.seed, source.draws, source.generator = previous


def card_fuzz_seed(*, learner_id: int, card_id: int, state: MemoryState | None) -> str:
    """The fuzz seed of a learner's next review of a card: the learner, the card and its review count.

    Everything in it is known before the review, so the interval a preview shows is the one the
    review then gives, whoever sends it and whatever its client id. The count is the card's
    reviews so far (`reps`, which replay and undo recount from the history), so each review of a
    card draws afresh and replaying a history draws the same fuzz again.
    """
    return f"card:{learner_id}:{card_id}:{state.reps if state is not None else 0}"


def _require_utc(moment: datetime) -> datetime:
    tzinfo = moment.tzinfo
    if tzinfo is UTC:
        return moment
    if tzinfo is None:
        raise ValueError("datetimes must be timezone-aware")
    return moment.astimezone(UTC)


def review(
    state: MemoryState | None,
    *,
    rating: Rating,
    reviewed_at: datetime,
    config: SchedulerConfig,
    fuzz_seed: str,
) -> MemoryState:
    """The memory state after one review; `fuzz_seed` fixes the interval fuzz (a card's is `card_fuzz_seed`).

    The same as `review_outcomes(...)[rating]`: a review gives the interval its preview showed.
    """
    return review_outcomes(state, reviewed_at=reviewed_at, config=config, fuzz_seed=fuzz_seed)[rating]


def _epoch_fsrs_card(state: MemoryState | None) -> fsrs.Card:
    """The state as an `fsrs` card last reviewed at `_OUTCOME_EPOCH`, to be read `elapsed_days` after it.

    fsrs counts elapsed time in whole 24-hour periods from the last review; the scheduler counts it in
    learner days. fsrs reads the last review only to count those days, so it is handed one exactly the
    learner days before the time it reviews or reads the card at.
    """
    return to_fsrs_card(state, last_review=_OUTCOME_EPOCH)


def _fsrs_review(state: MemoryState | None, *, rating: Rating, elapsed_days: int, config: SchedulerConfig) -> fsrs.Card:
    """fsrs's own review of the card `elapsed_days` learner days after its last review, unfuzzed."""
    reviewed_at = _OUTCOME_EPOCH + timedelta(days=elapsed_days)
    card, _ = config.scheduler().review_card(_epoch_fsrs_card(state), _fsrs_rating(rating), reviewed_at)
    return card


OUTCOME_MEMO_SIZE = 8192
# The review time memoised outcomes are computed at: the earliest, so no later review time can
# overflow where it did not. fsrs reads a review's time only as whole days since the last review
# (stability, difficulty, retrievability) and adds the next interval to it.
_OUTCOME_EPOCH = datetime(1, 1, 1, tzinfo=UTC)

# One rating's outcome relative to the review time: stage, step, stability, difficulty, interval to due, reps, lapses.
_Outcome = tuple[MemoryStage, int | None, float, float, timedelta, int, int]


@functools.lru_cache(maxsize=OUTCOME_MEMO_SIZE)
def _memoised_outcomes(
    config: SchedulerConfig,
    fuzz_seed: str,
    stage: MemoryStage | None,
    step: int | None,
    stability: float,
    difficulty: float,
    reps: int,
    lapses: int,
    elapsed_days: int,
) -> tuple[_Outcome, ...]:
    """Each rating's outcome for a card state (`stage` None: a new card): everything fsrs reads is in the key.

    fsrs's intervals, put in the order Anki keeps them (`intervals_ordered`).
    """
    state: MemoryState | None = None
    if stage is not None:
        state = _memory_state(stage, step, stability, difficulty, _OUTCOME_EPOCH, _OUTCOME_EPOCH, reps, lapses)
    reviewed_at = _OUTCOME_EPOCH + timedelta(days=elapsed_days)
    cards = {
        rating: _fsrs_review(state, rating=rating, elapsed_days=elapsed_days, config=config) for rating in _RATINGS
    }
    stages = {rating: _STAGES[card.state] for rating, card in cards.items()}
    unordered = {}
    for rating, card in cards.items():
        interval = card.due - reviewed_at
        if stages[rating] == MemoryStage.REVIEW:
            with _seeded_fuzz(fuzz_seed):
                interval = timedelta(days=fuzzed_days(interval.days, maximum_interval=config.maximum_interval))
        unordered[rating] = interval
    intervals = intervals_ordered(
        unordered,
        stages=stages,
        before=stage,
        good_stability=float(cards[Rating.GOOD].stability or 0.0),
        config=config,
    )
    lapsed = int(stage == MemoryStage.REVIEW)
    outcomes: list[_Outcome] = []
    for rating in _RATINGS:
        card = cards[rating]
        assert card.stability is not None and card.difficulty is not None  # noqa: S101 - fsrs set both
        outcomes.append(
            (
                stages[rating],
                card.step,
                float(card.stability),
                float(card.difficulty),
                intervals[rating],
                reps + 1,
                lapses + (lapsed if rating == Rating.AGAIN else 0),
            )
        )
    return tuple(outcomes)


# fsrs's and Anki's fuzz: no interval shorter than this many days is fuzzed, none fuzzed below two days, and
# the band is one day plus these shares of the days in each span, each side.
FUZZ_SHORTEST_DAYS = 2.5
FUZZ_LOWEST_DAYS = 2
FUZZ_BANDS: tuple[tuple[float, float, float], ...] = ((2.5, 7.0, 0.15), (7.0, 20.0, 0.1), (20.0, math.inf, 0.05))


def fuzz_range(interval_days: int, *, maximum_interval: int) -> tuple[int, int] | None:
    """The days an interval may be fuzzed to, first and last; None for an interval fuzz leaves alone."""
    if interval_days < FUZZ_SHORTEST_DAYS:
        return None
    delta = 1.0
    for start, end, share in FUZZ_BANDS:
        delta += share * max(min(float(interval_days), end) - start, 0.0)
    high = min(round(interval_days + delta), maximum_interval)
    low = min(max(FUZZ_LOWEST_DAYS, round(interval_days - delta)), high)
    return low, high


def fuzzed_days(interval_days: int, *, maximum_interval: int) -> int:
    """An interval fuzzed with the current review's draw, as Anki draws it: each day of the range equally likely.

    fsrs rounds its draw and so can land a day past its range's end; Anki floors it, which keeps it within.
    """
    bounds = fuzz_range(interval_days, maximum_interval=maximum_interval)
    if bounds is None:
        return min(interval_days, maximum_interval)
    low, high = bounds
    draw = fsrs_scheduler.random()
    return min(math.floor(low + draw * (high - low + 1)), high)


def intervals_ordered(
    intervals: Mapping[Rating, timedelta],
    *,
    stages: Mapping[Rating, MemoryStage],
    before: MemoryStage | None,
    good_stability: float,
    config: SchedulerConfig,
) -> dict[Rating, timedelta]:
    """Each rating's interval, raised where needed to keep the order Anki keeps: Hard < Good < Easy in days.

    A card in review: Hard at least a day, Good at least a day past Hard, Easy at least a day past
    Good. A new or (re)learning card whose Easy ends its steps: Easy at least a day past Good's
    interval in days, or past the interval Good's stability would give where Good takes another
    step. No floor exceeds the maximum interval. `stages`: the stage each rating leaves the card in;
    only intervals into the review stage are in whole days.
    """
    ordered = dict(intervals)
    maximum = config.maximum_interval
    if before == MemoryStage.REVIEW:
        floor = 1
        for rating in (Rating.HARD, Rating.GOOD, Rating.EASY):
            if stages[rating] == MemoryStage.REVIEW:
                if ordered[rating].days < min(floor, maximum):
                    ordered[rating] = timedelta(days=min(floor, maximum))
                floor = ordered[rating].days + 1
        return ordered
    if stages[Rating.EASY] == MemoryStage.REVIEW:
        if stages[Rating.GOOD] == MemoryStage.REVIEW:
            good_days = ordered[Rating.GOOD].days
        else:
            # fsrs's own interval for a stability; its Scheduler keeps "interval of" to itself.
            good_days = config.scheduler()._next_interval(stability=good_stability)
        if ordered[Rating.EASY].days < min(good_days + 1, maximum):
            ordered[Rating.EASY] = timedelta(days=min(good_days + 1, maximum))
    return ordered


def _outcomes(
    state: MemoryState | None, *, reviewed_at: datetime, config: SchedulerConfig, fuzz_seed: str
) -> tuple[_Outcome, ...]:
    # Draws forced through a replaced fuzz source are not the seed's, and are not remembered as if they were.
    outcomes_of = _memoised_outcomes if fsrs_scheduler.random is _fuzz_random else _memoised_outcomes.__wrapped__
    if state is None:
        return outcomes_of(config, fuzz_seed, None, None, 0.0, 0.0, 0, 0, 0)
    if reviewed_at < state.last_review:
        raise ValueError("a review cannot precede the card's last review; replay the history instead")
    return outcomes_of(
        config,
        fuzz_seed,
        state.stage,
        state.step,
        state.stability,
        state.difficulty,
        state.reps,
        state.lapses,
        config.elapsed_days(state.last_review, reviewed_at),
    )


def review_outcomes(
    state: MemoryState | None, *, reviewed_at: datetime, config: SchedulerConfig, fuzz_seed: str
) -> dict[Rating, MemoryState]:
    """The state each rating leaves: `review` for every rating, each equal to its result.

    Remembered per process (the `OUTCOME_MEMO_SIZE` latest card states) by everything fsrs reads,
    so a card whose state and whole days since its last review are unchanged is not reviewed again.
    """
    reviewed_at = _require_utc(reviewed_at)
    outcomes = _outcomes(state, reviewed_at=reviewed_at, config=config, fuzz_seed=fuzz_seed)
    return {
        rating: _memory_state(stage, step, stability, difficulty, reviewed_at + interval, reviewed_at, reps, lapses)
        for rating, (stage, step, stability, difficulty, interval, reps, lapses) in zip(_RATINGS, outcomes, strict=True)
    }


def review_outcomes_memo_clear() -> None:
    """Empty the memo of `review_outcomes` (for measurements and tests)."""
    _memoised_outcomes.cache_clear()


@dataclass(frozen=True, order=True)
class ReviewEvent:
    """One review of a history, as replay needs it; ordered by time, then id for equal times.

    The id only orders reviews made at the same instant; the fuzz comes from `card_fuzz_seed`.
    """

    reviewed_at: datetime
    review_id: str
    rating: Rating = field(compare=False)
    config: SchedulerConfig = field(compare=False, default_factory=SchedulerConfig)


def replay(
    events: Iterable[ReviewEvent], *, learner_id: int, card_id: int, start: MemoryState | None = None
) -> list[MemoryState]:
    """The state after each review of a learner's history of a card, in time order whatever order they came in.

    `start` is the state the card had before the first of `events`: replaying a history's tail from
    the state before it gives what replaying the whole history gives.
    """
    states: list[MemoryState] = []
    state = start
    for event in sorted(events):
        state = review(
            state,
            rating=event.rating,
            reviewed_at=event.reviewed_at,
            config=event.config,
            fuzz_seed=card_fuzz_seed(learner_id=learner_id, card_id=card_id, state=state),
        )
        states.append(state)
    return states


def preview_intervals(
    state: MemoryState | None, *, now: datetime, config: SchedulerConfig, learner_id: int, card_id: int
) -> dict[Rating, timedelta]:
    """How long until the card is due again for each rating, if reviewed now (for button labels).

    Drawn with the fuzz seed the review itself will use, so each label is the interval that rating
    gives when the review comes at `now`, or later with the same whole days since the last review.
    """
    now = _require_utc(now)
    if state is not None and now < state.last_review:
        now = state.last_review
    seed = card_fuzz_seed(learner_id=learner_id, card_id=card_id, state=state)
    outcomes = _outcomes(state, reviewed_at=now, config=config, fuzz_seed=seed)
    return {rating: outcome[4] for rating, outcome in zip(_RATINGS, outcomes, strict=True)}


def retrievability(state: MemoryState | None, *, now: datetime, config: SchedulerConfig) -> float:
    """The probability of recall now; 0 for a card never reviewed."""
    if state is None:
        return 0.0
    elapsed = config.elapsed_days(state.last_review, _require_utc(now))
    read_at = _OUTCOME_EPOCH + timedelta(days=elapsed)
    read = (
        state if config.stability_factor == 1.0 else replace(state, stability=state.stability * config.stability_factor)
    )
    return float(config.scheduler().get_card_retrievability(_epoch_fsrs_card(read), current_datetime=read_at))


def rescheduled_due(state: MemoryState, *, config: SchedulerConfig, learner_id: int, card_id: int) -> datetime:
    """When a review-stage card falls due under `config`: its last review plus the interval FSRS gives its stability.

    The interval is the one `fsrs` computes after a review (desired retention, decay, maximum
    interval), fuzzed with the seed of the review that left the card in `state`: under the config
    that review was made with, the due date is the one it gave, and rescheduling twice moves nothing.
    """
    if state.stage != MemoryStage.REVIEW:
        raise ValueError("only a card in the review stage has an interval to reschedule")
    scheduler = config.scheduler()
    previous = replace(state, reps=max(state.reps - 1, 0))
    with _seeded_fuzz(card_fuzz_seed(learner_id=learner_id, card_id=card_id, state=previous)):
        # fsrs's own interval after a review; it is private to its Scheduler, which has no public "interval of".
        days = fuzzed_days(
            scheduler._next_interval(stability=state.stability), maximum_interval=config.maximum_interval
        )
    return state.last_review + timedelta(days=days)


def with_config(config: SchedulerConfig, **changes: Any) -> SchedulerConfig:
    return replace(config, **changes)


def parameters_valid(parameters: Sequence[float]) -> bool:
    try:
        fsrs.Scheduler(parameters=tuple(parameters))
    except (ValueError, TypeError):
        return False
    return True
