"""Recording reviews: single, batched and undone; idempotency, validation, merging of devices, and atomicity."""

from __future__ import annotations

import itertools
import random
import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from django.db import DatabaseError, connection
from rest_framework.test import APIClient

from apps.common.clock import CLOCK_SKEW_ALLOWANCE, time_text
from apps.common.errors import Conflict, IdempotencyKeyReused
from apps.content.models import Card, Course, Deck, Lesson
from apps.content.services import content_archived_set
from apps.srs.core.scheduling import (
    MemoryStage,
    MemoryState,
    Rating,
    ReviewEvent,
    SchedulerConfig,
    card_fuzz_seed,
    replay,
    review,
)
from apps.srs.models import CardMemory, ReviewKind, ReviewLog, ReviewSource
from apps.srs.reviews import services
from apps.srs.reviews.memory import memory_state_of
from apps.srs.reviews.services import (
    BATCH_LIMIT,
    ReviewInput,
    review_submit,
    review_undo,
    reviews_submit,
)
from apps.srs.settings.services import scheduling_settings_update
from tests.support.api import assert_error, make_learner
from tests.support.reviews import load_balancing_off, post_review, review_body, without_recall_time

pytestmark = pytest.mark.django_db

CONFIG = SchedulerConfig()
# updated_at is stamped on every save; every other column must come back exactly.
VOLATILE = ("updated_at",)


# --- helpers ------------------------------------------------------------------------------------------------------


def memory_row(learner: Any, card: Card) -> dict[str, Any] | None:
    row = CardMemory.objects.filter(learner=learner, card=card).values().first()
    return {k: v for k, v in row.items() if k not in VOLATILE} if row else None


def database_snapshot() -> tuple[list[Any], list[Any]]:
    """Every review log row and memory row, every column: for asserting that nothing changed."""
    return (
        list(ReviewLog.objects.order_by("pk").values()),
        list(CardMemory.objects.order_by("pk").values()),
    )


def stored_state(data: Any) -> MemoryState:
    """A state_before/state_after column read back, which must hold a state."""
    assert data is not None
    return MemoryState.from_dict(data)


def ago(**delta: float) -> datetime:
    return datetime.now(UTC) - timedelta(**delta)


def batch(client: APIClient, reviews: list[dict[str, Any]]) -> Any:
    return client.post("/api/v1/reviews/batch/", {"reviews": reviews}, format="json")


def expected_from_core(events: list[tuple[datetime, str, int]], *, learner: Any, card: Card) -> MemoryState:
    """What the pure core says a learner's history of a card gives, with the default settings."""
    return replay(
        [
            ReviewEvent(reviewed_at=at, review_id=rid, rating=Rating(rating), config=CONFIG)
            for at, rid, rating in events
        ],
        learner_id=learner.pk,
        card_id=card.pk,
    )[-1]


# --- one review ---------------------------------------------------------------------------------------------------


def test_a_review_stores_state_and_log(learner, learner_client, deck_cards):
    card = deck_cards[0]
    at = ago(hours=3).replace(microsecond=0)
    # Sent with another offset: the same instant.
    body = review_body(card, 3, at.astimezone(timezone(timedelta(hours=2))), duration_ms=4200)
    assert body["reviewed_at"].endswith("+02:00")

    response = post_review(learner_client, body)

    assert response.status_code == 201, response.json()
    data = response.json()
    seed = card_fuzz_seed(learner_id=learner.pk, card_id=card.pk, state=None)
    expected = review(None, rating=Rating.GOOD, reviewed_at=at, config=CONFIG, fuzz_seed=seed)
    assert data["card"] == card.pk
    assert (data["kind"], data["rating"], data["duplicate"], data["replayed"]) == ("review", 3, False, False)
    assert data["client_review_id"] == body["client_review_id"]
    assert datetime.fromisoformat(data["reviewed_at"]) == at
    assert data["state"] == {
        "stage": "learning",
        "step": 1,
        "stability": expected.stability,
        "difficulty": expected.difficulty,
        "due": time_text(expected.due),
        "last_review": time_text(at),
        "reps": 1,
        "lapses": 0,
    }
    assert datetime.fromisoformat(data["due"]) == at + timedelta(minutes=10)

    log = ReviewLog.objects.get(pk=data["id"])
    assert (log.learner_id, log.card_id, log.kind, log.rating, log.duration_ms, log.source) == (
        learner.pk,
        card.pk,
        ReviewKind.REVIEW,
        3,
        4200,
        ReviewSource.DECK,
    )
    assert log.reviewed_at == at
    assert str(log.client_review_id) == body["client_review_id"]
    assert log.state_before is None
    assert stored_state(log.state_after) == expected
    assert log.profile is not None and log.profile.config["desired_retention"] == 0.9

    memory = CardMemory.objects.get(learner=learner, card=card)
    assert memory_state_of(memory) == expected
    assert (memory.first_review, memory.is_leech, memory.suspended) == (at, False, False)


def test_the_second_review_logs_the_state_before(learner, learner_client, deck_cards):
    card = deck_cards[0]
    first = post_review(learner_client, review_body(card, 4, ago(days=20))).json()
    second = post_review(learner_client, review_body(card, 3, ago(days=1))).json()
    log = ReviewLog.objects.get(pk=second["id"])
    assert log.state_before == first["state"] | {"stage": int(MemoryStage.REVIEW)}
    assert memory_state_of(CardMemory.objects.get(learner=learner, card=card)) == stored_state(log.state_after)
    assert second["state"]["reps"] == 2
    assert CardMemory.objects.get(learner=learner, card=card).first_review == datetime.fromisoformat(
        first["reviewed_at"]
    )


