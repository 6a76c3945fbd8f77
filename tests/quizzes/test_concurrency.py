"""Answers racing on one attempt from real concurrent connections: one answer, one set of reviews."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from apps.quizzes.models import QuestionMemory, QuizAnswer, QuizAttempt
from apps.srs.models import ReviewLog
from tests.support.api import client_with_token, learner_with_token
from tests.support.quizzes import answer_raw, as_ids, start
from tests.support.reviews import run_together

pytestmark = [
    pytest.mark.django_db(transaction=True),
]

THREADS = 6


@pytest.fixture
def racer(course) -> tuple[Any, str]:
    return learner_with_token("racer")


def test_simultaneous_answers_to_one_question_record_one(racer):
    learner, token = racer
    attempt_id = start(client_with_token(token)).json()["id"]
    # Choice ids are looked up before the race, so every thread only sends its request.
    bodies = [as_ids(attempt_id, "pitfalls", {"choices": keys}) for keys in (["a", "b"], ["c"], ["a"])]

    responses = run_together(
        THREADS,
        lambda index: answer_raw(client_with_token(token), attempt_id, "pitfalls", **bodies[index % 3]),
    )

    statuses = sorted(response.status_code for response in responses)
    assert statuses == [201] + [409] * (THREADS - 1), [r.json() for r in responses]
    (row,) = QuizAnswer.objects.filter(attempt_id=attempt_id)
    winner = next(r.json() for r in responses if r.status_code == 201)
    assert row.response == winner["response"]
    assert QuestionMemory.objects.get(learner=learner).reps == 1
    assert ReviewLog.objects.filter(learner=learner).count() == 2  # the question's two cards, once each


def test_simultaneous_last_answers_finish_once_with_every_answer_counted(racer):
    _, token = racer
    attempt_id = start(client_with_token(token), "short-quiz").json()["id"]
    fields: list[tuple[str, dict[str, Any]]] = [
        ("batches", {"number": 32}),
        ("overlap", as_ids(attempt_id, "overlap", {"choice": "a"})),
    ]

    responses = run_together(
        2, lambda index: answer_raw(client_with_token(token), attempt_id, fields[index][0], **fields[index][1])
    )

    assert [r.status_code for r in responses] == [201, 201]
    assert sorted(r.json()["attempt"]["finished"] for r in responses) == [False, True]
    attempt = QuizAttempt.objects.get(pk=attempt_id)
    assert attempt.score == 1.0
    assert QuizAnswer.objects.filter(attempt=attempt).count() == 2


def test_the_same_question_answered_in_two_attempts_at_once_reviews_it_twice(racer):
    learner, token = racer
    attempts = [start(client_with_token(token), "short-quiz").json()["id"] for _ in range(2)]
    bodies = [as_ids(attempt_id, "overlap", {"choice": "a"}) for attempt_id in attempts]

    responses = run_together(
        2, lambda index: answer_raw(client_with_token(token), attempts[index], "overlap", **bodies[index])
    )

    assert [r.status_code for r in responses] == [201, 201]
    assert QuestionMemory.objects.get(learner=learner).reps == 2
    assert ReviewLog.objects.filter(learner=learner).count() == 2


def test_one_answer_sent_at_once_several_times_is_recorded_once(racer):
    learner, token = racer
    attempt_id = start(client_with_token(token)).json()["id"]
    body = {**as_ids(attempt_id, "pitfalls", {"choices": ["a", "b"]}), "client_answer_id": str(uuid.uuid4())}

    responses = run_together(
        THREADS, lambda index: answer_raw(client_with_token(token), attempt_id, "pitfalls", **body)
    )

    assert sorted(r.status_code for r in responses) == [200] * (THREADS - 1) + [201], [r.json() for r in responses]
    assert sorted(r.json()["duplicate"] for r in responses) == [False] + [True] * (THREADS - 1)
    assert QuizAnswer.objects.filter(attempt_id=attempt_id).count() == 1
    assert QuestionMemory.objects.get(learner=learner).reps == 1
    assert ReviewLog.objects.filter(learner=learner).count() == 2


def test_one_client_id_sent_at_once_to_two_attempts_records_one_answer(racer):
    learner, token = racer
    attempts = [start(client_with_token(token), "short-quiz").json()["id"] for _ in range(2)]
    key = str(uuid.uuid4())
    bodies = [{**as_ids(attempt_id, "overlap", {"choice": "a"}), "client_answer_id": key} for attempt_id in attempts]

    responses = run_together(
        2, lambda index: answer_raw(client_with_token(token), attempts[index], "overlap", **bodies[index])
    )

    assert sorted(r.status_code for r in responses) == [201, 409], [r.json() for r in responses]
    refused = next(r.json() for r in responses if r.status_code == 409)
    assert refused["error"]["code"] == "idempotency_key_reused"
    assert QuizAnswer.objects.filter(learner=learner).count() == 1
    assert QuestionMemory.objects.get(learner=learner).reps == 1
