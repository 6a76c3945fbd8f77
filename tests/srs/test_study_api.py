"""The study queue: order, daily limits in the learner's own day, exclusions, previews, query counts and the body."""

from __future__ import annotations

import random
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIClient

from apps.content.models import Card, Deck
from apps.content.services import content_archived_set
from apps.srs.models import CardMemory
from apps.srs.reviews.selectors import (
    DEFAULT_STUDY_LIMIT,
    LEARN_AHEAD,
    MAX_STUDY_LIMIT,
    StudyQueue,
    deck_study_queue_get,
)
from apps.srs.reviews.serializers import StudyOutput
from apps.srs.reviews.study_output import study_data
from apps.srs.settings.services import scheduling_settings_update
from tests.support.api import make_learner
from tests.support.reviews import DECK, post_review, review_body, without_recall_time

pytestmark = pytest.mark.django_db

STUDY = f"/api/v1/decks/{DECK}/study/"
# Transaction bookkeeping is not a query the endpoint chose to make.
NOT_COUNTED = ("SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK TO SAVEPOINT", "BEGIN")
# The spec's budget per study or review request, the token lookup of authentication included.
QUERY_BUDGET = 8


# --- helpers ------------------------------------------------------------------------------------------------------


def ago(**delta: float) -> datetime:
    return datetime.now(UTC) - timedelta(**delta)


def review(client: APIClient, card: Card, rating: int, at: datetime | None = None) -> dict[str, Any]:
    response = post_review(client, review_body(card, rating, at))
    assert response.status_code == 201, response.json()
    return response.json()


def study(client: APIClient, **params: Any) -> dict[str, Any]:
    response = client.get(STUDY, params)
    assert response.status_code == 200, response.json()
    return response.json()


def queue_of(data: dict[str, Any]) -> list[tuple[str, int]]:
    return [(item["queue"], item["card"]["id"]) for item in data["cards"]]


def midday(learner: Any, **changes: Any) -> None:
    """Start the learner's day twelve hours before now, so "today" safely holds the last few hours."""
    hour = (datetime.now(UTC).hour + 12) % 24
    scheduling_settings_update(learner=learner, changes={"timezone": "UTC", "day_start_hour": hour, **changes})


def in_review(client: APIClient, card: Card, days_ago: int = 60) -> None:
    """A card in Review, long overdue: Easy on first sight makes it due about eight days later."""
    assert review(client, card, 4, ago(days=days_ago))["state"]["stage"] == "review"


def counted(captured: CaptureQueriesContext) -> tuple[list[str], list[str]]:
    """The statements an endpoint ran, less transaction bookkeeping; and apart, the token lookup."""
    statements = [q["sql"] for q in captured.captured_queries if not q["sql"].upper().startswith(NOT_COUNTED)]
    token = [sql for sql in statements if '"accounts_devicetoken"' in sql]
    return [sql for sql in statements if sql not in token], token


# --- the queue ----------------------------------------------------------------------------------------------------


def test_a_fresh_learner_gets_new_cards_in_deck_order(learner_client, deck_cards):
    data = study(learner_client)
    assert data["deck"] == DECK
    assert queue_of(data) == [("new", card.pk) for card in deck_cards[:20]]
    assert data["counts"] == {
        "learning_due": 0,
        "reviews_due": 0,
        "new_due": 20,
        "new_left_today": 20,
        "reviews_left_today": 200,
    }
    item = data["cards"][0]
    assert set(item) == {"queue", "card", "state", "next_intervals", "recall_probability", "recall_computed_at"}
    assert item["state"] is None
    assert item["recall_probability"] is None
    assert item["card"] == {
        "id": deck_cards[0].pk,
        "slug": deck_cards[0].slug,
        "term": deck_cards[0].term,
        "definition": deck_cards[0].definition,
        "example": deck_cards[0].example,
        "code": deck_cards[0].code,
        "format": "text",
        "tags": [],
        "anki_guid": "",
    }


