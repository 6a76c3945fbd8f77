"""Scoring memory models on a review log anyone can export: train on some reviews, predict the others.

Pure, no I/O: rows come in as mappings (a CSV's), predictions and scores go out. Times are UTC and a
learner's day starts at 04:00, as srs-benchmark reads review logs. Every model is trained on the
`train` rows only, then predicts each `test` review whose card was reviewed on an earlier day, from
every review of that card before it (train and test alike), as a scheduler would have.
"""

from __future__ import annotations

import hashlib
import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from functools import partial

import fsrs_rs_python

from apps.srs.core.optimizer import (
    MIN_REVIEWS_TO_FIT,
    FitMetrics,
    LoggedReview,
    RecallPrediction,
    card_fsrs_reviews,
    fsrs_items_from_reviews,
    long_term_item_count,
    parameters_fit,
    predictions_auc,
    predictions_score,
    recall_clipped,
    recall_predictions,
    recall_probabilities,
    review_fields,
)
from apps.srs.core.population import (
    FIRST_STABILITY_OFFSETS,
    Observation,
    PopulationFactors,
    first_stabilities_applied,
    first_stabilities_fit,
    population_fit,
    recall_with_factor,
)
from apps.srs.core.scheduling import DECAY_WEIGHT, DEFAULT_PARAMETERS

REQUIRED_COLUMNS = ("learner", "card", "reviewed_at", "rating", "split")
SPLITS = ("train", "test")
DAY_START = timedelta(hours=4)
# Learners with fewer training reviews than this are scored apart too: where a population helps most.
FEW_REVIEWS = 200


class RevlogInvalid(ValueError):
    """A review log that cannot be read; the message names the line and the column."""


@dataclass(frozen=True, slots=True)
class RevlogRow:
    learner: str
    card: str
    reviewed_at: datetime
    rating: int
    split: str


def research_day(learner: str, moment: datetime) -> date:
    """A review's day as srs-benchmark reads logs: UTC, starting at 04:00, whoever the learner."""
    return (moment - DAY_START).date()


# Maps a learner and a time to that learner's day: `research_day` for a log, their own days in the service.
DayOf = Callable[[str, datetime], date]


def revlog_rows(records: Iterable[Mapping[str, str | None]], *, columns: Sequence[str]) -> list[RevlogRow]:
    """The log's rows, every problem refused with its line (the header is line 1)."""
    missing = [column for column in REQUIRED_COLUMNS if column not in columns]
    if missing:
        raise RevlogInvalid(f"Line 1: the header lacks the column(s) {', '.join(missing)}.")
    rows = []
    for line, record in enumerate(records, start=2):
        values = {column: (record.get(column) or "").strip() for column in REQUIRED_COLUMNS}
        for column, value in values.items():
            if not value:
                raise RevlogInvalid(f"Line {line}: {column} is empty.")
        try:
            reviewed_at = datetime.fromisoformat(values["reviewed_at"])
        except ValueError:
            raise RevlogInvalid(
                f"Line {line}: reviewed_at {values['reviewed_at']!r} is not an RFC 3339 time."
            ) from None
        if reviewed_at.tzinfo is None:
            raise RevlogInvalid(f"Line {line}: reviewed_at {values['reviewed_at']!r} has no offset (write Z for UTC).")
        if values["rating"] not in ("1", "2", "3", "4"):
            raise RevlogInvalid(f"Line {line}: rating {values['rating']!r} is not 1, 2, 3 or 4.")
        if values["split"] not in SPLITS:
            raise RevlogInvalid(f"Line {line}: split {values['split']!r} is not train or test.")
        rows.append(
            RevlogRow(
                learner=values["learner"],
                card=values["card"],
                reviewed_at=reviewed_at.astimezone(UTC),
                rating=int(values["rating"]),
                split=values["split"],
            )
        )
    return rows


@dataclass(frozen=True, slots=True)
class ModelPrediction:
    learner: str
    card: str
    reviewed_at: datetime
    model: str
    prediction: RecallPrediction