def test_reviewed_at_defaults_to_the_time_of_receipt(learner_client, deck_cards):
    before = datetime.now(UTC)
    response = post_review(learner_client, review_body(deck_cards[0], 3))
    after = datetime.now(UTC)
    assert response.status_code == 201
    assert before <= datetime.fromisoformat(response.json()["reviewed_at"]) <= after


@pytest.mark.parametrize(("knew", "rating"), [(True, 3), (False, 1)])
def test_knew_maps_to_good_or_again(learner_client, deck_cards, knew, rating):
    body = review_body(deck_cards[0], at=ago(minutes=5))
    del body["rating"]
    body["knew"] = knew
    response = post_review(learner_client, body)
    assert response.status_code == 201, response.json()
    assert response.json()["rating"] == rating
    assert ReviewLog.objects.get(pk=response.json()["id"]).rating == rating


def test_a_client_review_id_sent_again_returns_the_first_result(learner, learner_client, deck_cards):
    at = ago(minutes=5).replace(microsecond=123456)
    body = review_body(deck_cards[0], 3, at, duration_ms=1000)
    first = post_review(learner_client, body)
    assert first.status_code == 201
    snapshot = database_snapshot()

    again = post_review(learner_client, body)
    # The same instant written with another offset, and knew=true for Good, are the same review.
    same_instant = post_review(
        learner_client, body | {"reviewed_at": at.astimezone(timezone(timedelta(hours=-7))).isoformat()}
    )
    knew = post_review(learner_client, {k: v for k, v in body.items() if k != "rating"} | {"knew": True})

    for response in (again, same_instant, knew):
        assert response.status_code == 200, response.json()
        assert without_recall_time(response.json()) == without_recall_time(first.json() | {"duplicate": True})
    assert database_snapshot() == snapshot


def test_a_review_resent_after_its_card_was_archived_is_still_a_duplicate(learner_client, deck_cards):
    """An offline queue resends what it already sent; an archived card must not block it for good."""
    body = review_body(deck_cards[0], 3, ago(minutes=5))
    first = post_review(learner_client, body)
    assert first.status_code == 201
    Card.objects.filter(pk=deck_cards[0].pk).update(archived=True)
    snapshot = database_snapshot()

    again = post_review(learner_client, body)
    batch = learner_client.post("/api/v1/reviews/batch/", {"reviews": [body]}, format="json")
    # A new review of the archived card is still refused.
    other = post_review(learner_client, review_body(deck_cards[0], 3, ago(minutes=4)))

    assert again.status_code == 200, again.json()
    assert without_recall_time(again.json()) == without_recall_time(first.json() | {"duplicate": True})
    assert batch.status_code == 200, batch.json()
    assert other.status_code == 404, other.json()
    assert database_snapshot() == snapshot


def test_a_review_sent_again_without_its_time_is_the_same_review(learner_client, deck_cards):
    """A time left to the server cannot be sent again; the rest of the review is still compared."""
    body = review_body(deck_cards[0], 3)
    first = post_review(learner_client, body)
    assert first.status_code == 201
    snapshot = database_snapshot()
    again = post_review(learner_client, body)
    assert again.status_code == 200
    assert without_recall_time(again.json()) == without_recall_time(first.json() | {"duplicate": True})
    assert_error(post_review(learner_client, body | {"rating": 4}), 409, "idempotency_key_reused")
    assert database_snapshot() == snapshot


REUSED_KEY_CHANGES: dict[str, Any] = {
    "another card": lambda body, cards: body | {"card": cards[1].pk},
    "another rating": lambda body, cards: body | {"rating": 1},
    "knew false for Good": lambda body, cards: {k: v for k, v in body.items() if k != "rating"} | {"knew": False},
    "another time": lambda body, cards: body | {"reviewed_at": ago(days=1).isoformat()},
    "a microsecond later": lambda body, cards: (
        body | {"reviewed_at": (datetime.fromisoformat(body["reviewed_at"]) + timedelta(microseconds=1)).isoformat()}
    ),
    "another duration": lambda body, cards: body | {"duration_ms": 999},
    "no duration": lambda body, cards: {k: v for k, v in body.items() if k != "duration_ms"},
}


@pytest.mark.parametrize("change", REUSED_KEY_CHANGES.values(), ids=REUSED_KEY_CHANGES.keys())
def test_a_client_review_id_reused_for_another_review_is_a_conflict(learner, learner_client, deck_cards, change):
    body = review_body(deck_cards[0], 3, ago(minutes=5), duration_ms=1000)
    first = post_review(learner_client, body)
    assert first.status_code == 201
    snapshot = database_snapshot()

    error = assert_error(
        post_review(learner_client, change(body, deck_cards)), 409, "idempotency_key_reused", {"client_review_id"}
    )

    assert body["client_review_id"] in error["message"] + error["fields"]["client_review_id"][0]
    assert database_snapshot() == snapshot
    # The first review stands, and is still what an identical resend gets.
    resent = post_review(learner_client, body).json()
    assert without_recall_time(resent) == without_recall_time(first.json() | {"duplicate": True})


def test_the_service_refuses_a_reused_key_for_one_review(learner, deck_cards):
    now = datetime(2026, 3, 1, 12, tzinfo=UTC)
    key = uuid.uuid4()
    review_submit(learner=learner, review=ReviewInput(deck_cards[0].pk, 3, key, now), now=now)
    snapshot = database_snapshot()
    with pytest.raises(IdempotencyKeyReused):
        review_submit(learner=learner, review=ReviewInput(deck_cards[1].pk, 3, key, now), now=now)
    assert database_snapshot() == snapshot