def test_learning_then_reviews_then_new(learner, learner_client, deck_cards):
    midday(learner)
    cards = deck_cards
    # Reviews, overdue by different amounts: the most overdue comes first.
    in_review(learner_client, cards[0], days_ago=50)
    in_review(learner_client, cards[1], days_ago=70)
    in_review(learner_client, cards[2], days_ago=60)
    # Learning: again an hour ago (due 59 minutes ago), good 5 minutes ago (due in 5 minutes).
    review(learner_client, cards[3], 1, ago(hours=1))
    review(learner_client, cards[4], 3, ago(minutes=5))
    # Relearning: a lapse 30 minutes ago, due 20 minutes ago.
    in_review(learner_client, cards[5])
    review(learner_client, cards[5], 1, ago(minutes=30))
    # Not due: learned long ago and due in the future.
    review(learner_client, cards[6], 4, ago(minutes=1))

    data = study(learner_client)

    assert queue_of(data) == [
        ("learning", cards[3].pk),
        ("learning", cards[5].pk),
        ("learning", cards[4].pk),
        ("review", cards[1].pk),
        ("review", cards[2].pk),
        ("review", cards[0].pk),
        *[("new", card.pk) for card in cards[7:24]],  # 20 a day, 3 already seen today
    ]
    assert data["counts"] == {
        "learning_due": 3,
        "reviews_due": 3,
        "new_due": 17,
        "new_left_today": 17,
        "reviews_left_today": 199,  # the lapse of cards[5] was a review of a card in Review
    }
    stages = {item["card"]["id"]: item["state"] and item["state"]["stage"] for item in data["cards"]}
    assert stages[cards[5].pk] == "relearning"
    assert stages[cards[3].pk] == stages[cards[4].pk] == "learning"
    assert stages[cards[0].pk] == "review"


def test_the_limit_parameter_cuts_the_queue_in_order(learner, learner_client, deck_cards):
    midday(learner)
    review(learner_client, deck_cards[0], 1, ago(minutes=10))
    in_review(learner_client, deck_cards[1])
    in_review(learner_client, deck_cards[2], days_ago=61)
    full = queue_of(study(learner_client, limit=MAX_STUDY_LIMIT))
    for limit in (1, 2, 3, 5):
        data = study(learner_client, limit=limit)
        assert queue_of(data) == full[:limit]
        assert data["counts"]["reviews_due"] == 2, "counts are not cut by the limit"
    assert len(study(learner_client)["cards"]) == min(DEFAULT_STUDY_LIMIT, len(full))


@pytest.mark.parametrize(
    "limit", ["0", str(MAX_STUDY_LIMIT + 1), "-1", "ten", "", "2.5", "1e2", " 5", "²", "٣", "9" * 30]
)
def test_a_limit_out_of_bounds_is_refused(learner_client, deck_cards, limit):
    response = learner_client.get(STUDY, {"limit": limit})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert set(error["fields"]) == {"limit"}


@pytest.mark.parametrize("limit", [1, MAX_STUDY_LIMIT])
def test_the_limit_bounds_themselves_are_allowed(learner_client, deck_cards, limit):
    assert len(study(learner_client, limit=limit)["cards"]) == min(limit, 20)


def test_an_unknown_or_archived_deck_is_not_found(learner_client, deck_cards):
    assert learner_client.get("/api/v1/decks/no-such-deck/study/").status_code == 404
    content_archived_set(items=Deck.objects.filter(slug=DECK), archived=True)
    response = learner_client.get(STUDY)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_study_needs_a_signed_in_learner(api_client, deck_cards):
    response = api_client.get(STUDY)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


# --- daily limits, in the learner's day ---------------------------------------------------------------------------


def test_new_cards_per_day_counts_only_todays_first_reviews(learner, learner_client, deck_cards):
    midday(learner, new_cards_per_day=5)
    review(learner_client, deck_cards[0], 3, ago(days=2))  # yesterday's new card: not counted
    review(learner_client, deck_cards[1], 3, ago(hours=2))
    review(learner_client, deck_cards[1], 3, ago(hours=1))  # the same card again: one new card
    review(learner_client, deck_cards[2], 1, ago(minutes=30))

    data = study(learner_client)

    assert data["counts"]["new_left_today"] == 3
    assert data["counts"]["new_due"] == 3
    assert [card for queue, card in queue_of(data) if queue == "new"] == [c.pk for c in deck_cards[3:6]]


def test_undoing_a_new_cards_review_gives_its_place_back(learner, learner_client, deck_cards):
    midday(learner, new_cards_per_day=2)
    first = review(learner_client, deck_cards[0], 3, ago(minutes=20))
    review(learner_client, deck_cards[1], 3, ago(minutes=10))
    assert study(learner_client)["counts"]["new_left_today"] == 0
    assert not [queue for queue, _ in queue_of(study(learner_client)) if queue == "new"]
    # Undo needs the latest review of the card; the first card has only one.
    assert learner_client.post(f"/api/v1/reviews/{first['id']}/undo/").status_code == 200
    data = study(learner_client)
    assert data["counts"]["new_left_today"] == 1
    assert ("new", deck_cards[0].pk) in queue_of(data)


