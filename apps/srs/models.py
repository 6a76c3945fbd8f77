"""Learners' scheduling settings, memory state per card, the append-only review log, and deck passes."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import OuterRef, Q, Subquery

from apps.common.jobs import BackgroundJob, JobStatus
from apps.content.models import Card, Course, Deck
from apps.srs.core.scheduling import (
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
    daily_goal = models.IntegerField(default=0, help_text="Reviews a day the learner aims for; 0: no goal.")
    timezone = models.CharField(max_length=64, default="UTC", help_text="IANA name, e.g. Europe/Paris.")
    day_start_hour = models.IntegerField(default=4, help_text="Local hour at which the learner's day starts.")
    fsrs_parameters = models.JSONField(
        null=True, blank=True, help_text="21 FSRS-6 weights from an optimizer run; empty for the defaults."
    )
    leech_threshold = models.IntegerField(default=8, help_text="Lapses after which a card is a leech.")
    suspend_leeches = models.BooleanField(default=False)
    auto_optimize = models.BooleanField(
        default=True, help_text="Fit FSRS parameters to the learner's reviews automatically, adopting only better ones."
    )
    parameters_pinned = models.BooleanField(
        default=False, help_text="Keep fsrs_parameters as they are: no fit ever replaces them."
    )
    optimized_at = models.DateTimeField(null=True, blank=True, editable=False, help_text="When the last fit finished.")
    reviews_at_last_fit = models.IntegerField(
        default=0, editable=False, help_text="Reviews in the learner's log when the last fit ran."
    )
    load_balancing = models.BooleanField(
        default=True, help_text="Among the days fuzz allows for a new interval, schedule on the least loaded one."
    )
    easy_days = models.JSONField(
        default=dict,
        blank=True,
        help_text="Weekday (monday..sunday) to its share of a normal day's reviews, 0 to 1; others take 1.",
    )
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
            models.CheckConstraint(condition=Q(daily_goal__gte=0, daily_goal__lte=9999), name="daily_goal_range"),
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


class ReviewLogQuerySet(models.QuerySet["ReviewLog"]):
    def standing(self) -> ReviewLogQuerySet:
        """The reviews that stand: neither undone nor undos."""
        return self.filter(kind=ReviewKind.REVIEW, undone_by__isnull=True)

    def of_course(self, course_id: int) -> ReviewLogQuerySet:
        """Reviews of the cards of one course's decks, by every learner."""
        return self.filter(card__deck__lesson__course_id=course_id)


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

    objects = ReviewLogQuerySet.as_manager()

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


class ParameterFitTrigger(models.TextChoices):
    SCHEDULE = "schedule", "Nightly schedule"
    REQUEST = "request", "Asked for by the learner"


class ParameterFit(BackgroundJob):
    """One fit of FSRS parameters to a learner's review log, kept whether its parameters were adopted or not.

    Both parameter sets are scored on the same later part of the log (the fitted set never saw it),
    so the figures say which would have predicted the learner's recall better.
    """

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="parameter_fits")
    trigger = models.CharField(max_length=10, choices=ParameterFitTrigger.choices, default=ParameterFitTrigger.SCHEDULE)
    parameters = models.JSONField(null=True, blank=True, help_text="The 21 fitted FSRS-6 weights.")
    fitted_on_reviews = models.IntegerField(default=0, help_text="Reviews the parameters were fitted on.")
    evaluated_on_reviews = models.IntegerField(default=0, help_text="Later reviews both parameter sets were scored on.")
    log_loss = models.FloatField(
        null=True, blank=True, help_text="Log loss of the fitted parameters on the test reviews."
    )
    rmse_bins = models.FloatField(null=True, blank=True, help_text="RMSE(bins) of the fitted parameters on them.")
    previous_parameters = models.JSONField(
        null=True, blank=True, help_text="The weights in force when the fit ran (the defaults included)."
    )
    previous_log_loss = models.FloatField(null=True, blank=True, help_text="Log loss of the parameters in force.")
    previous_rmse_bins = models.FloatField(null=True, blank=True, help_text="RMSE(bins) of the parameters in force.")
    adopted = models.BooleanField(default=False)
    reason = models.TextField(blank=True, help_text="Why the parameters were adopted or not, or why the fit failed.")
    profile = models.ForeignKey(
        SchedulerProfile,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="parameter_fits",
        help_text="The scheduler profile the adopted parameters became.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # One fit in flight per learner: a second request or a second worker finds it and does nothing.
            models.UniqueConstraint(
                fields=["learner"],
                condition=Q(status__in=[JobStatus.QUEUED, JobStatus.RUNNING]),
                name="parameter_fit_one_in_flight",
            ),
            models.CheckConstraint(
                condition=Q(status__in=[status.value for status in JobStatus]),
                name="parameter_fit_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(fitted_on_reviews__gte=0) & Q(evaluated_on_reviews__gte=0), name="parameter_fit_counts"
            ),
            models.CheckConstraint(
                condition=Q(adopted=False) | (Q(status=JobStatus.DONE) & Q(parameters__isnull=False)),
                name="parameter_fit_adopted_done",
            ),
        ]
        indexes = [models.Index(fields=["learner", "created_at"], name="parameter_fit_learner_time")]

    def __str__(self) -> str:
        return f"Parameter fit {self.pk} of {self.learner_id}: {self.status}"


