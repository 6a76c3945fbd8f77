"""Answering a question in place, where its lesson shows it: graded as in a quiz, every try kept."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from apps.content.models import Card, Choice, Course, Lesson, Question
from apps.quizzes.api import AnswerCreateView, QuestionAnswerCreateView
from apps.quizzes.choices import question_board
from apps.quizzes.models import LessonAnswer, QuestionMemory, QuizAnswer
from apps.srs.models import CardMemory, ReviewLog, ReviewSource
from tests.support.api import make_learner
from tests.support.quizzes import RIGHT, WRONG
from tests.support.reviews import review_body

pytestmark = pytest.mark.django_db


def shown(client: APIClient, slug: str) -> tuple[str, dict[str, str]]:
    """The question as a learner gets it: its board, and {authored key: the id shown for it}."""
    body = client.get(f"/api/v1/questions/{slug}/").json()
    key_of = {choice.text: choice.key for choice in Choice.objects.filter(question__slug=slug)}
    return body["board"], {key_of[choice["text"]]: choice["key"] for choice in body["choices"]}


def as_shown(client: APIClient, slug: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The answer with its authored keys turned into the ids shown, sent with their board."""
    board, ids = shown(client, slug)
    body = dict(fields)
    if isinstance(body.get("choice"), str):
        body["choice"] = ids.get(body["choice"], body["choice"])
    if isinstance(body.get("choices"), list):
        body["choices"] = [ids.get(key, key) for key in body["choices"]]
    if "choice" in body or "choices" in body:
        body.setdefault("board", board)
    return body


def post(client: APIClient, slug: str, body: dict[str, Any]) -> Any:
    return client.post(f"/api/v1/questions/{slug}/answers/", body, format="json")


def answer(client: APIClient, slug: str, **fields: Any) -> Any:
    return post(client, slug, as_shown(client, slug, fields))


def state() -> dict[str, Any]:
    """Everything an answer given in place can change."""
    return {
        "answers": list(LessonAnswer.objects.order_by("pk").values_list("pk", "credit", "scheduled")),
        "memories": list(QuestionMemory.objects.order_by("pk").values_list("pk", "reps", "due")),
        "reviews": ReviewLog.objects.count(),
        "quiz_answers": QuizAnswer.objects.count(),
    }


def shown_ids_of(board: str, question: Question) -> tuple[str, dict[str, str]]:
    attempt = question_board(question=question, nonce=board)
    return board, {key: choice_id for choice_id, key in attempt.choice_keys[str(question.pk)].items()}


def test_answering_needs_a_signed_in_learner(api_client, course):
    assert post(api_client, "format", {"text": "TFRecord"}).status_code == 401
    assert not LessonAnswer.objects.exists()


@pytest.mark.parametrize("slug", ["overlap", "format", "batches", "pitfalls"])
def test_each_kind_graded_right_with_the_answer_key_and_explanation(learner_client, learner, course, slug):
    body = as_shown(learner_client, slug, RIGHT[slug])
    response = post(learner_client, slug, body)
    assert response.status_code == 201, response.content
    data = response.json()
    question = Question.objects.get(slug=slug)
    assert data["question"] == slug
    assert (data["correct"], data["credit"], data["outcome"]) == (True, 1.0, "correct")
    assert data["explanation"] == question.explanation
    assert data["scheduled"] is True and data["duplicate"] is False and data["due"] is not None
    sent = {name: value for name, value in body.items() if name != "board"}
    if "choices" in sent:
        sent["choices"] = sorted(sent["choices"])
    assert data["response"] == sent
    key = data["correct_answer"]
    if question.kind in ("single_choice", "multiple_choice"):
        # The key names the correct choices by the ids the learner was shown, never by authored keys.
        _, ids = shown_ids_of(body["board"], question)
        correct_keys = question.choices.filter(is_correct=True).values_list("key", flat=True)
        assert sorted(key["choices"]) == sorted(ids[k] for k in correct_keys)
    else:
        assert key["choices"] == []
    if slug == "format":
        assert key["accepted_answers"] == ["TFRecord", "Parquet"]
    if slug == "batches":
        assert (key["number"], key["tolerance"]) == (32.0, 0.0)
    row = LessonAnswer.objects.get()
    assert (row.learner_id, row.question_id, row.correct, row.credit, row.scheduled) == (
        learner.pk,
        question.pk,
        True,
        1.0,
        True,
    )
    assert row.response == sent
    if question.kind in ("single_choice", "multiple_choice"):
        assert sorted(row.choice_keys.values()) == sorted(question.choices.values_list("key", flat=True))
    assert QuestionMemory.objects.get(learner=learner, question=question).reps == 1