def test_no_new_cards_when_the_daily_limit_is_zero(learner, learner_client, deck_cards):
    midday(learner, new_cards_per_day=0)
    data = study(learner_client)
    assert data["cards"] == []
    assert (data["counts"]["new_due"], data["counts"]["new_left_today"]) == (0, 0)


def _local_day(now: datetime, zone: str, start_hour: int) -> tuple[datetime, datetime]:
    """The learner's day worked out independently: a day starting at `start_hour` local time."""
    local = now.astimezone(ZoneInfo(zone))
    day = local.date() if local.hour >= start_hour else local.date() - timedelta(days=1)
    start = datetime.combine(day, time(start_hour), tzinfo=ZoneInfo(zone))
    end = datetime.combine(day + timedelta(days=1), time(start_hour), tzinfo=ZoneInfo(zone))
    return start, end


@pytest.mark.parametrize(("zone", "start_hour"), [("UTC", 4), ("America/New_York", 4), ("Asia/Kolkata", 0)])
def test_the_day_starts_at_the_learners_hour_in_their_zone(learner, learner_client, deck_cards, zone, start_hour):
    scheduling_settings_update(
        learner=learner, changes={"timezone": zone, "day_start_hour": start_hour, "new_cards_per_day": 10}
    )
    now = datetime.now(UTC)
    start, end = _local_day(now, zone, start_hour)
    # One new card at the first instant of today, one a minute before: only the first counts.
    review(learner_client, deck_cards[0], 3, start)
    review(learner_client, deck_cards[1], 3, start - timedelta(minutes=1))

    data = study(learner_client)

    assert datetime.fromisoformat(data["day_start"]) == start
    assert datetime.fromisoformat(data["day_end"]) == end
    assert data["counts"]["new_left_today"] == 9


def test_the_default_day_is_utc_starting_at_four(learner_client, deck_cards):
    data = study(learner_client)
    start, end = _local_day(datetime.now(UTC), "UTC", 4)
    assert (datetime.fromisoformat(data["day_start"]), datetime.fromisoformat(data["day_end"])) == (start, end)


def test_the_review_limit_holds_back_reviews_but_not_learning(learner, learner_client, deck_cards):
    midday(learner, max_reviews_per_day=2)
    for index, card in enumerate(deck_cards[:5]):
        in_review(learner_client, card, days_ago=60 + index)
    # Today: one review of a card in Review, and a lapse that puts another into relearning.
    review(learner_client, deck_cards[0], 3, ago(minutes=40))
    review(learner_client, deck_cards[1], 1, ago(minutes=30))
    for card in deck_cards[5:8]:
        review(learner_client, card, 1, ago(minutes=15))  # learning: not held back by the review limit

    data = study(learner_client)

    assert data["counts"]["reviews_left_today"] == 0
    assert data["counts"]["reviews_due"] == 3
    assert data["counts"]["learning_due"] == 4
    assert [queue for queue, _ in queue_of(data)] == ["learning"] * 4 + ["new"] * 17


def test_the_review_limit_leaves_room_for_the_rest(learner, learner_client, deck_cards):
    midday(learner, max_reviews_per_day=3)
    for index, card in enumerate(deck_cards[:5]):
        in_review(learner_client, card, days_ago=60 + index)
    review(learner_client, deck_cards[0], 3, ago(minutes=40))

    data = study(learner_client)

    assert data["counts"]["reviews_left_today"] == 2
    # The two most overdue of the four still due.
    still_due = CardMemory.objects.filter(learner=learner, card__in=deck_cards[1:5]).order_by("due", "pk")
    assert [card for queue, card in queue_of(data) if queue == "review"] == [m.card_id for m in still_due[:2]]


def test_learning_cards_due_soon_are_shown_ahead(learner, learner_client, deck_cards):
    # Second step of an hour: "good" an hour ago is due now-ish; ten minutes ago, in fifty minutes.
    midday(learner, learning_steps=[60, 3600])
    soon, later = deck_cards[0], deck_cards[1]
    review(learner_client, soon, 3, ago(minutes=60) + LEARN_AHEAD - timedelta(minutes=10))
    review(learner_client, later, 3, ago(minutes=10))

    data = study(learner_client)

    assert ("learning", soon.pk) in queue_of(data)
    assert later.pk not in [card for _, card in queue_of(data)]
    assert data["counts"]["learning_due"] == 1


