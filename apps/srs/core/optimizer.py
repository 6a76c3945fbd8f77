"""Fitting FSRS-6 parameters to one learner's review log, and scoring parameters on it: pure, no I/O.

A card's history becomes one FSRS item per review after its first, each carrying the reviews up to
it, with the whole learner-local days since the review before (0 for the first review and for a
review on the same day as the one before). fsrs-rs (fsrs_rs_python) does the fitting; the scores
are computed here as srs-benchmark defines them, so they can be read next to its published tables.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from itertools import pairwise

import fsrs_rs_python

from apps.srs.core.scheduling import DECAY_WEIGHT

PARAMETER_COUNT = 21
# Reviews on a later day than the one before (the ones a fit learns from and is scored on) needed
# before a fit of one learner's weights. Anki's optimizer asks for a few hundred reviews; below that
# the fitted weights follow noise, and the held-out fifth would be too few reviews to tell two weight
# sets apart.
MIN_REVIEWS_TO_FIT = 400
# FSRS-6's forgetting curve is fitted at this retention: R(t = S) = 0.9 whatever the decay.
_RETENTION_AT_STABILITY = 0.9
# Predictions are clipped before the logarithm, so a certain prediction that was wrong costs a finite loss.
_PREDICTION_EPSILON = 1e-6
# srs-benchmark's RMSE(bins): log-scale bins of the interval, the review number and the lapse count.
_INTERVAL_BIN = (2.48, 3.62)
_REVIEW_NUMBER_BIN = (1.99, 1.89)
_LAPSE_BIN = (1.65, 1.73)
_AGAIN = 1
# fsrs_rs_python's reviews keep their fields to themselves; their repr (Rust's Debug format) shows them.
_REVIEW_FIELDS = re.compile(r"FSRSReview \{ rating: (\d+), delta_t: (\d+) \}")


@dataclass(frozen=True, slots=True)
class LoggedReview:
    """One standing review of a card: neither undone nor an undo. `reviewed_at` is in UTC."""

    card_id: int
    reviewed_at: datetime
    rating: int


@dataclass(frozen=True, slots=True)
class FitMetrics:
    """How well parameters predicted recall; lower is better for both."""

    log_loss: float
    rmse_bins: float
    # The long-term reviews scored.
    reviews: int = 0


@dataclass(frozen=True, slots=True)
class ItemSplit:
    """Items to fit on, and the later items to score on: every fitted review precedes every scored one."""

    train: list[fsrs_rs_python.FSRSItem]
    test: list[fsrs_rs_python.FSRSItem]
    # The first learner-local day of the scored reviews; None when there is nothing to score.
    first_test_day: date | None


@dataclass(frozen=True, slots=True)
class _DatedItem:
    item: fsrs_rs_python.FSRSItem
    day: date
    long_term: bool


def review_fields(review: fsrs_rs_python.FSRSReview) -> tuple[int, int]:
    """A review's rating and days since the review before."""
    found = _REVIEW_FIELDS.fullmatch(repr(review))
    if found is None:
        raise ValueError(f"Cannot read the fields of {review!r}: fsrs_rs_python changed how it shows a review.")
    return int(found[1]), int(found[2])


def _is_long_term(item: fsrs_rs_python.FSRSItem) -> bool:
    return review_fields(item.reviews[-1])[1] > 0


def card_fsrs_reviews(ratings: Sequence[int], days: Sequence[date]) -> list[fsrs_rs_python.FSRSReview]:
    """A card's reviews in order as fsrs-rs reads them: each rating, with the whole learner days since
    the review before (0 for the first review, and for one on the same day as the review before)."""
    gaps = [0] + [(day - previous).days for previous, day in pairwise(days)]
    return [fsrs_rs_python.FSRSReview(rating, gap) for rating, gap in zip(ratings, gaps, strict=True)]


def recall_clipped(probability: float) -> float:
    """A predicted probability kept away from 0 and 1, so a certain prediction that was wrong costs a finite loss."""
    return min(max(probability, _PREDICTION_EPSILON), 1 - _PREDICTION_EPSILON)


def _dated_items(reviews: Iterable[LoggedReview], *, day_start: Callable[[datetime], date]) -> list[_DatedItem]:
    by_card: dict[int, list[LoggedReview]] = defaultdict(list)
    for review in reviews:
        by_card[review.card_id].append(review)
    dated: list[_DatedItem] = []
    # Each review is made once and shared by every item of its card that carries it.
    for card_id in sorted(by_card):
        # The rating breaks a tie of two reviews stamped alike, so the order never depends on the input's.
        history = sorted(by_card[card_id], key=lambda review: (review.reviewed_at, review.rating))
        days = [day_start(review.reviewed_at) for review in history]
        fsrs_reviews = card_fsrs_reviews([review.rating for review in history], days)
        dated += [
            _DatedItem(fsrs_rs_python.FSRSItem(fsrs_reviews[: end + 1]), days[end], long_term=days[end] > days[end - 1])
            for end in range(1, len(history))
        ]
    dated.sort(key=lambda dated_item: dated_item.day)
    return dated