def test_reviews_made_by_games_and_quizzes_replay_as_duplicates(learner, learner_client, deck_cards):
    """Their ids are uuid5 of what was played, so a replay sends the same review under the same id."""
    now = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=1)
    made = [
        ReviewInput(
            card.pk, 3, uuid.uuid5(uuid.NAMESPACE_URL, f"match:board:{card.pk}"), now, source=ReviewSource.MATCH
        )
        for card in deck_cards[:3]
    ]
    first = reviews_submit(learner=learner, reviews=made, now=now)
    snapshot = database_snapshot()

    replayed = reviews_submit(learner=learner, reviews=made, now=now + timedelta(seconds=30))

    assert [outcome.created for outcome in replayed] == [False] * 3
    assert [outcome.log.pk for outcome in replayed] == [outcome.log.pk for outcome in first]
    assert database_snapshot() == snapshot
    # The id names a match review: the same card and rating sent as a deck review is another review.
    deck_review = {"card": deck_cards[0].pk, "rating": 3, "client_review_id": str(made[0].client_review_id)}
    assert_error(
        post_review(learner_client, deck_review | {"reviewed_at": now.isoformat()}), 409, "idempotency_key_reused"
    )
    assert database_snapshot() == snapshot


def test_the_same_client_review_id_from_another_learner_is_a_different_review(learner_client, deck_cards):
    _, other_client = make_learner("brian")
    body = review_body(deck_cards[0], 3, ago(minutes=5))
    assert post_review(learner_client, body).status_code == 201
    theirs = post_review(other_client, body)
    assert theirs.status_code == 201
    assert theirs.json()["duplicate"] is False
    assert ReviewLog.objects.filter(client_review_id=body["client_review_id"]).count() == 2


# --- rejected reviews change nothing ------------------------------------------------------------------------------


def _archive(target: str, card: Card) -> None:
    querysets = {
        "card": Card.objects.filter(pk=card.pk),
        "deck": Deck.objects.filter(pk=card.deck_id),
        "lesson": Lesson.objects.filter(decks=card.deck_id),
        "course": Course.objects.filter(lessons__decks=card.deck_id),
    }
    assert content_archived_set(items=querysets[target], archived=True) == 1


@pytest.fixture
def reviewed(learner_client, deck_cards) -> dict[str, Any]:
    """One card already reviewed, so that a rejected review could have changed its state."""
    response = post_review(learner_client, review_body(deck_cards[0], 3, ago(days=3)))
    assert response.status_code == 201
    return response.json()


@pytest.mark.parametrize("archived", ["card", "deck", "lesson", "course"])
def test_a_card_the_learner_may_not_see_is_refused(learner_client, deck_cards, reviewed, archived):
    _archive(archived, deck_cards[0])
    snapshot = database_snapshot()
    response = post_review(learner_client, review_body(deck_cards[0], 3))
    assert_error(response, 404, "not_found", {"card"})
    assert database_snapshot() == snapshot


def _future(body: dict[str, Any]) -> dict[str, Any]:
    return body | {"reviewed_at": (datetime.now(UTC) + CLOCK_SKEW_ALLOWANCE + timedelta(minutes=2)).isoformat()}


BAD_BODIES: dict[str, tuple[Any, set[str]]] = {
    # name: (change to a valid body, fields named in the error)
    "card zero": (lambda b: b | {"card": 0}, {"card"}),
    "card not a number": (lambda b: b | {"card": "first"}, {"card"}),
    "card id over 64 bits": (lambda b: b | {"card": 2**63}, {"card"}),
    "rating 0": (lambda b: b | {"rating": 0}, {"rating"}),
    "rating 5": (lambda b: b | {"rating": 5}, {"rating"}),
    "rating -1": (lambda b: b | {"rating": -1}, {"rating"}),
    "rating a word": (lambda b: b | {"rating": "good"}, {"rating"}),
    "rating and knew": (lambda b: b | {"knew": True}, {"rating"}),
    "neither rating nor knew": (lambda b: {k: v for k, v in b.items() if k != "rating"}, {"rating"}),
    "knew not a boolean": (lambda b: {k: v for k, v in b.items() if k != "rating"} | {"knew": "perhaps"}, {"knew"}),
    "in the future": (_future, {"reviewed_at"}),
    "no offset": (lambda b: b | {"reviewed_at": "2026-01-05T09:00:00"}, {"reviewed_at"}),
    "not a time": (lambda b: b | {"reviewed_at": "yesterday"}, {"reviewed_at"}),
    "no client id": (lambda b: {k: v for k, v in b.items() if k != "client_review_id"}, {"client_review_id"}),
    "client id null": (lambda b: b | {"client_review_id": None}, {"client_review_id"}),
    "client id not a uuid": (lambda b: b | {"client_review_id": "42"}, {"client_review_id"}),
    "negative duration": (lambda b: b | {"duration_ms": -1}, {"duration_ms"}),
    "duration over a day": (lambda b: b | {"duration_ms": 24 * 3600 * 1000 + 1}, {"duration_ms"}),
}


@pytest.mark.parametrize("case", BAD_BODIES, ids=list(BAD_BODIES))
def test_an_invalid_review_is_refused_and_changes_nothing(learner_client, deck_cards, reviewed, case):
    change, fields = BAD_BODIES[case]
    body = change(review_body(deck_cards[0], 3))
    snapshot = database_snapshot()
    response = post_review(learner_client, body)
    assert_error(response, 400, "invalid", fields)
    assert database_snapshot() == snapshot


def test_a_time_just_ahead_of_the_server_clock_is_accepted(learner_client, deck_cards):
    ahead = datetime.now(UTC) + CLOCK_SKEW_ALLOWANCE - timedelta(minutes=1)
    response = post_review(learner_client, review_body(deck_cards[0], 3, ahead))
    assert response.status_code == 201, response.json()
    assert datetime.fromisoformat(response.json()["reviewed_at"]) == ahead