def test_archived_and_suspended_cards_are_left_out(learner, learner_client, deck_cards):
    midday(learner, leech_threshold=1, suspend_leeches=True)
    archived_review, suspended, archived_new = deck_cards[0], deck_cards[1], deck_cards[2]
    in_review(learner_client, archived_review)
    in_review(learner_client, suspended)
    review(learner_client, suspended, 1, ago(minutes=30))  # its first lapse: a leech, suspended
    assert CardMemory.objects.get(learner=learner, card=suspended).suspended
    content_archived_set(items=Card.objects.filter(pk__in=[archived_review.pk, archived_new.pk]), archived=True)

    data = study(learner_client, limit=MAX_STUDY_LIMIT)

    shown = [card for _, card in queue_of(data)]
    assert not {archived_review.pk, suspended.pk, archived_new.pk} & set(shown)
    assert data["counts"]["learning_due"] == 0
    assert data["counts"]["reviews_due"] == 0
    visible_new = Card.objects.filter(deck__slug=DECK, archived=False).exclude(memories__learner=learner)
    assert data["counts"]["new_due"] == min(20, visible_new.count())


def test_another_learners_study_does_not_change_mine(learner, learner_client, deck_cards):
    midday(learner)
    before = study(learner_client)
    other, other_client = make_learner("brian")
    # Their day too, or reviews five minutes ago fall on yesterday during the five minutes after 04:00 UTC.
    midday(other)
    for card in deck_cards[:6]:
        review(other_client, card, 1, ago(minutes=5))
    in_review(other_client, deck_cards[6])
    assert without_recall_time(study(learner_client)) == without_recall_time(before)
    theirs = study(other_client)
    assert theirs["counts"]["learning_due"] == 6
    assert theirs["counts"]["new_left_today"] == 14


# --- next intervals -----------------------------------------------------------------------------------------------


def test_each_card_shows_the_interval_each_rating_would_give(learner, learner_client, deck_cards):
    midday(learner)
    in_review(learner_client, deck_cards[0])
    review(learner_client, deck_cards[1], 3, ago(minutes=9))
    in_review(learner_client, deck_cards[2])
    review(learner_client, deck_cards[2], 1, ago(minutes=30))

    data = study(learner_client)

    queues = {item["queue"] for item in data["cards"]}
    assert queues == {"learning", "review", "new"}
    for item in data["cards"]:
        intervals = item["next_intervals"]
        assert list(intervals) == ["again", "hard", "good", "easy"]
        assert all(isinstance(seconds, int) for seconds in intervals.values())
        assert 0 < intervals["again"] < intervals["hard"] <= intervals["good"] <= intervals["easy"]
    by_card = {item["card"]["id"]: item["next_intervals"] for item in data["cards"]}
    # A new card: the learning steps (1 and 10 minutes, Hard halfway), and Easy graduates to days.
    assert by_card[deck_cards[3].pk] | {"easy": 0} == {"again": 60, "hard": 330, "good": 600, "easy": 0}
    assert by_card[deck_cards[3].pk]["easy"] >= 6 * 86_400
    # A card in review forgets into the 10-minute relearning step; the rest are whole days.
    assert by_card[deck_cards[0].pk]["again"] == 600
    assert all(by_card[deck_cards[0].pk][name] % 86_400 == 0 for name in ("hard", "good", "easy"))
    # Relearning (one 10-minute step): Again restarts it, Hard is 1.5 steps, Good graduates.
    assert by_card[deck_cards[2].pk]["again"] == 600
    assert by_card[deck_cards[2].pk]["hard"] == 900
    assert by_card[deck_cards[2].pk]["good"] >= 86_400


def test_the_preview_is_what_a_review_then_gives(learner, learner_client, deck_cards):
    """The Again preview of a learning card is exactly the due date an Again review gets."""
    midday(learner)
    review(learner_client, deck_cards[0], 3, ago(minutes=2))
    preview = next(i for i in study(learner_client)["cards"] if i["card"]["id"] == deck_cards[0].pk)
    reviewed = review(learner_client, deck_cards[0], 1)
    due = datetime.fromisoformat(reviewed["due"]) - datetime.fromisoformat(reviewed["reviewed_at"])
    assert due == timedelta(seconds=preview["next_intervals"]["again"])


RATING_NAMES = {"again": 1, "hard": 2, "good": 3, "easy": 4}


