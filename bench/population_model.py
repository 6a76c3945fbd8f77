"""Does the course know its cards? Simulated learners of one course, scored by every model memory_model_evaluate has.

Run: python -m bench.population_model [--cards 300] [--veterans 40] [--veteran-days 120] [--newcomers 20]
     [--newcomer-days 20] [--test-days 10] [--card-spread 0.8] [--seed 3] [--no-attainable]
No database. The course has CARDS cards, each with a true stability factor drawn log-normal (standard
deviation CARD_SPREAD of the log): how much longer or shorter anyone remembers it. Each learner has true
FSRS-6 weights as bench.memory_model draws them and studies with the service's own scheduler (10 new
cards a day, in the course's order): veterans for VETERAN_DAYS days, newcomers for the last
NEWCOMER_DAYS of them. Whether a review is recalled is drawn from the learner's true model with the
card's factor. Each learner's last TEST_DAYS days are the test split; the log goes through
apps.srs.core.evaluation (what `manage.py memory_model_evaluate` runs), and the truth (each test
review's true probability of recall) is scored alike. Targets: for newcomers, the population model
closes at least half of the log-loss gap between the better of the defaults and their own fit, and
the truth; for veterans, it does no worse than their own fit. Beside the truth, which no model can
reach, it prints the newcomers' attainable log loss (`attainable_recall`: the best prediction their
train rows allow) and how far the population model is from it.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import fsrs_rs_python
import numpy

from apps.srs.core.evaluation import (
    MODELS,
    ModelPrediction,
    RevlogRow,
    revlog_evaluate,
    revlog_targets,
)
from apps.srs.core.optimizer import (
    RecallPrediction,
    predictions_auc,
    predictions_score,
    recall_clipped,
    recall_probabilities,
    review_fields,
)
from apps.srs.core.scheduling import DECAY_WEIGHT, DEFAULT_PARAMETERS
from bench.memory_model import FIRST_DAY, learner_day, learner_draw, learner_parameters_of, study_simulate

POPULATION_MODEL = "fsrs6-population"


@dataclass(frozen=True, slots=True)
class SimulatedCourse:
    rows: list[RevlogRow]
    # The true probability of recall of each long-term review, by (learner, card, reviewed_at).
    truth: dict[tuple[str, str, datetime], float]
    # What the simulation drew: each card's stability factor and each learner's true weights.
    card_factors: dict[str, float]
    learner_parameters: dict[str, tuple[float, ...]]


def course_simulate(
    *,
    cards: int,
    veterans: int,
    veteran_days: int,
    newcomers: int,
    newcomer_days: int,
    test_days: int,
    card_spread: float,
    seed: int,
) -> SimulatedCourse:
    """The course's review log, the true probability of recall of each long-term review, and what was drawn."""
    draw = random.Random(seed)
    factors = [math.exp(draw.gauss(0.0, card_spread)) for _ in range(cards)]
    rows: list[RevlogRow] = []
    truth: dict[tuple[str, str, datetime], float] = {}
    parameters: dict[str, tuple[float, ...]] = {}
    learners = [(f"veteran-{n}", veteran_days, 0) for n in range(veterans)]
    learners += [(f"newcomer-{n}", newcomer_days, veteran_days - newcomer_days) for n in range(newcomers)]
    for number, (name, days, start_day) in enumerate(learners, start=1):
        learner = learner_draw(learner_id=number, draw=draw)
        parameters[name] = learner.true_parameters
        log = study_simulate(learner, days=days, seed=seed, card_factors=factors)
        shift = timedelta(days=start_day)
        first_test_day = FIRST_DAY + timedelta(days=days - test_days)
        for review in log.reviews:
            at = review.reviewed_at + shift
            split = "test" if learner_day(review.reviewed_at) >= first_test_day else "train"
            rows.append(
                RevlogRow(
                    learner=name, card=f"card-{review.card_id}", reviewed_at=at, rating=review.rating, split=split
                )
            )
            probability = log.true_recall.get((review.card_id, review.reviewed_at))
            if probability is not None:
                truth[name, f"card-{review.card_id}", at] = probability
    return SimulatedCourse(
        rows=rows,
        truth=truth,
        card_factors={f"card-{index}": factor for index, factor in enumerate(factors)},
        learner_parameters=parameters,
    )


# The sampler behind the attainable log loss: steps thrown away while it finds the posterior, steps
# kept after them, every how many a kept step predicts, and the acceptance rate the step size is tuned to.
BURN_IN_STEPS = 500
SAMPLING_STEPS = 3000
PREDICT_EVERY = 10
TARGET_ACCEPTANCE = 0.25