@pytest.mark.parametrize("slug", ["overlap", "format", "batches", "pitfalls"])
def test_each_kind_graded_wrong(learner_client, learner, course, slug):
    response = answer(learner_client, slug, **WRONG[slug])
    assert response.status_code == 201, response.content
    data = response.json()
    assert (data["correct"], data["credit"], data["outcome"]) == (False, 0.0, "wrong")
    assert data["explanation"] == Question.objects.get(slug=slug).explanation
    row = LessonAnswer.objects.get()
    assert (row.correct, row.credit, row.scheduled) == (False, 0.0, True)


def test_partial_credit_for_part_of_a_multiple_choice_answer(learner_client, course):
    response = answer(learner_client, "pitfalls", choices=["a"])
    assert response.status_code == 201
    data = response.json()
    assert (data["correct"], data["credit"], data["outcome"]) == (False, 0.5, "partial")
    assert LessonAnswer.objects.get().credit == 0.5


def test_short_text_forgives_case_and_spacing_as_a_quiz_does(learner_client, course):
    data = answer(learner_client, "format", text="  tfrecord ").json()
    assert data["correct"] is True
    assert data["response"] == {"text": "  tfrecord "}


def test_a_first_answer_schedules_the_question_and_reviews_only_the_cards_already_studied(
    learner_client, learner, course
):
    # "map" was studied in its deck; "prefetch" is still new to the learner.
    studied = Card.objects.get(slug="map")
    response = learner_client.post("/api/v1/reviews/", review_body(studied, 3), format="json")
    assert response.status_code == 201
    answer(learner_client, "pitfalls", **RIGHT["pitfalls"])
    memory = QuestionMemory.objects.get(learner=learner, question__slug="pitfalls")
    assert memory.reps == 1
    reviews = ReviewLog.objects.filter(learner=learner, source=ReviewSource.QUIZ)
    assert list(reviews.values_list("card__slug", "rating")) == [("map", 3)]
    # The new card stays new: the lesson spent none of the day's new cards.
    assert not CardMemory.objects.filter(learner=learner, card__slug="prefetch").exists()


def test_trying_again_before_the_question_is_due_is_kept_as_practice(learner_client, learner, course):
    first = answer(learner_client, "overlap", **WRONG["overlap"]).json()
    assert first["scheduled"] is True
    before = state()
    again = answer(learner_client, "overlap", **RIGHT["overlap"])
    assert again.status_code == 201
    data = again.json()
    # Right this time, and said so, but seeing the key first earns no review.
    assert (data["correct"], data["scheduled"]) == (True, False)
    assert data["due"] == first["due"]
    after = state()
    assert after["memories"] == before["memories"]
    assert after["reviews"] == before["reviews"]
    assert [row[1:] for row in after["answers"]] == [(0.0, True), (1.0, False)]


def test_an_answer_once_the_question_is_due_schedules_it_again(learner_client, learner, course):
    answer(learner_client, "batches", **RIGHT["batches"])
    QuestionMemory.objects.filter(learner=learner).update(due=timezone.now() - timedelta(minutes=1))
    data = answer(learner_client, "batches", **RIGHT["batches"]).json()
    assert data["scheduled"] is True
    assert QuestionMemory.objects.get(learner=learner).reps == 2
    assert list(LessonAnswer.objects.values_list("scheduled", flat=True)) == [True, True]


