"""Attempts: right ones reveal a pair, wrong ones cost time, the last one scores, refused ones change nothing."""

from __future__ import annotations

import uuid

import pytest

from apps.games.models import MatchAttempt, MatchBoard, MatchItem
from apps.srs.models import ReviewLog
from tests.support.api import make_learner
from tests.support.games import answers, attempt, new_board, play_out, snapshot, wrong_pair

pytestmark = pytest.mark.django_db


def test_a_correct_attempt_reveals_the_pair(learner_client, cards, clock):
    board = new_board(learner_client)
    pair = answers(board["id"])[0]

    response = attempt(learner_client, board["id"], pair.term_id, pair.definition_id)

    assert response.status_code == 201
    card = next(card for card in cards if card.pk == pair.card_id)
    assert response.json() == {
        "correct": True,
        "pair": {
            "term_id": pair.term_id,
            "definition_id": pair.definition_id,
            "card_id": card.pk,
            "term": card.term,
            "definition": card.definition,
        },
        "matched": 1,
        "remaining": 5,
        "wrong_attempts": 0,
        "penalty_ms": 0,
        "finished": False,
        "elapsed_ms": 0,
        "score": None,
        "client_attempt_id": None,
        "duplicate": False,
    }
    (stored,) = MatchAttempt.objects.filter(board_id=board["id"])
    assert stored.correct and stored.term_item_id == stored.definition_item_id


def test_a_wrong_attempt_adds_the_penalty_and_reveals_nothing(learner_client, cards, clock):
    board = new_board(learner_client)
    first, second = wrong_pair(board["id"])

    response = attempt(learner_client, board["id"], first.term_id, second.definition_id)

    assert response.status_code == 201
    assert response.json() == {
        "correct": False,
        "pair": None,
        "matched": 0,
        "remaining": 6,
        "wrong_attempts": 1,
        "penalty_ms": 5000,
        "finished": False,
        "elapsed_ms": 0,
        "score": None,
        "client_attempt_id": None,
        "duplicate": False,
    }
    again = attempt(learner_client, board["id"], second.term_id, first.definition_id).json()
    assert (again["wrong_attempts"], again["penalty_ms"]) == (2, 10000)
    attempts = list(MatchAttempt.objects.filter(board_id=board["id"]).order_by("pk"))
    assert [(a.correct, a.penalty_ms) for a in attempts] == [(False, 5000), (False, 5000)]
    assert set(MatchItem.objects.filter(board_id=board["id"], missed=True).values_list("card_id", flat=True)) == {
        first.card_id,
        second.card_id,
    }


def test_the_score_is_the_servers_elapsed_time_plus_penalties(learner_client, cards, clock):
    board = new_board(learner_client, pairs=4)
    first, second = wrong_pair(board["id"])
    clock.advance(seconds=2)
    attempt(learner_client, board["id"], first.term_id, second.definition_id)

    last = play_out(learner_client, board["id"], clock, seconds_each=3.25)

    body = last.json()
    assert body["finished"] is True and body["remaining"] == 0 and body["matched"] == 4
    elapsed = 2000 + 4 * 3250
    assert body["score"] == {
        "elapsed_ms": elapsed,
        "penalty_ms": 5000,
        "score_ms": elapsed + 5000,
        "personal_best": True,
    }
    stored = MatchBoard.objects.get(pk=board["id"])
    assert (stored.elapsed_ms, stored.score_ms, stored.finished_at) == (elapsed, elapsed + 5000, clock.now)


