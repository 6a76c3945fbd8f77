"""Retention advice: the desired retention that costs the least study time per remembered card. Pure: no Django.

FSRS's own simulator (fsrs-rs, through `fsrs_rs_python`) studies a simulated deck for a year with the
learner's parameters, limits and seconds per review, once at the desired retention it finds best and
once at the learner's current one. Advice only: nothing here changes a setting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import fsrs_rs_python

from apps.srs.core.scheduling import MemoryStage, Rating

# A year: the span Anki's simulator shows by default, long enough for the first intervals to come round.
SIMULATED_DAYS = 365
# Fixed, so the same inputs always give the same advice.
SIMULATION_SEED = 2024
# A learner with fewer cards than this still gets advice for a deck of a useful size; above the cap the
# simulation costs seconds of a worker and the advice barely moves.
MIN_DECK_SIZE = 100
MAX_DECK_SIZE = 10_000
# A (stage, rating) cell uses the learner's own median seconds once it has this many timed reviews.
MIN_TIMED_REVIEWS = 20
# The settings allow 0.70 to 0.99; the simulator's search covers 0.70 to 0.95.
RETENTION_STEP = 0.01

_STAGES = (MemoryStage.LEARNING, MemoryStage.REVIEW, MemoryStage.RELEARNING)
_SECONDS_PER_MINUTE = 60.0


def default_seconds_per_review() -> tuple[tuple[float, ...], ...]:
    """fsrs-rs's default seconds per review: rows learning, review, relearning; columns Again to Easy."""
    return tuple(tuple(float(s) for s in row) for row in fsrs_rs_python.default_simulator_config().state_rating_costs)


@dataclass(frozen=True)
class ReviewSeconds:
    """Seconds per review by stage and rating, and how many of the 12 cells came from the learner's own timings."""

    table: tuple[tuple[float, ...], ...]
    own_cells: int

    @property
    def source(self) -> str:
        if self.own_cells == 0:
            return "default"
        return "learner" if self.own_cells == len(_STAGES) * len(Rating) else "mixed"


def review_seconds_from_timings(timings: Mapping[tuple[int, int], tuple[int, float]]) -> ReviewSeconds:
    """`timings`: (stage before the review, rating) -> (timed reviews, median seconds). Thin cells keep the default."""
    defaults = default_seconds_per_review()
    table: list[tuple[float, ...]] = []
    own = 0
    for row, stage in enumerate(_STAGES):
        cells = []
        for column, rating in enumerate(Rating):
            count, median = timings.get((int(stage), int(rating)), (0, 0.0))
            if count >= MIN_TIMED_REVIEWS and median > 0:
                cells.append(float(median))
                own += 1
            else:
                cells.append(defaults[row][column])
        table.append(tuple(cells))
    return ReviewSeconds(table=tuple(table), own_cells=own)


@dataclass(frozen=True)
class SimulatorSettings:
    """What the simulated year is made of, besides the parameters; each from the learner's settings."""

    deck_size: int
    new_cards_per_day: int
    max_reviews_per_day: int
    maximum_interval_days: int
    learning_steps: int
    relearning_steps: int
    seconds: ReviewSeconds
    days: int = SIMULATED_DAYS

    def simulator_config(self) -> fsrs_rs_python.SimulatorConfig:
        config = fsrs_rs_python.default_simulator_config()
        config.deck_size = min(max(self.deck_size, MIN_DECK_SIZE), MAX_DECK_SIZE)
        config.learn_span = self.days
        config.learn_limit = self.new_cards_per_day
        config.review_limit = self.max_reviews_per_day
        config.max_ivl = float(self.maximum_interval_days)
        # The daily limits bound the work, as they do the learner's; no cap on minutes besides.
        config.max_cost_perday = 24 * 3600.0
        config.learning_step_count = self.learning_steps
        config.relearning_step_count = self.relearning_steps
        config.state_rating_costs = [list(row) for row in self.seconds.table]
        return config


@dataclass(frozen=True)
class Workload:
    """A simulated year at one desired retention, as daily means, and the cost of each card remembered at its end."""

    desired_retention: float
    reviews_per_day: float
    minutes_per_day: float
    remembered_cards: float
    seconds_per_remembered_card: float


@dataclass(frozen=True)
class RetentionAdvice:
    recommended: Workload
    current: Workload


def workload_simulate(
    parameters: Sequence[float], *, desired_retention: float, settings: SimulatorSettings
) -> Workload:
    result = fsrs_rs_python.simulate(
        list(parameters), desired_retention, settings.simulator_config(), seed=SIMULATION_SEED
    )
    seconds = float(sum(result.cost_per_day))
    remembered = float(result.memorized_cnt_per_day[-1]) if result.memorized_cnt_per_day else 0.0
    return Workload(
        desired_retention=desired_retention,
        reviews_per_day=sum(result.review_cnt_per_day) / settings.days,
        minutes_per_day=seconds / settings.days / _SECONDS_PER_MINUTE,
        remembered_cards=remembered,
        seconds_per_remembered_card=seconds / remembered if remembered else 0.0,
    )


def retention_advice_compute(
    parameters: Sequence[float], *, desired_retention: float, settings: SimulatorSettings, lowest: float = 0.70
) -> RetentionAdvice:
    """The retention with the least study time per remembered card (to the settings' step), beside the current one."""
    found = fsrs_rs_python.optimal_retention(settings.simulator_config(), list(parameters))
    recommended = max(lowest, round(round(found / RETENTION_STEP) * RETENTION_STEP, 2))
    return RetentionAdvice(
        recommended=workload_simulate(parameters, desired_retention=recommended, settings=settings),
        current=workload_simulate(parameters, desired_retention=desired_retention, settings=settings),
    )
