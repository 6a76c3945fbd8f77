"""Learners' scheduling settings, memory state per card, the append-only review log, and deck passes."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.content.models import Card, Deck
from apps.srs.scheduling import (
    DEFAULT_LEARNING_STEPS_SECONDS,
    DEFAULT_MAXIMUM_INTERVAL_DAYS,
    DEFAULT_RELEARNING_STEPS_SECONDS,
    MemoryStage,
)


def _default_learning_steps() -> list[int]:
    return list(DEFAULT_LEARNING_STEPS_SECONDS)


def _default_relearning_steps() -> list[int]:
    return list(DEFAULT_RELEARNING_STEPS_SECONDS)


class SchedulingSettings(models.Model):
    """A learner's scheduling preferences; a learner without a row has the defaults."""

    learner = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="scheduling_settings"
    )
    desired_retention = models.FloatField(default=0.9)
    learning_steps = models.JSONField(default=_default_learning_steps, help_text="Seconds, in order.")
    relearning_steps = models.JSONField(default=_default_relearning_steps, help_text="Seconds, in order.")
    maximum_interval_days = models.IntegerField(default=DEFAULT_MAXIMUM_INTERVAL_DAYS)
    new_cards_per_day = models.IntegerField(default=20)
    max_reviews_per_day = models.IntegerField(default=200)
    timezone = models.CharField(max_length=64, default="UTC", help_text="IANA name, e.g. Europe/Paris.")
    day_start_hour = models.IntegerField(default=4, help_text="Local hour at which the learner's day starts.")
    fsrs_parameters = models.JSONField(
        null=True, blank=True, help_text="21 FSRS-6 weights from an optimizer run; empty for the defaults."
    )
    leech_threshold = models.IntegerField(default=8, help_text="Lapses after which a card is a leech.")
    suspend_leeches = models.BooleanField(default=False)
    # The stored profile of the settings above, kept so recording a review reads both in one query.
    profile = models.ForeignKey(
        "SchedulerProfile", null=True, blank=True, editable=False, on_delete=models.PROTECT, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "scheduling settings"
        constraints = [
            models.CheckConstraint(
                condition=Q(desired_retention__gte=0.70, desired_retention__lte=0.99), name="retention_range"
            ),
            models.CheckConstraint(condition=Q(maximum_interval_days__gte=1), name="maximum_interval_positive"),
            models.CheckConstraint(
                condition=Q(new_cards_per_day__gte=0, new_cards_per_day__lte=9999), name="new_per_day_range"
            ),
            models.CheckConstraint(
                condition=Q(max_reviews_per_day__gte=0, max_reviews_per_day__lte=99999), name="reviews_per_day_range"
            ),
            models.CheckConstraint(condition=Q(day_start_hour__gte=0, day_start_hour__lte=23), name="day_start_range"),
            models.CheckConstraint(condition=Q(leech_threshold__gte=1), name="leech_threshold_positive"),
        ]

    def __str__(self) -> str:
        return f"Scheduling settings of {self.learner}"


class SchedulerProfile(models.Model):
    """An immutable scheduler configuration, shared by every review made with it.

    Each review points at the configuration it was scheduled with, so a history replays exactly
    even after the learner changes retention or parameters.
    """

    digest = models.CharField(max_length=64, unique=True)
    config = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.digest[:12]


STAGE_CHOICES = [(stage.value, stage.name.title()) for stage in MemoryStage]


class StoredMemoryState(models.Model):
    """The scheduling core's MemoryState as columns: a card's memory, or a quiz question's."""

    stage = models.SmallIntegerField(choices=STAGE_CHOICES)
    step = models.SmallIntegerField(null=True, blank=True)
    stability = models.FloatField()
    difficulty = models.FloatField()
    due = models.DateTimeField()
    last_review = models.DateTimeField()
    reps = models.IntegerField(default=0)
    lapses = models.IntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class CardMemory(StoredMemoryState):
    """A learner's current memory of a card; no row means the card is new to them."""

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="card_memories")
    card = models.ForeignKey(Card, on_delete=models.PROTECT, related_name="memories")
    first_review = models.DateTimeField()
    is_leech = models.BooleanField(default=False)
    suspended = models.BooleanField(default=False)

    class Meta:
        verbose_name_plural = "card memories"
        constraints = [
            models.UniqueConstraint(fields=["learner", "card"], name="card_memory_unique"),
            models.CheckConstraint(
                condition=Q(stage__in=[stage.value for stage in MemoryStage]), name="card_memory_stage_valid"
            ),
            models.CheckConstraint(condition=Q(reps__gte=1) & Q(lapses__gte=0), name="card_memory_counts"),
        ]
        indexes = [models.Index(fields=["learner", "due"], name="card_memory_learner_due")]

    def __str__(self) -> str:
        return f"{self.learner} / {self.card}"


class ReviewKind(models.TextChoices):
    REVIEW = "review", "Review"
    UNDO = "undo", "Undo of a review"


