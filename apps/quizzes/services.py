"""Starting quiz attempts, grading answers into the learner's memory, and finishing attempts."""

from __future__ import annotations

import math
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils import timezone

from apps.common.errors import Conflict, DomainError, IdempotencyKeyReused, NotFound
from apps.content.choice_ids import BOARD_NONCE
from apps.content.models import Question, QuestionKind
from apps.content.selectors import question_get, visible_card_ids
from apps.quizzes import grading
from apps.quizzes.choices import choice_ids_draw, question_board
from apps.quizzes.models import AttemptMode, LessonAnswer, QuestionMemory, QuizAnswer, QuizAttempt
from apps.quizzes.selectors import MAX_ID, LessonAnswerOutcome, active_quiz_items, lesson_answer_board, quiz_get
from apps.srs.core import scheduling
from apps.srs.core.scheduling import MemoryState, Rating, SchedulerConfig
from apps.srs.models import CardMemory, ReviewSource
from apps.srs.reviews.memory import memory_state_of, memory_state_store
from apps.srs.reviews.services import ReviewInput, reviews_submit
from apps.srs.settings.services import review_scheduling_ensure

# client_review_id of a card review made by a quiz answer: uuid5 of this namespace and
# "quiz:{attempt}:{question}:{card}" ("lesson:{lesson answer}:{question}:{card}" for an answer given
# in place), so a retried answer can never review a card twice.
QUIZ_REVIEW_NAMESPACE = uuid.UUID("6f0f1c52-3f55-5b8e-9a51-2e0b8f7c4d10")
DEFAULT_CARD_RATINGS = {"correct": int(Rating.GOOD), "partial": int(Rating.HARD), "wrong": int(Rating.AGAIN)}
# The question itself is scheduled the same way: a miss comes back soonest.
QUESTION_RATINGS = {"correct": Rating.GOOD, "partial": Rating.HARD, "wrong": Rating.AGAIN}
# A settings row or memory row created by two first answers at once: the loser retries.
_WRITE_ATTEMPTS = 3

_CHOICE_KINDS = (QuestionKind.SINGLE_CHOICE, QuestionKind.MULTIPLE_CHOICE)
_ANSWER_FIELD = {
    QuestionKind.SINGLE_CHOICE: "choice",
    QuestionKind.MULTIPLE_CHOICE: "choices",
    QuestionKind.SHORT_TEXT: "text",
    QuestionKind.NUMERIC: "number",
}


class NothingDue(DomainError):
    code = "nothing_due"


class QuizEmpty(DomainError):
    code = "quiz_empty"


class AnswerInvalid(DomainError):
    code = "invalid"


class AlreadyAnswered(Conflict):
    code = "already_answered"


class AttemptFinished(Conflict):
    code = "attempt_finished"


class QuestionNotInAttempt(DomainError):
    code = "not_in_attempt"


@dataclass(frozen=True)
class AnswerData:
    """One answer as sent: the question's slug, exactly one of the four answer fields, and maybe the client's id.

    Choices are named by the ids the attempt shows, never by their authored keys.
    """

    question: str
    choice: str | None = None
    choices: list[str] | None = None
    text: str | None = None
    number: float | None = None
    client_answer_id: uuid.UUID | None = None

    def given(self) -> dict[str, Any]:
        return {
            name: value
            for name, value in (
                ("choice", self.choice),
                ("choices", self.choices),
                ("text", self.text),
                ("number", self.number),
            )
            if value is not None
        }

    def response(self) -> dict[str, Any]:
        """The answer as it is stored and compared with a replay: the picked ids of `choices` in one order."""
        return {name: sorted(value) if name == "choices" else value for name, value in self.given().items()}


@dataclass(frozen=True)
class AnswerOutcome:
    answer: QuizAnswer
    question: Question
    attempt: QuizAttempt
    answered_count: int
    duplicate: bool = False


def card_ratings() -> dict[str, int]:
    """QUIZ_CARD_RATINGS over the defaults; each must be a rating from 1 (Again) to 4 (Easy)."""
    ratings = {**DEFAULT_CARD_RATINGS, **getattr(settings, "QUIZ_CARD_RATINGS", {})}
    for outcome, rating in ratings.items():
        if rating not in {r.value for r in Rating}:
            raise ValueError(f"QUIZ_CARD_RATINGS[{outcome!r}] must be 1-4, not {rating!r}")
    return ratings


# --- Starting ------------------------------------------------------------------------------------


