"""Questions of four kinds; choices and accepted answers are answer keys, never shown to learners."""

from django.db import models
from django.db.models import Q

from apps.content.fields import AuthoredCharField, AuthoredTextField
from apps.content.models.base import ArchivableModel, TimestampedModel
from apps.content.models.courses import Lesson
from apps.content.models.decks import Card


class QuestionKind(models.TextChoices):
    SINGLE_CHOICE = "single_choice", "Single choice"
    MULTIPLE_CHOICE = "multiple_choice", "Multiple choice"
    SHORT_TEXT = "short_text", "Short text"
    NUMERIC = "numeric", "Numeric"


class Question(ArchivableModel):
    lesson = models.ForeignKey(Lesson, on_delete=models.PROTECT, related_name="questions")
    slug = models.SlugField(max_length=80, unique=True)
    kind = models.CharField(max_length=20, choices=QuestionKind.choices)
    prompt = AuthoredTextField()
    explanation = AuthoredTextField()
    numeric_answer = models.FloatField(null=True, blank=True)
    tolerance = models.FloatField(null=True, blank=True)
    position = models.IntegerField()
    # The cards a question tests: answering it reviews each of them (apps.quizzes).
    cards = models.ManyToManyField(Card, related_name="questions", blank=True)

    class Meta:
        ordering = ["lesson_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["lesson", "position"], name="question_position_unique"),
            models.CheckConstraint(condition=Q(kind__in=QuestionKind.values), name="question_kind_valid"),
            models.CheckConstraint(
                condition=(Q(kind=QuestionKind.NUMERIC) & Q(numeric_answer__isnull=False) & Q(tolerance__gte=0))
                | (~Q(kind=QuestionKind.NUMERIC) & Q(numeric_answer__isnull=True) & Q(tolerance__isnull=True)),
                name="question_numeric_answer_iff_numeric",
            ),
        ]

    def __str__(self) -> str:
        return self.slug


class Choice(TimestampedModel):
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="choices")
    key = models.SlugField(max_length=40, help_text="Stable identifier within the question.")
    text = AuthoredTextField()
    is_correct = models.BooleanField(default=False)
    position = models.IntegerField()

    class Meta:
        ordering = ["question_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["question", "key"], name="choice_key_unique"),
            models.UniqueConstraint(fields=["question", "position"], name="choice_position_unique"),
        ]

    def __str__(self) -> str:
        return self.text


class AcceptedAnswer(TimestampedModel):
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="accepted_answers")
    text = AuthoredCharField(max_length=200)
    position = models.IntegerField()

    class Meta:
        ordering = ["question_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["question", "text"], name="accepted_answer_unique"),
            models.UniqueConstraint(fields=["question", "position"], name="accepted_answer_position_unique"),
        ]

    def __str__(self) -> str:
        return self.text
