"""Does the memory model learn? Simulated learners with known FSRS-6 parameters, fitted and scored on held-out weeks.

Run: python -m bench.memory_model [--learners 20] [--days 150] [--test-days 28] [--seed 1] [--timing-learners 50]
No database. Each simulated learner has true FSRS-6 parameters (the defaults, perturbed within the
parameters' bounds) and a desired retention; they study every evening for DAYS days with the service's
own scheduler (apps.srs.core.scheduling.review, default parameters, the study queue's order and learn-ahead),
introducing NEW_CARDS_PER_DAY cards a day. Whether they recall a card is drawn (seeded) from the TRUE
model's probability of recall; how they rate it from fsrs-rs's default rating shares. Parameters are then
fitted on everything before the last TEST_DAYS days through apps.srs.core.optimizer (the code path the
optimization task uses) and scored on the reviews of those last days: log loss and RMSE(bins) for the
default parameters, the fitted ones and the true ones (the oracle); also for a fit on only the items
whose last review is a day or more after the one before, and for the parameters the task would leave in
use (its own 80/20 adoption test on the same earlier reviews). Last, the fitting path is timed on
TIMING_LEARNERS learners of 2,500 reviews each in this one process, and the nightly job extrapolated.
"""

from __future__ import annotations

import argparse
import heapq
import math
import os
import random
import statistics
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

import fsrs_rs_python
from fsrs.scheduler import LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS

from apps.srs.core.optimizer import (
    FitMetrics,
    LoggedReview,
    adoption_refusal,
    fsrs_items_from_reviews,
    items_split_by_time,
    long_term_item_count,
    parameters_evaluate,
    parameters_fit,
)
from apps.srs.core.scheduling import (
    DEFAULT_PARAMETERS,
    DEFAULT_RELEARNING_STEPS_SECONDS,
    MemoryStage,
    MemoryState,
    Rating,
    SchedulerConfig,
    card_fuzz_seed,
    review,
)

# The first simulated day; a Monday, far from any daylight-saving question (the learners live in UTC).
FIRST_DAY = date(2025, 1, 6)
# The learner's day starts at 04:00 (the service's default day-start hour) and they study from 19:00.
DAY_START_HOUR = 4
SESSION_HOUR = 19
SECONDS_PER_REVIEW = 8
# As the study queue does: learning steps due within this window are shown now.
LEARN_AHEAD = timedelta(minutes=20)
NEW_CARDS_PER_DAY = 10
# Spread (standard deviation of the log) of each true parameter around its default. The initial
# stabilities vary most between real learners (srs-benchmark's fitted sets span orders of magnitude),
# so they get the widest spread; the rest stay near the defaults, within the parameters' bounds.
INITIAL_STABILITY_SPREAD = 0.6
PARAMETER_SPREAD = 0.25
DESIRED_RETENTIONS = (0.85, 0.9, 0.9, 0.95)
# fsrs-rs's default simulator shares: first ratings (Again, Hard, Good, Easy), and Hard/Good/Easy once recalled.
FIRST_RATING_SHARES = (0.24, 0.094, 0.495, 0.171)
RECALLED_RATING_SHARES = (0.224, 0.631, 0.145)
TIMING_REVIEWS = 2_500
# Long enough for every simulated learner to make TIMING_REVIEWS reviews; each timed log is cut there.
TIMING_DAYS = 90
# As the optimization task: the share of long-term reviews its adoption test scores on.
TASK_TEST_FRACTION = 0.2
# The learners' relearning steps: the service's default, one.
RELEARNING_STEPS = len(DEFAULT_RELEARNING_STEPS_SECONDS)
NIGHTLY_LEARNERS = 10_000
NIGHTLY_BUDGET_SECONDS = 15 * 60


@dataclass(frozen=True)
class SimulatedLearner:
    learner_id: int
    true_parameters: tuple[float, ...]
    desired_retention: float


@dataclass
class CardTrack:
    """One card as the service sees it (`state`) and as the learner's memory really is (`truth`)."""

    card_id: int
    state: MemoryState | None = None
    truth: fsrs_rs_python.MemoryState | None = None
    last_day: int = 0
    last_review: datetime | None = None


