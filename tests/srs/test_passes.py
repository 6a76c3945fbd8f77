"""Deck passes: saving a score once, validation, history, best score per deck, isolation and query counts."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from apps.content.models import Card
from apps.srs.models import DeckPass
from tests.support.api import make_learner
from tests.support.progress import counted_get, second_deck
from tests.support.reviews import DECK

pytestmark = pytest.mark.django_db

LIST_URL = "/api/v1/deck-passes/"
BEST_URL = "/api/v1/deck-passes/best/"


def _create_url(slug: str = DECK) -> str:
    return f"/api/v1/decks/{slug}/passes/"


def pass_body(known: int = 30, total: int = 34, *, minutes: float = 5, ended_days_ago: float = 1, **extra: Any):
    finished = datetime.now(UTC).replace(microsecond=0) - timedelta(days=ended_days_ago)
    return {
        "known": known,
        "total": total,
        "started_at": (finished - timedelta(minutes=minutes)).isoformat(),
        "finished_at": finished.isoformat(),
        "client_pass_id": str(uuid.uuid4()),
        **extra,
    }


def test_a_pass_is_saved_once(learner_client, learner, deck_cards):
    body = pass_body(29, 34, minutes=4.5)
    first = learner_client.post(_create_url(), body, format="json")
    assert first.status_code == 201, first.json()
    saved = first.json()
    assert saved["deck"] == DECK
    assert (saved["known"], saved["total"]) == (29, 34)
    assert saved["score"] == pytest.approx(29 / 34)
    assert saved["duration_ms"] == 270_000
    assert saved["client_pass_id"] == body["client_pass_id"]

    # The same pass again, its times written with another offset, returns the first result and saves nothing.
    east = timezone(timedelta(hours=5, minutes=30))
    for resent in (
        body,
        body
        | {
            name: datetime.fromisoformat(body[name]).astimezone(east).isoformat()
            for name in ("started_at", "finished_at")
        },
    ):
        again = learner_client.post(_create_url(), resent, format="json")
        assert again.status_code == 200
        assert again.json() == saved
    assert DeckPass.objects.filter(learner=learner).count() == 1


def _shifted(body: dict[str, Any], name: str, **delta: float) -> dict[str, Any]:
    return body | {name: (datetime.fromisoformat(body[name]) + timedelta(**delta)).isoformat()}


REUSED_PASS_ID: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "another score": lambda body: body | {"known": 34, "total": 34},
    "another known": lambda body: body | {"known": body["known"] - 1},
    "started earlier": lambda body: _shifted(body, "started_at", seconds=-1),
    "finished later": lambda body: _shifted(body, "finished_at", microseconds=1),
}


@pytest.mark.parametrize("change", REUSED_PASS_ID.values(), ids=REUSED_PASS_ID.keys())
def test_a_client_pass_id_reused_for_another_pass_is_a_conflict(learner_client, learner, deck_cards, change):
    body = pass_body(29, 34)
    first = learner_client.post(_create_url(), body, format="json")
    assert first.status_code == 201
    rows = list(DeckPass.objects.values())

    response = learner_client.post(_create_url(), change(body), format="json")

    assert response.status_code == 409, response.json()
    error = response.json()["error"]
    assert error["code"] == "idempotency_key_reused"
    assert body["client_pass_id"] in error["message"]
    assert set(error["fields"]) == {"client_pass_id"}
    assert list(DeckPass.objects.values()) == rows
    assert learner_client.post(_create_url(), body, format="json").json() == first.json()


def test_a_client_pass_id_reused_for_another_deck_is_a_conflict(learner_client, deck_cards):
    other = second_deck(cards=40)
    body = pass_body(29, 34)
    assert learner_client.post(_create_url(), body, format="json").status_code == 201
    rows = list(DeckPass.objects.values())
    response = learner_client.post(_create_url(other.slug), body, format="json")
    assert response.status_code == 409, response.json()
    assert response.json()["error"]["code"] == "idempotency_key_reused"
    assert "deck" in response.json()["error"]["message"]
    assert list(DeckPass.objects.values()) == rows


def test_the_same_client_id_from_another_learner_is_another_pass(learner_client, deck_cards):
    body = pass_body()
    assert learner_client.post(_create_url(), body, format="json").status_code == 201
    _, other = make_learner("brian")
    assert other.post(_create_url(), body, format="json").status_code == 201
    assert DeckPass.objects.count() == 2


def _active_cards() -> int:
    return Card.objects.filter(deck__slug=DECK, archived=False).count()


def _naive(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "finished_at": body["finished_at"].replace("+00:00", "")}


# Bodies are built when each test runs, so "the future" is measured from then.
INVALID: list[tuple[str, Callable[[], dict[str, Any]]]] = [
    ("known", lambda: pass_body(35, 34)),
    ("known", lambda: pass_body(-1, 34)),
    ("total", lambda: pass_body(0, 0)),
    ("total", lambda: pass_body(3, _active_cards() + 1)),
    ("finished_at", lambda: pass_body(minutes=-1)),
    ("finished_at", lambda: pass_body(ended_days_ago=-0.01)),
    ("finished_at", lambda: _naive(pass_body())),
    ("started_at", lambda: {**pass_body(), "started_at": "yesterday"}),
    ("client_pass_id", lambda: {**pass_body(), "client_pass_id": "pass-1"}),
    ("known", lambda: {key: value for key, value in pass_body().items() if key != "known"}),
    ("total", lambda: {**pass_body(), "total": "all"}),
]


@pytest.mark.parametrize(
    ("field", "make"), INVALID, ids=[f"{field}-{index}" for index, (field, _) in enumerate(INVALID)]
)
def test_each_invalid_pass_is_a_400_naming_the_field_and_saves_nothing(learner_client, deck_cards, field, make):
    response = learner_client.post(_create_url(), make(), format="json")
    assert response.status_code == 400, response.json()
    assert response.json()["error"]["code"] == "invalid"
    assert field in response.json()["error"]["fields"], response.json()
    assert not DeckPass.objects.exists()


def test_a_pass_finished_moments_ahead_of_the_server_clock_is_accepted(learner_client, deck_cards):
    # Phones' clocks drift: up to five minutes ahead is allowed.
    response = learner_client.post(_create_url(), pass_body(ended_days_ago=-3 / (24 * 60)), format="json")
    assert response.status_code == 201, response.json()


def test_total_counts_only_active_cards(learner_client, deck_cards):
    deck_cards[0].archived = True
    deck_cards[0].save()
    active = len(deck_cards) - 1
    assert learner_client.post(_create_url(), pass_body(30, active + 1), format="json").status_code == 400
    assert learner_client.post(_create_url(), pass_body(30, active), format="json").status_code == 201


def test_a_retry_after_the_deck_was_archived_still_gets_its_pass(learner_client, deck_cards):
    body = pass_body()
    first = learner_client.post(_create_url(), body, format="json").json()
    deck = deck_cards[0].deck
    deck.archived = True
    deck.save()
    again = learner_client.post(_create_url(), body, format="json")
    assert again.status_code == 200
    assert again.json() == first
    # Its history stays listed.
    assert [item["id"] for item in learner_client.get(LIST_URL).json()["results"]] == [first["id"]]


def test_unknown_or_archived_deck_is_404(learner_client, deck_cards):
    assert learner_client.post(_create_url("no-such-deck"), pass_body(), format="json").status_code == 404
    deck = deck_cards[0].deck
    deck.archived = True
    deck.save()
    response = learner_client.post(_create_url(), pass_body(), format="json")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert not DeckPass.objects.exists()


def test_history_is_newest_first_paginated_filtered_and_private(learner_client, deck_cards):
    other_deck = second_deck(cards=3)
    ids = []
    for days_ago, slug, known in [(3, DECK, 10), (1, DECK, 20), (2, other_deck.slug, 3)]:
        body = pass_body(known, 3 if slug == other_deck.slug else 34, ended_days_ago=days_ago)
        ids.append(learner_client.post(_create_url(slug), body, format="json").json()["id"])
    _, other = make_learner("brian")
    other.post(_create_url(), pass_body(34, 34), format="json")

    page = learner_client.get(LIST_URL).json()
    assert page["count"] == 3
    assert [item["id"] for item in page["results"]] == [ids[1], ids[2], ids[0]]
    assert page["results"][1]["score"] == 1.0
    assert page["results"][0]["duration_ms"] == 300_000

    first_page = learner_client.get(LIST_URL, {"page_size": 2}).json()
    assert [item["id"] for item in first_page["results"]] == [ids[1], ids[2]]
    assert first_page["next"] is not None

    filtered = learner_client.get(LIST_URL, {"deck": DECK}).json()
    assert [item["id"] for item in filtered["results"]] == [ids[1], ids[0]]

    # A filter that names nothing matches nothing, as every filter of the API does.
    unknown = learner_client.get(LIST_URL, {"deck": "no-such-deck"})
    assert (unknown.status_code, unknown.json()["count"]) == (200, 0)

    assert other.get(LIST_URL).json()["count"] == 1


def test_best_is_the_highest_score_then_the_shortest_then_the_earliest(learner_client, learner, deck_cards):
    other_deck = second_deck(cards=4)

    def save(slug: str, known: int, total: int, minutes: float, ended_days_ago: float) -> int:
        body = pass_body(known, total, minutes=minutes, ended_days_ago=ended_days_ago)
        response = learner_client.post(_create_url(slug), body, format="json")
        assert response.status_code == 201, response.json()
        return int(response.json()["id"])

    save(DECK, 30, 34, 3, 9)
    perfect_slow = save(DECK, 34, 34, 10, 8)
    perfect_fast_late = save(DECK, 34, 34, 4, 2)
    perfect_fast_early = save(DECK, 34, 34, 4, 5)
    save(DECK, 17, 34, 1, 1)
    # 2/4 and 1/2 are the same score: the shorter pass wins.
    half_slow = save(other_deck.slug, 2, 4, 2, 3)
    half_fast = save(other_deck.slug, 1, 2, 1, 4)
    save(other_deck.slug, 1, 4, 1, 1)
    _, other = make_learner("brian")
    other.post(_create_url(other_deck.slug), pass_body(4, 4), format="json")

    results = learner_client.get(BEST_URL).json()["results"]
    by_deck = {item["deck"]: item for item in results}
    assert [item["deck"] for item in results] == [other_deck.slug, DECK]  # by deck title
    assert by_deck[DECK]["id"] == perfect_fast_early
    assert by_deck[DECK]["passes_count"] == 5
    assert by_deck[other_deck.slug]["id"] == half_fast
    assert by_deck[other_deck.slug]["score"] == 0.5
    assert by_deck[other_deck.slug]["passes_count"] == 3
    assert {perfect_slow, perfect_fast_late, half_slow}.isdisjoint({item["id"] for item in results})

    assert [item["known"] for item in other.get(BEST_URL).json()["results"]] == [4]


def test_best_and_history_keep_a_constant_number_of_queries(learner_client, deck_cards):
    other_deck = second_deck(cards=3)

    def add(count: int) -> None:
        for index in range(count):
            slug = DECK if index % 2 else other_deck.slug
            body = pass_body(index % 3, 3, ended_days_ago=index + 1)
            assert learner_client.post(_create_url(slug), body, format="json").status_code == 201

    add(2)
    list_small, list_queries = counted_get(learner_client, LIST_URL)
    best_small, best_queries = counted_get(learner_client, BEST_URL)
    add(12)
    list_large, list_queries_large = counted_get(learner_client, LIST_URL)
    best_large, best_queries_large = counted_get(learner_client, BEST_URL)

    assert (list_small.json()["count"], list_large.json()["count"]) == (2, 14)
    assert len(best_small.json()["results"]) == 2 and len(best_large.json()["results"]) == 2
    # The page with its decks: a page shorter than a full one tells the count itself.
    assert len(list_queries) == len(list_queries_large) == 1, list_queries_large
    # One query: best per deck and the deck counts, ranked by window functions.
    assert len(best_queries) == len(best_queries_large) == 1, best_queries_large
