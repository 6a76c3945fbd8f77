"""Interval previews of a study queue: the pure part of `due_load.next_intervals_preview`, per card.

Run: python -m bench.srs_previews
No database: a queue of 50 cards (30 in review, stabilities from 2 to 400 days; 10 learning or
relearning; 10 new) and a busy learner's due counts, 1 to 40 cards on every day a preview may land on.
Timed:
- per-rating path: `review()`, `balance_days()` and `due_balanced()` once per card and rating, the
  calls previews made one by one before outcomes were computed per card and balanced per queue;
- cold: the outcome memo emptied before each request;
- warm: the same cards again, as when a learner refetches the queue after a review;
- warm, outcomes only: `preview_states` alone, without load balancing.
Every request is made a few seconds after the last, as in use: the same whole days since each
card's last review, but a new review time. Figures are medians over the requests.
"""

from __future__ import annotations

import functools
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

from apps.srs.core.load_balancing import (
    DueLoad,
    balance_days,
    due_balanced,
    preview_states,
    previews_balanced,
)
from apps.srs.core.scheduling import (
    MemoryStage,
    MemoryState,
    Rating,
    SchedulerConfig,
    card_fuzz_seed,
    review,
    review_outcomes_memo_clear,
)

LEARNER_ID = 7
REVIEW_CARDS = 30
LEARNING_CARDS = 10
NEW_CARDS = 10
REQUESTS = 60
NOW = datetime(2026, 3, 2, 9, 30, 17, 250_000, tzinfo=UTC)
CONFIG = SchedulerConfig()
# (time zone, day-start hour, easy days): the default settings, and a zone with clock changes and a lighter Sunday.
LEARNERS: tuple[tuple[str, int, dict[int, float]], ...] = (
    ("UTC", 4, {}),
    ("Europe/Berlin", 4, {6: 0.5}),
)

Previews = dict[int, tuple[datetime, dict[Rating, MemoryState]]]


def queue(rng: random.Random) -> dict[int, MemoryState | None]:
    """A study queue: review cards due today or overdue, stabilities from days to years; learning steps; new cards."""
    states: dict[int, MemoryState | None] = {}
    card_id = 1000
    for _ in range(REVIEW_CARDS):
        stability = 2 * 200 ** rng.random()  # 2 days to 400, log-uniform
        last = NOW - timedelta(days=stability * rng.uniform(0.9, 1.4), seconds=rng.randrange(86_400))
        states[card_id] = MemoryState(
            MemoryStage.REVIEW,
            None,
            stability,
            rng.uniform(2.0, 9.0),
            due=last + timedelta(days=max(1, round(stability))),
            last_review=last,
            reps=rng.randint(3, 30),
            lapses=rng.randint(0, 4),
        )
        card_id += 1
    for index in range(LEARNING_CARDS):
        stage = MemoryStage.LEARNING if index < 6 else MemoryStage.RELEARNING
        last = NOW - timedelta(minutes=rng.randint(1, 30))
        states[card_id] = MemoryState(
            stage,
            rng.choice([0, 1]) if stage == MemoryStage.LEARNING else 0,
            rng.uniform(0.5, 5.0),
            rng.uniform(2.0, 9.0),
            due=last + timedelta(minutes=10),
            last_review=last,
            reps=rng.randint(1, 8),
            lapses=rng.randint(0, 2),
        )
        card_id += 1
    for _ in range(NEW_CARDS):
        states[card_id] = None
        card_id += 1
    return states


def previews_of(states: dict[int, MemoryState | None], now: datetime) -> Previews:
    return {
        card_id: preview_states(state, now=now, config=CONFIG, learner_id=LEARNER_ID, card_id=card_id)
        for card_id, state in states.items()
    }


def spans_of(previews: Previews, basis: DueLoad) -> list[tuple[date, date]]:
    return [
        span
        for at, afters in previews.values()
        for after in afters.values()
        if (span := balance_days(after, reviewed_at=at, config=CONFIG, load=basis)) is not None
    ]


