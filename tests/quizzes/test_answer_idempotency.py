"""A quiz answer's client_answer_id means one answer: a replay gets the first result, anything else a 409."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from apps.quizzes.models import QuizAnswer
from tests.support.api import make_learner
from tests.support.quizzes import RIGHT, WRONG, answer, start, state

pytestmark = pytest.mark.django_db


def keyed(client_answer_id: uuid.UUID, fields: dict[str, Any]) -> dict[str, Any]:
    return {**fields, "client_answer_id": str(client_answer_id)}


def test_a_replay_gets_the_first_result_and_changes_nothing(learner_client, course):
    attempt_id = start(learner_client).json()["id"]
    key = uuid.uuid4()
    first = answer(learner_client, attempt_id, "pitfalls", **keyed(key, {"choices": ["b", "a"]}))
    assert first.status_code == 201, first.json()
    assert (first.json()["duplicate"], first.json()["client_answer_id"]) == (False, str(key))
    before = state()

    # The same choices in another order are the same answer.
    replay = answer(learner_client, attempt_id, "pitfalls", **keyed(key, {"choices": ["a", "b"]}))

    assert replay.status_code == 200, replay.json()
    assert replay.json() == {**first.json(), "duplicate": True}
    assert state() == before


def test_a_replay_after_the_attempt_finished_still_gets_its_result(learner_client, course):
    attempt_id = start(learner_client, "short-quiz").json()["id"]
    assert answer(learner_client, attempt_id, "batches", **RIGHT["batches"]).status_code == 201
    key = uuid.uuid4()
    last = answer(learner_client, attempt_id, "overlap", **keyed(key, RIGHT["overlap"]))
    assert last.json()["attempt"]["finished"] is True
    before = state()

    replay = answer(learner_client, attempt_id, "overlap", **keyed(key, RIGHT["overlap"]))

    assert replay.status_code == 200, replay.json()
    assert replay.json() == {**last.json(), "duplicate": True}
    assert state() == before


def reused(attempt_id: int, other_attempt: int) -> list[tuple[int, str, dict[str, Any]]]:
    """The first answer was overlap = RIGHT in attempt_id; each of these changes one thing of it."""
    return [
        (attempt_id, "overlap", WRONG["overlap"]),
        (attempt_id, "batches", RIGHT["batches"]),
        (attempt_id, "format", RIGHT["format"]),
        (other_attempt, "overlap", RIGHT["overlap"]),
        (other_attempt, "batches", WRONG["batches"]),
    ]


@pytest.mark.parametrize("case", range(5))
def test_the_same_id_with_a_different_answer_is_a_409_and_is_not_recorded(learner_client, course, case):
    attempt_id, other_attempt = (start(learner_client).json()["id"] for _ in range(2))
    key = uuid.uuid4()
    assert answer(learner_client, attempt_id, "overlap", **keyed(key, RIGHT["overlap"])).status_code == 201
    before = state()
    target, slug, fields = reused(attempt_id, other_attempt)[case]

    response = answer(learner_client, target, slug, **keyed(key, fields))

    assert response.status_code == 409, response.json()
    assert response.json()["error"]["code"] == "idempotency_key_reused"
    assert "client_answer_id" in response.json()["error"]["fields"]
    assert state() == before
    (only,) = QuizAnswer.objects.all()
    assert (only.attempt_id, only.question.slug, only.correct) == (attempt_id, "overlap", True)
    # The refused answer can still be given under a new id: nothing of it was kept.
    if (target, slug) != (attempt_id, "overlap"):
        assert answer(learner_client, target, slug, **keyed(uuid.uuid4(), fields)).status_code == 201


def test_a_new_id_for_an_answered_question_is_still_a_second_answer(learner_client, course):
    attempt_id = start(learner_client).json()["id"]
    assert answer(learner_client, attempt_id, "overlap", **keyed(uuid.uuid4(), WRONG["overlap"])).status_code == 201
    before = state()
    response = answer(learner_client, attempt_id, "overlap", **keyed(uuid.uuid4(), WRONG["overlap"]))
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "already_answered"
    assert state() == before


def test_ids_belong_to_their_learner(learner_client, course):
    key = uuid.uuid4()
    attempt_id = start(learner_client).json()["id"]
    assert answer(learner_client, attempt_id, "overlap", **keyed(key, RIGHT["overlap"])).status_code == 201
    _, other = make_learner("bob")
    others = start(other).json()["id"]
    response = answer(other, others, "overlap", **keyed(key, WRONG["overlap"]))
    assert response.status_code == 201, response.json()
    assert response.json()["duplicate"] is False
    assert QuizAnswer.objects.filter(client_answer_id=key).count() == 2


@pytest.mark.parametrize("bad", ["nope", {"id": 1}, "", ["a"]])
def test_a_malformed_client_answer_id_is_a_400_that_changes_nothing(learner_client, course, bad):
    attempt_id = start(learner_client).json()["id"]
    before = state()
    response = answer(learner_client, attempt_id, "overlap", **RIGHT["overlap"], client_answer_id=bad)
    assert response.status_code == 400, response.json()
    assert "client_answer_id" in response.json()["error"]["fields"]
    assert state() == before


def test_a_numeric_answer_too_large_for_jsonb_to_keep_as_a_float_replays_as_itself(learner_client, course):
    # jsonb gives 1e23 back as the integer 100000000000000000000000, which is not == 1e23 as a float.
    attempt_id = start(learner_client).json()["id"]
    key = uuid.uuid4()
    first = answer(learner_client, attempt_id, "batches", **keyed(key, {"number": 1e23}))
    assert first.status_code == 201, first.json()
    before = state()

    replay = answer(learner_client, attempt_id, "batches", **keyed(key, {"number": 1e23}))

    assert replay.status_code == 200, replay.json()
    assert replay.json()["duplicate"] is True
    assert state() == before
