"""Learners' quiz attempts, their graded answers, and their memory of each question."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.content.models import Question, Quiz
from apps.srs.core.scheduling import MemoryStage
from apps.srs.models import StoredMemoryState


class AttemptMode(models.TextChoices):
    ALL = "all", "Every question of the quiz"
    DUE = "due", "Only the questions due for review, or never answered"


class QuizAttempt(models.Model):
    """One sitting of a quiz, with its shuffled order fixed at the start so a resumed attempt looks the same."""

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="quiz_attempts")
    quiz = models.ForeignKey(Quiz, on_delete=models.PROTECT, related_name="attempts")
    mode = models.CharField(max_length=10, choices=AttemptMode.choices, default=AttemptMode.ALL)
    question_ids = models.JSONField(help_text="The attempt's questions, by id, in the order they are shown.")
    choice_orders = models.JSONField(
        default=dict,
        blank=True,
        help_text="For each choice question (its id as text), the attempt's random choice ids in the order shown.",
    )
    choice_keys = models.JSONField(
        default=dict,
        blank=True,
        help_text="For each choice question (its id as text), {choice id: authored key}. Never sent to the learner.",
    )
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    score = models.FloatField(null=True, blank=True, help_text="Credit earned / questions, 0-1; set when finished.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(score__isnull=True) | Q(score__gte=0, score__lte=1), name="quiz_attempt_score_range"
            ),
            models.CheckConstraint(
                condition=Q(finished_at__isnull=True, score__isnull=True)
                | Q(finished_at__isnull=False, score__isnull=False),
                name="quiz_attempt_score_iff_finished",
            ),
            models.CheckConstraint(condition=Q(mode__in=AttemptMode.values), name="quiz_attempt_mode_valid"),
        ]
        indexes = [models.Index(fields=["learner", "quiz", "-started_at"], name="quiz_attempt_learner_quiz")]

    def __str__(self) -> str:
        return f"Attempt {self.pk} at {self.quiz_id} by {self.learner_id}"

    # The JSON columns are read through these: an edited or imported row may hold any JSON at all,
    # and what does not have the shape written here reads as absent rather than failing the page.
    def shown_question_ids(self) -> list[int]:
        """The attempt's question ids in the order shown."""
        ids = self.question_ids if isinstance(self.question_ids, list) else []
        return [item for item in ids if isinstance(item, int) and not isinstance(item, bool)]

    @property
    def question_count(self) -> int:
        return len(self.shown_question_ids())

    def _choice_keys_of(self, question_id: int) -> dict[str, str]:
        keys = self.choice_keys.get(str(question_id)) if isinstance(self.choice_keys, dict) else None
        return {str(k): str(v) for k, v in keys.items()} if isinstance(keys, dict) else {}

    def choice_ids_of(self, question_id: int) -> list[str]:
        """The question's choice ids in the order this attempt shows them; empty for other kinds."""
        order = self.choice_orders.get(str(question_id)) if isinstance(self.choice_orders, dict) else None
        return [str(choice_id) for choice_id in order] if isinstance(order, list) else []

    def choice_key_of(self, question_id: int, choice_id: str) -> str | None:
        """The authored key behind one of this attempt's choice ids, or None when it is not one."""
        return self._choice_keys_of(question_id).get(choice_id)

    def choice_id_of(self, question_id: int, key: str) -> str | None:
        """This attempt's id for an authored choice key, or None when the attempt did not show that choice."""
        keys = self._choice_keys_of(question_id)
        return next((choice_id for choice_id, authored in keys.items() if authored == key), None)


class QuizAnswer(models.Model):
    """The one graded answer to a question in an attempt; the unique constraint forbids a second."""

    attempt = models.ForeignKey(QuizAttempt, on_delete=models.CASCADE, related_name="answers")
    # The attempt's learner, kept here so a client's answer id is unique per learner in the database.
    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="quiz_answers")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="quiz_answers")
    client_answer_id = models.UUIDField(
        null=True, blank=True, help_text="Made by the client; a replay of the same answer with it changes nothing."
    )
    response = models.JSONField(
        help_text='What the learner sent, e.g. {"choices": [...]}: choices by the attempt\'s ids, not authored keys.'
    )
    correct = models.BooleanField()
    credit = models.FloatField()
    answered_at = models.DateTimeField()

    class Meta:
        ordering = ["answered_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["attempt", "question"], name="quiz_answer_once"),
            models.UniqueConstraint(fields=["learner", "client_answer_id"], name="quiz_answer_client_id_unique"),
            models.CheckConstraint(condition=Q(credit__gte=0, credit__lte=1), name="quiz_answer_credit_range"),
        ]

    def __str__(self) -> str:
        return f"{self.question_id} in attempt {self.attempt_id}: {self.credit:g}"


class QuestionMemory(StoredMemoryState):
    """A learner's memory of a question as a spaced-repetition item; no row: never answered."""

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="question_memories")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="memories")

    class Meta:
        verbose_name_plural = "question memories"
        constraints = [
            models.UniqueConstraint(fields=["learner", "question"], name="question_memory_unique"),
            models.CheckConstraint(
                condition=Q(stage__in=[stage.value for stage in MemoryStage]), name="question_memory_stage_valid"
            ),
            models.CheckConstraint(condition=Q(reps__gte=1) & Q(lapses__gte=0), name="question_memory_counts"),
        ]
        indexes = [models.Index(fields=["learner", "due"], name="question_memory_learner_due")]

    def __str__(self) -> str:
        return f"{self.learner} / {self.question}"


class LessonAnswer(models.Model):
    """An answer to a question given in place, where its lesson shows it, outside any quiz attempt.

    Every try is kept. Only a try at a question that is new to the learner or due for review feeds
    the learner's memory of it (and reviews the cards it tests), as a quiz answer does; a try while
    the question is scheduled for later, such as another go right after seeing the answer, is kept
    as practice and changes no schedule.
    """

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lesson_answers")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="lesson_answers")
    client_answer_id = models.UUIDField(
        null=True, blank=True, help_text="Made by the client; a replay of the same answer with it changes nothing."
    )
    response = models.JSONField(help_text='What the learner sent, e.g. {"choices": [...]}: choices by the shown ids.')
    choice_keys = models.JSONField(
        default=dict, blank=True, help_text="Choice questions: {shown choice id: authored key} as the learner saw them."
    )
    correct = models.BooleanField()
    credit = models.FloatField()
    scheduled = models.BooleanField(
        help_text="True when it reviewed the question and its cards; false for practice while not due."
    )
    answered_at = models.DateTimeField()

    class Meta:
        ordering = ["answered_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["learner", "client_answer_id"], name="lesson_answer_client_id_unique"),
            models.CheckConstraint(condition=Q(credit__gte=0, credit__lte=1), name="lesson_answer_credit_range"),
        ]
        indexes = [models.Index(fields=["learner", "question", "answered_at"], name="lesson_answer_learner_question")]

    def __str__(self) -> str:
        return f"{self.question_id} in place by {self.learner_id}: {self.credit:g}"
