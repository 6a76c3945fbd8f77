"""The review log as FSRS items, the time-ordered split, and the scores, on fixed histories."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta

import fsrs_rs_python
import pytest

from apps.srs.core.optimizer import (
    LoggedReview,
    fsrs_items_from_reviews,
    items_split_by_time,
    long_term_item_count,
    parameters_evaluate,
    review_fields,
)

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


def day_at_4_utc(moment: datetime) -> date:
    return (moment - timedelta(hours=4)).date()


def fields(item: fsrs_rs_python.FSRSItem) -> list[tuple[int, int]]:
    return [review_fields(review) for review in item.reviews]


def test_one_item_per_review_after_the_first_with_whole_days_and_same_day_steps_at_zero():
    reviews = [
        LoggedReview(card_id=1, reviewed_at=T0, rating=1),
        LoggedReview(card_id=1, reviewed_at=T0 + timedelta(minutes=10), rating=3),
        LoggedReview(card_id=1, reviewed_at=T0 + timedelta(days=1, hours=3), rating=3),
        LoggedReview(card_id=1, reviewed_at=T0 + timedelta(days=5), rating=2),
    ]
    items = fsrs_items_from_reviews(reviews, day_start=day_at_4_utc)
    assert [fields(item) for item in items] == [
        [(1, 0), (3, 0)],
        [(1, 0), (3, 0), (3, 1)],
        [(1, 0), (3, 0), (3, 1), (2, 4)],
    ]


def test_days_follow_the_learners_day_start_not_24_hours():
    # 03:00 is still the day before for a learner whose day starts at 04:00.
    late_evening = datetime(2026, 3, 2, 23, 0, tzinfo=UTC)
    reviews = [
        LoggedReview(card_id=1, reviewed_at=late_evening, rating=3),
        LoggedReview(card_id=1, reviewed_at=late_evening + timedelta(hours=4), rating=3),
        LoggedReview(card_id=1, reviewed_at=late_evening + timedelta(hours=6), rating=3),
    ]
    items = fsrs_items_from_reviews(reviews, day_start=day_at_4_utc)
    assert [fields(item)[-1] for item in items] == [(3, 0), (3, 1)]


def test_a_review_arriving_late_takes_its_place_in_time_not_in_arrival():
    reviews = [
        LoggedReview(card_id=7, reviewed_at=T0, rating=3),
        LoggedReview(card_id=7, reviewed_at=T0 + timedelta(days=9), rating=3),
        LoggedReview(card_id=7, reviewed_at=T0 + timedelta(days=3), rating=1),
    ]
    items = fsrs_items_from_reviews(reviews, day_start=day_at_4_utc)
    assert fields(items[-1]) == [(3, 0), (1, 3), (3, 6)]


def test_cards_are_kept_apart_and_a_single_review_makes_no_item():
    reviews = [
        LoggedReview(card_id=1, reviewed_at=T0, rating=3),
        LoggedReview(card_id=2, reviewed_at=T0 + timedelta(hours=1), rating=4),
        LoggedReview(card_id=1, reviewed_at=T0 + timedelta(days=2), rating=3),
    ]
    items = fsrs_items_from_reviews(reviews, day_start=day_at_4_utc)
    assert [fields(item) for item in items] == [[(3, 0), (3, 2)]]


def _log(cards: int, days: int) -> list[LoggedReview]:
    reviews = []
    for card in range(cards):
        # Every card starts on the first day, so an item's last day is that day plus its intervals.
        start = T0 + timedelta(minutes=card)
        reviews.append(LoggedReview(card_id=card, reviewed_at=start, rating=3))
        reviews.append(LoggedReview(card_id=card, reviewed_at=start + timedelta(minutes=10), rating=3))
        for step in range(1, days):
            reviews.append(
                LoggedReview(card_id=card, reviewed_at=start + timedelta(days=(2 + card % 3) * step), rating=3)
            )
    return reviews


def test_the_split_fits_on_earlier_days_and_scores_on_later_ones_without_a_leak():
    reviews = _log(cards=20, days=10)
    split = items_split_by_time(reviews, day_start=day_at_4_utc, test_fraction=0.2)
    assert split.first_test_day is not None
    all_items = fsrs_items_from_reviews(reviews, day_start=day_at_4_utc)
    assert len(split.train) + len(split.test) == len(all_items)
    # Every fitted item ends before the first scored day: its reviews' days add up to an earlier day.
    first = min(day_at_4_utc(review.reviewed_at) for review in reviews)
    for item in split.train:
        assert first + timedelta(days=sum(delta for _, delta in fields(item))) < split.first_test_day
    for item in split.test:
        assert first + timedelta(days=sum(delta for _, delta in fields(item))) >= split.first_test_day
    tested = long_term_item_count(split.test)
    assert 0.15 <= tested / long_term_item_count(all_items) <= 0.35


def test_the_split_refuses_a_fraction_outside_zero_and_one():
    with pytest.raises(ValueError, match="test_fraction"):
        items_split_by_time([], day_start=day_at_4_utc, test_fraction=1.0)


def test_scores_agree_with_fsrs_rs_review_by_review():
    items = fsrs_items_from_reviews(_log(cards=3, days=4), day_start=day_at_4_utc)
    long_term = [item for item in items if fields(item)[-1][1] > 0]
    parameters = list(fsrs_rs_python.DEFAULT_PARAMETERS)
    for item in long_term:
        ours = parameters_evaluate(parameters, [item])
        theirs = fsrs_rs_python.FSRS(parameters).evaluate([item])
        assert ours.log_loss == pytest.approx(theirs.log_loss, rel=1e-4)
        assert ours.reviews == 1


def test_rmse_bins_is_zero_when_each_bin_predicts_its_recall_rate_and_same_day_reviews_are_not_scored():
    item = fsrs_rs_python.FSRSItem([fsrs_rs_python.FSRSReview(3, 0), fsrs_rs_python.FSRSReview(3, 1)])
    same_day = fsrs_rs_python.FSRSItem([fsrs_rs_python.FSRSReview(3, 0), fsrs_rs_python.FSRSReview(3, 0)])
    metrics = parameters_evaluate(list(fsrs_rs_python.DEFAULT_PARAMETERS), [item, same_day])
    assert metrics.reviews == 1
    # One review, recalled: the bin's gap is 1 - p, and the log loss is -log p.
    assert metrics.rmse_bins == pytest.approx(1 - math.exp(-metrics.log_loss))


def test_a_lower_log_loss_is_adopted_unless_rmse_bins_worsens_past_the_tolerance():
    from apps.srs.core.optimizer import RMSE_BINS_TOLERANCE, FitMetrics, adoption_refusal

    current = FitMetrics(log_loss=0.35, rmse_bins=0.040)
    assert adoption_refusal(FitMetrics(log_loss=0.34, rmse_bins=0.045), current) == ""
    assert adoption_refusal(FitMetrics(log_loss=0.34, rmse_bins=0.030), current) == ""
    assert "lower log loss" in adoption_refusal(FitMetrics(log_loss=0.35, rmse_bins=0.030), current)
    worse = FitMetrics(log_loss=0.30, rmse_bins=0.040 + RMSE_BINS_TOLERANCE + 0.001)
    assert "worsened RMSE(bins)" in adoption_refusal(worse, current)
