"""The scheduling core: FSRS memory states in and out of the `fsrs` package. Pure: no Django, no I/O.

Everything the database stores about a learner's memory of a card converts to and from `fsrs`
objects here and nowhere else. Times are timezone-aware UTC.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from enum import IntEnum
from typing import Any

import fsrs
from fsrs import scheduler as fsrs_scheduler

DEFAULT_PARAMETERS: tuple[float, ...] = tuple(fsrs.Scheduler().parameters)
DEFAULT_LEARNING_STEPS_SECONDS: tuple[int, ...] = (60, 600)
DEFAULT_RELEARNING_STEPS_SECONDS: tuple[int, ...] = (600,)
DEFAULT_MAXIMUM_INTERVAL_DAYS = 36_500


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


@dataclass(frozen=True)
class SchedulerConfig:
    desired_retention: float = 0.9
    learning_steps: tuple[int, ...] = DEFAULT_LEARNING_STEPS_SECONDS
    relearning_steps: tuple[int, ...] = DEFAULT_RELEARNING_STEPS_SECONDS
    maximum_interval: int = DEFAULT_MAXIMUM_INTERVAL_DAYS
    parameters: tuple[float, ...] = DEFAULT_PARAMETERS

    def scheduler(self) -> fsrs.Scheduler:
        return _scheduler_for(self)


_scheduler_cache: dict[SchedulerConfig, fsrs.Scheduler] = {}


def _scheduler_for(config: SchedulerConfig) -> fsrs.Scheduler:
    scheduler = _scheduler_cache.get(config)
    if scheduler is None:
        scheduler = fsrs.Scheduler(
            parameters=config.parameters,
            desired_retention=config.desired_retention,
            learning_steps=[timedelta(seconds=s) for s in config.learning_steps],
            relearning_steps=[timedelta(seconds=s) for s in config.relearning_steps],
            maximum_interval=config.maximum_interval,
            enable_fuzzing=True,
        )
        if len(_scheduler_cache) > 256:
            _scheduler_cache.clear()
        _scheduler_cache[config] = scheduler
    return scheduler


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
            "due": self.due.isoformat(),
            "last_review": self.last_review.isoformat(),
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


def to_fsrs_card(state: MemoryState | None, *, card_id: int = 0) -> fsrs.Card:
    # card_id is always given: with None, fsrs reads the clock for an id and sleeps a millisecond.
    if state is None:
        # FSRS-6 has no "new" state: a never-reviewed card is Learning at step 0 with no memory yet.
        return fsrs.Card(card_id=card_id, state=fsrs.State.Learning, step=0)
    return fsrs.Card(
        card_id=card_id,
        state=fsrs.State(int(state.stage)),
        step=state.step,
        stability=state.stability,
        difficulty=state.difficulty,
        due=state.due,
        last_review=state.last_review,
    )


def from_fsrs_card(card: fsrs.Card, *, reps: int, lapses: int) -> MemoryState:
    assert card.stability is not None and card.difficulty is not None and card.last_review is not None  # noqa: S101
    return MemoryState(
        stage=MemoryStage(int(card.state)),
        step=card.step,
        stability=float(card.stability),
        difficulty=float(card.difficulty),
        due=card.due.astimezone(UTC),
        last_review=card.last_review.astimezone(UTC),
        reps=reps,
        lapses=lapses,
    )


_fuzz_lock = threading.Lock()


@contextmanager
def _seeded_fuzz(seed: str) -> Iterator[None]:
    """Make fsrs's interval fuzz a function of `seed`, so replaying a history gives the same dates.

    fsrs draws fuzz from the module-level `random()`; it is swapped for a seeded generator's, under
    a lock, for the duration of one review.
    """
    generator = random.Random(seed)  # noqa: S311 - scheduling fuzz, not security
    with _fuzz_lock:
        original = fsrs_scheduler.random
        fsrs_scheduler.random = generator.random
        try:
            yield
        finally:
            fsrs_scheduler.random = original


def card_fuzz_seed(*, learner_id: int, card_id: int, state: MemoryState | None) -> str:
    """The fuzz seed of a learner's next review of a card: the learner, the card and its review count.

    Everything in it is known before the review, so the interval a preview shows is the one the
    review then gives, whoever sends it and whatever its client id. The count is the card's
    reviews so far (`reps`, which replay and undo recount from the history), so each review of a
    card draws afresh and replaying a history draws the same fuzz again.
    """
    return f"card:{learner_id}:{card_id}:{state.reps if state is not None else 0}"


def _require_utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
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
    """The memory state after one review; `fuzz_seed` fixes the interval fuzz (a card's is `card_fuzz_seed`)."""
    reviewed_at = _require_utc(reviewed_at)
    if state is not None and reviewed_at < state.last_review:
        raise ValueError("a review cannot precede the card's last review; replay the history instead")
    with _seeded_fuzz(fuzz_seed):
        card, _ = config.scheduler().review_card(to_fsrs_card(state), fsrs.Rating(int(rating)), reviewed_at)
    lapsed = state is not None and state.stage == MemoryStage.REVIEW and rating == Rating.AGAIN
    return from_fsrs_card(
        card,
        reps=(state.reps if state else 0) + 1,
        lapses=(state.lapses if state else 0) + int(lapsed),
    )


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
    return {
        rating: review(state, rating=rating, reviewed_at=now, config=config, fuzz_seed=seed).due - now
        for rating in Rating
    }


def retrievability(state: MemoryState | None, *, now: datetime, config: SchedulerConfig) -> float:
    """The probability of recall now; 0 for a card never reviewed."""
    if state is None:
        return 0.0
    return float(config.scheduler().get_card_retrievability(to_fsrs_card(state), current_datetime=_require_utc(now)))


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
        # fsrs's own steps after a review; they are private to its Scheduler, which has no public "interval of".
        days = scheduler._next_interval(stability=state.stability)
        interval = scheduler._get_fuzzed_interval(interval=timedelta(days=days))
    return state.last_review + interval


def with_config(config: SchedulerConfig, **changes: Any) -> SchedulerConfig:
    return replace(config, **changes)


def parameters_valid(parameters: Sequence[float]) -> bool:
    try:
        fsrs.Scheduler(parameters=tuple(parameters))
    except (ValueError, TypeError):
        return False
    return True