@pytest.mark.parametrize("url", ["/api/v1/reviews/", "/api/v1/reviews/batch/"])
def test_malformed_json_is_refused_and_changes_nothing(learner_client, reviewed, url):
    snapshot = database_snapshot()
    response = learner_client.post(url, data='{"card": 1, "rating": ', content_type="application/json")
    assert_error(response, 400, "malformed_json")
    assert database_snapshot() == snapshot


@pytest.mark.parametrize("url", ["/api/v1/reviews/", "/api/v1/reviews/batch/", "/api/v1/reviews/1/undo/"])
def test_reviews_need_a_signed_in_learner(api_client, deck_cards, url):
    response = api_client.post(url, review_body(deck_cards[0]), format="json")
    assert_error(response, 401, "not_authenticated")
    assert not ReviewLog.objects.exists()


# --- batches ------------------------------------------------------------------------------------------------------


def test_a_batch_applies_each_cards_reviews_in_time_order(learner, learner_client, deck_cards):
    a, b = deck_cards[0], deck_cards[1]
    # Compared with a plain replay below; balancing is tested in test_load_balancing.py.
    load_balancing_off(learner)
    times = [ago(days=d) for d in (30, 20, 10, 2)]
    bodies = [
        review_body(a, 3, times[3]),
        review_body(b, 4, times[1]),
        review_body(a, 4, times[0]),
        review_body(a, 2, times[2]),
        review_body(b, 1, times[2]),
    ]
    response = batch(learner_client, bodies)
    assert response.status_code == 200, response.json()
    results = response.json()["results"]
    # Results come back in the order sent.
    assert [r["client_review_id"] for r in results] == [body["client_review_id"] for body in bodies]
    assert not any(r["duplicate"] or r["replayed"] for r in results)

    for card, events in (
        (a, [(times[0], bodies[2], 4), (times[2], bodies[3], 2), (times[3], bodies[0], 3)]),
        (b, [(times[1], bodies[1], 4), (times[2], bodies[4], 1)]),
    ):
        logs = list(ReviewLog.objects.filter(learner=learner, card=card).order_by("pk"))
        # Applied in reviewed_at order: each log's state before is the previous one's state after.
        assert [log.reviewed_at for log in logs] == [at for at, _, _ in events]
        assert logs[0].state_before is None
        for earlier, later in itertools.pairwise(logs):
            assert later.state_before == earlier.state_after
        expected = expected_from_core(
            [(at, body["client_review_id"], rating) for at, body, rating in events], learner=learner, card=card
        )
        assert memory_state_of(CardMemory.objects.get(learner=learner, card=card)) == expected
    # The lapse on b: Easy put it in Review, Again took it out.
    assert CardMemory.objects.get(learner=learner, card=b).lapses == 1


def test_a_batch_is_idempotent_per_client_review_id(learner_client, deck_cards):
    recorded = review_body(deck_cards[0], 3, ago(days=2))
    assert post_review(learner_client, recorded).status_code == 201
    twice = review_body(deck_cards[1], 4, ago(days=1))
    bodies = [recorded, twice, review_body(deck_cards[2], 1, ago(hours=1)), twice]

    response = batch(learner_client, bodies)

    assert response.status_code == 200, response.json()
    results = response.json()["results"]
    assert [r["duplicate"] for r in results] == [True, False, False, True]
    assert results[3] == results[1] | {"duplicate": True}
    assert ReviewLog.objects.count() == 3
    snapshot = database_snapshot()
    resent = batch(learner_client, bodies)
    assert resent.status_code == 200
    assert [r["duplicate"] for r in resent.json()["results"]] == [True] * 4
    assert [r["id"] for r in resent.json()["results"]] == [r["id"] for r in results]
    assert database_snapshot() == snapshot


def test_one_client_review_id_for_two_reviews_in_a_batch_is_refused(learner_client, deck_cards, reviewed):
    bodies = [review_body(card, 3, ago(hours=1)) for card in deck_cards[1:5]]
    bodies.append(bodies[1] | {"card": deck_cards[6].pk})
    bodies.append(bodies[2] | {"rating": 4})
    bodies.append(bodies[3])  # the same review twice is harmless
    snapshot = database_snapshot()

    error = assert_error(
        batch(learner_client, bodies), 400, "invalid", {"reviews.4.client_review_id", "reviews.5.client_review_id"}
    )

    assert "item 1" in error["fields"]["reviews.4.client_review_id"][0]
    assert "card" in error["fields"]["reviews.4.client_review_id"][0]
    assert "item 2" in error["fields"]["reviews.5.client_review_id"][0]
    assert "rating" in error["fields"]["reviews.5.client_review_id"][0]
    assert database_snapshot() == snapshot


def test_a_batch_item_reusing_a_recorded_reviews_key_is_refused(learner_client, deck_cards):
    recorded, resent = review_body(deck_cards[0], 3, ago(days=2)), review_body(deck_cards[6], 3, ago(days=2))
    for body in (recorded, resent):
        assert post_review(learner_client, body).status_code == 201
    bodies = [review_body(card, 3, ago(hours=1)) for card in deck_cards[1:4]]
    bodies.insert(2, recorded | {"card": deck_cards[5].pk})
    bodies.append(resent)  # resent unchanged: fine on its own
    snapshot = database_snapshot()

    error = assert_error(batch(learner_client, bodies), 400, "invalid", {"reviews.2.client_review_id"})

    assert "already recorded" in error["fields"]["reviews.2.client_review_id"][0]
    assert database_snapshot() == snapshot


