"""Learners' submissions to pipeline exercises and what grading made of them."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.content.models import PipelineExercise


class SubmissionStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    CHECKING = "checking"
    TIMING = "timing"
    DONE = "done"
    # The grader could not grade (not the learner's fault); `error` says why.
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


class Submission(models.Model):
    """One piece of code a learner sent; kept until its learner deletes their account, its result written once."""

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions")
    exercise = models.ForeignKey(PipelineExercise, on_delete=models.PROTECT, related_name="submissions")
    code = models.TextField()
    client_submission_id = models.UUIDField(
        null=True, blank=True, help_text="Made by the client to make retries safe; absent when it sent none."
    )
    status = models.CharField(max_length=16, choices=SubmissionStatus.choices, default=SubmissionStatus.QUEUED)
    progress = models.FloatField(default=0.0)
    verdict = models.CharField(max_length=16, choices=Verdict.choices, blank=True)
    score = models.FloatField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # "host:pid" of the worker process grading it now; with heartbeat_at, how a stalled grading is told.
    worker = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # The row is its own outbox: a queued submission the broker never took (enqueued_at empty) is sent
    # again by the reaper, so a broker outage delays a grading and loses none.
    enqueued_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When its grading was last handed to the broker; empty until one hand-off works.",
    )
    publish_attempts = models.PositiveIntegerField(
        default=0, help_text="Hand-offs to the broker tried, failed ones included."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["learner", "-created_at"], name="submission_learner_recent"),
            models.Index(fields=["status", "heartbeat_at"], name="submission_status_heartbeat"),
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