class CourseMemoryModelQuerySet(models.QuerySet["CourseMemoryModel"]):
    def in_use(self) -> CourseMemoryModelQuerySet:
        """Each course's latest adopted model: the one its cards are scheduled with."""
        latest = (
            CourseMemoryModel.objects.filter(course_id=OuterRef("course_id"), status=JobStatus.DONE, adopted=True)
            .order_by("-finished_at", "-pk")
            .values("pk")[:1]
        )
        return self.filter(pk=Subquery(latest))


class CourseModelPhase(models.TextChoices):
    WAITING = "waiting", "Waiting for a worker"
    READING = "reading", "Reading the course's reviews"
    TRAINING = "training", "Fitting the course's weights and the card and learner factors"
    SCORING = "scoring", "Scoring it and what is in use on the held-out reviews"
    FINISHED = "finished", "Finished"


class CourseMemoryModel(BackgroundJob):
    """One training of a course's population model on every learner's reviews, kept whether adopted or not.

    It keeps what it learned per course (the weights) and per card (each card's stability factor), and
    the held-out figures that decided its adoption; never a learner's reviews.
    """

    objects = CourseMemoryModelQuerySet.as_manager()

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="memory_models")
    parameters = models.JSONField(null=True, blank=True, help_text="The course's 21 FSRS-6 weights.")
    card_factors = models.JSONField(
        null=True,
        blank=True,
        help_text="Card id to the natural log of how much longer (positive) or shorter each card is remembered "
        "than the weights say.",
    )
    card_spread = models.FloatField(null=True, blank=True, help_text="The learned spread of the card factors.")
    learner_spread = models.FloatField(null=True, blank=True, help_text="The learned spread of the learner factors.")
    learners = models.IntegerField(default=0, help_text="Learners whose reviews it was trained on.")
    recorded_reviews = models.IntegerField(default=0, help_text="The course's standing reviews when it ran.")
    trained_on_reviews = models.IntegerField(default=0, help_text="Long-term reviews the factors were fitted on.")
    evaluated_on_reviews = models.IntegerField(default=0, help_text="Later reviews both models were scored on.")
    log_loss = models.FloatField(null=True, blank=True, help_text="Log loss of this model on the later reviews.")
    rmse_bins = models.FloatField(null=True, blank=True, help_text="RMSE(bins) of this model on them.")
    previous_log_loss = models.FloatField(
        null=True, blank=True, help_text="Log loss of each learner's weights in use on the same reviews."
    )
    previous_rmse_bins = models.FloatField(null=True, blank=True, help_text="RMSE(bins) of those weights.")
    adopted = models.BooleanField(default=False)
    reason = models.TextField(blank=True, help_text="Why it was adopted or not, or why the training failed.")
    phase = models.CharField(
        max_length=10,
        choices=CourseModelPhase.choices,
        default=CourseModelPhase.WAITING,
        help_text="What the training is doing; each change is its heartbeat.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["course"],
                condition=Q(status__in=[JobStatus.QUEUED, JobStatus.RUNNING]),
                name="course_memory_model_one_in_flight",
            ),
            models.CheckConstraint(
                condition=Q(adopted=False) | (Q(status=JobStatus.DONE) & Q(card_factors__isnull=False)),
                name="course_memory_model_adopted_done",
            ),
        ]
        indexes = [models.Index(fields=["course", "status", "adopted"], name="course_memory_model_in_use")]

    def __str__(self) -> str:
        return f"Memory model {self.pk} of course {self.course_id}: {self.status}"


