"""Scoring memory models on a review log anyone can export: train on some reviews, predict the others.

Pure, no I/O: rows come in as mappings (a CSV's), predictions and scores go out. Times are UTC and a
learner's day starts at 04:00, as srs-benchmark reads review logs. Every model is trained on the
`train` rows only, then predicts each `test` review whose card was reviewed on an earlier day, from
every review of that card before it (train and test alike), as a scheduler would have.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta

import fsrs_rs_python

from apps.srs.core.optimizer import (
    DECAY_WEIGHT,
    FitMetrics,
    LoggedReview,
    RecallPrediction,
    card_fsrs_reviews,
    fsrs_items_from_reviews,
    parameters_fit,
    predictions_auc,
    predictions_score,
    recall_clipped,
    recall_predictions,
)
from apps.srs.core.population import Observation, population_fit, recall_with_factor
from apps.srs.core.scheduling import DEFAULT_PARAMETERS

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


def _day(moment: datetime) -> date:
    return (moment - DAY_START).date()


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
def _fitted(train: Sequence[LoggedReview]) -> tuple[float, ...]:
    """The learner's own FSRS-6 fit (fsrs-rs), or the defaults where there is nothing to fit on."""
    try:
        return parameters_fit(fsrs_items_from_reviews(train, day_start=_day))
    except ValueError:
        return DEFAULT_PARAMETERS


# The models scored, in the order printed: FSRS-6's defaults; each learner's own fit; one fit on every
# learner's training reviews pooled (the course's weights); the course's weights with each card's and
# each learner's stability factor learned from the course (apps.srs.core.population).
MODELS = ("fsrs6-default", "fsrs6-learner", "fsrs6-course", "fsrs6-population")
_CARDS_PER_LEARNER = 10_000_000


def _targets(
    rows: Sequence[RevlogRow], *, split: str = "test"
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
        days = [_day(row.reviewed_at) for row in history]
        reviews = card_fsrs_reviews([row.rating for row in history], days)
        for end in range(1, len(history)):
            if history[end].split == split and days[end] > days[end - 1]:
                targets.append(history[end])
                items.append(fsrs_rs_python.FSRSItem(reviews[: end + 1]))
    return targets, items


def revlog_evaluate(rows: Sequence[RevlogRow]) -> list[ModelPrediction]:
    """Every model's prediction of every test review it can predict, learner by learner.

    The population models learn from every learner's train rows: the course's weights from their
    pooled histories, each card's and learner's stability factor from their train reviews as the
    course's weights predict them.
    """
    by_learner: dict[str, list[RevlogRow]] = defaultdict(list)
    for row in rows:
        by_learner[row.learner].append(row)
    train_by_learner: dict[str, list[LoggedReview]] = {}
    for learner, learner_rows in by_learner.items():
        cards = {card: index for index, card in enumerate(sorted({row.card for row in learner_rows}))}
        train_by_learner[learner] = [
            LoggedReview(card_id=cards[row.card], reviewed_at=row.reviewed_at, rating=row.rating)
            for row in learner_rows
            if row.split == "train"
        ]
    # Each learner's card numbers are their own: pooled, they are kept apart.
    pooled = [
        replace(review, card_id=review.card_id + position * _CARDS_PER_LEARNER)
        for position, learner in enumerate(sorted(train_by_learner))
        for review in train_by_learner[learner]
    ]
    course = _fitted(pooled)
    observations: list[Observation] = []
    for learner, learner_rows in by_learner.items():
        targets, items = _targets([row for row in learner_rows if row.split == "train"], split="train")
        observations += [
            Observation(
                learner=learner, card=target.card, predicted=prediction.predicted, recalled=bool(prediction.recalled)
            )
            for target, prediction in zip(targets, recall_predictions(course, items), strict=True)
            if prediction is not None
        ]
    decay = course[DECAY_WEIGHT]
    factors = population_fit(observations, decay=decay)
    found: list[ModelPrediction] = []
    for learner in sorted(by_learner):
        targets, items = _targets(by_learner[learner])
        if not targets:
            continue
        own = _fitted(train_by_learner[learner])
        by_model = {
            "fsrs6-default": recall_predictions(DEFAULT_PARAMETERS, items),
            "fsrs6-learner": recall_predictions(own, items),
            "fsrs6-course": recall_predictions(course, items),
        }
        by_model["fsrs6-population"] = [
            None
            if prediction is None
            else replace(
                prediction,
                predicted=recall_clipped(
                    recall_with_factor(
                        prediction.predicted, decay=decay, log_factor=factors.factor(learner=learner, card=target.card)
                    )
                ),
            )
            for target, prediction in zip(targets, by_model["fsrs6-course"], strict=True)
        ]
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


def revlog_split(reviews: Sequence[ExportedReview], *, test_fraction: float) -> list[tuple[ExportedReview, str]]:
    """Each review with its split: per learner, about the last `test_fraction` of their reviews are `test`.

    The split falls on a day boundary (04:00 UTC), so no training review shares a day with a test one
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
        days = [_day(review.reviewed_at) for review in history]
        first_test_day = days[len(days) - max(1, round(len(days) * test_fraction))]
        if first_test_day == days[0]:
            # One day only: nothing can be trained on before it.
            found += [(review, "train") for review in history]
            continue
        found += [
            (review, "test" if day >= first_test_day else "train") for review, day in zip(history, days, strict=True)
        ]
    return found