def attempt_start(*, learner: Any, quiz_slug: str, mode: str, now: datetime) -> QuizAttempt:
    """A new attempt with its question and choice order drawn now, from the system's random source."""
    quiz = quiz_get(learner=learner, slug=quiz_slug, now=now)
    questions = [
        item.question
        for item in active_quiz_items(quiz).select_related("question").prefetch_related("question__choices")
    ]
    if not questions:
        raise QuizEmpty(f"The quiz {quiz.slug!r} has no questions to answer yet.")
    rng = secrets.SystemRandom()
    if mode == AttemptMode.DUE:
        questions = _due_first(learner=learner, questions=questions, now=now, rng=rng)
    else:
        rng.shuffle(questions)
    choice_orders: dict[str, list[str]] = {}
    choice_keys: dict[str, dict[str, str]] = {}
    for question in questions:
        if question.kind in _CHOICE_KINDS:
            drawn = choice_ids_draw(keys=[choice.key for choice in question.choices.all()])
            choice_orders[str(question.pk)] = [choice_id for choice_id, _ in drawn]
            choice_keys[str(question.pk)] = dict(drawn)
    return QuizAttempt.objects.create(
        learner=learner,
        quiz=quiz,
        mode=mode,
        question_ids=[question.pk for question in questions],
        choice_orders=choice_orders,
        choice_keys=choice_keys,
        started_at=now,
    )


def _due_first(*, learner: Any, questions: list[Question], now: datetime, rng: secrets.SystemRandom) -> list[Question]:
    """Due questions, most overdue first, then the never-answered ones in random order."""
    due_at = dict(
        QuestionMemory.objects.filter(learner=learner, question__in=questions).values_list("question_id", "due")
    )
    due = sorted((q for q in questions if q.pk in due_at and due_at[q.pk] <= now), key=lambda q: due_at[q.pk])
    new = [q for q in questions if q.pk not in due_at]
    rng.shuffle(new)
    if not due and not new:
        next_due = min(due_at.values())
        raise NothingDue(
            f"Nothing in this quiz is due: you have answered every question and the next one is due at "
            f"{next_due.isoformat()}. Take the whole quiz with mode 'all' instead."
        )
    return due + new


# --- Answering -----------------------------------------------------------------------------------


def _locked_attempt(*, learner: Any, attempt_id: int, open_only: bool = True) -> QuizAttempt:
    """The learner's attempt, locked so its answers and its finish happen one at a time."""
    attempt = (
        QuizAttempt.objects.select_for_update().filter(learner=learner, pk=attempt_id).first()
        if 1 <= attempt_id <= MAX_ID
        else None
    )
    if attempt is None:
        raise NotFound(f"You have no quiz attempt {attempt_id}.")
    if open_only:
        _check_open(attempt)
    return attempt


def _check_open(attempt: QuizAttempt) -> None:
    if attempt.finished_at is not None:
        raise AttemptFinished(f"Attempt {attempt.pk} is finished; start a new attempt to answer again.")


def _replay(*, learner: Any, attempt: QuizAttempt, answer: AnswerData) -> AnswerOutcome | None:
    """The first result of an answer already recorded under this client id, or None when the id is new.

    The id means one answer: sent again with another attempt, question or response, it is refused,
    before any grading, so a refusal says nothing about whether the new response was right.
    """
    if answer.client_answer_id is None:
        return None
    first = (
        QuizAnswer.objects.filter(learner=learner, client_answer_id=answer.client_answer_id)
        .select_related("question")
        .first()
    )
    if first is None:
        return None
    if (first.attempt_id, first.question.slug, _comparable(first.response)) != (
        attempt.pk,
        answer.question,
        _comparable(answer.response()),
    ):
        raise IdempotencyKeyReused(
            f"client_answer_id {answer.client_answer_id} was already used for another answer; "
            "send a new id with each new answer.",
            fields={"client_answer_id": ["Already used for a different answer."]},
        )
    question = Question.objects.filter(pk=first.question_id).prefetch_related("choices", "accepted_answers").get()
    answered = QuizAnswer.objects.filter(attempt=attempt).count()
    return AnswerOutcome(answer=first, question=question, attempt=attempt, answered_count=answered, duplicate=True)


def _comparable(response: Any) -> Any:
    # jsonb may give a whole float back as an integer (1e23 as 100000000000000000000000): numbers
    # compare as floats, so a faithful retry of a numeric answer is the same answer.
    if isinstance(response, dict) and isinstance(response.get("number"), int | float):
        return {**response, "number": float(response["number"])}
    return response