# Each model: its name, and how it gets a learner's weights from their training reviews.
def _fitted_items(items: Sequence[fsrs_rs_python.FSRSItem]) -> tuple[float, ...]:
    """An FSRS-6 fit (fsrs-rs) of these items, or the defaults where there is nothing to fit on."""
    try:
        return parameters_fit(items)
    except ValueError:
        return DEFAULT_PARAMETERS


# The models scored, in the order printed: FSRS-6's defaults; each learner's own fit; the course's
# weights (`course_weights`); the course's weights with each card's and
# each learner's stability factor learned from the course (apps.srs.core.population).
MODELS = ("fsrs6-default", "fsrs6-learner", "fsrs6-course", "fsrs6-population")


def revlog_targets(
    rows: Sequence[RevlogRow], *, split: str = "test", day_of: DayOf = research_day
) -> tuple[list[RevlogRow], list[fsrs_rs_python.FSRSItem]]:
    """Each review of `split` whose card was reviewed on an earlier day, with the card's history up to it
    (for test reviews, every row before it; for train reviews, `rows` should hold the train rows only)."""
    by_card: dict[str, list[RevlogRow]] = defaultdict(list)
    for row in rows:
        by_card[row.card].append(row)
    targets: list[RevlogRow] = []
    items: list[fsrs_rs_python.FSRSItem] = []
    for card in sorted(by_card):
        history = sorted(by_card[card], key=lambda row: (row.reviewed_at, row.rating))
        days = [day_of(row.learner, row.reviewed_at) for row in history]
        reviews = card_fsrs_reviews([row.rating for row in history], days)
        for end in range(1, len(history)):
            if history[end].split == split and days[end] > days[end - 1]:
                targets.append(history[end])
                items.append(fsrs_rs_python.FSRSItem(reviews[: end + 1]))
    return targets, items


@dataclass(frozen=True, slots=True)
class PopulationModel:
    """What a course's train rows teach: its weights (`course_weights`) and the factors."""

    parameters: tuple[float, ...]
    factors: PopulationFactors
    # Long-term train reviews the factors were fitted on.
    observations: int
    # Each learner's log offsets of the course's first stabilities (w0-w3); none for a learner not trained on.
    first_stabilities: Mapping[str, Sequence[float]] = field(default_factory=dict)

    def parameters_of(self, learner: str) -> tuple[float, ...]:
        """The course's weights with this learner's own first stabilities."""
        return first_stabilities_applied(self.parameters, self.first_stabilities.get(learner, ()))

    def predictions(
        self, learner: str, targets: Sequence[RevlogRow], items: Sequence[fsrs_rs_python.FSRSItem]
    ) -> list[RecallPrediction | None]:
        """The model's predictions of the items (the learner's reviews of `targets`' cards), None for same-day ones."""
        decay = self.parameters[DECAY_WEIGHT]
        return [
            None
            if prediction is None
            else replace(
                prediction,
                predicted=recall_clipped(
                    recall_with_factor(
                        prediction.predicted,
                        decay=decay,
                        log_factor=self.factors.factor(learner=learner, card=target.card),
                    )
                ),
            )
            for target, prediction in zip(targets, recall_predictions(self.parameters_of(learner), items), strict=True)
        ]


def _train_reviews(rows_by_learner: Mapping[str, Sequence[RevlogRow]]) -> dict[str, list[LoggedReview]]:
    """Each learner's train rows as the optimizer reads reviews (cards numbered per learner)."""
    found: dict[str, list[LoggedReview]] = {}
    for learner, learner_rows in rows_by_learner.items():
        cards = {card: index for index, card in enumerate(sorted({row.card for row in learner_rows}))}
        found[learner] = [
            LoggedReview(card_id=cards[row.card], reviewed_at=row.reviewed_at, rating=row.rating)
            for row in learner_rows
            if row.split == "train"
        ]
    return found


