"""Django admin for Match the Pairs: boards and attempts record what happened, so they are read-only."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from apps.common.admin import ReadOnlyAdmin
from apps.games.models import MatchAttempt, MatchBoard, MatchItem


class MatchItemInline(admin.TabularInline):
    model = MatchItem
    fields = ("card", "term_position", "definition_position", "missed", "matched_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(MatchBoard)
class MatchBoardAdmin(ReadOnlyAdmin):
    list_display = ("id", "learner", "deck", "pairs", "started_at", "finished_at", "score_ms", "wrong_attempts")
    list_filter = ("pairs", "deck")
    list_select_related = ("learner", "deck")
    search_fields = ("learner__username", "=id")
    date_hierarchy = "started_at"
    inlines = [MatchItemInline]


@admin.register(MatchAttempt)
class MatchAttemptAdmin(ReadOnlyAdmin):
    list_display = ("board", "correct", "attempted_at", "penalty_ms")
    list_filter = ("correct",)
    list_select_related = ("board",)
    search_fields = ("=board__id", "board__learner__username")
    raw_id_fields = ("board", "term_item", "definition_item")