def answer_submit(*, learner: Any, attempt_id: int, answer: AnswerData) -> AnswerOutcome:
    """Grade one answer and record it with everything it changes, all in one transaction.

    The attempt row is locked first, so two answers to one attempt are taken one after the other;
    the answer's unique constraint stands behind that. A refused answer changes nothing. An answer
    sent again with its client_answer_id gets its first result, even once the attempt is finished.
    """
    with transaction.atomic():
        attempt = _locked_attempt(learner=learner, attempt_id=attempt_id, open_only=False)
        replayed = _replay(learner=learner, attempt=attempt, answer=answer)
        if replayed is not None:
            return replayed
        _check_open(attempt)
        question = (
            Question.objects.filter(slug=answer.question, pk__in=attempt.shown_question_ids())
            .prefetch_related("choices", "accepted_answers", "cards")
            .first()
        )
        if question is None:
            raise QuestionNotInAttempt(
                f"Question {answer.question!r} is not part of attempt {attempt_id}.",
                fields={"question": ["Answer one of the attempt's questions."]},
            )
        if QuizAnswer.objects.filter(attempt=attempt, question=question).exists():
            raise AlreadyAnswered(f"Question {question.slug!r} is already answered in attempt {attempt_id}.")
        response, grade = answer_grade(attempt=attempt, question=question, answer=answer)
        now = timezone.now()
        try:
            with transaction.atomic():
                row = QuizAnswer.objects.create(
                    attempt=attempt,
                    learner=learner,
                    question=question,
                    client_answer_id=answer.client_answer_id,
                    response=response,
                    correct=grade.correct,
                    credit=grade.credit,
                    answered_at=now,
                )
        except IntegrityError as exc:
            # The attempt lock keeps a second answer to the question out; what can still collide is
            # the same client id sent at once to two attempts, and the first of them has committed.
            replayed = _replay(learner=learner, attempt=attempt, answer=answer)
            if replayed is not None:
                return replayed
            raise AlreadyAnswered(f"Question {question.slug!r} is already answered in attempt {attempt_id}.") from exc
        _question_review(
            learner=learner,
            question_id=question.pk,
            rating=QUESTION_RATINGS[grade.outcome],
            now=now,
            fuzz_seed=f"quiz:{attempt.pk}:{question.pk}",
        )
        _card_reviews(
            learner=learner, review_key=f"quiz:{attempt.pk}", question=question, outcome=grade.outcome, now=now
        )
        answered = QuizAnswer.objects.filter(attempt=attempt).count()
        if answered >= attempt.question_count:
            _finish(attempt, now=now)
    return AnswerOutcome(answer=row, question=question, attempt=attempt, answered_count=answered)


def answer_grade(
    *, attempt: QuizAttempt, question: Question, answer: AnswerData
) -> tuple[dict[str, Any], grading.Grade]:
    """What to store of the answer and its grade; a 400 when the answer does not fit the question. Writes nothing.

    Choices come as the attempt's ids and are graded by the authored keys behind them; an authored
    key sent as it is names no choice.
    """
    expected = _ANSWER_FIELD[QuestionKind(question.kind)]
    given = answer.given()
    if list(given) != [expected]:
        raise AnswerInvalid(
            f"A {question.kind} question is answered with {expected!r}, and only with it.",
            fields={expected: [f"Send {expected!r} for this {question.kind} question."]},
        )
    response = answer.response()
    keys = {choice.key for choice in question.choices.all()}
    correct_keys = {choice.key for choice in question.choices.all() if choice.is_correct}

    def key_of(choice_id: str) -> str | None:
        key = attempt.choice_key_of(question.pk, choice_id)
        return key if key in keys else None

    if question.kind == QuestionKind.SINGLE_CHOICE:
        choice = str(answer.choice)
        key = key_of(choice)
        if key is None:
            raise AnswerInvalid(
                f"No choice {choice!r} in this question of the attempt.",
                fields={"choice": ["Unknown choice: send one of the ids the attempt shows for this question."]},
            )
        return response, grading.grade_single_choice(key, correct_keys)
    if question.kind == QuestionKind.MULTIPLE_CHOICE:
        picked = list(answer.choices or [])
        unknown = sorted({choice_id for choice_id in picked if key_of(choice_id) is None})
        if unknown:
            raise AnswerInvalid(
                f"No choice {', '.join(map(repr, unknown))} in this question of the attempt.",
                fields={"choices": [f"Unknown choice {choice_id!r}." for choice_id in unknown]},
            )
        if not picked or len(set(picked)) != len(picked):
            raise AnswerInvalid(
                "Pick at least one choice, each once.", fields={"choices": ["At least one id, none repeated."]}
            )
        picked_keys = {key for key in map(key_of, picked) if key is not None}
        return response, grading.grade_multiple_choice(picked_keys, correct_keys)
    if question.kind == QuestionKind.SHORT_TEXT:
        accepted = [accepted.text for accepted in question.accepted_answers.all()]
        return response, grading.grade_short_text(str(answer.text), accepted)
    number = answer.number
    if number is None or not math.isfinite(number):
        raise AnswerInvalid("The number must be finite.", fields={"number": ["NaN and infinity are not answers."]})
    assert question.numeric_answer is not None and question.tolerance is not None  # noqa: S101 - check constraint
    return response, grading.grade_numeric(number, question.numeric_answer, question.tolerance)