def test_batch_errors_name_each_bad_item_and_record_nothing(learner_client, deck_cards, reviewed):
    good = [review_body(card, 3, ago(hours=1)) for card in deck_cards[1:6]]
    good[1]["rating"] = 7
    del good[3]["client_review_id"]
    snapshot = database_snapshot()

    response = batch(learner_client, good)

    assert_error(response, 400, "invalid", {"reviews.1.rating", "reviews.3.client_review_id"})
    assert database_snapshot() == snapshot


def test_batch_errors_found_by_the_service_name_each_item_too(learner_client, deck_cards, reviewed):
    _archive("card", deck_cards[3])
    bodies = [review_body(card, 3, ago(hours=1)) for card in deck_cards[:5]]
    bodies[1] = bodies[0] | {"rating": 1}
    bodies[4]["card"] = 123_456
    snapshot = database_snapshot()

    response = batch(learner_client, bodies)

    error = assert_error(response, 400, "invalid", {"reviews.1.client_review_id", "reviews.3.card", "reviews.4.card"})
    assert "123456" in error["fields"]["reviews.4.card"][0]
    assert database_snapshot() == snapshot


def test_a_card_that_does_not_exist_is_a_404(learner_client, deck_cards, reviewed):
    snapshot = database_snapshot()
    response = post_review(learner_client, review_body(deck_cards[0], 3) | {"card": 999_999})
    assert_error(response, 404, "not_found", {"card"})
    assert database_snapshot() == snapshot


def test_a_batch_whose_only_fault_is_unknown_cards_is_a_404_naming_each(learner_client, deck_cards, reviewed):
    _archive("card", deck_cards[3])
    bodies = [review_body(card, 3, ago(hours=1)) for card in deck_cards[:5]]
    bodies[4]["card"] = 123_456
    snapshot = database_snapshot()

    response = batch(learner_client, bodies)

    assert_error(response, 404, "not_found", {"reviews.3.card", "reviews.4.card"})
    assert database_snapshot() == snapshot


@pytest.mark.parametrize(
    "body",
    [{"reviews": []}, {"reviews": "all of them"}, {}, {"reviews": [1, 2]}],
    ids=["empty", "not a list", "missing", "items not objects"],
)
def test_a_batch_must_be_a_list_of_reviews(learner_client, reviewed, body):
    snapshot = database_snapshot()
    response = learner_client.post("/api/v1/reviews/batch/", body, format="json")
    error = assert_error(response, 400, "invalid")
    assert all(name.startswith("reviews") for name in error["fields"])
    assert database_snapshot() == snapshot


def test_a_batch_of_the_maximum_size_is_accepted(learner, learner_client, deck_cards):
    rng = random.Random(1000)  # noqa: S311
    start = ago(days=300)
    bodies = [
        review_body(rng.choice(deck_cards), rng.randint(1, 4), start + timedelta(minutes=17 * index))
        for index in range(BATCH_LIMIT)
    ]
    response = batch(learner_client, bodies)
    assert response.status_code == 200, response.json()
    assert len(response.json()["results"]) == BATCH_LIMIT == 1000
    assert ReviewLog.objects.filter(learner=learner).count() == BATCH_LIMIT
    assert sum(CardMemory.objects.filter(learner=learner).values_list("reps", flat=True)) == BATCH_LIMIT


def test_a_batch_over_the_maximum_is_refused(learner_client, deck_cards, reviewed):
    bodies = [review_body(deck_cards[i % 5], 3, ago(days=1)) for i in range(BATCH_LIMIT + 1)]
    snapshot = database_snapshot()
    response = batch(learner_client, bodies)
    error = assert_error(response, 400, "invalid", {"reviews"})
    assert "1000" in error["fields"]["reviews"][0]
    assert database_snapshot() == snapshot


def test_the_service_refuses_an_oversized_batch_too(learner, deck_cards):
    now = datetime(2026, 3, 1, 12, tzinfo=UTC)
    reviews = [
        ReviewInput(card_id=deck_cards[0].pk, rating=3, client_review_id=uuid.uuid4(), reviewed_at=now)
        for _ in range(BATCH_LIMIT + 1)
    ]
    with pytest.raises(services.ReviewsInvalid):
        reviews_submit(learner=learner, reviews=reviews, now=now)
    assert not ReviewLog.objects.exists()


# --- late reviews and merging devices ------------------------------------------------------------------------------

# Two devices used offline on the same two cards: (days ago, card index, rating). Their times interleave.
DEVICE_A = [(40, 0, 3), (38, 0, 3), (25, 1, 4), (20, 0, 1), (6, 0, 3), (2, 1, 2)]
DEVICE_B = [(39, 0, 4), (30, 1, 3), (29, 0, 2), (10, 0, 3), (4, 1, 1), (1, 0, 3)]


def _device_bodies(
    device: list[tuple[int, int, int]], cards: list[Card], ids: dict[tuple[int, int], str], base: datetime
) -> list[dict[str, Any]]:
    return [
        {
            "card": cards[index].pk,
            "rating": rating,
            "reviewed_at": (base - timedelta(days=days)).isoformat(),
            "client_review_id": ids[(days, index)],
        }
        for days, index, rating in device
    ]


