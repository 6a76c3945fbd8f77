"""What an answer teaches the scheduler: the question's own memory, and one review of each card it tests."""

from __future__ import annotations

import uuid

import pytest

from apps.content.models import Card
from apps.quizzes.models import QuestionMemory
from apps.quizzes.services import QUIZ_REVIEW_NAMESPACE
from apps.srs.core.scheduling import MemoryStage
from apps.srs.models import CardMemory, ReviewLog, ReviewSource
from tests.support.quizzes import RIGHT, WRONG, answer, question, start
from tests.support.reviews import post_review, review_body

pytestmark = pytest.mark.django_db


def test_a_missed_question_comes_back_sooner_than_one_answered_right(learner_client, learner, course):
    attempt_id = start(learner_client).json()["id"]
    assert answer(learner_client, attempt_id, "overlap", **WRONG["overlap"]).json()["correct"] is False
    assert answer(learner_client, attempt_id, "batches", **RIGHT["batches"]).json()["correct"] is True
    missed = QuestionMemory.objects.get(learner=learner, question__slug="overlap")
    known = QuestionMemory.objects.get(learner=learner, question__slug="batches")
    assert missed.due < known.due
    assert (missed.reps, known.reps) == (1, 1)
    assert missed.stage == known.stage == MemoryStage.LEARNING
    assert missed.step == 0 and known.step == 1  # Again stays on the first learning step, Good moves on


def test_answering_again_in_a_new_attempt_advances_the_same_memory(learner_client, learner, course):
    for _ in range(2):
        attempt_id = start(learner_client, "short-quiz").json()["id"]
        answer(learner_client, attempt_id, "batches", number=32)
    memory = QuestionMemory.objects.get(learner=learner, question__slug="batches")
    assert memory.reps == 2
    assert memory.stage == MemoryStage.REVIEW  # Good on the last learning step graduates it


def test_partial_credit_schedules_hard_between_again_and_good(learner_client, learner, course):
    attempt_id = start(learner_client).json()["id"]
    answer(learner_client, attempt_id, "pitfalls", choices=["a"])
    memory = QuestionMemory.objects.get(learner=learner, question__slug="pitfalls")
    log = ReviewLog.objects.filter(learner=learner, card__slug="map").get()
    assert log.rating == 2  # partial -> Hard, the default QUIZ_CARD_RATINGS
    assert memory.reps == 1


def test_a_missed_question_reviews_its_cards_as_again_from_the_quiz(learner_client, learner, course):
    attempt_id = start(learner_client).json()["id"]
    answer(learner_client, attempt_id, "pitfalls", choices=["c"])
    pitfalls = question("pitfalls")
    logs = ReviewLog.objects.filter(learner=learner).order_by("card__slug")
    assert [(log.card.slug, log.rating, log.source) for log in logs] == [
        ("map", 1, ReviewSource.QUIZ),
        ("prefetch", 1, ReviewSource.QUIZ),
    ]
    for log in logs:
        expected = uuid.uuid5(QUIZ_REVIEW_NAMESPACE, f"quiz:{attempt_id}:{pitfalls.pk}:{log.card_id}")
        assert log.client_review_id == expected
    assert CardMemory.objects.filter(learner=learner).count() == 2


def test_a_right_answer_reviews_its_card_as_good(learner_client, learner, course):
    attempt_id = start(learner_client).json()["id"]
    answer(learner_client, attempt_id, "overlap", choice="a")
    log = ReviewLog.objects.get(learner=learner)
    assert (log.card.slug, log.rating, log.source) == ("prefetch", 3, ReviewSource.QUIZ)
    # A question without cards reviews none.
    answer(learner_client, attempt_id, "format", text="TFRecord")
    assert ReviewLog.objects.filter(learner=learner).count() == 1


def test_card_ratings_come_from_the_setting(learner_client, learner, course, settings):
    settings.QUIZ_CARD_RATINGS = {"correct": 4, "partial": 2, "wrong": 2}
    attempt_id = start(learner_client).json()["id"]
    answer(learner_client, attempt_id, "overlap", choice="b")
    assert ReviewLog.objects.get(learner=learner).rating == 2
    attempt_id = start(learner_client).json()["id"]
    answer(learner_client, attempt_id, "overlap", choice="a")
    assert list(ReviewLog.objects.filter(learner=learner).order_by("pk").values_list("rating", flat=True)) == [2, 4]


def test_an_archived_card_is_not_reviewed_and_does_not_block_the_answer(learner_client, learner, course):
    Card.objects.filter(slug="map").update(archived=True)
    attempt_id = start(learner_client).json()["id"]
    assert answer(learner_client, attempt_id, "pitfalls", choices=["a", "b"]).status_code == 201
    assert list(ReviewLog.objects.filter(learner=learner).values_list("card__slug", flat=True)) == ["prefetch"]


def test_quiz_reviews_extend_a_card_already_studied_in_its_deck(learner_client, learner, course):
    card = Card.objects.get(slug="prefetch")
    assert post_review(learner_client, review_body(card, 3)).status_code == 201
    attempt_id = start(learner_client).json()["id"]
    answer(learner_client, attempt_id, "overlap", choice="b")
    memory = CardMemory.objects.get(learner=learner, card=card)
    assert memory.reps == 2
    sources = list(ReviewLog.objects.filter(card=card).order_by("pk").values_list("source", "rating"))
    assert sources == [(ReviewSource.DECK, 3), (ReviewSource.QUIZ, 1)]