def _scheduling_config(*, learner: Any) -> SchedulerConfig:
    for attempt in range(_WRITE_ATTEMPTS):
        try:
            with transaction.atomic():
                return review_scheduling_ensure(learner=learner)[1]
        except IntegrityError:
            if attempt == _WRITE_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def _question_review(
    *, learner: Any, question_id: int, rating: Rating, now: datetime, fuzz_seed: str, only_when_due: bool = False
) -> MemoryState | None:
    """Schedule the question with the scheduling core and the learner's own settings.

    only_when_due: leave a question scheduled for later as it is and give None; decided on the
    locked row, so of two answers at once only one can find the question due.
    """
    config = _scheduling_config(learner=learner)
    for attempt in range(_WRITE_ATTEMPTS):
        try:
            with transaction.atomic():
                memory = QuestionMemory.objects.select_for_update().filter(learner=learner, question_id=question_id)
                found = memory.first()
                if only_when_due and found is not None and found.due > now:
                    return None
                return _apply_review(
                    found,
                    learner=learner,
                    question_id=question_id,
                    rating=rating,
                    now=now,
                    config=config,
                    fuzz_seed=fuzz_seed,
                )
        except IntegrityError:
            # Two first answers to the question (in two attempts) created its row at once: lock it and go again.
            if attempt == _WRITE_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def _apply_review(
    memory: QuestionMemory | None,
    *,
    learner: Any,
    question_id: int,
    rating: Rating,
    now: datetime,
    config: SchedulerConfig,
    fuzz_seed: str,
) -> MemoryState:
    before = memory_state_of(memory)
    # Answers are stamped by the server's clock; a clock stepping back must not reorder the history.
    reviewed_at = max(now, before.last_review) if before else now
    after = scheduling.review(before, rating=rating, reviewed_at=reviewed_at, config=config, fuzz_seed=fuzz_seed)
    if memory is None:
        memory = QuestionMemory(learner=learner, question_id=question_id)
    memory_state_store(memory, after)
    memory.save(force_insert=memory.pk is None)
    return after


def _card_reviews(
    *, learner: Any, review_key: str, question: Question, outcome: str, now: datetime, studied_only: bool = False
) -> None:
    """One review of each card the question tests, through the one way reviews are recorded.

    review_key names the answer ("quiz:{attempt}" or "lesson:{lesson answer}") in each review's client id.
    studied_only: only the cards the learner has studied before; the others stay new, for their deck to
    introduce within the day's new cards."""
    card_ids = visible_card_ids(card_ids=[card.pk for card in question.cards.all()])
    if studied_only:
        card_ids = set(
            CardMemory.objects.filter(learner=learner, card_id__in=card_ids).values_list("card_id", flat=True)
        )
    if not card_ids:
        return
    rating = card_ratings()[outcome]
    reviews_submit(
        learner=learner,
        reviews=[
            ReviewInput(
                card_id=card_id,
                rating=rating,
                client_review_id=uuid.uuid5(QUIZ_REVIEW_NAMESPACE, f"{review_key}:{question.pk}:{card_id}"),
                reviewed_at=now,
                source=ReviewSource.QUIZ,
            )
            for card_id in sorted(card_ids)
        ],
        now=now,
    )


# --- Answering in place --------------------------------------------------------------------------


