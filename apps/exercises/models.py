"""Learners' submissions to pipeline exercises and what grading made of them."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.common.jobs import BackgroundJob
from apps.content.models import PipelineExercise


class SubmissionStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    CHECKING = "checking"
    TIMING = "timing"
    DONE = "done"
    # The grader could not grade (not the learner's fault); `error_message` says why.
    FAILED = "failed"


IN_PROGRESS = (SubmissionStatus.RUNNING, SubmissionStatus.CHECKING, SubmissionStatus.TIMING)
FINISHED = (SubmissionStatus.DONE, SubmissionStatus.FAILED)


class Verdict(models.TextChoices):
    ACCEPTED = "accepted"
    WRONG_OUTPUT = "wrong_output"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    MEMORY_LIMIT = "memory_limit"
    REJECTED = "rejected"


class Submission(BackgroundJob):
    """One piece of code a learner sent; kept until its learner deletes their account, its result written once.

    Its grading is a background job (apps.common.jobs): the row is its record and its outbox, `updated_at`
    its heartbeat, `error_message` what the learner is told when the grader could not grade."""

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions")
    exercise = models.ForeignKey(PipelineExercise, on_delete=models.PROTECT, related_name="submissions")
    code = models.TextField()
    client_submission_id = models.UUIDField(
        null=True, blank=True, help_text="Made by the client to make retries safe; absent when it sent none."
    )
    # A grading runs in three statuses (running, checking, timing), hence a status of its own.
    status = models.CharField(max_length=16, choices=SubmissionStatus.choices, default=SubmissionStatus.QUEUED)
    progress = models.FloatField(default=0.0)
    # What the grading is doing now, in words and counts, with the time left where it is known
    # (worker.grader.Progress.detail); empty while queued and once finished.
    progress_detail = models.JSONField(null=True, blank=True)
    verdict = models.CharField(max_length=16, choices=Verdict.choices, blank=True)
    score = models.FloatField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["learner", "-created_at"], name="submission_learner_recent"),
            models.Index(fields=["status", "updated_at"], name="submission_status_heartbeat"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(progress__gte=0.0, progress__lte=1.0), name="submission_progress_fraction"
            ),
            models.CheckConstraint(
                condition=~models.Q(status=SubmissionStatus.DONE) | ~models.Q(verdict=""),
                name="submission_done_has_verdict",
            ),
            models.UniqueConstraint(fields=["learner", "client_submission_id"], name="submission_client_id_unique"),
        ]

    def __str__(self) -> str:
        return f"Submission {self.pk} to {self.exercise_id} by {self.learner_id}: {self.status}"