def test_two_devices_merge_to_the_same_state_in_either_order(deck_cards):
    cards = deck_cards[:2]
    base = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    ids = {(days, index): str(uuid.uuid4()) for days, index, _ in DEVICE_A + DEVICE_B}
    a_first, client_ab = make_learner("a-first")
    b_first, client_ba = make_learner("b-first")
    # Compared with a plain replay: a balanced due date would depend on which upload came last.
    for who in (a_first, b_first):
        load_balancing_off(who)

    replayed: dict[str, list[bool]] = {}
    for name, client, order in (("AB", client_ab, (DEVICE_A, DEVICE_B)), ("BA", client_ba, (DEVICE_B, DEVICE_A))):
        for device in order:
            response = batch(client, _device_bodies(device, cards, ids, base))
            assert response.status_code == 200, response.json()
        replayed[name] = [result["replayed"] for result in response.json()["results"]]
    # The second upload holds reviews older than the first's latest: those were replays.
    assert any(replayed["AB"]) and any(replayed["BA"])
    for learner in (a_first, b_first):
        assert ReviewLog.objects.filter(learner=learner).count() == len(DEVICE_A) + len(DEVICE_B)

    for index, card in enumerate(cards):
        events = [
            (base - timedelta(days=days), ids[(days, i)], rating)
            for days, i, rating in DEVICE_A + DEVICE_B
            if i == index
        ]
        for learner in (a_first, b_first):
            expected = expected_from_core(events, learner=learner, card=card)
            memory = CardMemory.objects.get(learner=learner, card=card)
            assert memory_state_of(memory) == expected
            assert memory.due == expected.due
            assert memory.first_review == min(at for at, _, _ in events)


def test_any_arrival_order_of_single_reviews_merges_to_the_same_state(deck_cards):
    cards = deck_cards[:2]
    base = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    ids = {(days, index): str(uuid.uuid4()) for days, index, _ in DEVICE_A + DEVICE_B}
    bodies = _device_bodies(DEVICE_A + DEVICE_B, cards, ids, base)
    rng = random.Random(4242)  # noqa: S311
    replays = []
    for attempt in range(4):
        learner, client = make_learner(f"order-{attempt}")
        # Compared with a plain replay: a balanced due date would depend on which review arrived last.
        load_balancing_off(learner)
        shuffled = bodies[:]
        rng.shuffle(shuffled)
        replays += [post_review(client, body).json()["replayed"] for body in shuffled]
        assert ReviewLog.objects.filter(learner=learner).count() == len(bodies)
        for index, card in enumerate(cards):
            events = [
                (base - timedelta(days=days), ids[(days, i)], rating)
                for days, i, rating in DEVICE_A + DEVICE_B
                if i == index
            ]
            expected = expected_from_core(events, learner=learner, card=card)
            assert memory_state_of(CardMemory.objects.get(learner=learner, card=card)) == expected
    assert any(replays), "the shuffles must include late arrivals"


def test_a_late_review_is_recorded_and_the_state_rebuilt(learner, learner_client, deck_cards):
    card = deck_cards[0]
    early = review_body(card, 3, ago(days=30))
    late_arrival = review_body(card, 1, ago(days=20))
    latest = review_body(card, 3, ago(days=5))
    for body in (early, latest):
        assert post_review(learner_client, body).json()["replayed"] is False
    earlier_rows = list(ReviewLog.objects.order_by("pk").values())

    response = post_review(learner_client, late_arrival)

    assert response.status_code == 201
    assert response.json()["replayed"] is True
    assert ReviewLog.objects.filter(learner=learner, card=card).count() == 3
    expected = expected_from_core(
        [
            (datetime.fromisoformat(b["reviewed_at"]), b["client_review_id"], b["rating"])
            for b in (early, late_arrival, latest)
        ],
        learner=learner,
        card=card,
    )
    assert memory_state_of(CardMemory.objects.get(learner=learner, card=card)) == expected
    assert response.json()["state"]["reps"] == 3
    # No review logged before is lost or changed, except the states of the one now after the late one.
    rows = list(ReviewLog.objects.order_by("pk").values())
    assert rows[0] == earlier_rows[0]
    states = ("state_before", "state_after")
    assert {k: v for k, v in rows[1].items() if k not in states} == {
        k: v for k, v in earlier_rows[1].items() if k not in states
    }
    # Each review's states are those its place in the history gives: the late one sits in the middle.
    assert rows[2]["state_before"] == rows[0]["state_after"]
    assert rows[1]["state_before"] == rows[2]["state_after"]
    assert rows[1]["state_after"] == expected.to_dict()
    # The last review still decides the due date, but the lapse in between changed the memory.
    assert expected.last_review == datetime.fromisoformat(latest["reviewed_at"])


def test_a_review_at_the_same_instant_as_the_last_is_merged_by_id(learner, learner_client, deck_cards):
    card = deck_cards[0]
    at = ago(days=3)
    first = review_body(card, 3, at)
    second = review_body(card, 1, at)
    for body in (first, second):
        assert post_review(learner_client, body).status_code == 201
    expected = expected_from_core(
        [(at, first["client_review_id"], 3), (at, second["client_review_id"], 1)], learner=learner, card=card
    )
    assert memory_state_of(CardMemory.objects.get(learner=learner, card=card)) == expected


def test_each_review_is_replayed_with_the_settings_it_was_made_with(learner, learner_client, deck_cards):
    card = deck_cards[0]
    first = review_body(card, 4, ago(days=30))
    assert post_review(learner_client, first).status_code == 201
    scheduling_settings_update(learner=learner, changes={"desired_retention": 0.97})
    latest = review_body(card, 3, ago(days=2))
    late = review_body(card, 3, ago(days=15))
    for body in (latest, late):
        assert post_review(learner_client, body).status_code == 201

    strict = SchedulerConfig(desired_retention=0.97)
    expected = replay(
        [
            ReviewEvent(datetime.fromisoformat(first["reviewed_at"]), first["client_review_id"], Rating(4), CONFIG),
            ReviewEvent(datetime.fromisoformat(late["reviewed_at"]), late["client_review_id"], Rating(3), strict),
            ReviewEvent(datetime.fromisoformat(latest["reviewed_at"]), latest["client_review_id"], Rating(3), strict),
        ],
        learner_id=learner.pk,
        card_id=card.pk,
    )[-1]
    assert memory_state_of(CardMemory.objects.get(learner=learner, card=card)) == expected
    profiles = dict(ReviewLog.objects.filter(learner=learner).values_list("client_review_id", "profile__config"))
    assert profiles[uuid.UUID(first["client_review_id"])]["desired_retention"] == 0.9
    assert profiles[uuid.UUID(late["client_review_id"])]["desired_retention"] == 0.97