def _lesson_board(*, question: Question, board: str | None) -> QuizAttempt:
    """The board the question was shown with; choice ids mean nothing without it."""
    if question.kind not in _CHOICE_KINDS:
        return question_board(question=question, nonce="")
    if board is None or not BOARD_NONCE.fullmatch(board):
        raise AnswerInvalid(
            "A choice is named by the ids shown with the question's board; send that board too.",
            fields={"board": ["Send the board the question was shown with."]},
        )
    return question_board(question=question, nonce=board)


def _question_due(*, learner: Any, question: Question) -> datetime | None:
    return QuestionMemory.objects.filter(learner=learner, question=question).values_list("due", flat=True).first()


def _lesson_replay(*, learner: Any, question: Question, answer: AnswerData) -> LessonAnswerOutcome | None:
    """The first result of an answer already recorded under this client id, or None when the id is new."""
    if answer.client_answer_id is None:
        return None
    first = LessonAnswer.objects.filter(learner=learner, client_answer_id=answer.client_answer_id).first()
    if first is None:
        return None
    if (first.question_id, _comparable(first.response)) != (question.pk, _comparable(answer.response())):
        raise IdempotencyKeyReused(
            f"client_answer_id {answer.client_answer_id} was already used for another answer; "
            "send a new id with each new answer.",
            fields={"client_answer_id": ["Already used for a different answer."]},
        )
    due = _question_due(learner=learner, question=question)
    return LessonAnswerOutcome(
        answer=first, question=question, board=lesson_answer_board(first, question=question), due=due, duplicate=True
    )


def lesson_answer_submit(
    *, learner: Any, question_slug: str, board: str | None, answer: AnswerData
) -> LessonAnswerOutcome:
    """Grade an answer given in place and keep it; when the question is new to the learner or due, review it.

    Graded by the same rules as a quiz answer (answer_grade), with the choices named by the ids of the
    board the question was shown with. Every try is recorded; a try at a question scheduled for later
    is practice and changes no schedule, so trying again after seeing the answer earns nothing. A
    refused answer changes nothing; sent again with its client_answer_id, it gets its first result.
    """
    question = question_get(slug=question_slug)
    with transaction.atomic():
        replayed = _lesson_replay(learner=learner, question=question, answer=answer)
        if replayed is not None:
            return replayed
        shown = _lesson_board(question=question, board=board)
        response, grade = answer_grade(attempt=shown, question=question, answer=answer)
        now = timezone.now()
        try:
            with transaction.atomic():
                row = LessonAnswer.objects.create(
                    learner=learner,
                    question=question,
                    client_answer_id=answer.client_answer_id,
                    response=response,
                    choice_keys=shown.choice_keys.get(str(question.pk), {}),
                    correct=grade.correct,
                    credit=grade.credit,
                    scheduled=False,
                    answered_at=now,
                )
        except IntegrityError:
            # The same client id sent twice at once: the first has committed, this one replays it.
            replayed = _lesson_replay(learner=learner, question=question, answer=answer)
            if replayed is None:
                raise
            return replayed
        memory = _question_review(
            learner=learner,
            question_id=question.pk,
            rating=QUESTION_RATINGS[grade.outcome],
            now=now,
            fuzz_seed=f"lesson:{row.pk}",
            only_when_due=True,
        )
        if memory is not None:
            row.scheduled = True
            row.save(update_fields=["scheduled"])
            # Reading the lesson is not studying its deck: an answer here never spends the day's new cards.
            _card_reviews(
                learner=learner,
                review_key=f"lesson:{row.pk}",
                question=question,
                outcome=grade.outcome,
                now=now,
                studied_only=True,
            )
        due = memory.due if memory is not None else _question_due(learner=learner, question=question)
    return LessonAnswerOutcome(answer=row, question=question, board=shown, due=due)


# --- Finishing -----------------------------------------------------------------------------------


def _finish(attempt: QuizAttempt, *, now: datetime) -> None:
    earned = QuizAnswer.objects.filter(attempt=attempt).aggregate(total=Sum("credit"))["total"] or 0.0
    # Unanswered questions earn nothing; the clamp only absorbs float rounding.
    attempt.score = min(1.0, max(0.0, earned / attempt.question_count))
    attempt.finished_at = now
    attempt.save(update_fields=["score", "finished_at", "updated_at"])


def attempt_finish(*, learner: Any, attempt_id: int) -> QuizAttempt:
    with transaction.atomic():
        attempt = _locked_attempt(learner=learner, attempt_id=attempt_id)
        _finish(attempt, now=timezone.now())
    return attempt