class LearnerMemoryModel(models.Model):
    """Which model one learner's cards of a course are scheduled with, as one training decided it.

    A learner with enough later reviews gets the model that predicted them better; one without follows
    the course's decision. A learner with no row (they began after the training) follows the course's
    model in use with no factor of their own.
    """

    memory_model = models.ForeignKey(CourseMemoryModel, on_delete=models.CASCADE, related_name="learner_models")
    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memory_models")
    uses_course_model = models.BooleanField()
    log_factor = models.FloatField(
        default=0.0, help_text="Natural log of how much longer than the course this learner remembers its cards."
    )
    first_stability_log_factors = models.JSONField(
        default=list,
        blank=True,
        help_text="Natural log of how much longer than the course's weights this learner remembers a new card "
        "after a first Again, Hard, Good and Easy: four numbers, or none.",
    )
    evaluated_on_reviews = models.IntegerField(default=0)
    log_loss = models.FloatField(null=True, blank=True, help_text="The course model's log loss on their later reviews.")
    previous_log_loss = models.FloatField(null=True, blank=True, help_text="Their weights' log loss on them.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["memory_model", "learner"], name="learner_memory_model_once"),
        ]

    def __str__(self) -> str:
        return f"Learner {self.learner_id} under memory model {self.memory_model_id}"


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


class AnkiHistoryImport(BackgroundJob):
    """A learner's Anki review history being replayed into their memory of the cards that came from Anki.

    The uploaded package is kept in the row until the import finishes, so whichever worker runs it can
    read it; it is removed then, whether the import succeeded or not.
    """

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="anki_history_imports")
    package = models.BinaryField(null=True, blank=True, editable=False)
    package_bytes = models.BigIntegerField(default=0, help_text="Size of the uploaded package.")
    total_entries = models.IntegerField(default=0, help_text="Review log entries in the package.")
    matched = models.IntegerField(default=0, help_text="Entries of cards that came from the package here.")
    applied = models.IntegerField(default=0, help_text="Reviews recorded by this import.")
    skipped = models.JSONField(default=dict, blank=True, help_text="Entries not recorded, counted by reason.")
    progress_done = models.IntegerField(default=0)
    progress_total = models.IntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=[status.value for status in JobStatus]),
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


class RescheduleReason(models.TextChoices):
    PARAMETERS = "parameters", "New FSRS parameters"
    DESIRED_RETENTION = "desired_retention", "New desired retention"
    MEMORY_MODEL = "memory_model", "New course memory model"