def test_each_answer_carries_the_servers_elapsed_time(learner_client, cards, clock):
    board = new_board(learner_client, pairs=2)
    first, second = wrong_pair(board["id"])
    clock.advance(seconds=1.5)
    wrong = attempt(learner_client, board["id"], first.term_id, second.definition_id).json()
    clock.advance(seconds=2)
    right = attempt(learner_client, board["id"], first.term_id, first.definition_id).json()

    assert (wrong["elapsed_ms"], right["elapsed_ms"]) == (1500, 3500)
    clock.advance(seconds=4)
    assert learner_client.get(f"/api/v1/match/{board['id']}/").json()["elapsed_ms"] == 7500
    last = attempt(learner_client, board["id"], second.term_id, second.definition_id).json()
    assert last["elapsed_ms"] == last["score"]["elapsed_ms"] == 7500
    clock.advance(seconds=60)
    # Once finished, the board's time stops at the last match.
    assert learner_client.get(f"/api/v1/match/{board['id']}/").json()["elapsed_ms"] == 7500


def test_a_client_cannot_send_its_own_time_or_score(learner_client, cards, clock):
    board = new_board(learner_client, pairs=2)
    pair = answers(board["id"])[0]
    response = learner_client.post(
        f"/api/v1/match/{board['id']}/attempts/",
        {"term_id": pair.term_id, "definition_id": pair.definition_id, "elapsed_ms": 1},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"elapsed_ms": ["Unknown field."]}
    assert MatchAttempt.objects.count() == 0


def test_personal_best_is_per_board_size_and_only_when_better(learner_client, cards, clock):
    def finish(pairs: int, seconds_each: float) -> dict:
        board = new_board(learner_client, pairs=pairs)
        return play_out(learner_client, board["id"], clock, seconds_each=seconds_each).json()["score"]

    assert finish(2, 5)["personal_best"] is True
    assert finish(2, 6)["personal_best"] is False
    assert finish(2, 5)["personal_best"] is False  # equal is not better
    assert finish(3, 9)["personal_best"] is True  # another size has its own best
    assert finish(2, 1)["personal_best"] is True


def test_a_changed_penalty_setting_applies_to_new_boards_only(learner_client, cards, clock, settings):
    running = new_board(learner_client, pairs=2)
    settings.MATCH_WRONG_ATTEMPT_PENALTY_SECONDS = 2.5
    fresh = new_board(learner_client, pairs=2)
    assert fresh["penalty_rule"]["wrong_attempt_penalty_ms"] == 2500
    for board, expected in ((running, 5000), (fresh, 2500)):
        first, second = wrong_pair(board["id"])
        assert (
            attempt(learner_client, board["id"], first.term_id, second.definition_id).json()["penalty_ms"] == expected
        )


# --- Refused attempts change nothing ---------------------------------------------------------------


def test_an_attempt_on_a_finished_board_is_a_409(learner_client, cards, clock):
    board = new_board(learner_client, pairs=2)
    play_out(learner_client, board["id"], clock)
    first, second = wrong_pair(board["id"])
    before = snapshot(board["id"])

    response = attempt(learner_client, board["id"], first.term_id, second.definition_id)

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "board_finished"
    assert snapshot(board["id"]) == before


def test_another_learners_board_is_exactly_like_an_unknown_one(learner_client, cards, clock):
    board = new_board(learner_client, pairs=2)
    pair = answers(board["id"])[0]
    _, intruder = make_learner("mallory")
    before = snapshot(board["id"])

    theirs = attempt(intruder, board["id"], pair.term_id, pair.definition_id)
    unknown = attempt(intruder, str(uuid.uuid4()), pair.term_id, pair.definition_id)

    assert theirs.status_code == unknown.status_code == 404
    assert (
        theirs.json() == unknown.json() == {"error": {"code": "not_found", "message": "No such board.", "fields": {}}}
    )
    assert intruder.get(f"/api/v1/match/{board['id']}/").json() == theirs.json()
    assert snapshot(board["id"]) == before


def test_a_board_id_that_is_not_a_uuid_is_a_404(learner_client, cards, clock):
    assert learner_client.post("/api/v1/match/12/attempts/", {}, format="json").status_code == 404
    assert learner_client.get("/api/v1/match/not-a-board/").status_code == 404


