"""Choices reach the learner only as random per-attempt ids: nothing in a response names the answer."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import pytest
from rest_framework.test import APIClient

from apps.content.models import Choice, Lesson, Question, QuestionKind, Quiz
from apps.quizzes.models import QuizAnswer, QuizAttempt
from tests.support.quizzes import answer, answer_raw, choice_id, start

pytestmark = pytest.mark.django_db

ATTEMPTS = 200
CHOICE_KINDS = (QuestionKind.SINGLE_CHOICE, QuestionKind.MULTIPLE_CHOICE)


def string_values(data: Any) -> list[str]:
    """Every string that is a whole JSON value (not a key) anywhere in a response body."""
    if isinstance(data, dict):
        return [text for value in data.values() for text in string_values(value)]
    if isinstance(data, list):
        return [text for item in data for text in string_values(item)]
    return [data] if isinstance(data, str) else []


class Recorder:
    """A learner's client that keeps every response body, to be scanned for authored keys at the end."""

    def __init__(self, client: APIClient) -> None:
        self.client = client
        self.bodies: list[Any] = []

    def keep(self, response: Any) -> Any:
        assert response.status_code < 500, response.content
        self.bodies.append(response.json())
        return response

    def get(self, url: str) -> Any:
        return self.keep(self.client.get(url))

    def post(self, url: str, body: dict[str, Any] | None = None) -> Any:
        return self.keep(self.client.post(url, body or {}, format="json"))

    def authored_keys_shown(self) -> set[str]:
        keys = set(Choice.objects.values_list("key", flat=True))
        return {text for body in self.bodies for text in string_values(body) if text in keys}


def quizzes_covering_every_choice_question() -> list[str]:
    wanted = set(Question.objects.filter(kind__in=CHOICE_KINDS, archived=False).values_list("pk", flat=True))
    chosen: list[str] = []
    for quiz in sorted(Quiz.objects.all(), key=lambda quiz: -quiz.items.filter(question__in=wanted).count()):
        covers = set(quiz.items.values_list("question_id", flat=True)) & wanted
        if covers:
            chosen.append(quiz.slug)
            wanted -= covers
    assert not wanted, f"no quiz asks {wanted}"
    return chosen


def test_choice_ids_never_repeat_and_the_correct_choice_is_anywhere(learner_client, shipped_course):
    recorder = Recorder(learner_client)
    ids_seen: Counter[str] = Counter()
    # question slug -> authored correct key -> position it was shown at -> attempts
    positions: dict[str, dict[str, Counter[int]]] = defaultdict(lambda: defaultdict(Counter))
    correct_keys = {
        (choice.question.slug, choice.key)
        for choice in Choice.objects.filter(is_correct=True, question__kind__in=CHOICE_KINDS).select_related("question")
    }
    for quiz in quizzes_covering_every_choice_question():
        for _ in range(ATTEMPTS):
            body = recorder.post(f"/api/v1/quizzes/{quiz}/attempts/").json()
            attempt = QuizAttempt.objects.get(pk=body["id"])
            for question in body["questions"]:
                for position, choice in enumerate(question["choices"]):
                    ids_seen[choice["key"]] += 1
                    key = attempt.choice_key_of(question["id"], choice["key"])
                    if (question["slug"], key) in correct_keys:
                        positions[question["slug"]][str(key)][position] += 1

    assert {slug for slug, _ in correct_keys} == set(positions)
    assert ids_seen.most_common(1)[0][1] == 1
    for slug, by_key in positions.items():
        for key, counts in by_key.items():
            assert sum(counts.values()) >= ATTEMPTS
            # Shuffled fairly, a correct choice sits at each of its question's 4 places about a quarter of the time.
            assert max(counts.values()) <= sum(counts.values()) / 2, (slug, key, counts)
            assert len(counts) > 1, (slug, key, counts)
    assert recorder.authored_keys_shown() == set()


