"""Admin for reminder preferences and the log of reminders decided."""

from django.contrib import admin

from apps.common.admin import ReadOnlyAdmin
from apps.reminders.models import ReminderEmail, ReminderPreference


@admin.register(ReminderPreference)
class ReminderPreferenceAdmin(admin.ModelAdmin):
    list_display = ["learner", "enabled", "local_hour", "updated_at"]
    list_filter = ["enabled", "local_hour"]
    search_fields = ["learner__username", "learner__email"]
    raw_id_fields = ["learner"]


@admin.register(ReminderEmail)
class ReminderEmailAdmin(ReadOnlyAdmin):
    list_display = ["learner", "local_date", "status", "due_cards", "sent_at"]
    list_filter = ["status", "local_date"]
    search_fields = ["learner__username", "learner__email"]
    date_hierarchy = "local_date"