def test_every_rating_gets_the_interval_its_preview_showed(learner, learner_client, deck_cards):
    """Fuzz included: the label of each rating is the interval that review gets, and an undo brings the label back.

    Each rating is tried on the same card in turn, undoing the one before. The last reviews lie
    half a day off a whole number of days ago, so the moments between preview and review never
    change the days elapsed, which FSRS counts in whole days.
    """
    midday(learner)
    cards = deck_cards[:6]
    for index, card in enumerate(cards):
        review(learner_client, card, 4, ago(days=300 + 7 * index, hours=12))
        review(learner_client, card, 3, ago(days=150 + 5 * index, hours=12))
    previews = {item["card"]["id"]: item["next_intervals"] for item in study(learner_client)["cards"]}
    assert set(previews) >= {card.pk for card in cards}

    fuzzed = 0
    for card in cards:
        for name, rating in RATING_NAMES.items():
            reviewed = review(learner_client, card, rating)
            interval = datetime.fromisoformat(reviewed["due"]) - datetime.fromisoformat(reviewed["reviewed_at"])
            assert interval == timedelta(seconds=previews[card.pk][name]), (card.pk, name)
            fuzzed += interval >= timedelta(days=3)
            assert learner_client.post(f"/api/v1/reviews/{reviewed['id']}/undo/").status_code == 200

    assert fuzzed >= 2 * len(cards), "Hard, Good and Easy give intervals long enough for fuzz"
    again = {item["card"]["id"]: item["next_intervals"] for item in study(learner_client)["cards"]}
    assert {pk: again[pk] for pk in previews} == previews


# --- query counts -------------------------------------------------------------------------------------------------


def _grow_history(client: APIClient, cards: list[Card], *, seed: int, reviews: int) -> None:
    """Many past reviews across the deck, none of them today, so today's limits stay where they were."""
    rng = random.Random(seed)  # noqa: S311
    start = ago(days=400)
    bodies = [
        review_body(rng.choice(cards), rng.randint(1, 4), start + timedelta(hours=6 * index))
        for index in range(reviews)
    ]
    assert client.post("/api/v1/reviews/batch/", {"reviews": bodies}, format="json").status_code == 200


def _study_queries(client: APIClient) -> tuple[list[str], list[str], dict[str, Any]]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(STUDY)
    assert response.status_code == 200
    queries, token = counted(captured)
    return queries, token, response.json()


def test_study_query_count_is_fixed_and_within_budget(learner, learner_client, deck_cards):
    midday(learner)
    in_review(learner_client, deck_cards[0])
    review(learner_client, deck_cards[1], 1, ago(minutes=5))

    small, token, small_data = _study_queries(learner_client)

    # the course memory models in use for the learner (each card's previews and recall follow its model);
    # the deck with today's counts and the cards due; the cards shown, every queue at once; cards due per day
    # in the days the previews may land on, and the cards reviewed since the day began (load balancing
    # on the day's starting counts) (settings come with the token)
    assert len(small) == 5, small
    assert len(token) == 1
    assert len(small) + len(token) <= QUERY_BUDGET

    # Far more state and history, this learner's and another's: the same statements, no more.
    _grow_history(learner_client, deck_cards[2:30], seed=1, reviews=300)
    _, other_client = make_learner("brian")
    _grow_history(other_client, deck_cards, seed=2, reviews=200)
    large, _, large_data = _study_queries(learner_client)
    assert len(large_data["cards"]) > len([i for i in small_data["cards"] if i["queue"] != "new"])
    assert len(large) == len(small), large


def _review_queries(client: APIClient, body: dict[str, Any]) -> tuple[list[str], list[str], dict[str, Any]]:
    with CaptureQueriesContext(connection) as captured:
        response = post_review(client, body)
    assert response.status_code in (200, 201), response.json()
    queries, token = counted(captured)
    return queries, token, response.json()


