"""Match attempts keyed by client_attempt_id: a retry answers the first outcome, a reused id is refused."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from apps.games.models import MatchAttempt
from tests.support.api import make_learner
from tests.support.games import answers, attempt, new_board, play_out, snapshot, wrong_pair

pytestmark = pytest.mark.django_db


def assert_reused(response: Any, *fields: str) -> None:
    assert response.status_code == 409, response.content
    error = response.json()["error"]
    assert error["code"] == "idempotency_key_reused"
    assert sorted(error["fields"]) == sorted(fields)
    assert all(name in error["message"] for name in fields)


def test_a_retried_attempt_answers_200_with_the_first_outcome_and_records_nothing(learner_client, cards, clock):
    board = new_board(learner_client, pairs=3)
    pair = answers(board["id"])[0]
    key = str(uuid.uuid4())

    first = attempt(learner_client, board["id"], pair.term_id, pair.definition_id, client_attempt_id=key)
    before = snapshot(board["id"])
    clock.advance(seconds=3)
    retry = attempt(learner_client, board["id"], pair.term_id, pair.definition_id, client_attempt_id=key)

    assert (first.status_code, retry.status_code) == (201, 200)
    assert first.json()["duplicate"] is False and retry.json()["duplicate"] is True
    assert retry.json() == {**first.json(), "duplicate": True}
    assert retry.json()["client_attempt_id"] == key
    assert snapshot(board["id"]) == before


def test_a_retry_answers_the_counts_as_they_were_then_not_as_they_are_now(learner_client, cards, clock):
    board = new_board(learner_client, pairs=3)
    first, second = wrong_pair(board["id"])
    key = str(uuid.uuid4())
    wrong = attempt(learner_client, board["id"], first.term_id, second.definition_id, client_attempt_id=key)
    assert wrong.status_code == 201
    attempt(learner_client, board["id"], first.term_id, first.definition_id)
    attempt(learner_client, board["id"], second.term_id, first.definition_id)

    retry = attempt(learner_client, board["id"], first.term_id, second.definition_id, client_attempt_id=key)

    assert retry.status_code == 200
    assert retry.json() == {**wrong.json(), "duplicate": True}
    assert (retry.json()["matched"], retry.json()["wrong_attempts"], retry.json()["penalty_ms"]) == (0, 1, 5000)


def test_a_retry_of_the_finishing_attempt_is_a_duplicate_not_board_finished(learner_client, cards, clock):
    board = new_board(learner_client, pairs=2)
    first, last = answers(board["id"])
    clock.advance(seconds=2)
    attempt(learner_client, board["id"], first.term_id, first.definition_id)
    key = str(uuid.uuid4())
    finishing = attempt(learner_client, board["id"], last.term_id, last.definition_id, client_attempt_id=key)
    assert finishing.status_code == 201 and finishing.json()["finished"] is True
    before = snapshot(board["id"])
    clock.advance(minutes=90)  # past the board's expiry too

    retry = attempt(learner_client, board["id"], last.term_id, last.definition_id, client_attempt_id=key)

    assert retry.status_code == 200, retry.content
    assert retry.json() == {**finishing.json(), "duplicate": True}
    assert retry.json()["score"] is not None
    assert snapshot(board["id"]) == before


def test_a_retry_of_an_earlier_attempt_on_a_finished_board_shows_it_unfinished(learner_client, cards, clock):
    board = new_board(learner_client, pairs=2)
    pair = answers(board["id"])[0]
    key = str(uuid.uuid4())
    early = attempt(learner_client, board["id"], pair.term_id, pair.definition_id, client_attempt_id=key)
    play_out(learner_client, board["id"], clock)

    retry = attempt(learner_client, board["id"], pair.term_id, pair.definition_id, client_attempt_id=key)

    assert retry.status_code == 200
    assert retry.json() == {**early.json(), "duplicate": True}
    assert (retry.json()["finished"], retry.json()["score"], retry.json()["remaining"]) == (False, None, 1)


def test_an_id_reused_with_other_ids_is_a_409_that_records_nothing(learner_client, cards, clock):
    board = new_board(learner_client, pairs=3)
    first, second, third = answers(board["id"])
    key = str(uuid.uuid4())
    assert (
        attempt(learner_client, board["id"], first.term_id, first.definition_id, client_attempt_id=key).status_code
        == 201
    )
    before = snapshot(board["id"])

    assert_reused(
        attempt(learner_client, board["id"], second.term_id, second.definition_id, client_attempt_id=key),
        "term_id",
        "definition_id",
    )
    assert_reused(
        attempt(learner_client, board["id"], first.term_id, third.definition_id, client_attempt_id=key),
        "definition_id",
    )
    assert snapshot(board["id"]) == before


def test_an_id_reused_on_another_board_is_a_409_that_records_nothing(learner_client, cards, clock):
    board = new_board(learner_client, pairs=2)
    other = new_board(learner_client, pairs=2)
    pair = answers(board["id"])[0]
    theirs = answers(other["id"])[0]
    key = str(uuid.uuid4())
    assert (
        attempt(learner_client, board["id"], pair.term_id, pair.definition_id, client_attempt_id=key).status_code == 201
    )
    before = snapshot(other["id"])

    assert_reused(
        attempt(learner_client, other["id"], theirs.term_id, theirs.definition_id, client_attempt_id=key),
        "board_id",
        "term_id",
        "definition_id",
    )
    assert snapshot(other["id"]) == before


def test_another_learner_may_use_the_same_id(learner_client, cards, clock):
    key = str(uuid.uuid4())
    for client in (learner_client, make_learner("grace")[1]):
        board = new_board(client, pairs=2)
        pair = answers(board["id"])[0]
        assert attempt(client, board["id"], pair.term_id, pair.definition_id, client_attempt_id=key).status_code == 201
    assert MatchAttempt.objects.filter(client_attempt_id=key).count() == 2


def test_without_an_id_the_same_attempt_sent_twice_is_judged_twice(learner_client, cards, clock):
    board = new_board(learner_client, pairs=3)
    first, second, _ = answers(board["id"])
    assert attempt(learner_client, board["id"], first.term_id, second.definition_id).status_code == 201
    again = attempt(learner_client, board["id"], first.term_id, second.definition_id)
    assert again.status_code == 201
    assert (again.json()["wrong_attempts"], again.json()["duplicate"]) == (2, False)


@pytest.mark.parametrize("bad", ["not-a-uuid", "", None, ["x"]])
def test_a_malformed_client_attempt_id_is_a_400(learner_client, cards, clock, bad):
    board = new_board(learner_client, pairs=2)
    pair = answers(board["id"])[0]
    before = snapshot(board["id"])
    response = attempt(learner_client, board["id"], pair.term_id, pair.definition_id, client_attempt_id=bad)
    assert response.status_code == 400
    assert "client_attempt_id" in response.json()["error"]["fields"]
    assert snapshot(board["id"]) == before
