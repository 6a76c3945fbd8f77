"""Django admin for learners' profiles (checked by the same rules as /me/), signed-in devices and account email."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin

from apps.accounts.admin_forms import LockoutAdminAuthenticationForm
from apps.accounts.models import AccountEmail, DeviceToken, LearnerProfile
from apps.accounts.profiles import PROFILE_FIELDS, learner_profile_errors

admin.site.login_form = LockoutAdminAuthenticationForm


class LearnerProfileForm(forms.ModelForm):
    class Meta:
        model = LearnerProfile
        fields = ("learner", *PROFILE_FIELDS)

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        if self.errors:
            return cleaned
        values = {name: cleaned.get(name, getattr(self.instance, name)) for name in PROFILE_FIELDS}
        for name, messages in learner_profile_errors(values).items():
            self.add_error(name, messages)
        return cleaned


@admin.register(LearnerProfile)
class LearnerProfileAdmin(admin.ModelAdmin):
    form = LearnerProfileForm
    list_display = ("learner", "display_name", "show_on_leaderboards", "updated_at")
    list_filter = ("show_on_leaderboards",)
    list_select_related = ("learner",)
    search_fields = ("learner__username", "display_name")
    raw_id_fields = ("learner",)
    readonly_fields = ("created_at", "updated_at")


@admin.register(DeviceToken)
class DeviceTokenAdmin(admin.ModelAdmin):
    """Signed-in devices: staff may sign one out (delete it), never see or make a token."""

    list_display = ("device_name", "user", "created", "last_used_at", "expiry")
    search_fields = ("user__username", "user__email", "device_name")
    list_select_related = ("user",)
    raw_id_fields = ("user",)
    fields = ("user", "device_name", "public_id", "created", "last_used_at", "expiry")
    readonly_fields = fields

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(AccountEmail)
class AccountEmailAdmin(admin.ModelAdmin):
    """The account email outbox: what was sent, what is waiting, and the relay's last answer to what failed."""

    list_display = ("kind", "to", "status", "attempts", "created_at", "finished_at")
    list_filter = ("kind", "status")
    search_fields = ("to",)
    fields = ("kind", "to", "status", "attempts", "last_error", "next_attempt_at", "created_at", "finished_at")
    readonly_fields = fields

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False
