"""The daily goal: today's reviews against it, the days in a row it was met, and the setting's bounds."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from apps.content.models import Card
from apps.srs.models import SchedulingSettings
from apps.srs.progress.stats import daily_goal_get
from apps.srs.reviews.services import ReviewInput, review_undo, reviews_submit
from apps.srs.settings.services import scheduling_settings_update
from tests.support.api import make_learner

pytestmark = pytest.mark.django_db

URL = "/api/v1/srs/goal/"
# 13:00 in Paris: the learner's day (from 04:00) is 2 November.
NOW = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
GOOD = 3


def _review(learner: Any, card: Card, at: datetime) -> Any:
    (outcome,) = reviews_submit(
        learner=learner,
        reviews=[ReviewInput(card_id=card.pk, rating=GOOD, client_review_id=uuid.uuid4(), reviewed_at=at)],
        now=NOW,
    )
    return outcome.log


@pytest.fixture
def paris_learner(learner):
    scheduling_settings_update(learner=learner, changes={"timezone": "Europe/Paris", "day_start_hour": 4})
    return learner


def test_without_a_goal_today_is_counted_and_nothing_is_met(paris_learner, deck_cards):
    _review(paris_learner, deck_cards[0], NOW - timedelta(hours=1))
    goal = daily_goal_get(learner=paris_learner, now=NOW)
    assert (goal.goal, goal.reviews_today, goal.met, goal.streak) == (0, 1, False, 0)


def test_the_goal_is_met_by_todays_reviews_and_the_streak_counts_the_days_before(learner, deck_cards):
    scheduling_settings_update(
        learner=learner, changes={"timezone": "Europe/Paris", "day_start_hour": 4, "daily_goal": 2}
    )
    # As a request would: the learner read again, with the settings just saved.
    paris_learner = get_user_model().objects.get(pk=learner.pk)
    cards = iter(deck_cards)
    # 31 October and 1 November met the goal (two reviews each); 30 October had one.
    for days_back, count in ((3, 1), (2, 2), (1, 2)):
        for _ in range(count):
            _review(paris_learner, next(cards), NOW - timedelta(days=days_back))
    before = daily_goal_get(learner=paris_learner, now=NOW)
    # Today not met yet does not break the streak.
    assert (before.goal, before.reviews_today, before.met, before.streak) == (2, 0, False, 2)

    first = _review(paris_learner, next(cards), NOW - timedelta(minutes=30))
    # 03:30 on 2 November in Paris is still 1 November's day (it starts at 04:00).
    _review(paris_learner, next(cards), datetime(2026, 11, 2, 2, 30, tzinfo=UTC))
    assert daily_goal_get(learner=paris_learner, now=NOW).reviews_today == 1
    _review(paris_learner, next(cards), NOW - timedelta(minutes=10))
    met = daily_goal_get(learner=paris_learner, now=NOW)
    assert (met.reviews_today, met.met, met.streak) == (2, True, 3)
    assert met.day_end == datetime(2026, 11, 3, 3, 0, tzinfo=UTC)

    # An undone review no longer counts.
    review_undo(learner=paris_learner, review_id=first.pk, now=NOW)
    undone = daily_goal_get(learner=paris_learner, now=NOW)
    assert (undone.reviews_today, undone.met, undone.streak) == (1, False, 2)


def test_the_api_gives_the_learners_own_goal_and_the_setting_is_bounded(learner_client, learner, deck_cards):
    _, other_client = make_learner("brian")
    assert other_client.patch("/api/v1/srs/settings/", {"daily_goal": 1}, format="json").status_code == 200
    body = {"card": deck_cards[0].pk, "rating": GOOD, "client_review_id": str(uuid.uuid4())}
    assert other_client.post("/api/v1/reviews/", body, format="json").status_code == 201

    assert learner_client.get(URL).json() | {"day_end": None} == {
        "goal": 0,
        "reviews_today": 0,
        "met": False,
        "streak": 0,
        "day_end": None,
    }
    saved = learner_client.patch("/api/v1/srs/settings/", {"daily_goal": 30}, format="json")
    assert saved.status_code == 200 and saved.json()["daily_goal"] == 30
    assert learner_client.get(URL).json()["goal"] == 30
    assert other_client.get(URL).json() | {"day_end": None} == {
        "goal": 1,
        "reviews_today": 1,
        "met": True,
        "streak": 1,
        "day_end": None,
    }

    for bad in (-1, 10_000, 2.5, "20", None, True):
        refused = learner_client.patch("/api/v1/srs/settings/", {"daily_goal": bad}, format="json")
        assert refused.status_code == 400, (bad, refused.json())
        assert "daily_goal" in refused.json()["error"]["fields"], refused.json()
    assert SchedulingSettings.objects.get(learner=learner).daily_goal == 30
