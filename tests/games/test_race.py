"""Attempts racing on one board from real concurrent connections: each item is matched once, nothing is lost."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from apps.games.models import MatchAttempt, MatchBoard
from apps.srs.models import ReviewLog
from tests.support.api import client_with_token, learner_with_token
from tests.support.games import answers, attempt
from tests.support.reviews import run_together

pytestmark = [
    pytest.mark.django_db(transaction=True),
]

THREADS = 6


@pytest.fixture
def racer(cards):
    return learner_with_token("racer")


def _board(token: str, pairs: int) -> Any:
    response = client_with_token(token).post("/api/v1/decks/match-deck/match/", {"pairs": pairs}, format="json")
    assert response.status_code == 201
    return response.json()["id"]


def test_the_same_pair_sent_at_once_is_matched_once(racer):
    learner, token = racer
    board_id = _board(token, pairs=3)
    pair = answers(board_id)[0]

    responses = run_together(
        THREADS, lambda index: attempt(client_with_token(token), board_id, pair.term_id, pair.definition_id)
    )

    codes = sorted(response.status_code for response in responses)
    assert codes == [201] + [409] * (THREADS - 1), [response.json() for response in responses]
    assert all(r.json()["error"]["code"] == "already_matched" for r in responses if r.status_code == 409)
    assert MatchAttempt.objects.filter(board_id=board_id).count() == 1
    assert MatchBoard.objects.get(pk=board_id).matched == 1
    assert ReviewLog.objects.filter(learner=learner, card_id=pair.card_id).count() == 1


def test_concurrent_attempts_all_count_and_the_board_finishes_once(racer):
    learner, token = racer
    board_id = _board(token, pairs=THREADS)
    pairs = answers(board_id)
    # Half the threads match a pair, the other half make a wrong attempt with the remaining items.
    half = THREADS // 2
    bodies = [(pairs[i].term_id, pairs[i].definition_id) for i in range(half)]
    bodies += [(pairs[half + i].term_id, pairs[half + (i + 1) % half].definition_id) for i in range(half)]

    responses = run_together(THREADS, lambda index: attempt(client_with_token(token), board_id, *bodies[index]))

    assert [response.status_code for response in responses] == [201] * THREADS
    board = MatchBoard.objects.get(pk=board_id)
    assert (board.matched, board.wrong_attempts, board.penalty_ms) == (half, half, half * 5000)
    assert MatchAttempt.objects.filter(board_id=board_id).count() == THREADS
    # The server's answers agree with one serial order: each saw the counts of those before it.
    assert sorted(response.json()["matched"] + response.json()["wrong_attempts"] for response in responses) == list(
        range(1, THREADS + 1)
    )

    rest = pairs[half:]
    finishers = run_together(
        len(rest),
        lambda index: attempt(client_with_token(token), board_id, rest[index].term_id, rest[index].definition_id),
    )
    assert [response.status_code for response in finishers] == [201] * len(rest)
    assert sum(response.json()["finished"] for response in finishers) == 1
    board.refresh_from_db()
    assert board.finished_at is not None and board.elapsed_ms is not None
    assert board.score_ms == board.elapsed_ms + half * 5000
    assert ReviewLog.objects.filter(learner=learner).count() == THREADS


def test_two_boards_with_equal_scores_finishing_at_once_give_one_personal_best(racer, clock):
    _, token = racer
    # Same start, same finish by the server's clock: equal scores, and a tie is not a new best.
    boards = [_board(token, pairs=2) for _ in range(2)]
    for board_id in boards:
        first = answers(board_id)[0]
        assert attempt(client_with_token(token), board_id, first.term_id, first.definition_id).status_code == 201
    last = [answers(board_id)[1] for board_id in boards]
    clock.advance(seconds=5)

    responses = run_together(
        2,
        lambda index: attempt(client_with_token(token), boards[index], last[index].term_id, last[index].definition_id),
    )

    assert all(response.json()["finished"] for response in responses)
    assert len(set(MatchBoard.objects.filter(pk__in=boards).values_list("score_ms", flat=True))) == 1
    # Unlocked, each board would miss the other's finish and both would claim the best.
    assert MatchBoard.objects.filter(pk__in=boards, personal_best=True).count() == 1


def test_one_wrong_attempt_retried_at_once_counts_once(racer):
    _, token = racer
    board_id = _board(token, pairs=3)
    first, second, _ = answers(board_id)
    key = str(uuid.uuid4())

    responses = run_together(
        THREADS,
        lambda index: attempt(
            client_with_token(token), board_id, first.term_id, second.definition_id, client_attempt_id=key
        ),
    )

    assert sorted(response.status_code for response in responses) == [200] * (THREADS - 1) + [201]
    bodies = [response.json() for response in responses]
    assert sum(body["duplicate"] for body in bodies) == THREADS - 1
    # Every answer is the one first recorded: one wrong attempt, one penalty.
    assert {(body["wrong_attempts"], body["penalty_ms"]) for body in bodies} == {(1, 5000)}
    board = MatchBoard.objects.get(pk=board_id)
    assert (board.wrong_attempts, board.penalty_ms) == (1, 5000)
    assert MatchAttempt.objects.filter(board_id=board_id).count() == 1


def test_one_id_sent_at_once_for_two_boards_records_one_attempt(racer):
    _, token = racer
    boards = [_board(token, pairs=2) for _ in range(2)]
    pairs = [answers(board_id)[0] for board_id in boards]
    key = str(uuid.uuid4())

    responses = run_together(
        2,
        lambda index: attempt(
            client_with_token(token),
            boards[index],
            pairs[index].term_id,
            pairs[index].definition_id,
            client_attempt_id=key,
        ),
    )

    assert sorted(response.status_code for response in responses) == [201, 409], [r.json() for r in responses]
    refused = next(response for response in responses if response.status_code == 409)
    assert refused.json()["error"]["code"] == "idempotency_key_reused"
    assert MatchAttempt.objects.filter(board_id__in=boards).count() == 1
    assert sum(MatchBoard.objects.filter(pk__in=boards).values_list("matched", flat=True)) == 1