def test_unknown_item_ids_are_a_400_naming_the_fields(learner_client, cards, clock):
    board = new_board(learner_client, pairs=2)
    other = new_board(learner_client, pairs=2)
    pair = answers(board["id"])[0]
    foreign = answers(other["id"])[0]
    before = snapshot(board["id"])

    swapped = attempt(learner_client, board["id"], pair.definition_id, pair.term_id)
    from_other_board = attempt(learner_client, board["id"], foreign.term_id, pair.definition_id)

    assert swapped.status_code == from_other_board.status_code == 400
    assert swapped.json()["error"]["fields"] == {
        "term_id": ["No such term on this board."],
        "definition_id": ["No such definition on this board."],
    }
    assert from_other_board.json()["error"]["fields"] == {"term_id": ["No such term on this board."]}
    assert snapshot(board["id"]) == before


def test_an_already_matched_term_or_definition_is_a_409(learner_client, cards, clock):
    board = new_board(learner_client, pairs=3)
    first, second, _ = answers(board["id"])
    attempt(learner_client, board["id"], first.term_id, first.definition_id)
    before = snapshot(board["id"])

    again = attempt(learner_client, board["id"], first.term_id, first.definition_id)
    term_taken = attempt(learner_client, board["id"], first.term_id, second.definition_id)
    definition_taken = attempt(learner_client, board["id"], second.term_id, first.definition_id)

    assert [r.status_code for r in (again, term_taken, definition_taken)] == [409, 409, 409]
    assert again.json()["error"]["code"] == "already_matched"
    assert term_taken.json()["error"]["fields"] == {"term_id": ["Already matched."]}
    assert definition_taken.json()["error"]["fields"] == {"definition_id": ["Already matched."]}
    assert snapshot(board["id"]) == before


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"term_id": "x"},
        {"term_id": 1, "definition_id": 2},
        {"term_id": None, "definition_id": "y"},
        {"term_id": "x" * 65, "definition_id": "y"},
        ["x", "y"],
    ],
    ids=["empty", "missing", "numbers", "null", "too long", "a list"],
)
def test_a_malformed_body_is_a_400(learner_client, cards, clock, body):
    board = new_board(learner_client, pairs=2)
    before = snapshot(board["id"])
    response = learner_client.post(f"/api/v1/match/{board['id']}/attempts/", body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert snapshot(board["id"]) == before


def test_a_body_that_is_not_json_is_a_400(learner_client, cards, clock):
    board = new_board(learner_client, pairs=2)
    response = learner_client.post(
        f"/api/v1/match/{board['id']}/attempts/", "{not json", content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "malformed_json"
    assert MatchAttempt.objects.count() == 0


def test_an_expired_board_takes_no_attempt_and_is_never_scored(learner, learner_client, cards, clock, settings):
    settings.MATCH_BOARD_EXPIRY_MINUTES = 10
    board = new_board(learner_client, pairs=2)
    first, second = answers(board["id"])
    clock.advance(minutes=9, seconds=59)
    assert attempt(learner_client, board["id"], first.term_id, first.definition_id).status_code == 201
    reviews = list(ReviewLog.objects.filter(learner=learner).values_list("pk", flat=True))
    assert len(reviews) == 1
    clock.advance(seconds=1)
    before = snapshot(board["id"])

    response = attempt(learner_client, board["id"], second.term_id, second.definition_id)

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "board_expired"
    assert snapshot(board["id"]) == before
    stored = MatchBoard.objects.get(pk=board["id"])
    assert stored.finished_at is None and stored.score_ms is None
    assert list(ReviewLog.objects.filter(learner=learner).values_list("pk", flat=True)) == reviews
    state = learner_client.get(f"/api/v1/match/{board['id']}/").json()
    assert (state["status"], state["score"], state["matched"]) == ("expired", None, 1)
    # Its clock stopped at the expiry.
    assert state["elapsed_ms"] == 10 * 60 * 1000
    history = learner_client.get("/api/v1/decks/match-deck/match/history/").json()
    assert history["count"] == 0