def _by_learner(rows: Iterable[RevlogRow]) -> dict[str, list[RevlogRow]]:
    found: dict[str, list[RevlogRow]] = defaultdict(list)
    for row in rows:
        found[row.learner].append(row)
    return found


# Fewer learners than this with enough reviews for a fit of their own, and the course's weights are
# one fit on every learner's reviews pooled.
CENTRE_MIN_LEARNERS = 3
# At most this many of them are fitted: a fit of 3,000 reviews takes 30-50 ms, so 500 take about 20 s
# where 10,000 would take minutes, and a median of 500 moves little with more.
CENTRE_MAX_LEARNERS = 500


def course_weights(items_by_learner: Mapping[str, Sequence[fsrs_rs_python.FSRSItem]]) -> tuple[float, ...]:
    """The course's weights: each weight the median of the fits of the learners with enough reviews of their own.

    A typical learner's weights, not one fit of everyone's reviews pooled. Learners differ, and their
    pooled reviews are a mixture no single learner's memory follows: on bench/population_model.py's
    seed 83, whose learners were drawn around FSRS-6's defaults, the pooled fit put the same-day and
    decay weights (w17, w18, w20) well off the defaults where the learners' median stayed near them,
    and predicted newcomers no better than the defaults; on seven simulated courses the median made the
    population model better for newcomers (docs/memory-model.md has the figures). Where fewer than
    CENTRE_MIN_LEARNERS learners have MIN_REVIEWS_TO_FIT reviews, the pooled fit is all there is; past
    CENTRE_MAX_LEARNERS, the median is of a sample of them.
    """
    enough = [
        learner for learner, items in items_by_learner.items() if long_term_item_count(items) >= MIN_REVIEWS_TO_FIT
    ]
    # A sample by a hash of the learner, not the first or the busiest: the same learners each night,
    # and as typical as the whole course.
    chosen = sorted(enough, key=lambda learner: hashlib.sha256(learner.encode()).hexdigest())[:CENTRE_MAX_LEARNERS]
    fitted = [_fitted_items(items_by_learner[learner]) for learner in chosen]
    if len(fitted) < CENTRE_MIN_LEARNERS:
        return _fitted_items([item for _, items in sorted(items_by_learner.items()) for item in items])
    # The median of each weight keeps w0 <= w1 <= w2 <= w3 (every fit keeps it) and fsrs's bounds.
    return tuple(statistics.median(weights) for weights in zip(*fitted, strict=True))


def population_model_train(rows: Sequence[RevlogRow], *, day_of: DayOf = research_day) -> PopulationModel:
    """The course's weights (`course_weights`) from every learner's train rows, then each card's and learner's factor
    from their train reviews as those weights predict them. Test rows are not read."""
    by_learner = _by_learner(row for row in rows if row.split == "train")
    train = _train_reviews(by_learner)
    # Each learner's items are built with their own days.
    course = course_weights(
        {
            learner: fsrs_items_from_reviews(learner_reviews, day_start=partial(day_of, learner))
            for learner, learner_reviews in sorted(train.items())
        }
    )
    reviews = {
        learner: _LongTermReviews.of(*revlog_targets(learner_rows, split="train", day_of=day_of))
        for learner, learner_rows in by_learner.items()
    }
    decay = course[DECAY_WEIGHT]
    factors = population_fit(_observations(reviews, lambda learner: course), decay=decay)
    # Each learner's first stabilities, given the factors; then the factors again under each learner's
    # weights, so that a learner's factor does not also carry what their first stabilities now say.
    curves = {
        (learner, rating): [
            learner_reviews.log_likelihood(
                first_stabilities_applied(course, [offset if index == rating - 1 else 0.0 for index in range(4)]),
                rating=rating,
                factor_of=partial(factors.factor, learner=learner),
                decay=decay,
            )
            for offset in FIRST_STABILITY_OFFSETS
        ]
        for learner, learner_reviews in reviews.items()
        for rating in learner_reviews.first_ratings()
    }
    first_stabilities = first_stabilities_fit(curves)

    def parameters_of(learner: str) -> tuple[float, ...]:
        return first_stabilities_applied(course, first_stabilities.learners.get(learner, ()))

    observations = _observations(reviews, parameters_of)
    return PopulationModel(
        parameters=course,
        factors=population_fit(observations, decay=decay),
        observations=len(observations),
        first_stabilities=first_stabilities.learners,
    )


