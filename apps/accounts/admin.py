"""Django admin for learners' profiles, checked by the same rules as the /me/ endpoint."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin

from apps.accounts.admin_forms import LockoutAdminAuthenticationForm
from apps.accounts.models import LearnerProfile
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