class Reschedule(BackgroundJob):
    """A run that moved a learner's review cards to the due dates their current settings give.

    The row is also the outbox: a run the broker did not take, or whose worker died, stays here and
    is handed over again; it goes on from `last_card_id`. Only cards in the review stage move; a
    review recorded meanwhile wins, the run reading each batch under the learner's review turn.
    """

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reschedules")
    reason = models.CharField(max_length=20, choices=RescheduleReason.choices)
    from_profile = models.ForeignKey(
        SchedulerProfile,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The settings the learner's reviews were last recorded with when the change was made.",
    )
    to_profile = models.ForeignKey(
        SchedulerProfile,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The settings the due dates were computed with; set when the run starts.",
    )
    cards_total = models.IntegerField(default=0, help_text="The learner's cards in the review stage at the start.")
    cards_examined = models.IntegerField(default=0)
    cards_moved = models.IntegerField(default=0, help_text="Cards whose due date changed.")
    last_card_id = models.BigIntegerField(default=0, editable=False, help_text="Where a resumed run goes on from.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # Changes made before a queued run starts are all covered by it: it reads the settings when it starts.
            models.UniqueConstraint(
                fields=["learner"], condition=Q(status=JobStatus.QUEUED), name="reschedule_one_queued"
            ),
            models.CheckConstraint(
                condition=Q(status__in=[status.value for status in JobStatus]), name="reschedule_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(reason__in=[reason.value for reason in RescheduleReason]), name="reschedule_reason_valid"
            ),
            models.CheckConstraint(
                condition=Q(cards_total__gte=0)
                & Q(cards_examined__gte=0)
                & Q(cards_moved__gte=0)
                & Q(cards_moved__lte=models.F("cards_examined")),
                name="reschedule_counts",
            ),
        ]
        indexes = [models.Index(fields=["learner", "created_at"], name="reschedule_learner_time")]

    def __str__(self) -> str:
        return f"Reschedule {self.pk} of {self.learner_id} ({self.reason}): {self.status}"


class ParametersSource(models.TextChoices):
    DEFAULT = "default", "FSRS-6's default weights"
    FITTED = "fitted", "The learner's own weights"


class StoredRetentionAdvice(BackgroundJob):
    """Retention advice computed on the workers for one set of simulator inputs, and the outbox of that computation.

    Keyed by what the simulation depends on: the weights (their digest), the desired retention, the
    deck-size bucket and the daily limits and steps (their digest). Inputs that change give another
    row; the learner's review timings are read when it runs, and a row older than a few weeks is
    computed again. Advice only: nothing here changes a setting.
    """

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="retention_advice")
    parameters_digest = models.CharField(max_length=64, help_text="SHA-256 of the weights the advice is for.")
    parameters_source = models.CharField(max_length=10, choices=ParametersSource.choices)
    desired_retention = models.FloatField(help_text="The learner's setting the advice is compared with.")
    deck_size_bucket = models.IntegerField(help_text="Cards in the simulated deck: the learner's, rounded up.")
    limits_digest = models.CharField(
        max_length=64, help_text="SHA-256 of the daily limits, maximum interval and step counts simulated."
    )
    advised_retention = models.FloatField(null=True, blank=True)
    advised_reviews_per_day = models.FloatField(null=True, blank=True)
    advised_minutes_per_day = models.FloatField(null=True, blank=True)
    advised_seconds_per_remembered_card = models.FloatField(null=True, blank=True)
    current_reviews_per_day = models.FloatField(null=True, blank=True)
    current_minutes_per_day = models.FloatField(null=True, blank=True)
    current_seconds_per_remembered_card = models.FloatField(null=True, blank=True)
    review_seconds_source = models.CharField(
        max_length=10, blank=True, help_text="default, learner or mixed: where the seconds per review came from."
    )
    requested_at = models.DateTimeField(help_text="When the latest computation was queued.")
    computed_at = models.DateTimeField(null=True, blank=True, help_text="When the figures were computed.")

    class Meta:
        verbose_name_plural = "stored retention advice"
        constraints = [
            # The idempotency guard: two requests for the same inputs find one row, queued once.
            models.UniqueConstraint(
                fields=["learner", "parameters_digest", "desired_retention", "deck_size_bucket", "limits_digest"],
                name="retention_advice_inputs_unique",
            ),
            models.CheckConstraint(
                condition=Q(status__in=[status.value for status in JobStatus]),
                name="retention_advice_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(parameters_source__in=[source.value for source in ParametersSource]),
                name="retention_advice_source_valid",
            ),
            models.CheckConstraint(
                condition=Q(computed_at__isnull=True)
                | (Q(advised_retention__isnull=False) & Q(current_minutes_per_day__isnull=False)),
                name="retention_advice_computed_figures",
            ),
        ]
        indexes = [models.Index(fields=["status", "updated_at"], name="retention_advice_status_time")]

    def __str__(self) -> str:
        return f"Retention advice {self.pk} of {self.learner_id}: {self.status}"