@dataclass(frozen=True, slots=True)
class _Reviews:
    """A learner's long-term reviews: the items, whether each was recalled, and each card's true factor."""

    keys: list[tuple[str, str, datetime]]
    items: list[fsrs_rs_python.FSRSItem]
    recalled: numpy.ndarray
    card_factors: numpy.ndarray

    @classmethod
    def of(cls, course: SimulatedCourse, rows: list[RevlogRow], split: str) -> _Reviews:
        targets, items = revlog_targets(rows, split=split)
        kept = [(t, item) for t, item in zip(targets, items, strict=True) if review_fields(item.reviews[-1])[1] > 0]
        return cls(
            keys=[(target.learner, target.card, target.reviewed_at) for target, _ in kept],
            items=[item for _, item in kept],
            recalled=numpy.array([target.rating > 1 for target, _ in kept]),
            card_factors=numpy.array([course.card_factors[target.card] for target, _ in kept]),
        )

    def recall(self, parameters: tuple[float, ...]) -> numpy.ndarray:
        """Each review's probability of recall under these weights, with the cards' true factors."""
        histories = [fsrs_rs_python.FSRSItem(item.reviews[:-1]) for item in self.items]
        elapsed = [review_fields(item.reviews[-1])[1] for item in self.items]
        decay = parameters[DECAY_WEIGHT]
        predicted = numpy.clip(numpy.array(recall_probabilities(parameters, histories, elapsed)), 1e-6, 1 - 1e-6)
        return numpy.clip((1 + (predicted ** (-1 / decay) - 1) / self.card_factors) ** -decay, 1e-4, 1 - 1e-4)

    def log_likelihood(self, parameters: tuple[float, ...]) -> float:
        recall = self.recall(parameters)
        return float(numpy.sum(numpy.where(self.recalled, numpy.log(recall), numpy.log(1 - recall))))


def attainable_recall(
    course: SimulatedCourse, *, group: str, seed: int
) -> tuple[dict[tuple[str, str, datetime], float], float]:
    """The best prediction of each test review the group's train rows allow, and the sampler's acceptance rate.

    Each learner's test reviews are predicted by the Bayesian posterior predictive under the
    simulation's own generative model: the prior the learners were drawn from (`learner_parameters_of`
    of 21 standard normals), the likelihood of the learner's long-term train reviews given every card's
    true factor, and the test reviews' recall averaged over the posterior. The posterior is sampled by
    preconditioned Crank-Nicolson Metropolis steps on the normals, which leave the prior invariant, so
    a step is accepted on the likelihood ratio alone. It knows what no model can (the prior and the
    cards' true factors) and learns from the same rows the models do, so no model beats it in
    expectation; on one course's few learners, one may by chance.
    """
    draw = numpy.random.default_rng(seed)
    by_learner: dict[str, list[RevlogRow]] = defaultdict(list)
    for row in course.rows:
        if row.learner.startswith(group):
            by_learner[row.learner].append(row)
    found: dict[tuple[str, str, datetime], float] = {}
    accepted, steps = 0, 0
    for learner_rows in by_learner.values():
        train = _Reviews.of(course, [row for row in learner_rows if row.split == "train"], "train")
        test = _Reviews.of(course, learner_rows, "test")
        normals = numpy.zeros(len(DEFAULT_PARAMETERS))
        likelihood = train.log_likelihood(learner_parameters_of(normals.tolist()))
        step, predicted, kept = 0.3, numpy.zeros(len(test.items)), 0
        for number in range(BURN_IN_STEPS + SAMPLING_STEPS):
            proposed = math.sqrt(1 - step * step) * normals + step * draw.standard_normal(len(normals))
            proposed_likelihood = train.log_likelihood(learner_parameters_of(proposed.tolist()))
            accept = math.log(draw.random()) < proposed_likelihood - likelihood
            if accept:
                normals, likelihood = proposed, proposed_likelihood
            if number < BURN_IN_STEPS:
                step = min(0.9, max(0.005, step * math.exp((float(accept) - TARGET_ACCEPTANCE) / 20)))
                continue
            accepted, steps = accepted + accept, steps + 1
            if number % PREDICT_EVERY == 0:
                predicted += test.recall(learner_parameters_of(normals.tolist()))
                kept += 1
        found.update(zip(test.keys, (float(value) for value in predicted / kept), strict=True))
    return found, accepted / steps


def _paired_difference(
    predictions: list[ModelPrediction], model: str, reference: dict[tuple[str, str, datetime], float]
) -> tuple[float, float, float]:
    """The reference's log loss over the model's predictions, the model's minus it, and that difference's
    standard error over learners (each learner's reviews move together, so learners are the samples)."""
    losses: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for p in predictions:
        if p.model != model or (p.learner, p.card, p.reviewed_at) not in reference:
            continue
        theirs = recall_clipped(reference[p.learner, p.card, p.reviewed_at])
        ours = p.prediction.predicted
        recalled = p.prediction.recalled
        learner = losses[p.learner]
        learner[0] -= math.log(theirs) if recalled else math.log(1 - theirs)
        learner[1] -= math.log(ours) if recalled else math.log(1 - ours)
        learner[2] += 1
    reviews = sum(count for _, _, count in losses.values())
    difference = sum(ours - theirs for theirs, ours, _ in losses.values()) / reviews
    spread = sum(((ours - theirs) - difference * count) ** 2 for theirs, ours, count in losses.values())
    error = math.sqrt(spread * len(losses) / max(1, len(losses) - 1)) / reviews
    return sum(theirs for theirs, _, _ in losses.values()) / reviews, difference, error


