"""Quiz endpoints: browse quizzes, take them attempt by attempt, and resume an attempt."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.common.fields import CleanSlugField
from apps.common.pagination import PageQuery
from apps.common.query import query_params_validate
from apps.common.schema import error_statuses
from apps.quizzes.models import QuizAttempt
from apps.quizzes.selectors import (
    attempt_get,
    attempt_questions,
    attempts_list,
    lesson_answers_latest,
    quiz_get,
    quizzes_list,
)
from apps.quizzes.serializers import (
    AnswerInput,
    AnswerOutput,
    AttemptOutput,
    AttemptStartInput,
    AttemptSummaryOutput,
    LessonAnswerInput,
    LessonAnswerOutput,
    LessonAnswersOutput,
    QuizOutput,
)
from apps.quizzes.services import AnswerData, answer_submit, attempt_finish, attempt_start, lesson_answer_submit


def _attempt_data(attempt: QuizAttempt, *, learner: Any) -> dict[str, Any]:
    # Read back through the selector, so a new or just-finished attempt has the same shape as a resumed one.
    fresh = attempt_get(learner=learner, attempt_id=attempt.pk)
    return dict(AttemptOutput(fresh, context={"attempt_questions": attempt_questions(fresh)}).data)


class QuizListView(ListAPIView):
    serializer_class = QuizOutput

    @extend_schema(
        summary="Quizzes, with your best score, attempt count and how many questions are due for you",
        parameters=[OpenApiParameter("lesson", str, description="Only this lesson's quizzes (its slug).")],
    )
    def get(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().get(request, *args, **kwargs)

    class Query(PageQuery):
        lesson = CleanSlugField(required=False)

    def get_queryset(self) -> QuerySet[Any]:
        params = query_params_validate(query_params=self.request.query_params, serializer_class=self.Query)
        return quizzes_list(learner=self.request.user, now=timezone.now(), lesson_slug=params.get("lesson"))


class QuizDetailView(APIView):
    @extend_schema(summary="A quiz, with your best score and attempt count", responses=QuizOutput)
    def get(self, request: Request, slug: str) -> Response:
        return Response(QuizOutput(quiz_get(learner=request.user, slug=slug, now=timezone.now())).data)


class AttemptCreateView(APIView):
    @extend_schema(
        summary="Start an attempt: the questions in a shuffled order, without their answers",
        request=AttemptStartInput,
        responses={201: AttemptOutput},
        description=(
            "mode 'all' (the default) asks every question in a random order; mode 'due' asks only the "
            "questions due for you or never answered, the most overdue first, and is a 400 (nothing_due) "
            "when there are none. Choice order is shuffled too, each choice behind a random id, both kept for the "
            "attempt."
        ),
    )
    def post(self, request: Request, slug: str) -> Response:
        body = AttemptStartInput(data=request.data)
        body.is_valid(raise_exception=True)
        attempt = attempt_start(
            learner=request.user, quiz_slug=slug, mode=body.validated_data["mode"], now=timezone.now()
        )
        return Response(_attempt_data(attempt, learner=request.user), status=status.HTTP_201_CREATED)


class AttemptListView(ListAPIView):
    serializer_class = AttemptSummaryOutput

    @extend_schema(
        summary="Your quiz attempts, newest first",
        parameters=[OpenApiParameter("quiz", str, description="Only attempts at this quiz (its slug).")],
    )
    def get(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().get(request, *args, **kwargs)

    class Query(PageQuery):
        quiz = CleanSlugField(required=False)

    def get_queryset(self) -> QuerySet[Any]:
        params = query_params_validate(query_params=self.request.query_params, serializer_class=self.Query)
        return attempts_list(learner=self.request.user, quiz_slug=params.get("quiz"))


class AttemptDetailView(APIView):
    @extend_schema(
        summary="Resume an attempt: its questions in order, and the answers so far with their grading",
        responses=AttemptOutput,
    )
    def get(self, request: Request, attempt_id: int) -> Response:
        attempt = attempt_get(learner=request.user, attempt_id=attempt_id)
        return Response(AttemptOutput(attempt, context={"attempt_questions": attempt_questions(attempt)}).data)


class AnswerCreateView(APIView):
    @extend_schema(
        summary="Answer one question of the attempt; the server grades it and shows the answer key",
        request=AnswerInput,
        responses={201: AnswerOutput},
        description=(
            "Send question (its slug) and the one field of its kind: choice (single_choice), choices "
            "(multiple_choice), text (short_text) or number (numeric). Choices are named by the ids the "
            "attempt shows; an authored key is refused. One answer per question: a second is a 409 "
            "(already_answered), as is an answer to a finished attempt (attempt_finished). With "
            "client_answer_id, the same answer sent again gets its first result with duplicate true, and the "
            "same id with a different attempt, question or response is a 409 (idempotency_key_reused). The "
            "answer schedules the question for review and reviews each card it tests."
        ),
    )
    @error_statuses(409, retry_after=(409,))
    def post(self, request: Request, attempt_id: int) -> Response:
        body = AnswerInput(data=request.data)
        body.is_valid(raise_exception=True)
        outcome = answer_submit(learner=request.user, attempt_id=attempt_id, answer=AnswerData(**body.validated_data))
        return Response(
            AnswerOutput(outcome).data, status=status.HTTP_200_OK if outcome.duplicate else status.HTTP_201_CREATED
        )


class AttemptFinishView(APIView):
    @extend_schema(
        summary="Finish an attempt and save its score; unanswered questions count 0",
        request=None,
        responses={200: AttemptOutput},
        description="409 (attempt_finished) when it is already finished.",
    )
    @error_statuses(409)
    def post(self, request: Request, attempt_id: int) -> Response:
        attempt = attempt_finish(learner=request.user, attempt_id=attempt_id)
        return Response(_attempt_data(attempt, learner=request.user))


class LessonAnswersView(APIView):
    @extend_schema(
        summary="Your latest answer to each of a lesson's questions, to show them answered again",
        responses=LessonAnswersOutput,
        description="Each in the shape of an answer's result, on the board it was given on: its response, the key "
        "and each choice named by that board's ids (choices). A question never answered is left out; an unknown "
        "or archived lesson is a 404.",
    )
    def get(self, request: Request, slug: str) -> Response:
        answers = lesson_answers_latest(learner=request.user, lesson_slug=slug)
        return Response(LessonAnswersOutput({"lesson": slug, "answers": answers}).data)


class QuestionAnswerCreateView(APIView):
    @extend_schema(
        summary="Answer a question in place, where its lesson shows it; the server grades it and shows the answer key",
        request=LessonAnswerInput,
        responses={201: LessonAnswerOutput, 200: LessonAnswerOutput},
        description=(
            "Send the one field of the question's kind: choice (single_choice), choices (multiple_choice), text "
            "(short_text) or number (numeric). Choices are named by the ids the question was shown with, and come "
            "with that response's board; an authored key is refused. Graded by the same rules as a quiz answer, "
            "and answered in the same shape. Stored: every answer is kept (what was sent, its grade and when), "
            "however often the question is tried. Scheduling: as a quiz answer does, an answer to a question that "
            "is new to you or due for review schedules it for review and reviews each card it tests (scheduled "
            "true); an answer while it is scheduled for later, such as another try after seeing the answer key, "
            "is kept as practice and changes no schedule (scheduled false). With client_answer_id, the same "
            "answer sent again gets its first result with duplicate true (200), and the same id with a different "
            "question or response is a 409 (idempotency_key_reused). A refused answer (400) changes nothing; an "
            "unknown or archived question is a 404."
        ),
    )
    @error_statuses(409)
    def post(self, request: Request, slug: str) -> Response:
        body = LessonAnswerInput(data=request.data)
        body.is_valid(raise_exception=True)
        fields = dict(body.validated_data)
        board = fields.pop("board", None)
        outcome = lesson_answer_submit(
            learner=request.user, question_slug=slug, board=board, answer=AnswerData(question=slug, **fields)
        )
        return Response(
            LessonAnswerOutput(outcome).data,
            status=status.HTTP_200_OK if outcome.duplicate else status.HTTP_201_CREATED,
        )