@dataclass(frozen=True, slots=True)
class _LongTermReviews:
    """One learner's long-term train reviews: each card's history before it, the days since, and the outcome."""

    cards: list[str]
    histories: list[fsrs_rs_python.FSRSItem]
    elapsed_days: list[int]
    recalled: list[bool]
    first_ratings_of: list[int]

    @classmethod
    def of(cls, targets: Sequence[RevlogRow], items: Sequence[fsrs_rs_python.FSRSItem]) -> _LongTermReviews:
        found = cls([], [], [], [], [])
        for target, item in zip(targets, items, strict=True):
            fields = [review_fields(review) for review in item.reviews]
            if fields[-1][1] == 0:
                continue
            found.cards.append(target.card)
            found.histories.append(fsrs_rs_python.FSRSItem(item.reviews[:-1]))
            found.elapsed_days.append(fields[-1][1])
            found.recalled.append(fields[-1][0] > 1)
            found.first_ratings_of.append(fields[0][0])
        return found

    def first_ratings(self) -> list[int]:
        return sorted(set(self.first_ratings_of))

    def recall(self, parameters: Sequence[float]) -> list[float]:
        return recall_probabilities(parameters, self.histories, self.elapsed_days)

    def log_likelihood(
        self, parameters: Sequence[float], *, rating: int, factor_of: Callable[..., float], decay: float
    ) -> float:
        """The log-likelihood of the reviews of cards first rated `rating`, under the weights and factors."""
        chosen = [index for index, first in enumerate(self.first_ratings_of) if first == rating]
        predicted = recall_probabilities(
            parameters, [self.histories[index] for index in chosen], [self.elapsed_days[index] for index in chosen]
        )
        total = 0.0
        for index, probability in zip(chosen, predicted, strict=True):
            recalled = recall_clipped(
                recall_with_factor(probability, decay=decay, log_factor=factor_of(card=self.cards[index]))
            )
            total += math.log(recalled if self.recalled[index] else 1 - recalled)
        return total


def _observations(
    reviews: Mapping[str, _LongTermReviews], parameters_of: Callable[[str], Sequence[float]]
) -> list[Observation]:
    """Every learner's long-term train reviews as their weights predicted them."""
    return [
        Observation(learner=learner, card=card, predicted=recall_clipped(predicted), recalled=recalled)
        for learner, learner_reviews in reviews.items()
        for card, predicted, recalled in zip(
            learner_reviews.cards, learner_reviews.recall(parameters_of(learner)), learner_reviews.recalled, strict=True
        )
    ]


@dataclass(frozen=True, slots=True)
class HeldOut:
    """One learner's test reviews as three models predicted them, in the same order."""

    model: list[RecallPrediction]
    weights: list[RecallPrediction]
    # Empty where there is no previous model.
    previous: list[RecallPrediction]


def held_out_predictions(
    rows: Sequence[RevlogRow],
    *,
    model: PopulationModel,
    weights_of: Callable[[str], Sequence[float]],
    previous: PopulationModel | None,
    day_of: DayOf = research_day,
) -> dict[str, HeldOut]:
    """Each learner's test reviews predicted by `model`, by their own weights, and by a `previous` model."""
    found = {}
    for learner, learner_rows in sorted(_by_learner(rows).items()):
        targets, items = revlog_targets(learner_rows, day_of=day_of)
        if not targets:
            continue
        found[learner] = HeldOut(
            model=[p for p in model.predictions(learner, targets, items) if p is not None],
            weights=[p for p in recall_predictions(weights_of(learner), items) if p is not None],
            previous=[]
            if previous is None
            else [p for p in previous.predictions(learner, targets, items) if p is not None],
        )
    return found


