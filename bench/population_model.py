"""Does the course know its cards? Simulated learners of one course, scored by every model memory_model_evaluate has.

Run: python -m bench.population_model [--cards 300] [--veterans 40] [--veteran-days 120] [--newcomers 20]
     [--newcomer-days 20] [--test-days 10] [--card-spread 0.8] [--seed 3]
No database. The course has CARDS cards, each with a true stability factor drawn log-normal (standard
deviation CARD_SPREAD of the log): how much longer or shorter anyone remembers it. Each learner has true
FSRS-6 weights as bench.memory_model draws them and studies with the service's own scheduler (10 new
cards a day, in the course's order): veterans for VETERAN_DAYS days, newcomers for the last
NEWCOMER_DAYS of them. Whether a review is recalled is drawn from the learner's true model with the
card's factor. Each learner's last TEST_DAYS days are the test split; the log goes through
apps.srs.core.evaluation (what `manage.py memory_model_evaluate` runs), and the truth (each test
review's true probability of recall) is scored alike. Targets: for newcomers, the population model
closes at least half of the log-loss gap between the better of the defaults and their own fit, and
the truth; for veterans, it does no worse than their own fit.
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
from apps.srs.core.scheduling import DECAY_WEIGHT
from bench.memory_model import FIRST_DAY, learner_day, learner_draw, study_simulate

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


def _recall_under(
    parameters: tuple[float, ...], items: list[fsrs_rs_python.FSRSItem], card_factors: numpy.ndarray
) -> numpy.ndarray:
    """Each item's last review's probability of recall under these weights, with the cards' true factors."""
    histories = [fsrs_rs_python.FSRSItem(item.reviews[:-1]) for item in items]
    elapsed = [review_fields(item.reviews[-1])[1] for item in items]
    decay = parameters[DECAY_WEIGHT]
    gaps = (
        numpy.clip(numpy.array(recall_probabilities(parameters, histories, elapsed)), 1e-6, 1 - 1e-6) ** (-1 / decay)
        - 1
    )
    return numpy.clip((1 + gaps / card_factors) ** -decay, 1e-4, 1 - 1e-4)


def attainable_log_loss(course: SimulatedCourse, *, group: str, draws: int, seed: int) -> float:
    """The log loss of the best prediction the group's train rows allow: a bound no model can beat on average.

    Each learner's test reviews are predicted by the Bayesian posterior predictive under the truth's
    own generative model: DRAWS weight sets from the prior the learners were drawn from
    (`learner_draw`), each weighed by the likelihood of the learner's long-term train reviews given
    the cards' true factors, and the test reviews' recall averaged under those weights. It knows what
    no model can (the prior and every card's true factor) and learns from the same rows they do.
    """
    prior = [
        learner_draw(learner_id=0, draw=random.Random(f"{seed}:prior:{index}")).true_parameters
        for index in range(draws)
    ]
    by_learner: dict[str, list[RevlogRow]] = defaultdict(list)
    for row in course.rows:
        if row.learner.startswith(group):
            by_learner[row.learner].append(row)
    total, reviews = 0.0, 0
    for learner_rows in by_learner.values():
        train_targets, train_items = revlog_targets(
            [row for row in learner_rows if row.split == "train"], split="train"
        )
        test_targets, test_items = revlog_targets(learner_rows)
        train = [
            (target, item)
            for target, item in zip(train_targets, train_items, strict=True)
            if review_fields(item.reviews[-1])[1] > 0
        ]
        test = [
            (target, item)
            for target, item in zip(test_targets, test_items, strict=True)
            if review_fields(item.reviews[-1])[1] > 0
        ]
        recalled_train = numpy.array([target.rating > 1 for target, _ in train])
        recalled_test = numpy.array([target.rating > 1 for target, _ in test])
        train_factors = numpy.array([course.card_factors[target.card] for target, _ in train])
        test_factors = numpy.array([course.card_factors[target.card] for target, _ in test])
        log_weights = numpy.zeros(draws)
        predicted = numpy.zeros((draws, len(test)))
        for index, parameters in enumerate(prior):
            fitted = _recall_under(parameters, [item for _, item in train], train_factors)
            log_weights[index] = numpy.sum(numpy.where(recalled_train, numpy.log(fitted), numpy.log(1 - fitted)))
            predicted[index] = _recall_under(parameters, [item for _, item in test], test_factors)
        weights = numpy.exp(log_weights - log_weights.max())
        posterior = numpy.clip(weights / weights.sum() @ predicted, 1e-4, 1 - 1e-4)
        total -= float(numpy.sum(numpy.where(recalled_test, numpy.log(posterior), numpy.log(1 - posterior))))
        reviews += len(test)
    return total / reviews


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
        "--attainable-draws",
        type=int,
        default=1000,
        help="prior draws for the newcomers' attainable log loss (0: not computed)",
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
    if args.attainable_draws:
        attainable = attainable_log_loss(course, group="newcomer", draws=args.attainable_draws, seed=args.seed)
        bound = (best_own - attainable) / gap if gap > 0 else float("nan")
        share = (best_own - scores["newcomer", POPULATION_MODEL]) / (best_own - attainable)
        print(
            f"newcomers: the attainable log loss (the posterior predictive with the true prior and card factors, "
            f"{args.attainable_draws} draws) is {attainable:.4f}, closing {bound:.0%} of that gap; "
            f"{POPULATION_MODEL} gains {share:.0%} of what is attainable"
        )
    veteran, own = scores["veteran", POPULATION_MODEL], scores["veteran", "fsrs6-learner"]
    print(
        f"veterans: {POPULATION_MODEL} {veteran:.4f} against their own fit {own:.4f} (target: no worse: "
        f"{'met' if veteran <= own else 'NOT MET'})"
    )


if __name__ == "__main__":
    main()