# --- undo ---------------------------------------------------------------------------------------------------------


def undo(client: APIClient, review_id: int) -> Any:
    return client.post(f"/api/v1/reviews/{review_id}/undo/")


def test_undoing_the_only_review_makes_the_card_new_again(learner, learner_client, deck_cards):
    card = deck_cards[0]
    reviewed = post_review(learner_client, review_body(card, 3, ago(minutes=3))).json()
    review_row = ReviewLog.objects.filter(pk=reviewed["id"]).values().get()

    response = undo(learner_client, reviewed["id"])

    assert response.status_code == 200, response.json()
    data = response.json()
    assert (data["kind"], data["state"], data["due"], data["rating"], data["client_review_id"]) == (
        "undo",
        None,
        None,
        None,
        None,
    )
    assert not CardMemory.objects.filter(learner=learner, card=card).exists()
    undo_row = ReviewLog.objects.get(pk=data["id"])
    assert (undo_row.kind, undo_row.undo_of_id, undo_row.card_id, undo_row.learner_id) == (
        ReviewKind.UNDO,
        reviewed["id"],
        card.pk,
        learner.pk,
    )
    assert undo_row.state_before == reviewed["state"] | {"stage": int(MemoryStage.LEARNING)}
    assert undo_row.state_after is None
    # The log is append-only: the review itself is kept, unchanged.
    assert ReviewLog.objects.filter(pk=reviewed["id"]).values().get() == review_row


def test_undo_restores_every_field_of_the_state_exactly(learner, learner_client, deck_cards):
    card = deck_cards[0]
    for body in (
        review_body(card, 3, ago(days=12)),
        review_body(card, 3, ago(days=11, hours=23)),
        review_body(card, 3, ago(days=8)),
    ):
        assert post_review(learner_client, body).status_code == 201
    before = memory_row(learner, card)
    latest = post_review(learner_client, review_body(card, 1, ago(hours=2))).json()
    assert memory_row(learner, card) != before

    response = undo(learner_client, latest["id"])

    assert response.status_code == 200, response.json()
    assert memory_row(learner, card) == before
    restored = memory_state_of(CardMemory.objects.get(learner=learner, card=card))
    assert restored is not None
    assert response.json()["state"]["stability"] == restored.stability
    assert datetime.fromisoformat(response.json()["due"]) == restored.due
    undo_row = ReviewLog.objects.get(pk=response.json()["id"])
    assert stored_state(undo_row.state_after) == restored
    assert undo_row.state_before == ReviewLog.objects.get(pk=latest["id"]).state_after


def test_undo_of_a_lapse_lifts_the_leech_suspension_it_caused(learner, learner_client, deck_cards):
    scheduling_settings_update(learner=learner, changes={"leech_threshold": 1, "suspend_leeches": True})
    card = deck_cards[0]
    assert post_review(learner_client, review_body(card, 4, ago(days=20))).status_code == 201
    before = memory_row(learner, card)
    lapse = post_review(learner_client, review_body(card, 1, ago(days=1))).json()
    assert CardMemory.objects.filter(learner=learner, card=card, is_leech=True, suspended=True).exists()

    assert undo(learner_client, lapse["id"]).status_code == 200
    assert memory_row(learner, card) == before
    assert before is not None and (before["is_leech"], before["suspended"]) == (False, False)


def test_undo_walks_back_one_review_at_a_time(learner, learner_client, deck_cards):
    card = deck_cards[0]
    states = []
    ids = []
    for days in (9, 6, 3):
        states.append(memory_row(learner, card))
        ids.append(post_review(learner_client, review_body(card, 3, ago(days=days))).json()["id"])
    for review_id, state in zip(reversed(ids), reversed(states), strict=True):
        assert undo(learner_client, review_id).status_code == 200
        assert memory_row(learner, card) == state
    assert states[0] is None
    assert ReviewLog.objects.filter(learner=learner, kind=ReviewKind.UNDO).count() == 3
    assert ReviewLog.objects.filter(learner=learner, kind=ReviewKind.REVIEW).count() == 3


def test_only_the_latest_review_of_a_card_can_be_undone(learner, learner_client, deck_cards):
    card = deck_cards[0]
    older = post_review(learner_client, review_body(card, 3, ago(days=5))).json()
    newer = post_review(learner_client, review_body(card, 3, ago(days=1))).json()
    # Another card's later review does not matter: "latest" is per card.
    assert post_review(learner_client, review_body(deck_cards[1], 3, ago(minutes=1))).status_code == 201
    snapshot = database_snapshot()

    error = assert_error(undo(learner_client, older["id"]), 409, "conflict")

    assert str(newer["id"]) in error["message"]
    assert database_snapshot() == snapshot


def test_a_late_arrival_is_not_the_latest_review(learner_client, deck_cards):
    card = deck_cards[0]
    assert post_review(learner_client, review_body(card, 3, ago(days=1))).status_code == 201
    late = post_review(learner_client, review_body(card, 3, ago(days=4))).json()
    assert late["replayed"] is True
    snapshot = database_snapshot()
    assert_error(undo(learner_client, late["id"]), 409, "conflict")
    assert database_snapshot() == snapshot


def test_undoing_twice_is_a_conflict(learner_client, deck_cards):
    reviewed = post_review(learner_client, review_body(deck_cards[0], 3, ago(days=1))).json()
    assert undo(learner_client, reviewed["id"]).status_code == 200
    snapshot = database_snapshot()
    assert_error(undo(learner_client, reviewed["id"]), 409, "conflict")
    assert database_snapshot() == snapshot