def fsrs_items_from_reviews(
    reviews: Iterable[LoggedReview], *, day_start: Callable[[datetime], date]
) -> list[fsrs_rs_python.FSRSItem]:
    """One FSRS item per review after a card's first, with its history; ordered by the day of that review.

    `day_start` maps a time to the learner's day (their time zone and the hour their day starts).
    """
    return [dated.item for dated in _dated_items(reviews, day_start=day_start)]


def long_term_item_count(items: Iterable[fsrs_rs_python.FSRSItem]) -> int:
    """Items whose last review came on a later day than the one before: those a fit learns from and a score counts."""
    return sum(1 for item in items if _is_long_term(item))


def items_split_by_time(
    reviews: Iterable[LoggedReview], *, day_start: Callable[[datetime], date], test_fraction: float
) -> ItemSplit:
    """The learner's items, split at a day boundary so about `test_fraction` of the long-term reviews come after.

    A scored item carries the reviews before it, as it would when predicted; no fitted item holds a
    review from the first scored day on, so nothing a fit sees comes after what it is scored on.
    """
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be between 0 and 1, got {test_fraction}.")
    dated = _dated_items(reviews, day_start=day_start)
    long_term_days = [entry.day for entry in dated if entry.long_term]
    test_count = math.ceil(len(long_term_days) * test_fraction)
    if test_count == 0:
        return ItemSplit(train=[entry.item for entry in dated], test=[], first_test_day=None)
    first_test_day = long_term_days[len(long_term_days) - test_count]
    return ItemSplit(
        train=[entry.item for entry in dated if entry.day < first_test_day],
        test=[entry.item for entry in dated if entry.day >= first_test_day],
        first_test_day=first_test_day,
    )


def parameters_fit(
    items: Sequence[fsrs_rs_python.FSRSItem], *, num_relearning_steps: int | None = None
) -> tuple[float, ...]:
    """FSRS-6's 21 weights fitted to the items by fsrs-rs, starting from the defaults.

    Only items whose last review came on a later day than the one before are targets (as in Anki's
    training set); same-day steps still shape the histories they belong to. Fitting on the same-day
    targets as well closed about half of the gap between the default and the true parameters in
    bench/memory_model.py, long-term targets alone two thirds to four fifths, and the score that
    decides adoption counts long-term reviews only. fsrs-rs refuses an item with no review on a
    later day at all.
    """
    usable = [item for item in items if _is_long_term(item)]
    if not usable:
        raise ValueError("There is no review on a later day than the one before it to fit on.")
    fitted = fsrs_rs_python.FSRS(fsrs_rs_python.DEFAULT_PARAMETERS).compute_parameters(
        usable, enable_short_term=True, num_relearning_steps=num_relearning_steps
    )
    if len(fitted) != PARAMETER_COUNT:
        raise ValueError(f"The optimizer returned {len(fitted)} weights, expected {PARAMETER_COUNT}.")
    return tuple(float(weight) for weight in fitted)


def _recall_probability(parameters: Sequence[float], *, elapsed_days: int, stability: float) -> float:
    decay = -parameters[DECAY_WEIGHT]
    factor = _RETENTION_AT_STABILITY ** (1 / decay) - 1
    return float((1 + factor * elapsed_days / stability) ** decay)


def _log_bin(value: float, scale_base: tuple[float, float], *, digits: int) -> float:
    scale, base = scale_base
    return round(scale * base ** math.floor(math.log(value) / math.log(base)), digits)


def _bin_of(reviews: Sequence[tuple[int, int]]) -> tuple[float, float, float]:
    # A lapse is an Again after a day or more; Agains on the first day or in same-day steps are not.
    lapses = sum(1 for rating, delta_t in reviews[1:-1] if rating == _AGAIN and delta_t > 0)
    return (
        _log_bin(reviews[-1][1], _INTERVAL_BIN, digits=2),
        _log_bin(len(reviews), _REVIEW_NUMBER_BIN, digits=0),
        _log_bin(lapses, _LAPSE_BIN, digits=0) if lapses else 0.0,
    )


@dataclass(frozen=True, slots=True)
class RecallPrediction:
    """One long-term review as predicted: the probability of recall, whether it was recalled, its bin."""

    predicted: float
    recalled: float
    bin: tuple[float, float, float]


