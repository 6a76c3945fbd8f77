"""History and personal bests per board size; leaderboards of opted-in learners, by display name."""

from __future__ import annotations

import pytest

from apps.accounts.models import LearnerProfile
from tests.support.api import make_learner
from tests.support.games import DECK, new_board, play_out

pytestmark = pytest.mark.django_db

HISTORY = f"/api/v1/decks/{DECK}/match/history/"
LEADERBOARD = f"/api/v1/decks/{DECK}/match/leaderboard/"


def finish(client, clock, pairs: int = 2, seconds_each: float = 1.0) -> str:
    board = new_board(client, pairs=pairs)
    play_out(client, board["id"], clock, seconds_each=seconds_each)
    return board["id"]


def opt_in(user, name: str) -> None:
    LearnerProfile.objects.create(learner=user, display_name=name, show_on_leaderboards=True)


def test_history_is_newest_first_paged_with_the_best_per_size(learner_client, cards, clock):
    slow = finish(learner_client, clock, pairs=2, seconds_each=5)
    fast = finish(learner_client, clock, pairs=2, seconds_each=2)
    slower = finish(learner_client, clock, pairs=2, seconds_each=7)
    bigger = finish(learner_client, clock, pairs=3, seconds_each=4)
    new_board(learner_client, pairs=2)  # unfinished: not in the history

    body = learner_client.get(HISTORY).json()

    assert body["count"] == 4
    assert [item["id"] for item in body["results"]] == [bigger, slower, fast, slow]
    assert body["results"][1] == {
        "id": slower,
        "pairs": 2,
        "started_at": body["results"][1]["started_at"],
        "finished_at": body["results"][1]["finished_at"],
        "elapsed_ms": 14000,
        "penalty_ms": 0,
        "wrong_attempts": 0,
        "score_ms": 14000,
        "personal_best": False,
    }
    assert [(best["pairs"], best["board_id"], best["score_ms"], best["boards_count"]) for best in body["best"]] == [
        (2, fast, 4000, 3),
        (3, bigger, 12000, 1),
    ]
    page = learner_client.get(HISTORY, {"page_size": 3, "page": 2}).json()
    assert [item["id"] for item in page["results"]] == [slow] and page["best"] == body["best"]
    assert learner_client.get(HISTORY, {"page": 9}).status_code == 404


def test_history_is_private_and_per_deck(learner_client, cards, clock):
    finish(learner_client, clock)
    _, other = make_learner("other")
    body = other.get(HISTORY).json()
    assert (body["count"], body["results"], body["best"]) == (0, [], [])
    assert learner_client.get("/api/v1/decks/no-such-deck/match/history/").status_code == 404


def test_the_leaderboard_lists_opted_in_learners_by_display_name_only(learner, learner_client, cards, clock):
    _, shy_client = make_learner("shy")
    shown, shown_client = make_learner("shown")
    shown.email = "shown@example.com"
    shown.save()
    opt_in(shown, "Speedy")
    opt_in(learner, "Ada L.")
    finish(shy_client, clock, seconds_each=1)  # the fastest, but not opted in
    finish(shown_client, clock, seconds_each=3)
    finish(shown_client, clock, seconds_each=2)  # their best counts, once
    finish(learner_client, clock, seconds_each=4)

    response = learner_client.get(LEADERBOARD, {"pairs": 2})

    assert response.status_code == 200
    body = response.json()
    assert [(entry["rank"], entry["display_name"], entry["score_ms"]) for entry in body["results"]] == [
        (1, "Speedy", 4000),
        (2, "Ada L.", 8000),
    ]
    assert body["opted_in"] is True
    assert (body["me"]["rank"], body["me"]["display_name"], body["me"]["score_ms"]) == (2, "Ada L.", 8000)
    raw = response.content.decode()
    for secret in ("shy", "shown", "ada", "example.com"):
        assert secret not in raw
    assert learner_client.get(LEADERBOARD, {"pairs": 3}).json()["results"] == []


def test_the_leaderboard_shows_the_top_ten_and_the_callers_own_rank(learner, learner_client, cards, clock):
    for index in range(11):
        user, client = make_learner(f"player{index}")
        opt_in(user, f"Player {index}")
        finish(client, clock, seconds_each=1 + index)
    opt_in(learner, "Ada")
    finish(learner_client, clock, seconds_each=30)

    body = learner_client.get(LEADERBOARD).json()  # pairs=6 by default: nobody yet
    assert (body["pairs"], body["results"], body["me"]) == (6, [], None)
    body = learner_client.get(LEADERBOARD, {"pairs": 2}).json()

    assert [entry["display_name"] for entry in body["results"]] == [f"Player {index}" for index in range(10)]
    assert [entry["rank"] for entry in body["results"]] == list(range(1, 11))
    assert (body["me"]["rank"], body["me"]["score_ms"]) == (12, 60000)


def test_a_learner_not_opted_in_gets_no_rank(learner, learner_client, cards, clock):
    finish(learner_client, clock)
    LearnerProfile.objects.create(learner=learner, display_name="Ada", show_on_leaderboards=False)
    body = learner_client.get(LEADERBOARD, {"pairs": 2}).json()
    assert (body["results"], body["opted_in"], body["me"]) == ([], False, None)


@pytest.mark.parametrize("pairs", ["1", "13", "six", "²", ""])
def test_the_leaderboard_size_must_be_2_to_12(learner_client, cards, pairs):
    response = learner_client.get(LEADERBOARD, {"pairs": pairs})
    assert response.status_code == 400
    assert "pairs" in response.json()["error"]["fields"]


def test_the_leaderboard_of_an_unknown_deck_is_a_404(learner_client, cards):
    assert learner_client.get("/api/v1/decks/no-such-deck/match/leaderboard/").status_code == 404
