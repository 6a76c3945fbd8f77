"""Taking a quiz as the tests do, on the minimal course whose quiz has a question of every kind."""

from __future__ import annotations

from typing import Any

from rest_framework.test import APIClient

from apps.content.models import Question
from apps.quizzes.models import QuestionMemory, QuizAnswer, QuizAttempt
from apps.srs.models import ReviewLog

# The minimal course's quiz: overlap (single choice), format (short text), batches (numeric) and
# pitfalls (multiple choice: a and b correct, c wrong).
QUIZ = "first-quiz"
RIGHT: dict[str, dict[str, Any]] = {
    "overlap": {"choice": "a"},
    "format": {"text": "TFRecord"},
    "batches": {"number": 32},
    "pitfalls": {"choices": ["a", "b"]},
}
WRONG: dict[str, dict[str, Any]] = {
    "overlap": {"choice": "b"},
    "format": {"text": "CSV"},
    "batches": {"number": 31},
    "pitfalls": {"choices": ["c"]},
}


def start(client: APIClient, quiz: str = QUIZ, **body: Any) -> Any:
    return client.post(f"/api/v1/quizzes/{quiz}/attempts/", body, format="json")


def answer(client: APIClient, attempt_id: int, question: str, **fields: Any) -> Any:
    """Answer naming choices by their authored keys, sent as the attempt's ids (a key it lacks goes as it is)."""
    return answer_raw(client, attempt_id, question, **as_ids(attempt_id, question, fields))


def answer_raw(client: APIClient, attempt_id: int, question: str, **fields: Any) -> Any:
    return client.post(f"/api/v1/quiz-attempts/{attempt_id}/answers/", {"question": question, **fields}, format="json")


def choice_id(attempt_id: int, question_slug: str, key: str) -> str:
    """The attempt's id for an authored choice key; the key itself when the attempt has none for it."""
    attempt = QuizAttempt.objects.filter(pk=attempt_id).first()
    found = Question.objects.filter(slug=question_slug).first()
    if attempt is None or found is None:
        return key
    return attempt.choice_id_of(found.pk, key) or key


def as_ids(attempt_id: int, question_slug: str, fields: dict[str, Any]) -> dict[str, Any]:
    translated = dict(fields)
    if isinstance(fields.get("choice"), str):
        translated["choice"] = choice_id(attempt_id, question_slug, fields["choice"])
    if isinstance(fields.get("choices"), list):
        translated["choices"] = [
            choice_id(attempt_id, question_slug, key) if isinstance(key, str) else key for key in fields["choices"]
        ]
    return translated


def question(slug: str) -> Question:
    return Question.objects.get(slug=slug)


def state() -> dict[str, Any]:
    """Everything an answer can change."""
    return {
        "answers": list(QuizAnswer.objects.order_by("pk").values_list("pk", "credit")),
        "memories": list(QuestionMemory.objects.order_by("pk").values_list("pk", "reps", "due")),
        "reviews": ReviewLog.objects.count(),
        "attempts": list(QuizAttempt.objects.order_by("pk").values_list("pk", "finished_at", "score")),
    }


# --- Quizzes --------------------------------------------------------------------------------------
