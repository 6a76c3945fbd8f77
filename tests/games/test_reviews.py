"""Each matched card gets one review through the SRS: Good at the first try, Again after a mistake."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from apps.games.services import MATCH_REVIEW_NAMESPACE, match_review_id
from apps.srs.core.scheduling import MemoryStage
from apps.srs.models import CardMemory, ReviewLog, ReviewSource
from apps.srs.reviews.services import ReviewInput, reviews_submit
from tests.support.games import answers, attempt, new_board, wrong_pair

pytestmark = pytest.mark.django_db


def test_a_card_matched_at_the_first_try_gets_one_good_review(learner, learner_client, cards, clock):
    board = new_board(learner_client, pairs=2)
    pair = answers(board["id"])[0]
    clock.advance(seconds=4)

    attempt(learner_client, board["id"], pair.term_id, pair.definition_id)

    (log,) = ReviewLog.objects.filter(learner=learner)
    assert (log.card_id, log.rating, log.source, log.reviewed_at) == (pair.card_id, 3, ReviewSource.MATCH, clock.now)
    assert log.client_review_id == uuid.uuid5(MATCH_REVIEW_NAMESPACE, f"match:{board['id']}:{pair.card_id}")
    assert log.client_review_id == match_review_id(board_id=uuid.UUID(board["id"]), card_id=pair.card_id)
    memory = CardMemory.objects.get(learner=learner, card_id=pair.card_id)
    assert memory.reps == 1 and memory.last_review == clock.now


def test_a_wrong_attempt_makes_both_cards_again_reviews(learner, learner_client, cards, clock):
    board = new_board(learner_client, pairs=3)
    first, second = wrong_pair(board["id"])
    third = answers(board["id"])[2]
    attempt(learner_client, board["id"], first.term_id, second.definition_id)
    # A wrong attempt reviews nothing: the cards' outcome is not final yet.
    assert not ReviewLog.objects.exists()

    for pair in (first, second, third):
        attempt(learner_client, board["id"], pair.term_id, pair.definition_id)

    ratings = dict(ReviewLog.objects.filter(learner=learner).values_list("card_id", "rating"))
    assert ratings == {first.card_id: 1, second.card_id: 1, third.card_id: 3}


def test_a_review_card_matched_wrongly_lapses(learner, learner_client, cards, clock):
    board = new_board(learner_client, pairs=2)
    first, second = answers(board["id"])
    # first's card has been learned: in the review stage, a month ago.
    month_ago = clock.now - timedelta(days=30)
    reviews_submit(
        learner=learner,
        reviews=[ReviewInput(first.card_id, 4, uuid.uuid4(), month_ago, source=ReviewSource.DECK)],
        now=clock.now,
    )
    memory = CardMemory.objects.get(learner=learner, card_id=first.card_id)
    assert (memory.stage, memory.lapses) == (MemoryStage.REVIEW, 0)

    attempt(learner_client, board["id"], first.term_id, second.definition_id)
    attempt(learner_client, board["id"], first.term_id, first.definition_id)

    memory.refresh_from_db()
    assert (memory.stage, memory.lapses, memory.reps) == (MemoryStage.RELEARNING, 1, 2)
    log = ReviewLog.objects.get(learner=learner, source=ReviewSource.MATCH)
    assert log.rating == 1 and log.state_before is not None and log.state_before["stage"] == MemoryStage.REVIEW


def test_the_ratings_come_from_the_setting(learner, learner_client, cards, clock, settings):
    settings.MATCH_RATINGS = {"first_try": 4, "after_mistake": 2}
    board = new_board(learner_client, pairs=3)
    first, second, third = answers(board["id"])
    attempt(learner_client, board["id"], first.term_id, second.definition_id)
    for pair in (first, second, third):
        attempt(learner_client, board["id"], pair.term_id, pair.definition_id)
    ratings = dict(ReviewLog.objects.filter(learner=learner).values_list("card_id", "rating"))
    assert ratings == {first.card_id: 2, second.card_id: 2, third.card_id: 4}


def test_a_card_archived_mid_game_still_matches_without_a_review(learner, learner_client, cards, clock):
    board = new_board(learner_client, pairs=2)
    first, second = answers(board["id"])
    type(cards[0]).objects.filter(pk=first.card_id).update(archived=True)

    response = attempt(learner_client, board["id"], first.term_id, first.definition_id)

    assert response.status_code == 201 and response.json()["correct"] is True
    assert not ReviewLog.objects.filter(card_id=first.card_id).exists()
    attempt(learner_client, board["id"], second.term_id, second.definition_id)
    assert ReviewLog.objects.filter(card_id=second.card_id).count() == 1
