"""Resuming a board: its items, what is matched (with the pairs earned), counts, penalty and score."""

from __future__ import annotations

import re

import pytest

from tests.support.games import answers, attempt, new_board, play_out, wrong_pair

pytestmark = pytest.mark.django_db


def test_a_board_in_play_shows_only_the_pairs_earned(learner_client, cards, clock):
    board = new_board(learner_client, pairs=4)
    first, second = wrong_pair(board["id"])
    attempt(learner_client, board["id"], first.term_id, second.definition_id)
    clock.advance(seconds=2)
    attempt(learner_client, board["id"], second.term_id, second.definition_id)

    response = learner_client.get(f"/api/v1/match/{board['id']}/")

    assert response.status_code == 200
    state = response.json()
    assert state["status"] == "playing" and state["finished"] is False and state["score"] is None
    assert (state["matched"], state["remaining"], state["wrong_attempts"], state["penalty_ms"]) == (1, 3, 1, 5000)
    assert [item["id"] for item in state["terms"]] == [item["id"] for item in board["terms"]]
    assert [item["id"] for item in state["definitions"]] == [item["id"] for item in board["definitions"]]
    assert [item["id"] for item in state["terms"] if item["matched"]] == [second.term_id]
    assert [item["id"] for item in state["definitions"] if item["matched"]] == [second.definition_id]
    card = next(card for card in cards if card.pk == second.card_id)
    assert state["matched_pairs"] == [
        {
            "term_id": second.term_id,
            "definition_id": second.definition_id,
            "card_id": card.pk,
            "term": card.term,
            "definition": card.definition,
        }
    ]
    # Only the earned pair names its card, anywhere in the response.
    raw = response.content.decode().replace(" ", "")
    named = {int(found) for found in re.findall(r'"card_id":(\d+)', raw)}
    assert named == {second.card_id}, named


def test_a_finished_board_shows_its_score(learner_client, cards, clock):
    board = new_board(learner_client, pairs=2)
    last = play_out(learner_client, board["id"], clock, seconds_each=2)

    state = learner_client.get(f"/api/v1/match/{board['id']}/").json()

    assert state["status"] == "finished" and state["finished"] is True
    assert (
        state["score"]
        == last.json()["score"]
        == {
            "elapsed_ms": 4000,
            "penalty_ms": 0,
            "score_ms": 4000,
            "personal_best": True,
        }
    )
    assert state["finished_at"] == "2026-03-02T09:00:04Z"
    assert len(state["matched_pairs"]) == 2 and all(item["matched"] for item in state["terms"])
    assert [pair["card_id"] for pair in state["matched_pairs"]] == [pair.card_id for pair in answers(board["id"])]
