"""Submissions in the admin: read-only, since each is a record of what a learner sent."""

from __future__ import annotations

from django.contrib import admin

from apps.common.admin import ReadOnlyAdmin
from apps.exercises.models import Submission


@admin.register(Submission)
class SubmissionAdmin(ReadOnlyAdmin):
    list_display = ["id", "exercise", "learner", "status", "verdict", "score", "attempts", "created_at"]
    list_filter = ["status", "verdict", "exercise"]
    search_fields = ["learner__username", "exercise__slug"]
    date_hierarchy = "created_at"
    list_select_related = ["exercise", "learner"]
