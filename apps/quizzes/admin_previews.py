"""The admin's question preview: a question as a learner sees it; trying an answer grades it and records nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib import admin
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse

from apps.common.errors import DomainError
from apps.content.choice_ids import BOARD_NONCE, board_nonce_draw
from apps.content.models import Choice, Question, QuestionKind
from apps.content.previews import PreviewAdmin, preview_context
from apps.quizzes.choices import question_board
from apps.quizzes.grading import Grade
from apps.quizzes.models import QuizAttempt
from apps.quizzes.serializers import CorrectAnswerOutput, QuestionOutput
from apps.quizzes.services import AnswerData, answer_grade


@dataclass
class TriedAnswer:
    """A graded try, shown with what the learner sees once they have answered."""

    grade: Grade
    picked: list[str]
    correct_choices: list[str]
    accepted_answers: list[str]
    number: float | None
    tolerance: float | None

    @property
    def credit(self) -> str:
        """0-1 as short as it goes: "1", "0.5", "0.33"."""
        return f"{round(self.grade.credit, 2):g}"


def question_preview_view(model_admin: admin.ModelAdmin, request: HttpRequest, object_id: int) -> HttpResponse:
    question = get_object_or_404(
        Question.objects.select_related("lesson__course").prefetch_related(
            Prefetch("choices", queryset=Choice.objects.order_by("position")), "accepted_answers"
        ),
        pk=object_id,
    )
    context = preview_context(model_admin, request, question)
    status = 200
    tried: TriedAnswer | None = None
    error = ""
    given: dict[str, Any] = {}
    if request.method == "POST":
        nonce = request.POST.get("board", "")
        if not BOARD_NONCE.fullmatch(nonce):
            # The choice ids cannot be read back without it: draw a new board and say so.
            nonce, error, status = board_nonce_draw(), "The form was incomplete; try again.", 400
        board = question_board(question=question, nonce=nonce)
        if not error:
            given = _answer_fields(request, question)
            try:
                tried = _try_answer(board, question, given)
            except DomainError as exc:
                error, status = exc.message, exc.status_code
    else:
        nonce = board_nonce_draw()
        board = question_board(question=question, nonce=nonce)
    context |= {
        "question": QuestionOutput(question, context={"attempt": board}).data,
        "board": nonce,
        "given": given,
        "tried": tried,
        "error": error,
        "explanation": question.explanation if tried else "",
    }
    return TemplateResponse(request, "admin/content/question/preview.html", context, status=status)


def _answer_fields(request: HttpRequest, question: Question) -> dict[str, Any]:
    """The answer as the learner API takes it: one field, named by the question's kind."""
    if question.kind == QuestionKind.SINGLE_CHOICE:
        choice = request.POST.get("choice")
        return {"choice": choice} if choice else {}
    if question.kind == QuestionKind.MULTIPLE_CHOICE:
        return {"choices": request.POST.getlist("choices")}
    if question.kind == QuestionKind.SHORT_TEXT:
        return {"text": request.POST.get("text", "")}
    return {"number": request.POST.get("number", "").strip()}


def _try_answer(board: QuizAttempt, question: Question, given: dict[str, Any]) -> TriedAnswer:
    fields = dict(given)
    if "number" in fields:
        try:
            fields["number"] = float(fields["number"])
        except ValueError:
            raise DomainError("Enter a number.", fields={"number": ["Enter a number."]}) from None
    _, grade = answer_grade(attempt=board, question=question, answer=AnswerData(question=question.slug, **fields))
    correct = CorrectAnswerOutput(question, context={"attempt": board}).data
    texts = {choice.key: choice.text for choice in question.choices.all()}

    def text_of(choice_id: str) -> str:
        return texts.get(board.choice_key_of(question.pk, choice_id) or "", choice_id)

    picked = [given["choice"]] if "choice" in given else list(given.get("choices", []))
    return TriedAnswer(
        grade=grade,
        picked=[text_of(choice_id) for choice_id in picked],
        correct_choices=[text_of(choice_id) for choice_id in correct["choices"]],
        accepted_answers=list(correct["accepted_answers"]),
        number=correct["number"],
        tolerance=correct["tolerance"],
    )


class QuestionPreviewAdmin(PreviewAdmin):
    def preview_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        return question_preview_view(self, request, object_id)
