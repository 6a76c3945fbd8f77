"""Statistics: hand-computed figures for a small history in Paris across both 2026 clock changes, and the API."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from apps.content.models import Card
from apps.srs.models import CardMemory, ReviewLog
from apps.srs.progress.stats import LearnerStats, learner_stats_get
from apps.srs.reviews.services import ReviewInput, review_undo, reviews_submit
from apps.srs.settings.services import scheduling_settings_update
from tests.support.api import make_learner
from tests.support.progress import counted_get, days_ago, leech_reviews, second_deck
from tests.support.reviews import DECK

pytestmark = pytest.mark.django_db

URL = "/api/v1/stats/"
PARIS = ZoneInfo("Europe/Paris")
# A Monday: 13:00 in Paris, so the learner's day (from 04:00) is 2 November.
NOW = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
AGAIN, GOOD, EASY = 1, 3, 4


def paris(year: int, month: int, day: int, hour: int, minute: int, *, fold: int = 0) -> datetime:
    """A Paris wall-clock time; fold=1 is the second 02:30 of 25 October, in winter time."""
    return datetime(year, month, day, hour, minute, tzinfo=PARIS, fold=fold)


def submit(learner: Any, card: Card, rating: int, at: datetime) -> ReviewLog:
    (outcome,) = reviews_submit(
        learner=learner,
        reviews=[ReviewInput(card_id=card.pk, rating=rating, client_review_id=uuid.uuid4(), reviewed_at=at)],
        now=NOW,
    )
    assert outcome.created
    return outcome.log


@pytest.fixture
def paris_learner(learner):
    scheduling_settings_update(learner=learner, changes={"timezone": "Europe/Paris", "day_start_hour": 4})
    return learner


@pytest.fixture
def history(paris_learner, deck_cards) -> dict[str, Any]:
    """Reviews whose learner-local days, stages and ratings are worked out by hand in the comments."""
    learner = paris_learner
    a, b, c, d, e, f = deck_cards[:6]
    # Card A, around the spring change (29 March, 02:00 CET -> 03:00 CEST).
    submit(learner, a, EASY, paris(2026, 3, 28, 10, 0))  # day 28/3, new
    submit(learner, a, GOOD, paris(2026, 3, 29, 3, 30))  # 03:30 < 04:00: day 28/3, review stage, passed
    submit(learner, a, GOOD, paris(2026, 3, 29, 4, 30))  # day 29/3, review stage, passed
    submit(learner, a, AGAIN, paris(2026, 3, 30, 3, 59))  # day 29/3 (a Sunday), review stage, failed
    submit(learner, a, GOOD, paris(2026, 3, 30, 4, 0))  # day 30/3, relearning
    submit(learner, a, GOOD, paris(2026, 3, 31, 10, 0))  # day 31/3, review stage, passed
    # Card B, around the autumn change (25 October, 03:00 CEST -> 02:00 CET: 02:30 happens twice).
    submit(learner, b, EASY, paris(2026, 10, 24, 12, 0))  # day 24/10, new
    submit(learner, b, AGAIN, paris(2026, 10, 25, 2, 30))  # day 24/10, review stage, failed
    submit(learner, b, GOOD, paris(2026, 10, 25, 2, 30, fold=1))  # day 24/10, relearning
    submit(learner, b, GOOD, paris(2026, 10, 25, 4, 0))  # day 25/10, review stage, passed
    submit(learner, b, GOOD, paris(2026, 10, 26, 3, 30))  # day 25/10 (a Sunday), review stage, passed
    submit(learner, b, AGAIN, paris(2026, 10, 26, 9, 0))  # day 26/10, review stage, failed
    # Card C: five days in a row in June.
    submit(learner, c, EASY, paris(2026, 6, 1, 12, 0))
    for day in range(2, 6):
        submit(learner, c, GOOD, paris(2026, 6, day, 12, 0))  # review stage, passed
    # Card D: the last two days; the second review of 1 November is undone.
    submit(learner, d, EASY, paris(2026, 10, 31, 12, 0))
    submit(learner, d, GOOD, paris(2026, 11, 1, 12, 0))  # review stage, passed
    review_undo(learner=learner, review_id=submit(learner, d, GOOD, paris(2026, 11, 1, 13, 0)).pk, now=NOW)
    # Card E: its only review, on 29 October, is undone; the card is new again.
    review_undo(learner=learner, review_id=submit(learner, e, EASY, paris(2026, 10, 29, 12, 0)).pk, now=NOW)
    # Card F: seven days in a row more than a year ago: the longest streak, outside the heatmap.
    submit(learner, f, EASY, paris(2025, 10, 1, 12, 0))
    for day in range(2, 8):
        submit(learner, f, GOOD, paris(2025, 10, day, 12, 0))
    # A card of another deck, on 30 October.
    other_card = Card.objects.get(deck=second_deck(cards=3), position=0)
    submit(learner, other_card, EASY, paris(2026, 10, 30, 12, 0))
    # Another learner's reviews never count.
    other, _ = make_learner("brian")
    submit(other, a, EASY, paris(2026, 11, 2, 12, 0))
    return {"second_deck": other_card.deck}


def _days(stats_days: list[Any]) -> dict[str, int]:
    return {item.day.isoformat(): item.count for item in stats_days}


def _retention(periods: list[Any]) -> dict[str, tuple[int, int]]:
    return {period.start.isoformat(): (period.reviews, period.passed) for period in periods if period.reviews}


DECK_DAYS = {
    "2026-03-28": 2,
    "2026-03-29": 2,
    "2026-03-30": 1,
    "2026-03-31": 1,
    "2026-06-01": 1,
    "2026-06-02": 1,
    "2026-06-03": 1,
    "2026-06-04": 1,
    "2026-06-05": 1,
    "2026-10-24": 3,
    "2026-10-25": 2,
    "2026-10-26": 1,
    "2026-10-31": 1,
    "2026-11-01": 1,
}


def test_reviews_per_day_streaks_and_retention_by_hand(paris_learner, history):
    stats = learner_stats_get(learner=paris_learner, now=NOW)
    assert stats.today == date(2026, 11, 2)
    assert stats.day_start == paris(2026, 11, 2, 4, 0)
    assert _days(stats.reviews_per_day) == DECK_DAYS | {"2026-10-30": 1}
    assert [item.day for item in stats.reviews_per_day] == sorted(item.day for item in stats.reviews_per_day)
    # 30 Oct to 1 Nov, today not studied yet; the longest run is 1-7 October 2025.
    assert (stats.streak.current, stats.streak.longest) == (3, 7)

    assert len(stats.retention_by_week) == 52
    assert stats.retention_by_week[0].start == date(2025, 11, 10)
    assert stats.retention_by_week[-1].start == date(2026, 11, 2)
    assert _retention(stats.retention_by_week) == {
        "2026-03-23": (3, 2),
        "2026-03-30": (1, 1),
        "2026-06-01": (4, 4),
        "2026-10-19": (3, 2),
        "2026-10-26": (2, 1),
    }
    week = {period.start: period for period in stats.retention_by_week}
    assert week[date(2026, 3, 23)].retention == pytest.approx(2 / 3)
    assert week[date(2026, 11, 2)].retention is None

    assert [period.start for period in stats.retention_by_month] == [date(2025, 12, 1)] + [
        date(2026, month, 1) for month in range(1, 12)
    ]
    assert _retention(stats.retention_by_month) == {
        "2026-03-01": (4, 3),
        "2026-06-01": (4, 4),
        "2026-10-01": (4, 2),
        "2026-11-01": (1, 1),
    }


def test_deck_filter_and_a_review_today(paris_learner, history, deck_cards):
    stats = learner_stats_get(learner=paris_learner, now=NOW, deck_slug=deck_cards[0].deck.slug)
    assert _days(stats.reviews_per_day) == DECK_DAYS
    assert (stats.streak.current, stats.streak.longest) == (2, 7)
    assert [item.deck.slug for item in stats.decks] == [DECK]

    other = learner_stats_get(learner=paris_learner, now=NOW, deck_slug=history["second_deck"].slug)
    assert _days(other.reviews_per_day) == {"2026-10-30": 1}
    assert (other.streak.current, other.streak.longest) == (0, 1)

    # 09:30 in Paris today counts for today, and the streak now includes it.
    submit(paris_learner, deck_cards[3], GOOD, paris(2026, 11, 2, 9, 30))
    stats = learner_stats_get(learner=paris_learner, now=NOW, deck_slug=deck_cards[0].deck.slug)
    assert _days(stats.reviews_per_day)["2026-11-02"] == 1
    assert stats.streak.current == 3
    # Early tomorrow morning, before 04:00, it is still 2 November for this learner.
    late = learner_stats_get(learner=paris_learner, now=paris(2026, 11, 3, 3, 59), deck_slug=deck_cards[0].deck.slug)
    assert (late.today, late.streak.current) == (date(2026, 11, 2), 3)
    assert learner_stats_get(learner=paris_learner, now=paris(2026, 11, 4, 4, 0)).streak.current == 0


def test_decks_count_states_from_history(paris_learner, history, deck_cards):
    stats = learner_stats_get(learner=paris_learner, now=NOW)
    by_deck = {item.deck.slug: item for item in stats.decks}
    assert list(by_deck) == [DECK, history["second_deck"].slug]
    deck = by_deck[DECK]
    # A, C, D and F in review, B relearning after its last Again, E new again after its undo.
    cards = len(deck_cards)
    assert (deck.total, deck.new, deck.learning, deck.review, deck.relearning, deck.suspended) == (
        cards,
        cards - 5,
        0,
        4,
        1,
        0,
    )
    second = by_deck[history["second_deck"].slug]
    assert (second.total, second.new, second.review) == (3, 2, 1)
    assert 0 < second.mastery < 1 / 3


def _memory(learner: Any, card: Card, *, due: datetime, **fields: Any) -> CardMemory:
    values: dict[str, Any] = {
        "stage": 2,
        "step": None,
        "stability": 10.0,
        "difficulty": 5.0,
        "last_review": due - timedelta(days=1),
        "reps": 3,
        "lapses": 0,
    } | fields
    return CardMemory.objects.create(
        learner=learner, card=card, due=due, first_review=values["last_review"] - timedelta(days=30), **values
    )


FORECASTS: dict[str, tuple[datetime, list[tuple[datetime, str | None]]]] = {
    "autumn": (
        datetime(2026, 10, 20, 12, 0, tzinfo=UTC),
        [
            (datetime(2026, 10, 1, 10, 0, tzinfo=UTC), "2026-10-20"),  # overdue
            (datetime(2026, 10, 20, 1, 0, tzinfo=UTC), "2026-10-20"),  # 03:00 CEST, before today began: overdue
            (datetime(2026, 10, 20, 20, 0, tzinfo=UTC), "2026-10-20"),
            (datetime(2026, 10, 25, 0, 30, tzinfo=UTC), "2026-10-24"),  # the first 02:30
            (datetime(2026, 10, 25, 1, 30, tzinfo=UTC), "2026-10-24"),  # the second 02:30
            (datetime(2026, 10, 25, 3, 0, tzinfo=UTC), "2026-10-25"),  # 04:00 CET
            (datetime(2026, 10, 26, 2, 30, tzinfo=UTC), "2026-10-25"),  # 03:30 CET the next morning
            (datetime(2026, 11, 19, 2, 59, tzinfo=UTC), "2026-11-18"),  # the last day of the 30
            (datetime(2026, 11, 19, 3, 0, tzinfo=UTC), None),  # the 31st day
        ],
    ),
    "spring": (
        datetime(2026, 3, 20, 12, 0, tzinfo=UTC),
        [
            (datetime(2026, 3, 29, 0, 30, tzinfo=UTC), "2026-03-28"),  # 01:30 CET
            (datetime(2026, 3, 29, 1, 30, tzinfo=UTC), "2026-03-28"),  # 03:30 CEST
            (datetime(2026, 3, 29, 2, 0, tzinfo=UTC), "2026-03-29"),  # 04:00 CEST
            (datetime(2026, 3, 30, 1, 59, tzinfo=UTC), "2026-03-29"),  # 03:59 CEST
        ],
    ),
}


@pytest.mark.parametrize("season", FORECASTS)
def test_due_forecast_by_hand(paris_learner, deck_cards, season):
    now, dues = FORECASTS[season]
    for card, (due, _) in zip(deck_cards, dues, strict=False):
        _memory(paris_learner, card, due=due)
    spare = deck_cards[len(dues) :]
    # Never counted: a suspended card, an archived card, and another learner's card, all due today.
    _memory(paris_learner, spare[0], due=now, suspended=True)
    Card.objects.filter(pk=spare[1].pk).update(archived=True)
    _memory(paris_learner, spare[1], due=now)
    other, _ = make_learner("brian")
    _memory(other, spare[2], due=now)

    stats: LearnerStats = learner_stats_get(learner=paris_learner, now=now)
    today = stats.today
    assert [item.day for item in stats.due_forecast] == [today + timedelta(days=offset) for offset in range(30)]
    expected: dict[str, int] = {}
    for _, day in dues:
        if day is not None:
            expected[day] = expected.get(day, 0) + 1
    assert {item.day.isoformat(): item.count for item in stats.due_forecast if item.count} == expected


def test_mastery_is_recall_now_weighed_by_how_lasting_each_card_is_by_hand(paris_learner, deck_cards):
    now = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
    # Retrievability is exactly 0.9 after `stability` whole days, and 1 within the first day.
    _memory(paris_learner, deck_cards[0], due=now, stability=10.0, last_review=now - timedelta(days=10))
    _memory(paris_learner, deck_cards[1], due=now, stability=42.0, last_review=now - timedelta(hours=2))
    _memory(paris_learner, deck_cards[2], due=now, stage=1, step=0, stability=1.0, last_review=now - timedelta(days=1))
    _memory(paris_learner, deck_cards[3], due=now, stage=3, step=0, stability=5.0, last_review=now - timedelta(days=5))
    _memory(paris_learner, deck_cards[4], due=now, suspended=True, last_review=now - timedelta(hours=1))
    # An archived card leaves the deck, memory and all; another learner's memory is not ours.
    _memory(paris_learner, deck_cards[5], due=now)
    Card.objects.filter(pk=deck_cards[5].pk).update(archived=True)
    other, _ = make_learner("brian")
    _memory(other, deck_cards[6], due=now, last_review=now - timedelta(hours=1))
    unstudied = second_deck(cards=3)

    (deck,) = learner_stats_get(learner=paris_learner, now=now).decks
    # Five cards studied, one archived: the rest of the deck is new.
    visible = len(deck_cards) - 1
    assert (deck.total, deck.new, deck.learning, deck.review, deck.relearning, deck.suspended) == (
        visible,
        visible - 5,
        1,
        2,
        1,
        1,
    )
    # Recall now times stability / 21 days (at most 1): the 42-day card counts whole, the others in part; the
    # suspended card was left with the default stability of the helper's row.
    suspended_stability = CardMemory.objects.get(learner=paris_learner, card=deck_cards[4]).stability
    assert deck.mastery == pytest.approx(
        (0.9 * 10 / 21 + 1.0 + 0.9 * 1 / 21 + 0.9 * 5 / 21 + 1.0 * min(1.0, suspended_stability / 21)) / visible
    )

    (filtered,) = learner_stats_get(learner=paris_learner, now=now, deck_slug=unstudied.slug).decks
    assert (filtered.deck, filtered.total, filtered.new, filtered.mastery) == (unstudied, 3, 3, 0.0)


def test_api_shape_isolation_and_constant_queries(learner_client, learner, deck_cards):
    _, other_client = make_learner("brian")
    batch = [body for card in deck_cards[:2] for body in leech_reviews(card, lapses=2, start=days_ago(40))]
    assert other_client.post("/api/v1/reviews/batch/", {"reviews": batch}, format="json").status_code == 200

    empty = learner_client.get(URL).json()
    assert empty["reviews_per_day"] == [] and empty["decks"] == []
    assert empty["streak"] == {"current": 0, "longest": 0}
    assert sum(item["count"] for item in empty["due_forecast"]) == 0

    def study(cards: list[Card], start: datetime) -> None:
        reviews = [body for card in cards for body in leech_reviews(card, lapses=2, start=start)]
        assert learner_client.post("/api/v1/reviews/batch/", {"reviews": reviews}, format="json").status_code == 200

    study(deck_cards[:1], days_ago(10))
    small, queries = counted_get(learner_client, URL)
    assert small.status_code == 200, small.json()
    body = small.json()
    assert set(body) == {
        "today",
        "day_start",
        "day_end",
        "timezone",
        "due_forecast",
        "reviews_per_day",
        "retention_by_week",
        "retention_by_month",
        "streak",
        "decks",
    }
    assert sum(item["count"] for item in body["reviews_per_day"]) == 4
    (deck,) = body["decks"]
    assert deck["deck"] == DECK
    assert deck["counts"] == {"new": len(deck_cards) - 1, "learning": 0, "review": 0, "relearning": 1, "suspended": 0}
    assert body["retention_by_week"][-1].keys() == {"start", "reviews", "passed", "retention"}

    second = second_deck(cards=3)
    study([*deck_cards[1:6], *Card.objects.filter(deck=second)], days_ago(30))
    large, queries_large = counted_get(learner_client, URL)
    assert sum(item["count"] for item in large.json()["reviews_per_day"]) == 4 + 8 * 4
    assert [item["deck"] for item in large.json()["decks"]] == [DECK, second.slug]
    # Reviews by day, the forecast, the decks, the course memory models in use for the learner, and the
    # memories for mastery (settings come with the token).
    assert len(queries) == len(queries_large) == 5, queries_large

    filtered, filtered_queries = counted_get(learner_client, f"{URL}?deck={second.slug}")
    assert [item["deck"] for item in filtered.json()["decks"]] == [second.slug]
    # The filter joins on the deck's slug: no query of its own.
    assert len(filtered_queries) == 5

    # A filter that names nothing counts nothing, as every filter of the API does.
    unknown = learner_client.get(URL, {"deck": "no-such-deck"})
    assert unknown.status_code == 200
    assert unknown.json()["decks"] == unknown.json()["reviews_per_day"] == []
    assert sum(day["count"] for day in unknown.json()["due_forecast"]) == 0