def test_an_undone_review_sent_again_is_still_a_duplicate(learner, learner_client, deck_cards):
    body = review_body(deck_cards[0], 3, ago(days=1))
    first = post_review(learner_client, body).json()
    assert undo(learner_client, first["id"]).status_code == 200
    snapshot = database_snapshot()
    again = post_review(learner_client, body)
    assert again.status_code == 200
    assert without_recall_time(again.json()) == without_recall_time(first | {"duplicate": True})
    assert database_snapshot() == snapshot


def test_another_learners_review_cannot_be_undone(learner_client, deck_cards):
    _, other_client = make_learner("brian")
    theirs = post_review(other_client, review_body(deck_cards[0], 3, ago(days=1))).json()
    snapshot = database_snapshot()
    assert_error(undo(learner_client, theirs["id"]), 404, "not_found")
    assert_error(undo(learner_client, 987_654), 404, "not_found")
    assert database_snapshot() == snapshot
    assert undo(other_client, theirs["id"]).status_code == 200


def test_an_undo_row_cannot_itself_be_undone(learner_client, deck_cards):
    reviewed = post_review(learner_client, review_body(deck_cards[0], 3, ago(days=1))).json()
    undone = undo(learner_client, reviewed["id"]).json()
    assert_error(undo(learner_client, undone["id"]), 404, "not_found")


# --- learners are independent --------------------------------------------------------------------------------------


def test_another_learners_reviews_never_touch_mine(learner, learner_client, deck_cards):
    card = deck_cards[0]
    mine = post_review(learner_client, review_body(card, 3, ago(days=6))).json()
    my_memory = memory_row(learner, card)
    my_logs = list(ReviewLog.objects.filter(learner=learner).values())

    other, other_client = make_learner("brian")
    at = ago(days=8)  # older than my review: would trigger a replay if histories were mixed
    assert (
        batch(other_client, [review_body(card, 1, at), review_body(card, 1, at + timedelta(hours=1))]).status_code
        == 200
    )
    theirs = post_review(other_client, review_body(card, 4, ago(days=1))).json()
    assert undo(other_client, theirs["id"]).status_code == 200

    assert memory_row(learner, card) == my_memory
    assert list(ReviewLog.objects.filter(learner=learner).values()) == my_logs
    assert CardMemory.objects.get(learner=other, card=card).reps == 2
    assert undo(learner_client, mine["id"]).status_code == 200


# --- one transaction per change ------------------------------------------------------------------------------------


class _FailCardMemoryWrite:
    """Fails the `nth` write to the memory table, as a lost connection would, after the log row was written."""

    def __init__(self, nth: int = 1) -> None:
        self.nth = nth
        self.seen = 0

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if sql.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE")) and '"srs_cardmemory"' in sql:
            self.seen += 1
            if self.seen == self.nth:
                raise DatabaseError("connection lost (injected)")
        return execute(sql, params, many, context)


class _FailAfterWrites:
    """Lets the statements that write memory rows run, then fails the round trip they are in (PostgreSQL)."""

    def __init__(self) -> None:
        self.seen = 0

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if sql.lstrip().upper().startswith("INSERT") and '"srs_cardmemory"' in sql:
            self.seen += 1
            sql += "; SELECT 1 / 0"
        return execute(sql, params, many, context)


def _inputs(cards: list[Card], at: datetime, rating: int = 3) -> list[ReviewInput]:
    return [ReviewInput(card_id=c.pk, rating=rating, client_review_id=uuid.uuid4(), reviewed_at=at) for c in cards]


def test_a_review_and_its_state_are_written_together_or_not_at_all(learner, deck_cards):
    now = datetime(2026, 3, 1, 12, tzinfo=UTC)
    reviews_submit(learner=learner, reviews=_inputs(deck_cards[:1], now - timedelta(days=3)), now=now)
    snapshot = database_snapshot()

    for card in (deck_cards[0], deck_cards[1]):  # a state update, and a first review's insert
        with connection.execute_wrapper(_FailCardMemoryWrite()), pytest.raises(DatabaseError):
            reviews_submit(learner=learner, reviews=_inputs([card], now), now=now)
        assert database_snapshot() == snapshot


def test_a_batch_failing_part_way_leaves_nothing(learner, deck_cards):
    now = datetime(2026, 3, 1, 12, tzinfo=UTC)
    reviews_submit(learner=learner, reviews=_inputs(deck_cards[:2], now - timedelta(days=3)), now=now)
    snapshot = database_snapshot()
    # Cards already reviewed and new ones: their memory rows are written by two statements, and every
    # write goes in one round trip, which fails once all have run.
    failure = _FailAfterWrites()
    with connection.execute_wrapper(failure), pytest.raises(DatabaseError):
        reviews_submit(learner=learner, reviews=_inputs(deck_cards[:5], now - timedelta(days=1)), now=now)
    assert failure.seen == 1
    assert database_snapshot() == snapshot


def test_an_undo_and_its_log_row_are_written_together(learner, deck_cards):
    now = datetime(2026, 3, 1, 12, tzinfo=UTC)
    for days in (4, 2):
        (outcome,) = reviews_submit(
            learner=learner, reviews=_inputs(deck_cards[:1], now - timedelta(days=days)), now=now
        )
    snapshot = database_snapshot()
    with connection.execute_wrapper(_FailCardMemoryWrite()), pytest.raises(DatabaseError):
        review_undo(learner=learner, review_id=outcome.log.pk, now=now)
    assert database_snapshot() == snapshot
    review_undo(learner=learner, review_id=outcome.log.pk, now=now)
    with pytest.raises(Conflict):
        review_undo(learner=learner, review_id=outcome.log.pk, now=now)