def _table(
    predictions: list[ModelPrediction], truth: dict[tuple[str, str, datetime], float]
) -> dict[tuple[str, str], float]:
    """Log loss per (group, model), the truth among the models; printed as it goes."""
    found: dict[tuple[str, str], float] = {}
    print(f"{'group':<10} {'model':<18} {'reviews':>8} {'log loss':>9} {'RMSE(bins)':>10} {'AUC':>7}")
    for group in ("newcomer", "veteran"):
        reference = [p for p in predictions if p.model == MODELS[0] and p.learner.startswith(group)]
        truths = [
            replace(p.prediction, predicted=recall_clipped(truth[p.learner, p.card, p.reviewed_at])) for p in reference
        ]
        scored: list[tuple[str, list[RecallPrediction]]] = [
            (model, [p.prediction for p in predictions if p.model == model and p.learner.startswith(group)])
            for model in MODELS
        ]
        for model, chosen in [*scored, ("truth", truths)]:
            metrics = predictions_score(chosen)
            auc = predictions_auc(chosen)
            found[group, model] = metrics.log_loss
            print(
                f"{group:<10} {model:<18} {metrics.reviews:>8,} {metrics.log_loss:>9.4f} {metrics.rmse_bins:>10.4f} "
                f"{'-' if auc is None else f'{auc:.4f}':>7}"
            )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cards", type=int, default=300)
    parser.add_argument("--veterans", type=int, default=40)
    parser.add_argument("--veteran-days", type=int, default=120)
    parser.add_argument("--newcomers", type=int, default=20)
    parser.add_argument("--newcomer-days", type=int, default=20)
    parser.add_argument("--test-days", type=int, default=10)
    parser.add_argument("--card-spread", type=float, default=0.8)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument(
        "--attainable",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="sample the newcomers' attainable log loss (about a second per newcomer)",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    course = course_simulate(
        cards=args.cards,
        veterans=args.veterans,
        veteran_days=args.veteran_days,
        newcomers=args.newcomers,
        newcomer_days=args.newcomer_days,
        test_days=args.test_days,
        card_spread=args.card_spread,
        seed=args.seed,
    )
    simulated = time.perf_counter() - started
    rows = course.rows
    predictions = revlog_evaluate(rows)
    print(
        f"{args.cards} cards (stability factor spread {args.card_spread}), {args.veterans} veterans for "
        f"{args.veteran_days} days, {args.newcomers} newcomers for {args.newcomer_days}, the last "
        f"{args.test_days} days of each held out; {len(rows):,} reviews (simulated in {simulated:.0f} s, "
        f"evaluated in {time.perf_counter() - started - simulated:.0f} s), seed {args.seed}"
    )
    scores = _table(predictions, course.truth)
    best_own = min(scores["newcomer", "fsrs6-default"], scores["newcomer", "fsrs6-learner"])
    gap = best_own - scores["newcomer", "truth"]
    closed = (best_own - scores["newcomer", POPULATION_MODEL]) / gap if gap > 0 else float("nan")
    print(
        f"newcomers: {POPULATION_MODEL} closes {closed:.0%} of the gap between the better of the defaults and "
        f"their own fit ({best_own:.4f}) and the truth ({scores['newcomer', 'truth']:.4f}) (target >= 50%: "
        f"{'met' if closed >= 0.5 else 'NOT MET'})"
    )
    if args.attainable:
        reference, acceptance = attainable_recall(course, group="newcomer", seed=args.seed)
        attainable, difference, error = _paired_difference(predictions, POPULATION_MODEL, reference)
        print(
            f"newcomers: the attainable log loss (the posterior predictive under the simulation's own prior and card "
            f"factors; acceptance {acceptance:.0%}) is {attainable:.4f}, closing {(best_own - attainable) / gap:.0%} "
            f"of that gap; {POPULATION_MODEL} is {difference:+.4f} from it (standard error {error:.4f} over learners) "
            f"and gains {(best_own - scores['newcomer', POPULATION_MODEL]) / (best_own - attainable):.0%} of what is "
            f"attainable"
        )
    veteran, own = scores["veteran", POPULATION_MODEL], scores["veteran", "fsrs6-learner"]
    print(
        f"veterans: {POPULATION_MODEL} {veteran:.4f} against their own fit {own:.4f} (target: no worse: "
        f"{'met' if veteran <= own else 'NOT MET'})"
    )


if __name__ == "__main__":
    main()
