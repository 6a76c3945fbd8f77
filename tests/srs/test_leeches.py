"""Leeches: flagged after eight lapses through the real review API, suspended on request, listed and unsuspended."""

from __future__ import annotations

import pytest

from apps.srs.models import CardMemory
from tests.support.api import make_learner
from tests.support.progress import counted_get, days_ago, leech_reviews
from tests.support.reviews import DECK, post_review, without_recall_time

pytestmark = pytest.mark.django_db

URL = "/api/v1/leeches/"


def _review_all(client, bodies) -> list[dict]:
    results = []
    for body in bodies:
        response = post_review(client, body)
        assert response.status_code == 201, response.json()
        results.append(response.json())
    return results


def _study_card_ids(client) -> list[int]:
    response = client.get(f"/api/v1/decks/{DECK}/study/", {"limit": 200})
    assert response.status_code == 200
    return [item["card"]["id"] for item in response.json()["cards"]]


def test_eight_lapses_make_a_leech_that_stays_in_the_queue_by_default(learner_client, learner, deck_cards):
    card = deck_cards[0]
    bodies = leech_reviews(card, lapses=8, start=days_ago(20))
    # Up to the seventh lapse (and its recovery) the card is not a leech.
    results = _review_all(learner_client, bodies[:-1])
    assert [result["state"]["lapses"] for result in results][-2:] == [7, 7]
    assert learner_client.get(URL).json()["count"] == 0

    (last,) = _review_all(learner_client, bodies[-1:])
    assert last["state"]["lapses"] == 8
    assert last["state"]["stage"] == "relearning"
    leeches = learner_client.get(URL).json()
    assert leeches["count"] == 1
    (item,) = leeches["results"]
    assert item["card"]["id"] == card.pk
    assert (item["deck"], item["lapses"], item["suspended"], item["stage"]) == (DECK, 8, False, "relearning")
    # Not suspended: the relearning step is due, so the card is in the study queue.
    assert _study_card_ids(learner_client)[0] == card.pk


def test_a_lower_threshold_flags_earlier(learner_client, deck_cards):
    assert learner_client.patch("/api/v1/srs/settings/", {"leech_threshold": 3}, format="json").status_code == 200
    _review_all(learner_client, leech_reviews(deck_cards[1], lapses=3, start=days_ago(10)))
    assert [item["lapses"] for item in learner_client.get(URL).json()["results"]] == [3]


def test_suspended_leech_leaves_the_queue_until_unsuspended(learner_client, learner, deck_cards):
    assert learner_client.patch("/api/v1/srs/settings/", {"suspend_leeches": True}, format="json").status_code == 200
    card = deck_cards[0]
    _review_all(learner_client, leech_reviews(card, lapses=8, start=days_ago(20)))

    (item,) = learner_client.get(URL).json()["results"]
    assert (item["card"]["id"], item["suspended"]) == (card.pk, True)
    assert card.pk not in _study_card_ids(learner_client)

    response = learner_client.post(f"{URL}{card.pk}/unsuspend/")
    assert response.status_code == 200, response.json()
    assert (response.json()["suspended"], response.json()["lapses"]) == (False, 8)
    assert _study_card_ids(learner_client)[0] == card.pk
    # Still a leech, now unsuspended; unsuspending again changes nothing.
    assert learner_client.get(URL).json()["results"][0]["suspended"] is False
    again = learner_client.post(f"{URL}{card.pk}/unsuspend/").json()
    assert without_recall_time(again) == without_recall_time(response.json())
    memory = CardMemory.objects.get(learner=learner, card=card)
    assert (memory.is_leech, memory.suspended, memory.lapses) == (True, False, 8)


def test_learners_see_and_unsuspend_only_their_own(learner_client, deck_cards):
    other_user, other = make_learner("brian")
    other.patch("/api/v1/srs/settings/", {"suspend_leeches": True}, format="json")
    card = deck_cards[2]
    _review_all(other, leech_reviews(card, lapses=8, start=days_ago(20)))
    assert other.get(URL).json()["count"] == 1

    assert learner_client.get(URL).json()["count"] == 0
    response = learner_client.post(f"{URL}{card.pk}/unsuspend/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert CardMemory.objects.get(learner=other_user, card=card).suspended is True
    assert learner_client.post(f"{URL}999999/unsuspend/").status_code == 404
    assert learner_client.post(f"{URL}{10**20}/unsuspend/").status_code == 404


def test_deck_filter(learner_client, deck_cards):
    _review_all(learner_client, leech_reviews(deck_cards[0], lapses=8, start=days_ago(20)))
    assert learner_client.get(URL, {"deck": DECK}).json()["count"] == 1
    # A filter that names nothing matches nothing, as every filter of the API does.
    unknown = learner_client.get(URL, {"deck": "no-such-deck"})
    assert (unknown.status_code, unknown.json()["count"]) == (200, 0)


def test_list_keeps_a_constant_number_of_queries(learner_client, deck_cards):
    def make_leeches(cards) -> None:
        reviews = [body for card in cards for body in leech_reviews(card, lapses=8, start=days_ago(20))]
        response = learner_client.post("/api/v1/reviews/batch/", {"reviews": reviews}, format="json")
        assert response.status_code == 200, response.json()

    make_leeches(deck_cards[:1])
    small, queries = counted_get(learner_client, URL)
    make_leeches(deck_cards[1:4])
    large, queries_large = counted_get(learner_client, URL)
    assert (small.json()["count"], large.json()["count"]) == (1, 4)
    # The course memory models in use for the learner, then the page with its cards and decks; a page
    # shorter than a full one needs no count.
    assert len(queries) == len(queries_large) == 2, queries_large
