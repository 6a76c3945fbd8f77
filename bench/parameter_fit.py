"""How long one learner's fit takes on the workers: the task's pure path, by the size of the review log.

Run: python -m bench.parameter_fit [--sizes 2500,100000] [--repeats 3] [--seed 1]
No database. For each size, one simulated learner's log of that many reviews: cards start NEW_PER_DAY
a day (enough of them that the log spans about SPAN_DAYS days), each reviewed REVIEWS_PER_CARD times
at intervals the default FSRS-6 weights give (a half to twice the stability), recalled as a learner
with other true weights would (seeded draws). Then, as apps.srs.adaptation.optimization runs a fit: the log
becomes FSRS items split in time (the latest fifth of long-term reviews held out), fsrs-rs fits the
21 weights on the earlier part, and the fitted and the default weights are both scored on the later
part. Reading the log from the database is not included.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from typing import Any

import fsrs_rs_python

from apps.srs.core.optimizer import (
    LoggedReview,
    items_split_by_time,
    long_term_item_count,
    parameters_evaluate,
    parameters_fit,
)
from apps.srs.core.scheduling import DEFAULT_PARAMETERS

REVIEWS_PER_CARD = 10
SPAN_DAYS = 1_000
# The simulated learner forgets faster than the defaults expect: a fit has something to learn.
TRUE_PARAMETERS = (0.1, 0.5, 1.2, 4.0, *DEFAULT_PARAMETERS[4:8], 1.2, *DEFAULT_PARAMETERS[9:20], 0.4)
# The optimization task's share of long-term reviews held out to compare the weights.
TEST_FRACTION = 0.2
FIRST_DAY = datetime(2023, 1, 2, 19, tzinfo=UTC)


def learner_day(moment: datetime) -> date:
    # The service's default: the learner's day starts at 04:00 UTC.
    return (moment - timedelta(hours=4)).date()


def _recall(stability: float, elapsed_days: int) -> float:
    decay = -TRUE_PARAMETERS[20]
    return float((1 + (0.9 ** (1 / decay) - 1) * elapsed_days / stability) ** decay)


def _next(model: fsrs_rs_python.FSRS, state: Any, rating: int, elapsed_days: int) -> Any:
    following = model.next_states(state, 0.9, elapsed_days)
    return {1: following.again, 2: following.hard, 3: following.good, 4: following.easy}[rating].memory


def review_log(*, reviews: int, seed: int) -> list[LoggedReview]:
    """A learner's log of exactly `reviews` reviews, REVIEWS_PER_CARD per card."""
    draw = random.Random(seed)
    truth, defaults = fsrs_rs_python.FSRS(list(TRUE_PARAMETERS)), fsrs_rs_python.FSRS(list(DEFAULT_PARAMETERS))
    cards = math.ceil(reviews / REVIEWS_PER_CARD)
    new_per_day = max(1, cards // SPAN_DAYS)
    log: list[LoggedReview] = []
    for card_id in range(cards):
        day, elapsed, true_state, default_state = card_id // new_per_day, 0, None, None
        for _ in range(REVIEWS_PER_CARD):
            if len(log) == reviews:
                return log
            if true_state is None:
                rating = draw.choice((1, 3, 3, 4))
            else:
                rating = draw.choice((2, 3, 3, 3, 4)) if draw.random() < _recall(true_state.stability, elapsed) else 1
            log.append(LoggedReview(card_id=card_id, reviewed_at=FIRST_DAY + timedelta(days=day), rating=rating))
            true_state = _next(truth, true_state, rating, elapsed)
            default_state = _next(defaults, default_state, rating, elapsed)
            elapsed = max(1, round(default_state.stability * draw.uniform(0.5, 2.0)))
            day += elapsed
    return log


@contextmanager
def _stopwatch(samples: list[tuple[float, float]]) -> Iterator[None]:
    """Appends the wall-clock and CPU seconds of the block to `samples`."""
    wall, cpu = time.perf_counter(), time.process_time()
    yield
    samples.append((time.perf_counter() - wall, time.process_time() - cpu))


def size_report(*, reviews: int, repeats: int, seed: int) -> None:
    log = review_log(reviews=reviews, seed=seed)
    phases: dict[str, list[tuple[float, float]]] = {"split": [], "fit": [], "score both": []}
    for _ in range(repeats):
        with _stopwatch(phases["split"]):
            split = items_split_by_time(log, day_start=learner_day, test_fraction=TEST_FRACTION)
        with _stopwatch(phases["fit"]):
            fitted = parameters_fit(split.train, num_relearning_steps=1)
        with _stopwatch(phases["score both"]):
            new, old = parameters_evaluate(fitted, split.test), parameters_evaluate(DEFAULT_PARAMETERS, split.test)
    print(
        f"{reviews:,} reviews ({long_term_item_count(split.train):,} long-term fitted, {new.reviews:,} scored), "
        f"median of {repeats}:"
    )
    total_wall = total_cpu = 0.0
    for phase, samples in phases.items():
        wall = statistics.median(sample[0] for sample in samples)
        cpu = statistics.median(sample[1] for sample in samples)
        total_wall, total_cpu = total_wall + wall, total_cpu + cpu
        print(f"  {phase:>10}: {wall * 1000:9.1f} ms wall, {cpu * 1000:9.1f} ms CPU")
    print(f"  {'all':>10}: {total_wall * 1000:9.1f} ms wall, {total_cpu * 1000:9.1f} ms CPU")
    print(
        f"  log loss fitted {new.log_loss:.4f} vs default {old.log_loss:.4f}; "
        f"RMSE(bins) fitted {new.rmse_bins:.4f} vs default {old.rmse_bins:.4f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2500,100000", help="log sizes in reviews, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    arguments = parser.parse_args()
    print(f"fsrs-rs-python 0.9.3, one process, {os.cpu_count()} CPUs")
    for size in arguments.sizes.split(","):
        size_report(reviews=int(size), repeats=arguments.repeats, seed=arguments.seed)