def test_a_question_read_from_its_lesson_is_answered_with_that_board(learner_client, course):
    lesson = learner_client.get("/api/v1/lessons/first-pipeline/").json()
    block = next(b for s in lesson["sections"] for b in s["blocks"] if b["kind"] == "question")["question"]
    prefetch = next(choice["key"] for choice in block["choices"] if choice["text"] == "prefetch")
    response = post(learner_client, "overlap", {"board": block["board"], "choice": prefetch})
    assert response.status_code == 201
    assert response.json()["correct"] is True
    assert response.json()["correct_answer"]["choices"] == [prefetch]


@pytest.mark.parametrize(
    ("slug", "body", "field"),
    [
        ("format", {}, "non_field_errors"),
        ("format", {"text": "TFRecord", "number": 3}, "non_field_errors"),
        ("format", {"number": 3}, "text"),
        ("batches", {"text": "32"}, "number"),
        ("batches", {"number": "32"}, "number"),
        ("format", {"text": "x" * 501}, "text"),
        ("overlap", {"choice": "@ids:a"}, "board"),
        ("overlap", {"choice": "@ids:a", "board": "not a board"}, "board"),
        ("overlap", {"choice": "a", "board": "@board"}, "choice"),
        ("overlap", {"choices": ["@ids:a"], "board": "@board"}, "choice"),
        ("pitfalls", {"choices": [], "board": "@board"}, "choices"),
        ("pitfalls", {"choices": ["@ids:a", "@ids:a"], "board": "@board"}, "choices"),
        ("pitfalls", {"choices": ["@ids:a", "zzzzzzzzzzzzzzzz"], "board": "@board"}, "choices"),
        ("pitfalls", {"choices": "@ids:a", "board": "@board"}, "choices"),
        ("overlap", {"choice": "@ids:a", "board": "@board", "client_answer_id": "nope"}, "client_answer_id"),
    ],
)
def test_bad_bodies_are_400_in_the_error_shape_and_change_nothing(learner_client, course, slug, body, field):
    board, ids = shown(learner_client, slug)

    def fill(value: Any) -> Any:
        if value == "@board":
            return board
        if isinstance(value, str) and value.startswith("@ids:"):
            return ids[value.removeprefix("@ids:")]
        if isinstance(value, list):
            return [fill(item) for item in value]
        return value

    before = state()
    response = post(learner_client, slug, {name: fill(value) for name, value in body.items()})
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid" and error["message"]
    assert field in error["fields"], error
    assert state() == before


def test_a_board_other_than_the_one_shown_names_no_choice(learner_client, course):
    _, ids = shown(learner_client, "overlap")
    other_board, _ = shown(learner_client, "overlap")
    before = state()
    response = post(learner_client, "overlap", {"board": other_board, "choice": ids["a"]})
    assert response.status_code == 400
    assert "choice" in response.json()["error"]["fields"]
    assert state() == before


