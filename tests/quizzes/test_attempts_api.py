"""Taking quizzes through the API: listing, starting, answering, resuming and finishing attempts."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from apps.content.models import Question, Quiz
from apps.quizzes.models import QuestionMemory, QuizAnswer, QuizAttempt
from tests.support.api import make_learner
from tests.support.quizzes import QUIZ, RIGHT, WRONG, answer, choice_id, start, state

pytestmark = pytest.mark.django_db

# Keys that would give the answer away; none may appear before the question is answered.
ANSWER_KEY_FIELDS = {
    "correct",
    "is_correct",
    "accepted_answers",
    "numeric_answer",
    "answer",
    "tolerance",
    "explanation",
}


def question_pk(slug: str) -> int:
    return Question.objects.get(slug=slug).pk


def keys_in(data: Any) -> set[str]:
    if isinstance(data, dict):
        return set(data) | {key for value in data.values() for key in keys_in(value)}
    if isinstance(data, list):
        return {key for item in data for key in keys_in(item)}
    return set()


def test_quizzes_need_a_signed_in_user(api_client, course):
    assert api_client.get("/api/v1/quizzes/").status_code == 401


def test_quiz_list_is_paged_and_shows_counts(learner_client, course):
    response = learner_client.get("/api/v1/quizzes/?page_size=1")
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 2
    assert body["next"] is not None
    assert body["results"] == [
        {
            "slug": "first-quiz",
            "title": "First quiz",
            "description": "Every kind of question.",
            "lesson": "first-pipeline",
            "lesson_title": "A first pipeline",
            "question_count": 4,
            "due_count": 4,
            "attempt_count": 0,
            "best_score": None,
        }
    ]
    assert learner_client.get("/api/v1/quizzes/?lesson=nope").json()["count"] == 0


def test_quiz_detail_shows_the_callers_best_score_and_attempts(learner_client, course):
    for fields in (WRONG, RIGHT):
        attempt_id = start(learner_client).json()["id"]
        for slug in ("overlap", "format"):
            assert answer(learner_client, attempt_id, slug, **fields[slug]).status_code == 201
        assert learner_client.post(f"/api/v1/quiz-attempts/{attempt_id}/finish/").status_code == 200
    start(learner_client)  # unfinished: counted as an attempt, not as a score
    _, other = make_learner("bob")
    other_attempt = start(other).json()["id"]
    for slug, fields in RIGHT.items():
        answer(other, other_attempt, slug, **fields)

    body = learner_client.get(f"/api/v1/quizzes/{QUIZ}/").json()
    assert (body["attempt_count"], body["best_score"], body["question_count"]) == (3, 0.5, 4)
    assert other.get(f"/api/v1/quizzes/{QUIZ}/").json()["best_score"] == 1.0


def test_archived_quiz_and_questions_are_hidden(learner_client, course):
    Quiz.objects.filter(slug="short-quiz").update(archived=True)
    Question.objects.filter(slug="format").update(archived=True)
    assert learner_client.get("/api/v1/quizzes/short-quiz/").status_code == 404
    assert start(learner_client, "short-quiz").status_code == 404
    assert learner_client.get(f"/api/v1/quizzes/{QUIZ}/").json()["question_count"] == 3
    slugs = [q["slug"] for q in start(learner_client).json()["questions"]]
    assert sorted(slugs) == ["batches", "overlap", "pitfalls"]


# --- Starting -------------------------------------------------------------------------------------


def test_a_new_attempt_shows_no_answer_key(learner_client, shipped_course):
    response = start(learner_client, "tf-data-pipelines-review")
    assert response.status_code == 201
    raw = response.content.decode()
    body = json.loads(raw)
    assert len(body["questions"]) == 21
    assert keys_in(body) & ANSWER_KEY_FIELDS == set()
    assert set(body["questions"][0]) == {"id", "slug", "kind", "prompt", "choices"}
    for question in Question.objects.filter(slug__in=[q["slug"] for q in body["questions"]]):
        assert json.dumps(question.explanation)[1:-1] not in raw
        for accepted in question.accepted_answers.all():
            assert f'"{accepted.text}"' not in raw
    assert "4816896" not in raw and "19267584" not in raw
    # And it stays hidden when the attempt is read back before answering.
    resumed = learner_client.get(f"/api/v1/quiz-attempts/{body['id']}/")
    assert keys_in(resumed.json()) & ANSWER_KEY_FIELDS == set()


def test_order_is_shuffled_per_attempt_and_kept_when_resumed(learner_client, shipped_course):
    first = start(learner_client, "tf-data-pipelines-review").json()
    second = start(learner_client, "tf-data-pipelines-review").json()
    order = [q["slug"] for q in first["questions"]]
    quiz_order = list(
        Quiz.objects.get(slug="tf-data-pipelines-review")
        .items.order_by("position")
        .values_list("question__slug", flat=True)
    )
    assert sorted(order) == sorted(quiz_order)
    # 24! orders: two attempts drawing the file's order, or the same order twice, means no shuffle.
    assert order != quiz_order or [q["slug"] for q in second["questions"]] != quiz_order
    assert order != [q["slug"] for q in second["questions"]]
    attempt = QuizAttempt.objects.get(pk=first["id"])
    shown_keys = {
        q["slug"]: [str(attempt.choice_key_of(q["id"], c["key"])) for c in q["choices"]] for q in first["questions"]
    }
    assert any(keys != sorted(keys) for keys in shown_keys.values() if keys)

    resumed = learner_client.get(f"/api/v1/quiz-attempts/{first['id']}/").json()
    assert resumed["questions"] == first["questions"]
    assert attempt.question_ids == [q["id"] for q in first["questions"]]


def test_mode_due_asks_what_is_due_or_new_most_overdue_first(learner_client, course):
    attempt_id = start(learner_client).json()["id"]
    for slug in ("overlap", "format", "batches"):
        answer(learner_client, attempt_id, slug, **RIGHT[slug])
    memories = QuestionMemory.objects.filter(question__slug__in=["overlap", "format", "batches"])
    assert memories.count() == 3
    # Nothing answered is due yet: only the never-answered question comes.
    due = start(learner_client, mode="due").json()
    assert [q["slug"] for q in due["questions"]] == ["pitfalls"]
    assert due["mode"] == "due"

    reference = QuestionMemory.objects.get(question__slug="overlap").last_review
    QuestionMemory.objects.filter(question__slug="overlap").update(due=reference.replace(year=2020))
    QuestionMemory.objects.filter(question__slug="batches").update(due=reference.replace(year=2019))
    due = start(learner_client, mode="due").json()
    assert [q["slug"] for q in due["questions"]] == ["batches", "overlap", "pitfalls"]


def test_mode_due_with_nothing_due_is_a_400(learner_client, course):
    attempt_id = start(learner_client).json()["id"]
    for slug, fields in RIGHT.items():
        answer(learner_client, attempt_id, slug, **fields)
    before = QuizAttempt.objects.count()
    response = start(learner_client, mode="due")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "nothing_due"
    assert "due" in response.json()["error"]["message"]
    assert QuizAttempt.objects.count() == before


def test_unknown_mode_and_unknown_quiz(learner_client, course):
    response = start(learner_client, mode="some")
    assert response.status_code == 400
    assert "mode" in response.json()["error"]["fields"]
    assert start(learner_client, "nope").status_code == 404
    assert QuizAttempt.objects.count() == 0


# --- Answering ------------------------------------------------------------------------------------


def test_an_answer_is_graded_and_shows_the_key_it_earned(learner_client, course):
    attempt_id = start(learner_client).json()["id"]
    response = answer(learner_client, attempt_id, "pitfalls", choices=["a", "c"])
    assert response.status_code == 201
    body = response.json()
    ids = {key: choice_id(attempt_id, "pitfalls", key) for key in "abc"}
    assert body["question"] == "pitfalls"
    assert body["response"] == {"choices": sorted([ids["a"], ids["c"]])}
    assert (body["correct"], body["credit"]) == (False, 0.0)
    assert body["explanation"] == "Both slow the pipeline."
    shown = QuizAttempt.objects.get(pk=attempt_id).choice_ids_of(question_pk("pitfalls"))
    assert body["correct_answer"] == {
        "choices": [i for i in shown if i in (ids["a"], ids["b"])],
        "accepted_answers": [],
        "number": None,
        "tolerance": None,
    }
    assert (body["duplicate"], body["client_answer_id"]) == (False, None)
    assert body["attempt"] == {
        "id": attempt_id,
        "finished": False,
        "score": None,
        "answered_count": 1,
        "question_count": 4,
    }

    numeric = answer(learner_client, attempt_id, "batches", number=32).json()
    assert numeric["correct_answer"] == {"choices": [], "accepted_answers": [], "number": 32.0, "tolerance": 0.0}
    text = answer(learner_client, attempt_id, "format", text="parquet").json()
    assert text["correct_answer"]["accepted_answers"] == ["TFRecord", "Parquet"]


def bad_answers() -> list[tuple[str, dict[str, Any], int, str]]:
    return [
        ("overlap", {"choices": ["a"]}, 400, "choice"),
        ("overlap", {"text": "a"}, 400, "choice"),
        ("pitfalls", {"choice": "a"}, 400, "choices"),
        ("format", {"number": 1}, 400, "text"),
        ("batches", {"text": "32"}, 400, "number"),
        ("batches", {"number": "32"}, 400, "number"),
        ("batches", {"number": "NaN"}, 400, "number"),
        ("batches", {"number": "Infinity"}, 400, "number"),
        ("batches", {"number": True}, 400, "number"),
        ("overlap", {"choice": "z"}, 400, "choice"),
        ("overlap", {"choice": 1}, 400, "choice"),
        ("pitfalls", {"choices": ["a", "z"]}, 400, "choices"),
        ("pitfalls", {"choices": []}, 400, "choices"),
        ("pitfalls", {"choices": ["a", "a"]}, 400, "choices"),
        ("overlap", {}, 400, "non_field_errors"),
        ("overlap", {"choice": "a", "text": "a"}, 400, "non_field_errors"),
        ("nope", {"choice": "a"}, 400, "question"),
    ]


@pytest.mark.parametrize(("slug", "fields", "status", "field"), bad_answers(), ids=lambda v: json.dumps(v))
def test_a_refused_answer_changes_nothing(learner_client, course, slug, fields, status, field):
    attempt_id = start(learner_client, "short-quiz").json()["id"]  # batches and overlap
    if slug in ("format", "pitfalls"):
        attempt_id = start(learner_client).json()["id"]
    before = state()
    response = answer(learner_client, attempt_id, slug, **fields)
    assert response.status_code == status, response.json()
    assert field in response.json()["error"]["fields"], response.json()
    assert state() == before


def test_question_of_another_quiz_is_not_in_the_attempt(learner_client, course):
    attempt_id = start(learner_client, "short-quiz").json()["id"]
    before = state()
    response = answer(learner_client, attempt_id, "format", text="TFRecord")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "not_in_attempt"
    assert state() == before


def test_raw_nan_and_huge_numbers_are_refused(learner_client, course):
    attempt_id = start(learner_client).json()["id"]
    before = state()
    url = f"/api/v1/quiz-attempts/{attempt_id}/answers/"
    for raw in ('{"question": "batches", "number": NaN}', '{"question": "batches", "number": 1e999}'):
        response = learner_client.post(url, raw, content_type="application/json")
        assert response.status_code == 400, raw
    assert state() == before


def test_a_second_answer_is_a_409_and_changes_nothing(learner_client, course):
    attempt_id = start(learner_client).json()["id"]
    assert answer(learner_client, attempt_id, "overlap", choice="b").status_code == 201
    before = state()
    response = answer(learner_client, attempt_id, "overlap", choice="a")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "already_answered"
    assert state() == before
    assert QuizAnswer.objects.get().response == {"choice": choice_id(attempt_id, "overlap", "b")}


def test_an_answer_to_a_finished_attempt_is_a_409(learner_client, course):
    attempt_id = start(learner_client).json()["id"]
    assert learner_client.post(f"/api/v1/quiz-attempts/{attempt_id}/finish/").status_code == 200
    before = state()
    response = answer(learner_client, attempt_id, "overlap", choice="a")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "attempt_finished"
    again = learner_client.post(f"/api/v1/quiz-attempts/{attempt_id}/finish/")
    assert again.status_code == 409
    assert state() == before


@pytest.mark.parametrize("attempt_id", ["other", 999999, 2**63, 2**70])
def test_another_learners_or_a_missing_attempt_is_a_404(learner_client, course, attempt_id):
    _, other = make_learner("bob")
    others = start(other).json()["id"]
    target = others if attempt_id == "other" else attempt_id
    before = state()
    responses = [
        answer(learner_client, target, "overlap", choice="a"),
        learner_client.post(f"/api/v1/quiz-attempts/{target}/finish/"),
        learner_client.get(f"/api/v1/quiz-attempts/{target}/"),
    ]
    assert [r.status_code for r in responses] == [404, 404, 404]
    assert all(r.json()["error"]["code"] == "not_found" for r in responses)
    assert state() == before


# --- Finishing, resuming, listing -----------------------------------------------------------------


def test_answering_every_question_finishes_the_attempt(learner_client, course):
    attempt_id = start(learner_client).json()["id"]
    answers = {**RIGHT, "pitfalls": {"choices": ["a"]}}  # half credit on the last one
    bodies = [answer(learner_client, attempt_id, slug, **fields).json() for slug, fields in answers.items()]
    assert [body["attempt"]["finished"] for body in bodies] == [False, False, False, True]
    assert bodies[-1]["attempt"]["score"] == pytest.approx(3.5 / 4)
    attempt = QuizAttempt.objects.get(pk=attempt_id)
    assert attempt.finished_at is not None
    assert attempt.score == pytest.approx(0.875)


def test_finish_counts_unanswered_questions_as_zero(learner_client, course):
    attempt_id = start(learner_client).json()["id"]
    answer(learner_client, attempt_id, "overlap", choice="a")
    answer(learner_client, attempt_id, "pitfalls", choices=["b"])
    response = learner_client.post(f"/api/v1/quiz-attempts/{attempt_id}/finish/")
    assert response.status_code == 200
    body = response.json()
    assert body["score"] == pytest.approx(1.5 / 4)
    assert body["finished_at"] is not None
    assert body["answered_count"] == 2
    # Unanswered questions were not reviewed.
    assert set(QuestionMemory.objects.values_list("question__slug", flat=True)) == {"overlap", "pitfalls"}


def test_resume_shows_the_answers_so_far_with_their_grading(learner_client, course):
    started = start(learner_client).json()
    answer(learner_client, started["id"], "format", text="tf records")
    resumed = learner_client.get(f"/api/v1/quiz-attempts/{started['id']}/").json()
    assert resumed["questions"] == started["questions"]
    assert resumed["answered_count"] == 1
    (graded,) = resumed["answers"]
    assert graded["question"] == "format"
    assert graded["response"] == {"text": "tf records"}
    assert (graded["correct"], graded["credit"]) == (True, 1.0)
    assert graded["explanation"] == "TFRecord is TensorFlow's own record format."
    assert graded["correct_answer"]["accepted_answers"] == ["TFRecord", "Parquet"]


def test_attempt_list_is_the_learners_own_newest_first(learner_client, course):
    ids = [start(learner_client).json()["id"], start(learner_client, "short-quiz").json()["id"]]
    ids.append(start(learner_client).json()["id"])
    _, other = make_learner("bob")
    start(other)
    body = learner_client.get("/api/v1/quiz-attempts/").json()
    assert [a["id"] for a in body["results"]] == ids[::-1]
    filtered = learner_client.get(f"/api/v1/quiz-attempts/?quiz={QUIZ}").json()["results"]
    assert [a["id"] for a in filtered] == [ids[2], ids[0]]
    assert set(filtered[0]) == {
        "id",
        "quiz",
        "mode",
        "started_at",
        "finished_at",
        "score",
        "question_count",
        "answered_count",
    }
    assert Counter(a["quiz"] for a in body["results"]) == {QUIZ: 2, "short-quiz": 1}
