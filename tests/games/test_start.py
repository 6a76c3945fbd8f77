"""Starting a board: its size, its errors, and that nothing in it gives a pair away."""

from __future__ import annotations

from typing import Any

import pytest

from apps.content.models import Card
from apps.games.models import MatchBoard, MatchItem
from tests.support.games import DECK, answers, new_board, start

pytestmark = pytest.mark.django_db


def _numbers(data: Any, key: str = "") -> list[tuple[str, Any]]:
    """Every number in the response, with the key it sits under."""
    if isinstance(data, dict):
        return [found for name, value in data.items() for found in _numbers(value, name)]
    if isinstance(data, list):
        return [found for item in data for found in _numbers(item, key)]
    return [(key, data)] if isinstance(data, int | float) and not isinstance(data, bool) else []


def test_a_new_board_has_shuffled_terms_and_definitions_and_the_rules(learner_client, cards, clock):
    response = start(learner_client)

    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"id", "pairs", "started_at", "expires_at", "penalty_rule", "terms", "definitions"}
    assert body["pairs"] == 6
    assert body["started_at"] == "2026-03-02T09:00:00Z"
    assert body["expires_at"] == "2026-03-02T10:00:00Z"
    assert body["penalty_rule"]["wrong_attempt_penalty_ms"] == 5000
    assert "5 s" in body["penalty_rule"]["description"]
    assert len(body["terms"]) == len(body["definitions"]) == 6
    for item in body["terms"] + body["definitions"]:
        assert set(item) == {"id", "text"}
    by_term = {card.term: card for card in cards}
    by_definition = {card.definition: card for card in cards}
    term_cards = {by_term[item["text"]].pk for item in body["terms"]}
    assert term_cards == {by_definition[item["text"]].pk for item in body["definitions"]}
    board = MatchBoard.objects.get(pk=body["id"])
    assert board.pairs == 6 and board.penalty_per_wrong_ms == 5000


def test_the_raw_json_names_no_card_slug_or_pairing(learner_client, cards, clock):
    response = start(learner_client, pairs=12)
    body = response.json()
    raw = response.content.decode()

    # No number but the board size and the penalty: no card id anywhere.
    assert sorted(key for key, _ in _numbers(body)) == ["pairs", "wrong_attempt_penalty_ms"]
    for card in cards:
        assert card.slug not in raw
    assert DECK not in raw
    term_ids = [item["id"] for item in body["terms"]]
    definition_ids = [item["id"] for item in body["definitions"]]
    assert len(set(term_ids) | set(definition_ids)) == 24
    for item_id in term_ids + definition_ids:
        assert not item_id.isdigit() and len(item_id) >= 16
    for pair in answers(body["id"]):
        assert str(pair.card_id) not in (pair.term_id, pair.definition_id)


def test_the_two_lists_are_shuffled_independently(learner_client, cards, clock):
    """With 12 pairs, five boards in which every term sits at its definition's index would be a leak."""
    aligned = 0
    for _ in range(5):
        body = new_board(learner_client, pairs=12)
        partner = {pair.term_id: pair.definition_id for pair in answers(body["id"])}
        terms = [item["id"] for item in body["terms"]]
        definitions = [item["id"] for item in body["definitions"]]
        aligned += sum(partner[term] == definitions[index] for index, term in enumerate(terms))
    # About one aligned pair per board by chance (a random permutation has one fixed point on average).
    assert aligned < 30


def test_ids_are_new_on_every_board(learner_client, cards, clock):
    first = answers(new_board(learner_client, pairs=12)["id"])
    second = answers(new_board(learner_client, pairs=12)["id"])
    ids = {pair.term_id for pair in first} | {pair.definition_id for pair in first}
    assert not ids & ({pair.term_id for pair in second} | {pair.definition_id for pair in second})


@pytest.mark.parametrize("pairs", [2, 12])
def test_pairs_from_2_to_12(learner_client, cards, clock, pairs):
    assert len(new_board(learner_client, pairs=pairs)["terms"]) == pairs


@pytest.mark.parametrize("pairs", [1, 13, 0, -3, "six", None, 2.5])
def test_pairs_out_of_range_or_not_a_number_is_a_400(learner_client, cards, clock, pairs):
    response = start(learner_client, pairs=pairs)
    assert response.status_code == 400
    assert "pairs" in response.json()["error"]["fields"]
    assert not MatchBoard.objects.exists()


def test_unknown_fields_are_refused(learner_client, cards, clock):
    response = start(learner_client, pairs=6, started_at="2020-01-01T00:00:00Z")
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"started_at": ["Unknown field."]}


def test_more_pairs_than_visible_cards_is_a_400(learner_client, cards, clock):
    Card.objects.filter(pk__in=[card.pk for card in cards[:10]]).update(archived=True)
    response = start(learner_client, pairs=5)
    assert response.status_code == 400
    assert response.json()["error"]["fields"]["pairs"] == ["At most 4 for this deck, got 5."]
    assert len(new_board(learner_client, pairs=4)["terms"]) == 4


def test_archived_cards_never_appear(learner_client, cards, clock):
    archived = cards[:8]
    Card.objects.filter(pk__in=[card.pk for card in archived]).update(archived=True)
    body = new_board(learner_client, pairs=6)
    on_board = set(MatchItem.objects.filter(board_id=body["id"]).values_list("card_id", flat=True))
    assert on_board == {card.pk for card in cards[8:]}


@pytest.mark.parametrize("left", [0, 1])
def test_a_deck_with_fewer_than_two_cards_is_a_400(learner_client, cards, clock, left):
    Card.objects.filter(pk__in=[card.pk for card in cards[left:]]).update(archived=True)
    response = start(learner_client, pairs=2)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "deck_too_small"


def test_unknown_or_archived_deck_is_a_404(learner_client, cards, deck, clock):
    assert start(learner_client, slug="no-such-deck").status_code == 404
    deck.archived = True
    deck.save()
    response = start(learner_client)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert not MatchBoard.objects.exists()


def test_cards_reading_alike_are_never_on_one_board(learner_client, deck, clock):
    for index in range(1, 4):
        Card.objects.create(
            deck=deck, slug=f"same-{index}", term="Same term", definition=f"Def {index}", position=index
        )
    Card.objects.create(deck=deck, slug="other", term="Other", definition="Def other", position=9)
    response = start(learner_client, pairs=3)
    assert response.status_code == 400
    assert response.json()["error"]["fields"]["pairs"] == ["At most 2 for this deck, got 3."]
    texts = sorted(item["text"] for item in new_board(learner_client, pairs=2)["terms"])
    assert texts == ["Other", "Same term"]


def test_anonymous_cannot_start(api_client, cards):
    assert start(api_client).status_code == 401
