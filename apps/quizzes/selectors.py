"""Reads of quizzes and of a learner's attempts; another learner's attempt is as absent as a missing one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Count, Exists, F, IntegerField, OuterRef, Prefetch, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404

from apps.common.errors import NotFound
from apps.content.models import Choice, Lesson, Question, Quiz, QuizQuestion
from apps.quizzes.models import LessonAnswer, QuestionMemory, QuizAnswer, QuizAttempt

# Primary keys are 64-bit; a larger id in a URL is simply not found.
MAX_ID = 2**63 - 1


def _count(queryset: QuerySet[Any]) -> Coalesce:
    """A correlated COUNT(*) of `queryset` (already filtered on OuterRef), 0 when it is empty."""
    counted = queryset.order_by().annotate(_group=Value(1)).values("_group").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


@dataclass(frozen=True)
class LessonAnswerOutcome:
    """A stored answer given in place, as it is shown: on the board it was given on, with the question's due date."""

    answer: LessonAnswer
    question: Question
    board: QuizAttempt
    due: datetime | None
    duplicate: bool = False


def lesson_answer_board(answer: LessonAnswer, *, question: Question) -> QuizAttempt:
    """The board a stored answer was given on, from the ids it kept: its response and key read in those ids."""
    keys = answer.choice_keys if isinstance(answer.choice_keys, dict) else {}
    return QuizAttempt(
        question_ids=[question.pk], choice_orders={str(question.pk): sorted(keys)}, choice_keys={str(question.pk): keys}
    )


def lesson_answers_latest(*, learner: Any, lesson_slug: str) -> list[LessonAnswerOutcome]:
    """The learner's latest answer to each question of the lesson, in the lesson's order; a lesson not shown is a 404.

    A fixed number of queries whatever the lesson's size.
    """
    lesson = get_object_or_404(Lesson.objects.filter(archived=False, course__archived=False), slug=lesson_slug)
    rows = LessonAnswer.objects.filter(learner=learner, question__lesson=lesson, question__archived=False).order_by(
        "question_id", "-answered_at", "-pk"
    )
    # PostgreSQL reads one row per question; elsewhere every try is read and the first (latest) of each kept.
    if connection.features.can_distinct_on_fields:
        rows = rows.distinct("question_id")
    answers: dict[int, LessonAnswer] = {}
    for answer in rows.select_related("question").prefetch_related("question__choices"):
        answers.setdefault(answer.question_id, answer)
    due = dict(
        QuestionMemory.objects.filter(learner=learner, question_id__in=list(answers)).values_list("question_id", "due")
    )
    ordered = sorted(answers.values(), key=lambda answer: (answer.question.position, answer.question_id))
    return [
        LessonAnswerOutcome(
            answer=answer,
            question=answer.question,
            board=lesson_answer_board(answer, question=answer.question),
            due=due.get(answer.question_id),
        )
        for answer in ordered
    ]


def active_quiz_items(quiz: Any) -> QuerySet[QuizQuestion]:
    """The quiz's questions a learner can answer: archived questions are left out, in quiz order."""
    return QuizQuestion.objects.filter(quiz=quiz, question__archived=False).order_by("position")


def quizzes_list(*, learner: Any, now: datetime, lesson_slug: str | None = None) -> QuerySet[Quiz]:
    """Visible quizzes with their question count and the learner's best score, attempts and due questions."""
    attempts = QuizAttempt.objects.filter(learner=learner, quiz=OuterRef("pk"))
    items = QuizQuestion.objects.filter(quiz=OuterRef("pk"), question__archived=False)
    not_due = QuestionMemory.objects.filter(learner=learner, question=OuterRef("question"), due__gt=now)
    best = attempts.filter(finished_at__isnull=False).order_by(F("score").desc(nulls_last=True)).values("score")[:1]
    quizzes = (
        Quiz.objects.filter(archived=False, lesson__archived=False, lesson__course__archived=False)
        .select_related("lesson")
        .annotate(
            question_count=_count(items),
            due_count=_count(items.exclude(Exists(not_due))),
            attempt_count=_count(attempts),
            best_score=Subquery(best),
        )
        .order_by("lesson__course__title", "lesson__position", "position")
    )
    if lesson_slug:
        quizzes = quizzes.filter(lesson__slug=lesson_slug)
    return quizzes


def quiz_get(*, learner: Any, slug: str, now: datetime) -> Quiz:
    return get_object_or_404(quizzes_list(learner=learner, now=now), slug=slug)


def attempt_questions(attempt: QuizAttempt) -> list[Question]:
    """The attempt's questions in its own order, each with its choices (answer key included: serializers pick)."""
    shown = attempt.shown_question_ids()
    questions = Question.objects.filter(pk__in=[pk for pk in shown if 1 <= pk <= MAX_ID]).prefetch_related(
        Prefetch("choices", queryset=Choice.objects.order_by("position")), "accepted_answers"
    )
    by_id = {question.pk: question for question in questions}
    return [by_id[question_id] for question_id in shown if question_id in by_id]


def _learner_attempts(*, learner: Any) -> QuerySet[QuizAttempt]:
    return (
        QuizAttempt.objects.filter(learner=learner)
        .select_related("quiz")
        .annotate(answered_count=_count(QuizAnswer.objects.filter(attempt=OuterRef("pk"))))
        .order_by("-started_at", "-id")
    )


def attempts_list(*, learner: Any, quiz_slug: str | None = None) -> QuerySet[QuizAttempt]:
    """The learner's attempts, newest first."""
    attempts = _learner_attempts(learner=learner)
    if quiz_slug:
        attempts = attempts.filter(quiz__slug=quiz_slug)
    return attempts


def attempt_get(*, learner: Any, attempt_id: int) -> QuizAttempt:
    if not 1 <= attempt_id <= MAX_ID:
        raise NotFound(f"You have no quiz attempt {attempt_id}.")
    answers = QuizAnswer.objects.select_related("question").order_by("answered_at", "id")
    attempt = (
        _learner_attempts(learner=learner).prefetch_related(Prefetch("answers", queryset=answers)).filter(pk=attempt_id)
    ).first()
    if attempt is None:
        raise NotFound(f"You have no quiz attempt {attempt_id}.")
    return attempt