def test_unknown_and_archived_questions_are_404(learner_client, course):
    assert post(learner_client, "no-such-question", {"text": "x"}).status_code == 404
    Question.objects.filter(slug="format").update(archived=True)
    response = post(learner_client, "format", {"text": "TFRecord"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    Question.objects.filter(slug="format").update(archived=False)
    Lesson.objects.update(archived=True)
    assert post(learner_client, "format", {"text": "TFRecord"}).status_code == 404
    Lesson.objects.update(archived=False)
    Course.objects.update(archived=True)
    assert post(learner_client, "format", {"text": "TFRecord"}).status_code == 404
    assert not LessonAnswer.objects.exists()


def test_a_replay_with_the_client_answer_id_gets_the_first_result(learner_client, course):
    body = {**as_shown(learner_client, "pitfalls", {"choices": ["a"]}), "client_answer_id": str(uuid.uuid4())}
    first = post(learner_client, "pitfalls", body)
    assert first.status_code == 201
    before = state()
    again = post(learner_client, "pitfalls", body)
    assert again.status_code == 200
    assert again.json() == {**first.json(), "duplicate": True}
    assert state() == before
    _, ids = shown_ids_of(body["board"], Question.objects.get(slug="pitfalls"))
    changed = post(learner_client, "pitfalls", {**body, "choices": [ids["a"], ids["b"]]})
    assert changed.status_code == 409
    other = post(learner_client, "format", {"text": "TFRecord", "client_answer_id": body["client_answer_id"]})
    assert other.status_code == 409
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    assert state() == before


def test_answers_are_throttled_as_quiz_answers_are(learner_client, course, settings):
    assert QuestionAnswerCreateView.throttle_classes == AnswerCreateView.throttle_classes
    assert getattr(QuestionAnswerCreateView, "throttle_scope", None) == getattr(
        AnswerCreateView, "throttle_scope", None
    )
    current = settings.REST_FRAMEWORK
    settings.REST_FRAMEWORK = {
        **current,
        "DEFAULT_THROTTLE_RATES": {**current["DEFAULT_THROTTLE_RATES"], "learner": "2/min"},
    }
    assert post(learner_client, "format", {"text": "TFRecord"}).status_code == 201
    assert post(learner_client, "format", {"text": "Parquet"}).status_code == 201
    refused = post(learner_client, "format", {"text": "CSV"})
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "throttled"
    assert int(refused["Retry-After"]) >= 1
    assert LessonAnswer.objects.count() == 2


def _latest(client: APIClient, lesson: str = "first-pipeline") -> Any:
    return client.get(f"/api/v1/lessons/{lesson}/answers/")


def test_a_lessons_latest_answers_come_back_on_the_board_they_were_given_on(learner_client, course):
    assert _latest(learner_client).json() == {"lesson": "first-pipeline", "answers": []}
    assert answer(learner_client, "overlap", **WRONG["overlap"]).status_code == 201
    right = answer(learner_client, "overlap", **RIGHT["overlap"])
    assert right.status_code == 201
    assert answer(learner_client, "format", **WRONG["format"]).status_code == 201

    found = _latest(learner_client)
    assert found.status_code == 200
    answers = {item["question"]: item for item in found.json()["answers"]}
    lesson_questions = set(Question.objects.filter(lesson__slug="first-pipeline").values_list("slug", flat=True))
    assert set(answers) == {"overlap", "format"} & lesson_questions
    overlap = answers["overlap"]
    # The latest try, as its result said, with the choices named by the ids of the board it was given on.
    for field in ("response", "correct", "credit", "correct_answer", "answered_at", "outcome", "scheduled"):
        assert overlap[field] == right.json()[field], field
    texts = {choice.key: choice.text for choice in Choice.objects.filter(question__slug="overlap")}
    assert sorted(choice["text"] for choice in overlap["choices"]) == sorted(texts.values())
    shown_ids = {choice["key"] for choice in overlap["choices"]}
    assert overlap["response"]["choice"] in shown_ids
    assert set(overlap["correct_answer"]["choices"]) <= shown_ids
    # No authored key shows.
    assert not shown_ids & set(texts)
    if "format" in answers:
        assert answers["format"]["choices"] == [] and answers["format"]["correct"] is False


def test_latest_answers_are_the_learners_own_and_an_unknown_lesson_is_a_404(learner_client, course):
    assert answer(learner_client, "overlap", **RIGHT["overlap"]).status_code == 201
    other = APIClient()
    other.force_authenticate(user=make_learner("brian")[0])
    assert _latest(other).json()["answers"] == []
    missing = _latest(learner_client, "no-such-lesson")
    assert missing.status_code == 404 and "error" in missing.json()
    assert APIClient().get("/api/v1/lessons/first-pipeline/answers/").status_code == 401