@dataclass
class StudyLog:
    learner: SimulatedLearner
    reviews: list[LoggedReview] = field(default_factory=list)
    # For each long-term review (a day or more after the last): the true probability of recall and the outcome.
    long_term_recall: list[tuple[float, bool]] = field(default_factory=list)
    cards: int = 0
    # The true probability of recall of each long-term review, by card and time.
    true_recall: dict[tuple[int, datetime], float] = field(default_factory=dict)


def learner_parameters_of(normals: Sequence[float]) -> tuple[float, ...]:
    """The true parameters drawn from 21 standard normals: each default scaled by e^(spread * normal), in bounds."""
    parameters = []
    for index, (default, lower, upper, normal) in enumerate(
        zip(DEFAULT_PARAMETERS, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS, normals, strict=True)
    ):
        spread = INITIAL_STABILITY_SPREAD if index < 4 else PARAMETER_SPREAD
        parameters.append(min(upper, max(lower, default * math.exp(spread * normal))))
    # FSRS expects the initial stabilities of Again, Hard, Good and Easy in rising order.
    parameters[:4] = sorted(parameters[:4])
    return tuple(parameters)


def learner_draw(*, learner_id: int, draw: random.Random) -> SimulatedLearner:
    """A learner whose true parameters are the defaults, each scaled by a log-normal factor and kept in bounds."""
    parameters = learner_parameters_of([draw.gauss(0.0, 1.0) for _ in DEFAULT_PARAMETERS])
    return SimulatedLearner(
        learner_id=learner_id, true_parameters=parameters, desired_retention=draw.choice(DESIRED_RETENTIONS)
    )


def recall_probability(*, stability: float, elapsed_days: float, decay: float) -> float:
    """FSRS-6's forgetting curve: 0.9 after `stability` days, with the learner's own decay."""
    factor = 0.9 ** (-1.0 / decay) - 1.0
    return float((1.0 + factor * elapsed_days / stability) ** -decay)


def learner_day(moment: datetime) -> date:
    return (moment - timedelta(hours=DAY_START_HOUR)).date()


def _rating_draw(
    *,
    truth: fsrs_rs_python.MemoryState | None,
    elapsed_days: float,
    decay: float,
    draw: random.Random,
    stability_factor: float = 1.0,
) -> tuple[Rating, float | None]:
    if truth is None:
        return Rating(draw.choices((1, 2, 3, 4), FIRST_RATING_SHARES)[0]), None
    stability = truth.stability * stability_factor
    probability = recall_probability(stability=stability, elapsed_days=elapsed_days, decay=decay)
    if draw.random() >= probability:
        return Rating.AGAIN, probability
    return Rating(draw.choices((2, 3, 4), RECALLED_RATING_SHARES)[0]), probability


