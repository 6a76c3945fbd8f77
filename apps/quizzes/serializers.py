"""Shapes of the quiz endpoints. Nothing here shows an answer key before the question is answered.

Choices are named only by the attempt's random ids: an authored key, which follows the course file
(the correct choice is often `a`), never leaves the server.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.common.fields import CanonicalUUIDField, CleanCharField, CleanSlugField, JSONNumberField, SingleLineCharField
from apps.common.schema import body_rules
from apps.content.choice_ids import BOARD_NONCE
from apps.content.models import Question, QuestionKind, Quiz
from apps.quizzes import grading
from apps.quizzes.models import AttemptMode, LessonAnswer, QuizAnswer, QuizAttempt

MAX_TEXT_ANSWER = 500
MAX_CHOICES_SENT = 50


class QuizOutput(serializers.ModelSerializer):
    lesson: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    lesson_title = serializers.CharField(source="lesson.title", read_only=True)
    question_count = serializers.IntegerField(read_only=True, help_text="Questions a learner can answer.")
    due_count = serializers.IntegerField(
        read_only=True, help_text="Of those, the ones due for you or never answered: what mode 'due' would ask."
    )
    attempt_count = serializers.IntegerField(read_only=True, help_text="Your attempts, finished or not.")
    best_score = serializers.FloatField(
        read_only=True, allow_null=True, help_text="Your best finished score, 0-1; null before any."
    )

    class Meta:
        model = Quiz
        fields = [
            "slug",
            "title",
            "description",
            "lesson",
            "lesson_title",
            "question_count",
            "due_count",
            "attempt_count",
            "best_score",
        ]


class AttemptStartInput(serializers.Serializer):
    mode = serializers.ChoiceField(choices=AttemptMode.choices, default=AttemptMode.ALL)


@body_rules(exactly_one_of=("choice", "choices", "text", "number"))
class AnswerInput(serializers.Serializer):
    question = CleanSlugField(max_length=80, help_text="The question's slug.")
    choice = SingleLineCharField(
        required=False, max_length=40, help_text="single_choice: the id of the choice picked, as the attempt shows it."
    )
    choices = serializers.ListField(
        child=SingleLineCharField(max_length=40),
        required=False,
        max_length=MAX_CHOICES_SENT,
        help_text="multiple_choice: the id of every choice picked, as the attempt shows them.",
    )
    text = CleanCharField(
        required=False, max_length=MAX_TEXT_ANSWER, allow_blank=True, trim_whitespace=False, help_text="short_text."
    )
    number = JSONNumberField(required=False, help_text="numeric: a finite JSON number.")
    client_answer_id = CanonicalUUIDField(
        required=False,
        help_text="Optional, made by the client: the same answer sent again with it gets its first result (200, "
        "duplicate true); the same id with anything else changed is refused (409 idempotency_key_reused).",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        sent = [name for name in ("choice", "choices", "text", "number") if name in attrs]
        if len(sent) != 1:
            raise serializers.ValidationError(
                {"non_field_errors": ["Send exactly one of choice, choices, text or number."]}
            )
        return attrs


class ChoiceOutput(serializers.Serializer):
    key = serializers.CharField(
        help_text="The choice's random id in this attempt: send it back to answer. Unrelated to its position."
    )
    text = serializers.CharField()


def _shown_choices(attempt: QuizAttempt, question: Question) -> list[tuple[str, str]]:
    """[(the attempt's id, authored key)] in the order the attempt shows them, for choices that still exist."""
    keys = {choice.key for choice in question.choices.all()}
    shown = [
        (choice_id, attempt.choice_key_of(question.pk, choice_id)) for choice_id in attempt.choice_ids_of(question.pk)
    ]
    return [(choice_id, key) for choice_id, key in shown if key is not None and key in keys]


class QuestionOutput(serializers.Serializer):
    """A question as a learner sees it before answering: the choices in the attempt's order, no key."""

    id = serializers.IntegerField()
    slug = serializers.CharField()
    kind = serializers.ChoiceField(choices=QuestionKind.choices)
    prompt = serializers.CharField()
    choices = serializers.SerializerMethodField(help_text="Choice questions only; empty for the other kinds.")

    @extend_schema_field(ChoiceOutput(many=True))
    def get_choices(self, question: Question) -> list[dict[str, str]]:
        texts = {choice.key: choice.text for choice in question.choices.all()}
        return [
            {"key": choice_id, "text": texts[key]}
            for choice_id, key in _shown_choices(self.context["attempt"], question)
        ]


class CorrectAnswerOutput(serializers.Serializer):
    """The answer key of one question, shown once the learner has answered it, in the attempt's choice ids."""

    choices = serializers.ListField(
        child=serializers.CharField(), help_text="The attempt's ids of the correct choices, in its order; choice kinds."
    )
    accepted_answers = serializers.ListField(child=serializers.CharField(), help_text="short_text.")
    number = serializers.FloatField(allow_null=True, help_text="numeric.")
    tolerance = serializers.FloatField(allow_null=True, help_text="numeric: accepted distance from number.")

    def to_representation(self, question: Question) -> dict[str, Any]:
        correct = {choice.key for choice in question.choices.all() if choice.is_correct}
        shown = _shown_choices(self.context["attempt"], question)
        return {
            "choices": [choice_id for choice_id, key in shown if key in correct],
            "accepted_answers": [answer.text for answer in question.accepted_answers.all()],
            "number": question.numeric_answer,
            "tolerance": question.tolerance,
        }


class ResponseOutput(serializers.Serializer):
    """What the learner sent; only the field of the question's kind is present."""

    choice = serializers.CharField(required=False, help_text="The attempt's id of the choice picked.")
    choices = serializers.ListField(child=serializers.CharField(), required=False, help_text="The attempt's ids.")
    text = serializers.CharField(required=False)
    number = serializers.FloatField(required=False)

    def to_representation(self, response: dict[str, Any]) -> dict[str, Any]:
        return dict(response)


class GradedAnswerOutput(serializers.Serializer):
    question = serializers.CharField(help_text="The question's slug.")
    response = ResponseOutput()
    correct = serializers.BooleanField()
    credit = serializers.FloatField(help_text="0-1; partial for a multiple-choice answer that is partly right.")
    explanation = serializers.CharField()
    correct_answer = CorrectAnswerOutput()
    answered_at = serializers.DateTimeField()
    client_answer_id = serializers.UUIDField(allow_null=True, help_text="As sent with the answer; null when none was.")

    def to_representation(self, answer: QuizAnswer) -> dict[str, Any]:
        questions: dict[int, Question] = self.context.get("questions", {})
        question = questions.get(answer.question_id, answer.question)
        return {
            "question": question.slug,
            "response": answer.response,
            "correct": answer.correct,
            "credit": answer.credit,
            "explanation": question.explanation,
            "correct_answer": CorrectAnswerOutput(question, context={"attempt": self.context["attempt"]}).data,
            "answered_at": serializers.DateTimeField().to_representation(answer.answered_at),
            "client_answer_id": str(answer.client_answer_id) if answer.client_answer_id else None,
        }


class AttemptSummaryOutput(serializers.ModelSerializer):
    quiz: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    question_count = serializers.IntegerField(read_only=True)
    answered_count = serializers.IntegerField(read_only=True)
    score = serializers.FloatField(read_only=True, allow_null=True, help_text="0-1, once finished; else null.")

    class Meta:
        model = QuizAttempt
        fields = ["id", "quiz", "mode", "started_at", "finished_at", "score", "question_count", "answered_count"]


class AttemptOutput(AttemptSummaryOutput):
    """An attempt to resume: its questions in its own order, and the answers given so far with their grading."""

    quiz_title = serializers.CharField(source="quiz.title", read_only=True)
    questions = serializers.SerializerMethodField()
    answers = serializers.SerializerMethodField()

    class Meta(AttemptSummaryOutput.Meta):
        fields = [*AttemptSummaryOutput.Meta.fields, "quiz_title", "questions", "answers"]

    @extend_schema_field(QuestionOutput(many=True))
    def get_questions(self, attempt: QuizAttempt) -> list[dict[str, Any]]:
        questions = self.context["attempt_questions"]
        return list(QuestionOutput(questions, many=True, context={"attempt": attempt}).data)

    @extend_schema_field(GradedAnswerOutput(many=True))
    def get_answers(self, attempt: QuizAttempt) -> list[dict[str, Any]]:
        by_id = {question.pk: question for question in self.context["attempt_questions"]}
        context = {"questions": by_id, "attempt": attempt}
        return list(GradedAnswerOutput(attempt.answers.all(), many=True, context=context).data)


class AttemptProgressOutput(serializers.Serializer):
    id = serializers.IntegerField()
    finished = serializers.BooleanField(help_text="True once every question is answered, or after finish.")
    score = serializers.FloatField(allow_null=True)
    answered_count = serializers.IntegerField()
    question_count = serializers.IntegerField()


class AnswerOutput(GradedAnswerOutput):
    attempt = AttemptProgressOutput()
    duplicate = serializers.BooleanField(
        help_text="True when this client_answer_id was already recorded: the first result, nothing changed."
    )

    def to_representation(self, outcome: Any) -> dict[str, Any]:
        attempt: QuizAttempt = outcome.attempt
        context = {"questions": {outcome.question.pk: outcome.question}, "attempt": attempt}
        data = GradedAnswerOutput(outcome.answer, context=context).data
        return {
            **data,
            "duplicate": outcome.duplicate,
            "attempt": {
                "id": attempt.pk,
                "finished": attempt.finished_at is not None,
                "score": attempt.score,
                "answered_count": outcome.answered_count,
                "question_count": attempt.question_count,
            },
        }


@body_rules(exactly_one_of=("choice", "choices", "text", "number"))
class LessonAnswerInput(AnswerInput):
    """An answer to a question where its lesson shows it: the question is the one in the path."""

    question = None  # type: ignore[assignment]
    board = serializers.RegexField(
        BOARD_NONCE.pattern,
        required=False,
        help_text="Choice kinds: the board the question was shown with (its `board`); the choice ids are its own.",
    )
    choice = SingleLineCharField(
        required=False, max_length=40, help_text="single_choice: the id of the choice picked, as the question shows it."
    )
    choices = serializers.ListField(
        child=SingleLineCharField(max_length=40),
        required=False,
        max_length=MAX_CHOICES_SENT,
        help_text="multiple_choice: the id of every choice picked, as the question shows them.",
    )


class ShownChoiceOutput(serializers.Serializer):
    key = serializers.CharField(help_text="The id the choice had on the board the answer was given on.")
    text = serializers.CharField()


class LessonAnswerOutput(GradedAnswerOutput):
    """The graded answer in the shape of a quiz attempt's answers, choices named by the board's ids."""

    outcome = serializers.ChoiceField(
        choices=["correct", "partial", "wrong"], help_text="partial: some credit, not all (multiple_choice)."
    )
    scheduled = serializers.BooleanField(
        help_text="True when this answer reviewed the question (and the cards it tests): it was new to you or due. "
        "False for practice while it is scheduled for later; the answer is kept either way."
    )
    due = serializers.DateTimeField(allow_null=True, help_text="When the question is next due for you; null if never.")
    duplicate = serializers.BooleanField(
        help_text="True when this client_answer_id was already recorded: the first result, nothing changed."
    )

    def to_representation(self, outcome: Any) -> dict[str, Any]:
        answer: LessonAnswer = outcome.answer
        context = {"questions": {outcome.question.pk: outcome.question}, "attempt": outcome.board}
        data = GradedAnswerOutput(answer, context=context).data
        return {
            **data,
            "outcome": grading.Grade(answer.credit).outcome,
            "scheduled": answer.scheduled,
            "due": serializers.DateTimeField().to_representation(outcome.due) if outcome.due else None,
            "duplicate": outcome.duplicate,
        }


class LessonLastAnswerOutput(LessonAnswerOutput):
    """A stored answer shown again, on the board it was given on: its choices with that board's ids."""

    choices = ShownChoiceOutput(
        many=True,
        help_text="Choice questions: the choices as the answer saw them, in that board's order (response and "
        "correct_answer name them by these ids); empty for other kinds. Answer again with the lesson's own board.",
    )

    def to_representation(self, outcome: Any) -> dict[str, Any]:
        question = outcome.question
        keys = outcome.board.choice_keys.get(str(question.pk), {})
        texts = {choice.key: choice.text for choice in question.choices.all()}
        shown = [
            {"key": choice_id, "text": texts[keys[choice_id]]} for choice_id in sorted(keys) if keys[choice_id] in texts
        ]
        return {**super().to_representation(outcome), "choices": shown}


class LessonAnswersOutput(serializers.Serializer):
    lesson = serializers.CharField(help_text="The lesson's slug.")
    answers = LessonLastAnswerOutput(many=True, help_text="Your latest answer to each of its questions you answered.")
