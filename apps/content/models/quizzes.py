"""Quizzes: ordered sets of one lesson's questions, taken and graded through the quizzes app."""

from django.core.exceptions import ValidationError
from django.db import models

from apps.content.fields import AuthoredCharField, AuthoredTextField
from apps.content.models.base import ArchivableModel, TimestampedModel
from apps.content.models.courses import Lesson
from apps.content.models.questions import Question


class Quiz(ArchivableModel):
    lesson = models.ForeignKey(Lesson, on_delete=models.PROTECT, related_name="quizzes")
    slug = models.SlugField(max_length=80, unique=True)
    title = AuthoredCharField(max_length=200)
    description = AuthoredTextField(blank=True)
    position = models.IntegerField()
    questions = models.ManyToManyField(Question, through="QuizQuestion", related_name="quizzes", blank=True)

    class Meta:
        verbose_name_plural = "quizzes"
        ordering = ["lesson_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["lesson", "position"], name="quiz_position_unique"),
        ]

    def __str__(self) -> str:
        return self.title


class QuizQuestion(TimestampedModel):
    """A question's place in a quiz. No learner history hangs on it: attempts keep their own order."""

    quiz = models.ForeignKey(Quiz, on_delete=models.CASCADE, related_name="items")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="quiz_items")
    position = models.IntegerField()

    class Meta:
        ordering = ["quiz_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["quiz", "question"], name="quiz_question_unique"),
            models.UniqueConstraint(fields=["quiz", "position"], name="quiz_question_position_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.quiz_id} #{self.position}: {self.question_id}"

    def clean(self) -> None:
        # The loader checks the same rule in course files; this keeps admin edits to it too.
        quiz, question = getattr(self, "quiz", None), getattr(self, "question", None)
        if quiz is not None and question is not None and quiz.lesson_id != question.lesson_id:
            raise ValidationError(
                {"question": f"“{question}” belongs to another lesson; a quiz takes its own lesson's questions."}
            )
