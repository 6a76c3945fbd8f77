"""Request and response bodies of the learner's own account (/me/)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.accounts.models import DISPLAY_NAME_MAX_LENGTH, LearnerProfile
from apps.accounts.profiles import PROFILE_FIELDS


class MeInput(serializers.Serializer):
    """Types only: the rule between the fields is the service's."""

    display_name = serializers.CharField(
        max_length=DISPLAY_NAME_MAX_LENGTH,
        allow_blank=True,
        required=False,
        help_text="Shown on leaderboards instead of the username; blank for none.",
    )
    show_on_leaderboards = serializers.BooleanField(
        required=False, help_text="Appear on leaderboards under the display name (which must then be set)."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # A misspelt or read-only field would otherwise be dropped silently and look as if it were saved.
        initial = self.initial_data if isinstance(self.initial_data, dict) else {}
        unknown = sorted(set(initial) - set(PROFILE_FIELDS))
        if unknown:
            raise serializers.ValidationError({name: ["This field cannot be changed."] for name in unknown})
        return attrs


class MeOutput(serializers.Serializer):
    username = serializers.CharField(read_only=True)
    email = serializers.EmailField(read_only=True, allow_blank=True)
    is_staff = serializers.BooleanField(read_only=True)
    display_name = serializers.CharField(allow_blank=True)
    show_on_leaderboards = serializers.BooleanField()

    def to_representation(self, profile: LearnerProfile) -> dict[str, Any]:
        learner = profile.learner
        return {
            "username": learner.get_username(),
            "email": getattr(learner, "email", ""),
            "is_staff": bool(getattr(learner, "is_staff", False)),
            "display_name": profile.display_name,
            "show_on_leaderboards": profile.show_on_leaderboards,
        }
