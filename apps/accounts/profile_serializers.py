"""Request and response bodies of the learner's own account (/me/)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.accounts.me import REMINDER_HOUR_RANGE, Account, unknown_fields
from apps.accounts.models import DISPLAY_NAME_MAX_LENGTH
from apps.common.fields import JSONBooleanField, JSONIntegerField, JSONNumberField, SingleLineCharField
from apps.common.schema import body_rules
from apps.srs.progress.serializers import SETTINGS_KEYWORDS
from apps.srs.settings.rules import (
    DAY_START_HOUR_RANGE,
    MAX_REVIEWS_PER_DAY_RANGE,
    NEW_CARDS_PER_DAY_RANGE,
    RETENTION_RANGE,
)


@body_rules(
    closed=True,
    ranges={
        "desired_retention": RETENTION_RANGE,
        "new_cards_per_day": NEW_CARDS_PER_DAY_RANGE,
        "max_reviews_per_day": MAX_REVIEWS_PER_DAY_RANGE,
        "day_start_hour": DAY_START_HOUR_RANGE,
    },
    keywords={"timezone": SETTINGS_KEYWORDS["timezone"]},
)
class MeSchedulingInput(serializers.Serializer):
    """Types only: the ranges and what a time zone is are apps.srs's, as on /settings/scheduling/."""

    timezone = SingleLineCharField(
        required=False, help_text="A name the tz database holds, e.g. Europe/Paris; other names are a 400."
    )
    day_start_hour = JSONIntegerField(required=False, help_text="Local hour the learner's day starts, 0-23.")
    desired_retention = JSONNumberField(required=False, help_text="Target recall at review, 0.70-0.99.")
    new_cards_per_day = JSONIntegerField(required=False, help_text="0-9999.")
    max_reviews_per_day = JSONIntegerField(required=False, help_text="0-99999.")


@body_rules(closed=True, ranges={"reminder_hour": REMINDER_HOUR_RANGE})
class MeEmailSettingsInput(serializers.Serializer):
    review_reminders = JSONBooleanField(required=False, help_text="Email a reminder when cards are due.")
    reminder_hour = JSONIntegerField(
        required=False, help_text=f"Local hour to send it at, {REMINDER_HOUR_RANGE[0]}-{REMINDER_HOUR_RANGE[1]}."
    )


@body_rules(closed=True)
class MeInput(serializers.Serializer):
    """Every field and section optional; the rules between fields are the services'."""

    display_name = SingleLineCharField(
        max_length=DISPLAY_NAME_MAX_LENGTH,
        allow_blank=True,
        required=False,
        help_text="Shown on leaderboards instead of the username; blank for none, which only a learner not on "
        "leaderboards (show_on_leaderboards false) may have.",
    )
    show_on_leaderboards = JSONBooleanField(
        required=False, help_text="Appear on leaderboards under the display name (which must then be set)."
    )
    scheduling = MeSchedulingInput(required=False)
    email_settings = MeEmailSettingsInput(required=False)

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        # Read-only and misspelt fields would otherwise be dropped silently and look as if they were
        # saved; they are named together with the other fields' errors, not after them.
        unknown = unknown_fields(data) if isinstance(data, dict) else {}
        try:
            values: dict[str, Any] = super().to_internal_value(data)
        except serializers.ValidationError as invalid:
            detail = invalid.detail if isinstance(invalid.detail, dict) else {}
            raise serializers.ValidationError({**unknown, **detail}) from None
        if unknown:
            raise serializers.ValidationError(unknown)
        return values


class MeSchedulingOutput(serializers.Serializer):
    timezone = serializers.CharField()
    day_start_hour = serializers.IntegerField()
    desired_retention = serializers.FloatField()
    new_cards_per_day = serializers.IntegerField()
    max_reviews_per_day = serializers.IntegerField()


class MeEmailSettingsOutput(serializers.Serializer):
    review_reminders = serializers.BooleanField()
    reminder_hour = serializers.IntegerField()


class MeOutput(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    username = serializers.CharField(read_only=True)
    email = serializers.EmailField(read_only=True, allow_blank=True)
    date_joined = serializers.DateTimeField(read_only=True)
    is_staff = serializers.BooleanField(read_only=True)
    display_name = serializers.CharField(allow_blank=True)
    show_on_leaderboards = serializers.BooleanField()
    scheduling = MeSchedulingOutput()
    email_settings = MeEmailSettingsOutput()

    def to_representation(self, account: Account) -> dict[str, Any]:
        learner = account.learner
        scheduling = account.scheduling
        return {
            "id": learner.pk,
            "username": learner.get_username(),
            "email": getattr(learner, "email", ""),
            "date_joined": serializers.DateTimeField().to_representation(learner.date_joined),
            "is_staff": bool(getattr(learner, "is_staff", False)),
            "display_name": account.profile.display_name,
            "show_on_leaderboards": account.profile.show_on_leaderboards,
            "scheduling": {
                "timezone": scheduling.timezone,
                "day_start_hour": scheduling.day_start_hour,
                "desired_retention": scheduling.desired_retention,
                "new_cards_per_day": scheduling.new_cards_per_day,
                "max_reviews_per_day": scheduling.max_reviews_per_day,
            },
            "email_settings": {
                "review_reminders": account.reminders.enabled,
                "reminder_hour": account.reminders.local_hour,
            },
        }
