"""Read-only admin views of learners' quiz history: it is written by answering, never by hand."""

from __future__ import annotations

from django.contrib import admin
from django.db import models
from django.http import HttpRequest

from apps.content.admin import QuestionAdmin
from apps.content.models import Question
from apps.quizzes.admin_previews import QuestionPreviewAdmin
from apps.quizzes.models import QuestionMemory, QuizAnswer, QuizAttempt


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False


class QuizAnswerInline(admin.TabularInline):
    model = QuizAnswer
    fields = ("question", "response", "correct", "credit", "answered_at")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False


@admin.register(QuizAttempt)
class QuizAttemptAdmin(ReadOnlyAdmin):
    list_display = ("id", "learner", "quiz", "mode", "started_at", "finished_at", "score")
    list_filter = ("mode", "quiz")
    list_select_related = ("learner", "quiz")
    search_fields = ("learner__username", "quiz__slug")
    ordering = ("-started_at",)
    inlines = (QuizAnswerInline,)


@admin.register(QuestionMemory)
class QuestionMemoryAdmin(ReadOnlyAdmin):
    list_display = ("learner", "question", "stage", "due", "reps", "lapses")
    list_filter = ("stage",)
    list_select_related = ("learner", "question")
    search_fields = ("learner__username", "question__slug")
    ordering = ("due",)


class QuestionWithPreviewAdmin(QuestionAdmin, QuestionPreviewAdmin):
    """The content admin's question pages, with the preview that grades a tried answer as a quiz does."""


admin.site.unregister(Question)
admin.site.register(Question, QuestionWithPreviewAdmin)