class ReviewSource(models.TextChoices):
    DECK = "deck", "Memory deck"
    MATCH = "match", "Match the pairs"
    QUIZ = "quiz", "Quiz"


class ReviewLog(models.Model):
    """Append-only: every review, and every undo of one, as it happened.

    A standing review's state_before and state_after are the ones its place in the card's history
    gives, so a review arriving late rewrites them on the reviews after it; nothing else in a row changes.
    """

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_logs")
    card = models.ForeignKey(Card, on_delete=models.PROTECT, related_name="review_logs")
    kind = models.CharField(max_length=10, choices=ReviewKind.choices, default=ReviewKind.REVIEW)
    client_review_id = models.UUIDField(null=True, blank=True)
    rating = models.SmallIntegerField(null=True, blank=True)
    reviewed_at = models.DateTimeField()
    duration_ms = models.IntegerField(null=True, blank=True)
    source = models.CharField(max_length=10, choices=ReviewSource.choices, default=ReviewSource.DECK)
    state_before = models.JSONField(null=True, blank=True, help_text="Memory state before; null for a new card.")
    state_after = models.JSONField(null=True, blank=True, help_text="Memory state after; null when it became new.")
    profile = models.ForeignKey(SchedulerProfile, null=True, blank=True, on_delete=models.PROTECT)
    undo_of = models.OneToOneField("self", null=True, blank=True, on_delete=models.PROTECT, related_name="undone_by")
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["learner", "client_review_id"], name="review_client_id_unique"),
            models.CheckConstraint(
                condition=(
                    Q(kind=ReviewKind.REVIEW)
                    & Q(rating__gte=1, rating__lte=4)
                    & Q(client_review_id__isnull=False)
                    & Q(profile__isnull=False)
                    & Q(undo_of__isnull=True)
                )
                | (Q(kind=ReviewKind.UNDO) & Q(undo_of__isnull=False) & Q(rating__isnull=True)),
                name="review_log_kind_fields",
            ),
            models.CheckConstraint(
                condition=Q(duration_ms__isnull=True) | Q(duration_ms__gte=0), name="review_duration_non_negative"
            ),
        ]
        indexes = [
            models.Index(fields=["learner", "card", "reviewed_at"], name="review_log_card_time"),
            models.Index(fields=["learner", "reviewed_at"], name="review_log_learner_time"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.rating} of {self.card_id} by {self.learner_id} at {self.reviewed_at}"


class DeckPass(models.Model):
    """A finished pass through a deck: "Deck complete — score saved"."""

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="deck_passes")
    deck = models.ForeignKey(Deck, on_delete=models.PROTECT, related_name="passes")
    client_pass_id = models.UUIDField(default=uuid.uuid4)
    known = models.IntegerField()
    total = models.IntegerField()
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "deck passes"
        constraints = [
            models.UniqueConstraint(fields=["learner", "client_pass_id"], name="deck_pass_client_id_unique"),
            models.CheckConstraint(
                condition=Q(total__gte=1) & Q(known__gte=0) & Q(known__lte=models.F("total")),
                name="deck_pass_score_range",
            ),
            models.CheckConstraint(condition=Q(finished_at__gte=models.F("started_at")), name="deck_pass_time_order"),
        ]
        indexes = [models.Index(fields=["learner", "deck", "finished_at"], name="deck_pass_learner_deck")]

    def __str__(self) -> str:
        return f"{self.known}/{self.total} on {self.deck_id} by {self.learner_id}"


class AnkiHistoryStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class AnkiHistoryImport(models.Model):
    """A learner's Anki review history being replayed into their memory of the cards that came from Anki.

    The uploaded package is kept in the row until the import finishes, so whichever worker runs it can
    read it; it is removed then, whether the import succeeded or not.
    """

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="anki_history_imports")
    status = models.CharField(max_length=10, choices=AnkiHistoryStatus.choices, default=AnkiHistoryStatus.QUEUED)
    package = models.BinaryField(null=True, blank=True, editable=False)
    package_bytes = models.BigIntegerField(default=0, help_text="Size of the uploaded package.")
    total_entries = models.IntegerField(default=0, help_text="Review log entries in the package.")
    matched = models.IntegerField(default=0, help_text="Entries of cards that came from the package here.")
    applied = models.IntegerField(default=0, help_text="Reviews recorded by this import.")
    skipped = models.JSONField(default=dict, blank=True, help_text="Entries not recorded, counted by reason.")
    progress_done = models.IntegerField(default=0)
    progress_total = models.IntegerField(default=0)
    error_message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=[status.value for status in AnkiHistoryStatus]),
                name="anki_history_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(total_entries__gte=0)
                & Q(matched__gte=0)
                & Q(applied__gte=0)
                & Q(progress_done__gte=0)
                & Q(progress_done__lte=models.F("progress_total")),
                name="anki_history_counts",
            ),
        ]
        indexes = [models.Index(fields=["learner", "created_at"], name="anki_history_learner_time")]

    def __str__(self) -> str:
        return f"Anki history {self.pk} of {self.learner_id}: {self.status}"