def study_simulate(
    learner: SimulatedLearner, *, days: int, seed: int, card_factors: Sequence[float] | None = None
) -> StudyLog:
    """DAYS evenings of study with the service's scheduler; outcomes drawn from the learner's true model.

    With `card_factors`, the course has that many cards, introduced in order, and card i's true
    stability is the learner's times card_factors[i]: how much easier (over 1) or harder it is for anyone.
    """
    draw = random.Random(f"{seed}:{learner.learner_id}")
    config = SchedulerConfig(desired_retention=learner.desired_retention)
    true_model = fsrs_rs_python.FSRS(list(learner.true_parameters))
    decay = learner.true_parameters[20]
    log = StudyLog(learner=learner)
    cards: list[CardTrack] = []

    def study(card: CardTrack, *, at: datetime, day: int) -> None:
        elapsed_days = day - card.last_day
        # A same-day step is judged on the hours since the last review; the forgetting curve is continuous.
        elapsed = (
            float(elapsed_days)
            if elapsed_days or card.last_review is None
            else (at - card.last_review).total_seconds() / 86_400
        )
        factor = card_factors[card.card_id] if card_factors is not None else 1.0
        rating, probability = _rating_draw(
            truth=card.truth, elapsed_days=elapsed, decay=decay, draw=draw, stability_factor=factor
        )
        if probability is not None and elapsed_days > 0:
            log.long_term_recall.append((probability, rating != Rating.AGAIN))
            log.true_recall[card.card_id, at] = probability
        following = true_model.next_states(card.truth, learner.desired_retention, elapsed_days if card.truth else 0)
        card.truth = {
            Rating.AGAIN: following.again,
            Rating.HARD: following.hard,
            Rating.GOOD: following.good,
            Rating.EASY: following.easy,
        }[rating].memory
        seed_of_review = card_fuzz_seed(learner_id=learner.learner_id, card_id=card.card_id, state=card.state)
        card.state = review(card.state, rating=rating, reviewed_at=at, config=config, fuzz_seed=seed_of_review)
        card.last_day, card.last_review = day, at
        log.reviews.append(LoggedReview(card_id=card.card_id, reviewed_at=at, rating=int(rating)))

    for day in range(days):
        today = FIRST_DAY + timedelta(days=day)
        day_end = datetime.combine(today + timedelta(days=1), datetime.min.time(), tzinfo=UTC) + timedelta(
            hours=DAY_START_HOUR
        )
        clock = datetime.combine(today, datetime.min.time(), tzinfo=UTC) + timedelta(hours=SESSION_HOUR)
        # The study queue's order: due (re)learning steps, then due reviews by due time, then new cards.
        learning = [
            (card.state.due, card.card_id)
            for card in cards
            if card.state is not None and card.state.stage != MemoryStage.REVIEW
        ]
        heapq.heapify(learning)
        reviews_due = sorted(
            (card.state.due, card.card_id)
            for card in cards
            if card.state is not None and card.state.stage == MemoryStage.REVIEW and card.state.due < day_end
        )
        reviews_due.reverse()
        new_left = NEW_CARDS_PER_DAY
        while True:
            if learning and learning[0][0] <= clock + LEARN_AHEAD:
                card = cards[heapq.heappop(learning)[1]]
            elif reviews_due:
                card = cards[reviews_due.pop()[1]]
            elif new_left and (card_factors is None or len(cards) < len(card_factors)):
                new_left -= 1
                card = CardTrack(card_id=len(cards))
                cards.append(card)
            elif learning and learning[0][0] < day_end:
                # Only steps due later tonight are left: the learner comes back for them.
                clock = max(clock, learning[0][0])
                continue
            else:
                break
            study(card, at=clock, day=day)
            assert card.state is not None
            if card.state.stage != MemoryStage.REVIEW:
                heapq.heappush(learning, (card.state.due, card.card_id))
            clock += timedelta(seconds=SECONDS_PER_REVIEW)
    log.cards = len(cards)
    return log


@dataclass(frozen=True)
class LearnerScore:
    default: FitMetrics
    fitted: FitMetrics
    # The parameters the nightly task would leave in use: its fit on the earlier 80% of the log, adopted only
    # when it beats the defaults on the later 20% by the task's rule (adoption_refusal).
    in_use: FitMetrics
    adopted: bool
    # What the rule used before would have left in use: adopted only when both figures were better.
    in_use_both_better: FitMetrics
    oracle: FitMetrics
    train_items: int
    test_items: int