def test_review_query_count_is_fixed_and_within_budget(learner, learner_client, deck_cards):
    # Load balancing reads the due counts for a review that lands in the review stage only; that one
    # read is counted in tests/srs/test_load_balancing.py.
    scheduling_settings_update(learner=learner, changes={"load_balancing": False})
    # The first review ever stores the scheduler profile; that one-off insert is not what is measured.
    review(learner_client, deck_cards[-1], 3, ago(days=30))

    first, token, _ = _review_queries(learner_client, review_body(deck_cards[0], 3, ago(days=20)))
    # The learner's write turn with the card's visibility, its memory row, locked, and the course memory
    # models in use; then the log's insert and the memory's. Each is one round trip (settings come with
    # the token).
    assert len(first) == 2, first
    assert len(token) == 1
    assert len(first) + len(token) <= QUERY_BUDGET

    second, _, _ = _review_queries(learner_client, review_body(deck_cards[0], 3, ago(days=10)))
    assert len(second) == len(first), second

    # With a long history on this card and many other cards, and the learner's own settings row.
    _grow_history(learner_client, deck_cards[:20], seed=3, reviews=400)
    midday(learner)
    # A new day start is a new scheduler profile (elapsed days count from it): stored once, by this review.
    review(learner_client, deck_cards[-1], 3, ago(minutes=2))
    body = review_body(deck_cards[0], 2, ago(minutes=1))
    later, _, _ = _review_queries(learner_client, body)
    assert len(later) == len(first), later

    duplicate, token, data = _review_queries(learner_client, body)
    assert data["duplicate"] is True
    # A resent id is caught by the log's unique constraint, then looked up: dearer, still in budget (the
    # budget counts round trips).
    assert len(duplicate) + len(token) <= QUERY_BUDGET


def test_a_late_review_costs_one_more_query_whatever_the_history(learner, learner_client, deck_cards):
    review(learner_client, deck_cards[-1], 3, ago(days=30))
    card = deck_cards[0]
    review(learner_client, card, 3, ago(days=1))
    short, _, data = _review_queries(learner_client, review_body(card, 3, ago(days=2)))
    assert data["replayed"] is True

    _grow_history(learner_client, [card], seed=4, reviews=60)
    review(learner_client, card, 3, ago(minutes=5))
    long, _, data = _review_queries(learner_client, review_body(card, 3, ago(minutes=10)))
    assert data["replayed"] is True
    # Reading the card's history to replay it is one statement, however long the history.
    assert len(long) == len(short), long


def test_a_late_review_is_within_the_query_budget(learner, learner_client, deck_cards):
    review(learner_client, deck_cards[-1], 3, ago(days=30))
    review(learner_client, deck_cards[0], 3, ago(days=1))
    late, token, _ = _review_queries(learner_client, review_body(deck_cards[0], 3, ago(days=2)))
    assert len(late) + len(token) <= QUERY_BUDGET


# --- the response body --------------------------------------------------------------------------------------------


def _schema_body(queue: StudyQueue) -> Any:
    """The queue as StudyOutput, the endpoint's documented schema, renders it."""
    return StudyOutput(
        {
            "deck": queue.deck,
            "day_start": queue.day_start,
            "day_end": queue.day_end,
            "counts": {
                "learning_due": queue.learning_due,
                "reviews_due": queue.reviews_due,
                "new_due": queue.new_due,
                "new_left_today": queue.new_left_today,
                "reviews_left_today": queue.reviews_left_today,
            },
            "cards": queue.items,
        }
    ).data


@pytest.mark.parametrize(("learner_zone", "current_zone"), [("UTC", "UTC"), ("Asia/Kolkata", "America/New_York")])
def test_the_body_is_the_one_the_schema_serializer_renders(
    learner, learner_client, deck_cards, learner_zone, current_zone
):
    """The endpoint maps the queue to plain dicts; StudyOutput, its schema, must render the very same bytes."""
    midday(learner, timezone=learner_zone)
    cards = deck_cards
    in_review(learner_client, cards[0])
    in_review(learner_client, cards[1], days_ago=70)
    review(learner_client, cards[2], 1, ago(minutes=30))
    in_review(learner_client, cards[3])
    review(learner_client, cards[3], 1, ago(minutes=30))  # relearning
    Card.objects.filter(pk__in=[card.pk for card in cards[:10:2]]).update(
        format="html",
        definition="<p>A <b>bold</b> & plain line</p>",
        example="e.g. «ünïcode»",
        code="ds = ds.map(f)\n  # indented",
        tags=["tf.data", "perf", 3],
    )
    Card.objects.filter(pk=cards[5].pk).update(anki_guid="abc123")
    learner = get_user_model().objects.get(pk=learner.pk)

    with timezone.override(current_zone):
        queue = deck_study_queue_get(learner=learner, slug=DECK, now=datetime.now(UTC), limit=MAX_STUDY_LIMIT)
        body, schema_body = study_data(queue), _schema_body(queue)

    assert {item.queue for item in queue.items} == {"learning", "review", "new"}
    assert {item.card.format for item in queue.items} == {"text", "html"}
    assert JSONRenderer().render(body) == JSONRenderer().render(schema_body)
