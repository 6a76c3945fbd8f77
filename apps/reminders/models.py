"""Learners' reminder preferences, and one row per learner and local day that a reminder was decided."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class ReminderPreference(models.Model):
    """A learner's review-reminder choice; a learner without a row gets no reminders."""

    learner = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reminder_preference"
    )
    enabled = models.BooleanField(default=False)
    local_hour = models.SmallIntegerField(default=18, help_text="Hour of the learner's local day to send at, 0-23.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(local_hour__gte=0, local_hour__lte=23), name="reminder_hour_range"),
        ]
        indexes = [models.Index(fields=["enabled", "local_hour"], name="reminder_enabled_hour")]

    def __str__(self) -> str:
        return f"Reminders of {self.learner}: {'on' if self.enabled else 'off'} at {self.local_hour}:00"


class ReminderStatus(models.TextChoices):
    CLAIMED = "claimed", "To send"
    SENDING = "sending", "Being sent"
    SENT = "sent", "Sent"
    SKIPPED = "skipped", "Nothing due"
    FAILED = "failed", "Failed"


class ReminderEmail(models.Model):
    """The reminder decision for one learner on one local calendar day.

    The unique constraint is the guarantee of at most one email a day: a run sends only to the rows it
    managed to insert, so overlapping runs, retries and several workers cannot send twice.
    """

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reminder_emails")
    local_date = models.DateField()
    status = models.CharField(max_length=10, choices=ReminderStatus.choices)
    claim = models.UUIDField(help_text="The run that inserted this row.")
    claimed_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)
    due_cards = models.IntegerField(default=0)
    failure = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["learner", "local_date"], name="reminder_once_per_local_day"),
            models.CheckConstraint(condition=Q(status__in=ReminderStatus.values), name="reminder_status_valid"),
        ]
        indexes = [models.Index(fields=["claim"], name="reminder_claim")]

    def __str__(self) -> str:
        return f"{self.status} reminder for {self.learner_id} on {self.local_date}"