def revlog_evaluate(rows: Sequence[RevlogRow]) -> list[ModelPrediction]:
    """Every model's prediction of every test review it can predict, learner by learner.

    The population models learn from every learner's train rows (`population_model_train`).
    """
    by_learner = _by_learner(rows)
    train = _train_reviews(by_learner)
    population = population_model_train(rows)
    found: list[ModelPrediction] = []
    for learner in sorted(by_learner):
        targets, items = revlog_targets(by_learner[learner])
        if not targets:
            continue
        own = _fitted_items(fsrs_items_from_reviews(train[learner], day_start=partial(research_day, learner)))
        by_model = {
            "fsrs6-default": recall_predictions(DEFAULT_PARAMETERS, items),
            "fsrs6-learner": recall_predictions(own, items),
            "fsrs6-course": recall_predictions(population.parameters, items),
            "fsrs6-population": population.predictions(learner, targets, items),
        }
        for model in MODELS:
            found += [
                ModelPrediction(learner, target.card, target.reviewed_at, model, prediction)
                for target, prediction in zip(targets, by_model[model], strict=True)
                if prediction is not None
            ]
    return found


@dataclass(frozen=True, slots=True)
class ModelScore:
    group: str
    model: str
    learners: int
    # None where the group has no prediction of this model.
    metrics: FitMetrics | None
    auc: float | None


def scores(predictions: Sequence[ModelPrediction], rows: Sequence[RevlogRow]) -> list[ModelScore]:
    """Each model's scores over all learners, and over learners with fewer than FEW_REVIEWS training reviews."""
    train_counts: dict[str, int] = defaultdict(int)
    for row in rows:
        if row.split == "train":
            train_counts[row.learner] += 1
    groups = {
        "all learners": lambda learner: True,
        f"fewer than {FEW_REVIEWS} training reviews": lambda learner: train_counts[learner] < FEW_REVIEWS,
    }
    found = []
    for group, member in groups.items():
        for model in MODELS:
            chosen = [p for p in predictions if p.model == model and member(p.learner)]
            if not chosen:
                found.append(ModelScore(group=group, model=model, learners=0, metrics=None, auc=None))
                continue
            found.append(
                ModelScore(
                    group=group,
                    model=model,
                    learners=len({p.learner for p in chosen}),
                    metrics=predictions_score([p.prediction for p in chosen]),
                    auc=predictions_auc([p.prediction for p in chosen]),
                )
            )
    return found


@dataclass(frozen=True, slots=True)
class ExportedReview:
    """A standing review as a log exports it, before the split: a learner's pseudonym, not their id."""

    learner: str
    card: str
    reviewed_at: datetime
    rating: int
    duration_ms: int | None


def revlog_split(
    reviews: Sequence[ExportedReview], *, test_fraction: float, day_of: DayOf = research_day
) -> list[tuple[ExportedReview, str]]:
    """Each review with its split: per learner, about the last `test_fraction` of their reviews are `test`.

    The split falls on a day boundary (`day_of`: 04:00 UTC in a log), so no training review shares a day with a test one
    and everything trained on comes before what is predicted.
    """
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be between 0 and 1, got {test_fraction}.")
    by_learner: dict[str, list[ExportedReview]] = defaultdict(list)
    for review in reviews:
        by_learner[review.learner].append(review)
    found: list[tuple[ExportedReview, str]] = []
    for learner in sorted(by_learner):
        history = sorted(by_learner[learner], key=lambda review: (review.reviewed_at, review.card))
        days = [day_of(learner, review.reviewed_at) for review in history]
        first_test_day = days[len(days) - max(1, round(len(days) * test_fraction))]
        if first_test_day == days[0]:
            # One day only: nothing can be trained on before it.
            found += [(review, "train") for review in history]
            continue
        found += [
            (review, "test" if day >= first_test_day else "train") for review, day in zip(history, days, strict=True)
        ]
    return found
