"""Django admin for learners' scheduling data: settings editable, memory read-mostly, the logs read-only."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest

from apps.common.admin import ReadOnlyAdmin
from apps.common.errors import Conflict
from apps.srs.adaptation.course_models import course_model_request
from apps.srs.models import (
    AnkiHistoryImport,
    CardMemory,
    CourseMemoryModel,
    DeckPass,
    LearnerMemoryModel,
    ParameterFit,
    Reschedule,
    ReviewLog,
    SchedulerProfile,
    SchedulingSettings,
    StoredRetentionAdvice,
)
from apps.srs.settings.rules import SETTINGS_FIELDS, scheduling_settings_errors


class SchedulingSettingsForm(forms.ModelForm):
    """Checks the same rules as the settings API, so staff cannot save what a learner could not."""

    class Meta:
        model = SchedulingSettings
        fields = ("learner", *SETTINGS_FIELDS)

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        if self.errors:
            return cleaned
        values = {name: cleaned.get(name, getattr(self.instance, name)) for name in SETTINGS_FIELDS}
        for name, errors in scheduling_settings_errors(values).items():
            self.add_error(name, errors)
        return cleaned


@admin.register(SchedulingSettings)
class SchedulingSettingsAdmin(admin.ModelAdmin):
    form = SchedulingSettingsForm
    list_display = ("learner", "desired_retention", "timezone", "day_start_hour", "new_cards_per_day", "updated_at")
    list_select_related = ("learner",)
    search_fields = ("learner__username",)
    raw_id_fields = ("learner",)
    readonly_fields = ("updated_at", "optimized_at", "reviews_at_last_fit")


@admin.register(CardMemory)
class CardMemoryAdmin(admin.ModelAdmin):
    """Derived from the review log, so only suspension is editable; deleting would lose the state."""

    list_display = ("learner", "card", "stage", "due", "reps", "lapses", "is_leech", "suspended")
    list_filter = ("stage", "is_leech", "suspended")
    list_select_related = ("learner", "card")
    search_fields = ("learner__username", "card__term")
    readonly_fields = (
        "learner",
        "card",
        "stage",
        "step",
        "stability",
        "difficulty",
        "due",
        "last_review",
        "first_review",
        "reps",
        "lapses",
        "is_leech",
        "updated_at",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ReviewLog)
class ReviewLogAdmin(ReadOnlyAdmin):
    list_display = ("id", "learner", "card", "kind", "rating", "reviewed_at", "source")
    list_filter = ("kind", "rating", "source")
    list_select_related = ("learner", "card")
    search_fields = ("learner__username", "card__term")
    date_hierarchy = "reviewed_at"


@admin.register(DeckPass)
class DeckPassAdmin(ReadOnlyAdmin):
    list_display = ("learner", "deck", "known", "total", "finished_at")
    list_select_related = ("learner", "deck")
    search_fields = ("learner__username", "deck__slug")


@admin.register(SchedulerProfile)
class SchedulerProfileAdmin(ReadOnlyAdmin):
    list_display = ("digest", "created_at")
    search_fields = ("digest",)


@admin.register(ParameterFit)
class ParameterFitAdmin(ReadOnlyAdmin):
    """Every fit of a learner's weights, adopted or not, with how both weight sets scored."""

    list_display = (
        "id",
        "learner",
        "status",
        "trigger",
        "fitted_on_reviews",
        "log_loss",
        "previous_log_loss",
        "rmse_bins",
        "previous_rmse_bins",
        "adopted",
        "created_at",
    )
    list_filter = ("status", "trigger", "adopted")
    list_select_related = ("learner",)
    search_fields = ("learner__username",)
    date_hierarchy = "created_at"


class LearnerMemoryModelInline(admin.TabularInline):
    """Each learner's decision under the training: figures on their own held-out reviews, never the reviews."""

    model = LearnerMemoryModel
    fields = (
        "learner",
        "uses_course_model",
        "log_factor",
        "first_stability_log_factors",
        "evaluated_on_reviews",
        "log_loss",
        "previous_log_loss",
    )
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(CourseMemoryModel)
class CourseMemoryModelAdmin(ReadOnlyAdmin):
    """Every training of a course's population model, adopted or not, with how it and what was in use scored.

    The course's model in use is its latest adopted one; "Train again now" queues a training of the
    selected rows' courses for the workers.
    """

    list_display = (
        "id",
        "course",
        "status",
        "phase",
        "adopted",
        "in_use",
        "learners",
        "trained_on_reviews",
        "evaluated_on_reviews",
        "log_loss",
        "previous_log_loss",
        "rmse_bins",
        "previous_rmse_bins",
        "card_spread",
        "finished_at",
    )
    list_filter = ("status", "adopted", "course")
    list_select_related = ("course",)
    date_hierarchy = "created_at"
    inlines = (LearnerMemoryModelInline,)
    actions = ("train_again",)

    @admin.display(boolean=True, description="In use")
    def in_use(self, row: CourseMemoryModel) -> bool:
        return CourseMemoryModel.objects.in_use().filter(pk=row.pk).exists()

    @admin.action(description="Train the selected rows' courses again now")
    def train_again(self, request: HttpRequest, queryset: Any) -> None:
        for course in {row.course for row in queryset.select_related("course")}:
            try:
                course_model_request(course=course)
            except Conflict as refused:
                self.message_user(request, refused.message, level=messages.WARNING)
            else:
                self.message_user(request, f"A training of {course.slug}'s memory model is queued.")


@admin.register(Reschedule)
class RescheduleAdmin(ReadOnlyAdmin):
    """Each background reschedule of a learner's review cards after their weights or retention changed."""

    list_display = ("id", "learner", "reason", "status", "cards_total", "cards_examined", "cards_moved", "created_at")
    list_filter = ("status", "reason")
    list_select_related = ("learner",)
    search_fields = ("learner__username",)
    date_hierarchy = "created_at"


@admin.register(StoredRetentionAdvice)
class StoredRetentionAdviceAdmin(ReadOnlyAdmin):
    """The desired retention advised to each learner, with the workload at it and at their own setting."""

    list_display = (
        "id",
        "learner",
        "status",
        "parameters_source",
        "desired_retention",
        "advised_retention",
        "advised_minutes_per_day",
        "current_minutes_per_day",
        "computed_at",
    )
    list_filter = ("status", "parameters_source")
    list_select_related = ("learner",)
    search_fields = ("learner__username",)


@admin.register(AnkiHistoryImport)
class AnkiHistoryImportAdmin(ReadOnlyAdmin):
    """Learners' Anki review histories being replayed; the uploaded package itself is not shown."""

    list_display = ("id", "learner", "status", "total_entries", "matched", "applied", "created_at", "finished_at")
    list_filter = ("status",)
    list_select_related = ("learner",)
    search_fields = ("learner__username",)
    exclude = ("package",)