def test_no_learner_response_names_an_authored_key(learner_client, shipped_course):
    """Attempts, answers with their feedback, resuming, finishing, lists, questions and lessons."""
    recorder = Recorder(learner_client)
    attempts = []
    for quiz in Quiz.objects.values_list("slug", flat=True):
        attempt = recorder.post(f"/api/v1/quizzes/{quiz}/attempts/").json()
        attempts.append(attempt["id"])
        for index, question in enumerate(attempt["questions"]):
            url = f"/api/v1/quiz-attempts/{attempt['id']}/answers/"
            shown = [choice["key"] for choice in question["choices"]]
            if question["kind"] == QuestionKind.SINGLE_CHOICE:
                recorder.post(url, {"question": question["slug"], "choice": shown[index % len(shown)]})
            elif question["kind"] == QuestionKind.MULTIPLE_CHOICE:
                recorder.post(url, {"question": question["slug"], "choices": shown[: 1 + index % len(shown)]})
            elif question["kind"] == QuestionKind.SHORT_TEXT:
                recorder.post(url, {"question": question["slug"], "text": "no idea"})
            if index == 2:
                recorder.get(f"/api/v1/quiz-attempts/{attempt['id']}/")
        recorder.get(f"/api/v1/quiz-attempts/{attempt['id']}/")
    half_done = recorder.post(f"/api/v1/quizzes/{Quiz.objects.values_list('slug', flat=True)[0]}/attempts/").json()
    recorder.get(f"/api/v1/quiz-attempts/{half_done['id']}/")
    recorder.post(f"/api/v1/quiz-attempts/{half_done['id']}/finish/")
    recorder.get("/api/v1/quiz-attempts/?page_size=100")
    recorder.get("/api/v1/quizzes/")
    for slug in Question.objects.values_list("slug", flat=True):
        recorder.get(f"/api/v1/questions/{slug}/")
    for slug in Lesson.objects.values_list("slug", flat=True):
        recorder.get(f"/api/v1/lessons/{slug}/")

    assert QuizAnswer.objects.filter(question__kind__in=CHOICE_KINDS).count() >= 12
    assert any("correct_answer" in body for body in recorder.bodies)
    assert recorder.authored_keys_shown() == set()


@pytest.mark.parametrize(
    ("slug", "fields", "field"),
    [
        ("overlap", {"choice": "a"}, "choice"),
        ("overlap", {"choice": "b"}, "choice"),
        ("pitfalls", {"choices": ["a", "b"]}, "choices"),
        ("pitfalls", {"choices": ["a"]}, "choices"),
    ],
)
def test_an_authored_key_is_refused_and_changes_nothing(learner_client, course, slug, fields, field):
    attempt_id = start(learner_client).json()["id"]
    before = list(QuizAnswer.objects.values_list("pk", flat=True))
    response = answer_raw(learner_client, attempt_id, slug, **fields)
    assert response.status_code == 400, response.json()
    assert response.json()["error"]["code"] == "invalid"
    assert field in response.json()["error"]["fields"]
    assert list(QuizAnswer.objects.values_list("pk", flat=True)) == before
    # The same choices by the attempt's ids are taken.
    assert answer(learner_client, attempt_id, slug, **fields).status_code == 201


def test_an_id_of_another_attempt_or_question_is_refused(learner_client, course):
    first, second = (start(learner_client).json()["id"] for _ in range(2))
    others: list[tuple[str, dict[str, Any]]] = [
        ("overlap", {"choice": choice_id(first, "overlap", "a")}),
        ("overlap", {"choice": choice_id(second, "pitfalls", "a")}),
        ("pitfalls", {"choices": [choice_id(second, "pitfalls", "a"), choice_id(first, "pitfalls", "b")]}),
    ]
    for slug, fields in others:
        response = answer_raw(learner_client, second, slug, **fields)
        assert response.status_code == 400, (slug, fields, response.json())
    assert not QuizAnswer.objects.exists()


def test_a_resumed_attempt_shows_the_same_ids_and_grades_by_them(learner_client, course):
    started = start(learner_client).json()
    resumed = learner_client.get(f"/api/v1/quiz-attempts/{started['id']}/").json()
    assert resumed["questions"] == started["questions"]
    overlap = next(q for q in resumed["questions"] if q["slug"] == "overlap")
    right = choice_id(started["id"], "overlap", "a")
    assert right in [choice["key"] for choice in overlap["choices"]]
    assert right != "a"

    body = answer_raw(learner_client, started["id"], "overlap", choice=right).json()
    assert (body["correct"], body["response"], body["correct_answer"]["choices"]) == (True, {"choice": right}, [right])
    again = learner_client.get(f"/api/v1/quiz-attempts/{started['id']}/").json()
    assert again["questions"] == started["questions"]
    assert again["answers"][0]["correct_answer"]["choices"] == [right]