def recall_predictions(
    parameters: Sequence[float], items: Sequence[fsrs_rs_python.FSRSItem]
) -> list[RecallPrediction | None]:
    """Each item's last review predicted from the reviews before it; None for a same-day review (not predicted).

    As srs-benchmark predicts: a review counts as recalled unless rated Again, and predictions are
    clipped away from 0 and 1.
    """
    targets = [index for index, item in enumerate(items) if _is_long_term(item)]
    found: list[RecallPrediction | None] = [None] * len(items)
    if not targets:
        return found
    histories = [fsrs_rs_python.FSRSItem(items[index].reviews[:-1]) for index in targets]
    elapsed = [review_fields(items[index].reviews[-1])[1] for index in targets]
    for index, predicted in zip(targets, recall_probabilities(parameters, histories, elapsed), strict=True):
        reviews = [review_fields(review) for review in items[index].reviews]
        rating = reviews[-1][0]
        found[index] = RecallPrediction(
            predicted=recall_clipped(predicted),
            recalled=1.0 if rating > _AGAIN else 0.0,
            bin=_bin_of(reviews),
        )
    return found


def recall_probabilities(
    parameters: Sequence[float], histories: Sequence[fsrs_rs_python.FSRSItem], elapsed_days: Sequence[int]
) -> list[float]:
    """The probability of recall `elapsed_days` after each history's last review, unclipped (fsrs-rs's states)."""
    if not histories:
        return []
    states = fsrs_rs_python.FSRS(list(parameters)).memory_state_batch(list(histories))
    return [
        _recall_probability(parameters, elapsed_days=elapsed, stability=state.stability)
        for state, elapsed in zip(states, elapsed_days, strict=True)
    ]


def predictions_score(predictions: Sequence[RecallPrediction]) -> FitMetrics:
    """Log loss and RMSE(bins) of these predictions, as srs-benchmark scores them.

    RMSE(bins) groups predictions by interval, review number and lapse count (log-scale bins), and
    weighs each group's squared gap between mean prediction and recall rate by its size.
    """
    if not predictions:
        raise ValueError("There is no prediction to score.")
    total_loss = 0.0
    bins: dict[tuple[float, float, float], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for prediction in predictions:
        predicted, recalled = prediction.predicted, prediction.recalled
        total_loss -= recalled * math.log(predicted) + (1 - recalled) * math.log(1 - predicted)
        sums = bins[prediction.bin]
        sums[0] += predicted
        sums[1] += recalled
        sums[2] += 1
    squared = sum((predicted - recalled) ** 2 / count for predicted, recalled, count in bins.values())
    count = len(predictions)
    return FitMetrics(log_loss=total_loss / count, rmse_bins=math.sqrt(squared / count), reviews=count)


def predictions_auc(predictions: Sequence[RecallPrediction]) -> float | None:
    """The area under the ROC curve: the chance a recalled review was predicted above a forgotten one
    (ties count half). None when every review was recalled, or none was."""
    ordered = sorted(predictions, key=lambda prediction: prediction.predicted)
    recalled = sum(prediction.recalled for prediction in ordered)
    forgotten = len(ordered) - recalled
    if recalled == 0 or forgotten == 0:
        return None
    rank_sum = 0.0
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and ordered[end + 1].predicted == ordered[start].predicted:
            end += 1
        # Tied predictions share the mean of their ranks (1-based).
        mean_rank = (start + end) / 2 + 1
        rank_sum += mean_rank * sum(prediction.recalled for prediction in ordered[start : end + 1])
        start = end + 1
    return (rank_sum - recalled * (recalled + 1) / 2) / (recalled * forgotten)


# Held-out RMSE(bins) may rise by this much (absolute) and a lower log loss still be adopted: log loss is
# the figure the fit minimises and the one that decides, as in Anki; RMSE(bins) over a few hundred held-out
# reviews moves by about this much between two fits of the same learner, so it vetoes only a clearly
# worse calibration.
RMSE_BINS_TOLERANCE = 0.01


def adoption_refusal(candidate: FitMetrics, current: FitMetrics) -> str:
    """Why the candidate should not replace what is in use, from their held-out figures; empty when it should."""
    if candidate.log_loss >= current.log_loss:
        return "did not predict the later reviews with a lower log loss"
    if candidate.rmse_bins > current.rmse_bins + RMSE_BINS_TOLERANCE:
        return f"lowered the log loss but worsened RMSE(bins) by more than {RMSE_BINS_TOLERANCE}"
    return ""


def parameters_evaluate(parameters: Sequence[float], items: Sequence[fsrs_rs_python.FSRSItem]) -> FitMetrics:
    """Log loss and RMSE(bins) of the parameters' recall predictions on the items' long-term reviews,
    as srs-benchmark scores them (`recall_predictions`, `predictions_score`)."""
    predictions = [prediction for prediction in recall_predictions(parameters, items) if prediction is not None]
    if not predictions:
        raise ValueError("There is no review on a later day than the one before it to score.")
    return predictions_score(predictions)
