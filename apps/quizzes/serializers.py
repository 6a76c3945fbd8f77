"""Shapes of the quiz endpoints. Nothing here shows an answer key before the question is answered."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.content.models import Question, QuestionKind, Quiz
from apps.quizzes.models import AttemptMode, QuizAnswer, QuizAttempt

MAX_TEXT_ANSWER = 500
MAX_CHOICES_SENT = 50


class StrictCharField(serializers.CharField):
    """A string, and only a string: numbers and booleans are not turned into text."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictNumberField(serializers.FloatField):
    """A JSON number: not a string of digits, not a boolean; NaN and infinity are refused."""

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return float(super().to_internal_value(data))


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


class AnswerInput(serializers.Serializer):
    question = serializers.SlugField(max_length=80, help_text="The question's slug.")
    choice = StrictCharField(required=False, max_length=40, help_text="single_choice: the key picked.")
    choices = serializers.ListField(
        child=StrictCharField(max_length=40),
        required=False,
        max_length=MAX_CHOICES_SENT,
        help_text="multiple_choice: every key picked.",
    )
    text = StrictCharField(
        required=False, max_length=MAX_TEXT_ANSWER, allow_blank=True, trim_whitespace=False, help_text="short_text."
    )
    number = StrictNumberField(required=False, help_text="numeric: a finite JSON number.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        sent = [name for name in ("choice", "choices", "text", "number") if name in attrs]
        if len(sent) != 1:
            raise serializers.ValidationError(
                {"non_field_errors": ["Send exactly one of choice, choices, text or number."]}
            )
        return attrs


class ChoiceOutput(serializers.Serializer):
    key = serializers.CharField()
    text = serializers.CharField()


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
        orders: dict[str, list[str]] = self.context.get("choice_orders", {})
        keys = orders.get(str(question.pk), list(texts))
        return [{"key": key, "text": texts[key]} for key in keys if key in texts]


class CorrectAnswerOutput(serializers.Serializer):
    """The answer key of one question, shown once the learner has answered it."""

    choices = serializers.ListField(child=serializers.CharField(), help_text="Correct choice keys; choice kinds.")
    accepted_answers = serializers.ListField(child=serializers.CharField(), help_text="short_text.")
    number = serializers.FloatField(allow_null=True, help_text="numeric.")
    tolerance = serializers.FloatField(allow_null=True, help_text="numeric: accepted distance from number.")

    def to_representation(self, question: Question) -> dict[str, Any]:
        return {
            "choices": [choice.key for choice in question.choices.all() if choice.is_correct],
            "accepted_answers": [answer.text for answer in question.accepted_answers.all()],
            "number": question.numeric_answer,
            "tolerance": question.tolerance,
        }


class ResponseOutput(serializers.Serializer):
    """What the learner sent; only the field of the question's kind is present."""

    choice = serializers.CharField(required=False)
    choices = serializers.ListField(child=serializers.CharField(), required=False)
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

    def to_representation(self, answer: QuizAnswer) -> dict[str, Any]:
        questions: dict[int, Question] = self.context.get("questions", {})
        question = questions.get(answer.question_id, answer.question)
        return {
            "question": question.slug,
            "response": answer.response,
            "correct": answer.correct,
            "credit": answer.credit,
            "explanation": question.explanation,
            "correct_answer": CorrectAnswerOutput(question).data,
            "answered_at": serializers.DateTimeField().to_representation(answer.answered_at),
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
        return list(QuestionOutput(questions, many=True, context={"choice_orders": attempt.choice_orders}).data)

    @extend_schema_field(GradedAnswerOutput(many=True))
    def get_answers(self, attempt: QuizAttempt) -> list[dict[str, Any]]:
        by_id = {question.pk: question for question in self.context["attempt_questions"]}
        return list(GradedAnswerOutput(attempt.answers.all(), many=True, context={"questions": by_id}).data)


class AttemptProgressOutput(serializers.Serializer):
    id = serializers.IntegerField()
    finished = serializers.BooleanField(help_text="True once every question is answered, or after finish.")
    score = serializers.FloatField(allow_null=True)
    answered_count = serializers.IntegerField()
    question_count = serializers.IntegerField()


class AnswerOutput(GradedAnswerOutput):
    attempt = AttemptProgressOutput()

    def to_representation(self, outcome: Any) -> dict[str, Any]:
        attempt: QuizAttempt = outcome.attempt
        data = GradedAnswerOutput(outcome.answer, context={"questions": {outcome.question.pk: outcome.question}}).data
        return {
            **data,
            "attempt": {
                "id": attempt.pk,
                "finished": attempt.finished_at is not None,
                "score": attempt.score,
                "answered_count": outcome.answered_count,
                "question_count": attempt.question_count,
            },
        }