def due_load(rng: random.Random, states: dict[int, MemoryState | None], basis: DueLoad) -> DueLoad:
    """What `due_load_get` reads for this queue: a count on every day of every span, as a busy learner has."""
    counts: dict[date, int] = {}
    for first, last in spans_of(previews_of(states, NOW), basis):
        day = first
        while day <= last:
            counts.setdefault(day, rng.randint(1, 40))
            day += timedelta(days=1)
    return DueLoad(
        due_counts=counts, timezone=basis.timezone, day_start_hour=basis.day_start_hour, easy_days=basis.easy_days
    )


def pure_part(states: dict[int, MemoryState | None], load: DueLoad, now: datetime) -> None:
    """As `next_intervals_preview` without its query: outcomes, the days to count, and the balanced intervals."""
    previews = previews_of(states, now)
    spans_of(previews, load)
    previews_balanced(previews, states, config=CONFIG, load=load)


def outcomes_only(states: dict[int, MemoryState | None], now: datetime) -> None:
    previews_of(states, now)


def per_rating_path(states: dict[int, MemoryState | None], load: DueLoad, now: datetime) -> None:
    for card_id, state in states.items():
        at = max(now, state.last_review) if state is not None else now
        seed = card_fuzz_seed(learner_id=LEARNER_ID, card_id=card_id, state=state)
        for rating in Rating:
            after = review(state, rating=rating, reviewed_at=at, config=CONFIG, fuzz_seed=seed)
            balance_days(after, reviewed_at=at, config=CONFIG, load=load)
            due_balanced(state, after, reviewed_at=at, config=CONFIG, load=load)


def timed(run: Callable[[datetime], None], *, memo_cleared: bool) -> float:
    """Median µs per card over REQUESTS requests, each a few seconds after the last."""
    run(NOW)
    elapsed: list[float] = []
    for request in range(REQUESTS):
        now = NOW + timedelta(seconds=3 * (request + 1))
        if memo_cleared:
            review_outcomes_memo_clear()
        started = time.perf_counter()
        run(now)
        elapsed.append(time.perf_counter() - started)
    return statistics.median(elapsed) * 1e6 / (REVIEW_CARDS + LEARNING_CARDS + NEW_CARDS)


def memo_bytes_per_card(states: dict[int, MemoryState | None]) -> float:
    """Memory the outcome memo holds per card state, from 20 learners' previews of the queue."""
    review_outcomes_memo_clear()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for learner in range(20):
        for card_id, state in states.items():
            preview_states(state, now=NOW, config=CONFIG, learner_id=learner, card_id=card_id)
    used = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    review_outcomes_memo_clear()
    return used / (20 * len(states))


def main() -> None:
    rng = random.Random(20260302)
    states = queue(rng)
    cards = len(states)
    for timezone, day_start_hour, easy_days in LEARNERS:
        basis = DueLoad(due_counts={}, timezone=timezone, day_start_hour=day_start_hour, easy_days=easy_days)
        load = due_load(rng, states, basis)
        print(f"{timezone}, day starts {day_start_hour}:00, easy days {easy_days}: {len(load.due_counts)} days counted")
        runs: tuple[tuple[str, Callable[[datetime], None], bool], ...] = (
            ("per-rating path", functools.partial(per_rating_path, states, load), False),
            ("cold", functools.partial(pure_part, states, load), True),
            ("warm", functools.partial(pure_part, states, load), False),
            ("warm, outcomes only", functools.partial(outcomes_only, states), False),
        )
        for name, run, memo_cleared in runs:
            per_card = timed(run, memo_cleared=memo_cleared)
            print(f"  {name:<22} {per_card:8.1f} µs/card  {per_card * cards / 1000:6.2f} ms/request of {cards}")
    print(f"outcome memo: about {memo_bytes_per_card(states):.0f} bytes per card state")


if __name__ == "__main__":
    main()