def learner_score(log: StudyLog, *, days: int, test_days: int) -> LearnerScore:
    """Fit on the reviews before the last TEST_DAYS days; score the three parameter sets on the reviews after."""
    cut = datetime.combine(FIRST_DAY + timedelta(days=days - test_days), datetime.min.time(), tzinfo=UTC) + timedelta(
        hours=DAY_START_HOUR
    )
    train, test = _items_split(log.reviews, cut=cut)
    fitted = parameters_fit(train, num_relearning_steps=RELEARNING_STEPS)
    task_split = items_split_by_time(
        [r for r in log.reviews if r.reviewed_at < cut], day_start=learner_day, test_fraction=TASK_TEST_FRACTION
    )
    task_fitted = parameters_fit(task_split.train, num_relearning_steps=RELEARNING_STEPS)
    candidate, current = (parameters_evaluate(p, task_split.test) for p in (task_fitted, DEFAULT_PARAMETERS))
    adopted = not adoption_refusal(candidate, current)
    both_better = candidate.log_loss < current.log_loss and candidate.rmse_bins < current.rmse_bins
    return LearnerScore(
        in_use_both_better=parameters_evaluate(task_fitted if both_better else DEFAULT_PARAMETERS, test),
        default=parameters_evaluate(DEFAULT_PARAMETERS, test),
        fitted=parameters_evaluate(fitted, test),
        in_use=parameters_evaluate(task_fitted if adopted else DEFAULT_PARAMETERS, test),
        adopted=adopted,
        oracle=parameters_evaluate(log.learner.true_parameters, test),
        train_items=long_term_item_count(train),
        test_items=long_term_item_count(test),
    )


def _items_split(
    reviews: Sequence[LoggedReview], *, cut: datetime
) -> tuple[list[fsrs_rs_python.FSRSItem], list[fsrs_rs_python.FSRSItem]]:
    """Items of the reviews before `cut` (a day boundary), and the items of the reviews from it on.

    An item carries only its card's earlier reviews and the items come in day order, so the items of
    the whole log begin with exactly those of the reviews before the cut.
    """
    train = fsrs_items_from_reviews([r for r in reviews if r.reviewed_at < cut], day_start=learner_day)
    every = fsrs_items_from_reviews(reviews, day_start=learner_day)
    return train, every[len(train) :]


def _gap_closed(default: float, fitted: float, oracle: float) -> float:
    return (default - fitted) / (default - oracle) if default != oracle else float("nan")


def quality_report(*, learners: int, days: int, test_days: int, seed: int) -> None:
    draw = random.Random(seed)
    scores: list[LearnerScore] = []
    reviews: list[int] = []
    started = time.perf_counter()
    for learner_id in range(1, learners + 1):
        log = study_simulate(learner_draw(learner_id=learner_id, draw=draw), days=days, seed=seed)
        reviews.append(len(log.reviews))
        scores.append(learner_score(log, days=days, test_days=test_days))
    print(
        f"{learners} learners, {days} days ({days - test_days} to fit on, the last {test_days} held out), "
        f"{NEW_CARDS_PER_DAY} new cards a day; reviews per learner: median {statistics.median(reviews):,.0f} "
        f"(min {min(reviews):,}, max {max(reviews):,}); long-term reviews to fit on: median "
        f"{statistics.median(s.train_items for s in scores):,.0f}, held out: median "
        f"{statistics.median(s.test_items for s in scores):,.0f}  ({time.perf_counter() - started:.1f} s)"
    )
    for metric in ("log_loss", "rmse_bins"):
        default, oracle = (_mean_of(scores, which, metric) for which in ("default", "oracle"))
        print(f"{metric:>10}: default {default:.4f}  oracle {oracle:.4f}")
        for which, label in (
            ("fitted", "fitted"),
            ("in_use", "in use after the task's adoption test"),
            ("in_use_both_better", "in use if both figures had to improve"),
        ):
            fitted = _mean_of(scores, which, metric)
            wins = sum(getattr(getattr(s, which), metric) < getattr(s.default, metric) for s in scores)
            print(
                f"{label:>42}: {fitted:.4f}  gap closed {_gap_closed(default, fitted, oracle):4.0%}  "
                f"beat the defaults for {wins}/{learners}"
            )

    print(f"the task's adoption test adopted the fit for {sum(s.adopted for s in scores)}/{learners} learners")
    default, fitted, in_use, both = (
        _mean_of(scores, which, "log_loss") for which in ("default", "fitted", "in_use", "in_use_both_better")
    )
    kept, kept_both = (
        (default - used) / (default - fitted) if default > fitted else float("nan") for used in (in_use, both)
    )
    print(
        f"in use, the adoption rule keeps {kept:.0%} of the log-loss gain the fits find over the defaults "
        f"(target >= 80%: {'met' if kept >= 0.8 else 'NOT MET'}); requiring both figures to improve kept "
        f"{kept_both:.0%}"
    )


def _mean_of(scores: list[LearnerScore], which: str, metric: str) -> float:
    return statistics.mean(getattr(getattr(score, which), metric) for score in scores)


@dataclass
class Stopwatch:
    """Wall-clock and CPU seconds of each phase, one sample per learner."""

    wall: dict[str, list[float]] = field(default_factory=dict)
    cpu: dict[str, list[float]] = field(default_factory=dict)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        wall, cpu = time.perf_counter(), time.process_time()
        yield
        self.wall.setdefault(name, []).append(time.perf_counter() - wall)
        self.cpu.setdefault(name, []).append(time.process_time() - cpu)


def timing_report(*, learners: int, seed: int) -> None:
    """The nightly job's pure work for LEARNERS learners of TIMING_REVIEWS reviews each, in this one process.

    Per learner, as the task does: the time-ordered split of their log into items, a fit on the
    earlier part, and both parameter sets scored on the later part (the adoption test).
    """
    draw = random.Random(f"timing:{seed}")
    logs = []
    for learner_id in range(1, learners + 1):
        log = study_simulate(learner_draw(learner_id=learner_id, draw=draw), days=TIMING_DAYS, seed=seed)
        if len(log.reviews) < TIMING_REVIEWS:
            raise RuntimeError(f"{TIMING_DAYS} days gave only {len(log.reviews)} reviews; raise TIMING_DAYS")
        logs.append(log.reviews[:TIMING_REVIEWS])
    phases = ("split into items", "fit on the earlier part", "score both sets")
    watch = Stopwatch()
    for reviews in logs:
        with watch.phase(phases[0]):
            split = items_split_by_time(reviews, day_start=learner_day, test_fraction=TASK_TEST_FRACTION)
        with watch.phase(phases[1]):
            fitted = parameters_fit(split.train, num_relearning_steps=RELEARNING_STEPS)
        with watch.phase(phases[2]):
            parameters_evaluate(fitted, split.test)
            parameters_evaluate(DEFAULT_PARAMETERS, split.test)
    wall, cpu = watch.wall, watch.cpu
    print(
        f"fitting path, {learners} learners x {TIMING_REVIEWS:,} reviews, one process "
        f"({os.cpu_count()} CPUs; the last {TASK_TEST_FRACTION:.0%} of long-term reviews scored):"
    )
    for phase in phases:
        print(
            f"{phase:>24}: {statistics.mean(wall[phase]) * 1000:7.1f} ms a learner (p95 "
            f"{_p95(wall[phase]) * 1000:6.1f} ms), CPU {statistics.mean(cpu[phase]) * 1000:7.1f} ms"
        )
    per_learner = sum(statistics.mean(wall[phase]) for phase in phases)
    per_learner_cpu = sum(statistics.mean(cpu[phase]) for phase in phases)
    nightly = per_learner * NIGHTLY_LEARNERS
    print(
        f"{'all of it':>24}: {per_learner * 1000:7.1f} ms a learner, CPU {per_learner_cpu * 1000:7.1f} ms; "
        f"{NIGHTLY_LEARNERS:,} learners on one worker process: {nightly / 60:.1f} min "
        f"(budget {NIGHTLY_BUDGET_SECONDS / 60:.0f} min), CPU {per_learner_cpu * NIGHTLY_LEARNERS / 60:.1f} min"
    )


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=20)
    parser.add_argument("--days", type=int, default=150)
    parser.add_argument("--test-days", type=int, default=28)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timing-learners", type=int, default=50)
    arguments = parser.parse_args()
    if not 0 < arguments.test_days < arguments.days:
        parser.error("--test-days must be between 0 and --days")
    quality_report(learners=arguments.learners, days=arguments.days, test_days=arguments.test_days, seed=arguments.seed)
    if arguments.timing_learners:
        timing_report(learners=arguments.timing_learners, seed=arguments.seed)
