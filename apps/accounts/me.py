"""The learner's own account as /me/ shows it: profile, scheduling settings and email settings together.

Each part keeps its own service and rules (apps.srs for scheduling, apps.reminders for email); this
module only reads them together and applies a change to several of them all or nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from apps.accounts.models import LearnerProfile
from apps.accounts.profiles import PROFILE_FIELDS, ProfileInvalid, learner_profile_get, learner_profile_update
from apps.reminders.models import ReminderPreference
from apps.reminders.services import reminder_preference_get, reminder_preference_update
from apps.srs.models import SchedulingSettings
from apps.srs.settings.config import scheduling_settings_get
from apps.srs.settings.rules import SettingsInvalid
from apps.srs.settings.services import scheduling_settings_update

# The scheduling settings a learner sees on their account; the rest stay on /settings/scheduling/.
SCHEDULING_FIELDS: tuple[str, ...] = (
    "timezone",
    "day_start_hour",
    "desired_retention",
    "new_cards_per_day",
    "max_reviews_per_day",
)
EMAIL_SETTINGS_FIELDS: tuple[str, ...] = ("review_reminders", "reminder_hour")
SECTIONS: dict[str, tuple[str, ...]] = {"scheduling": SCHEDULING_FIELDS, "email_settings": EMAIL_SETTINGS_FIELDS}
CHANGEABLE_FIELDS: tuple[str, ...] = (*PROFILE_FIELDS, *SECTIONS)
REMINDER_HOUR_RANGE = (0, 23)


@dataclass(frozen=True)
class Account:
    learner: Any
    profile: LearnerProfile
    scheduling: SchedulingSettings
    reminders: ReminderPreference


def account_get(*, learner: Any) -> Account:
    """Everything /me/ shows; rows never saved are shown with their defaults and are not created."""
    return Account(
        learner=learner,
        profile=learner_profile_get(learner=learner),
        scheduling=scheduling_settings_get(learner=learner),
        reminders=reminder_preference_get(learner=learner),
    )


def unknown_fields(changes: Mapping[str, Any]) -> dict[str, list[str]]:
    """Fields that cannot be changed here, by dotted name; a dropped misspelling would look saved."""
    unknown = {name: ["This field cannot be changed."] for name in changes if name not in CHANGEABLE_FIELDS}
    for section, names in SECTIONS.items():
        nested = changes.get(section)
        if isinstance(nested, Mapping):
            unknown |= {f"{section}.{name}": ["No such setting."] for name in nested if name not in names}
    return dict(sorted(unknown.items()))


def _reminder_errors(changes: Mapping[str, Any]) -> dict[str, list[str]]:
    hour = changes.get("reminder_hour")
    low, high = REMINDER_HOUR_RANGE
    if hour is not None and (isinstance(hour, bool) or not isinstance(hour, int) or not low <= hour <= high):
        return {"reminder_hour": [f"Expected a whole number from {low} to {high}, got {hour!r}."]}
    return {}


def _merge(errors: dict[str, list[str]], more: Mapping[str, list[str]]) -> None:
    # A field the request gave badly may also break a rule of its section: both messages are kept.
    for name, messages in more.items():
        kept = errors.setdefault(name, [])
        kept.extend(message for message in messages if message not in kept)


def account_update(
    *, learner: Any, changes: Mapping[str, Any], refused: Mapping[str, list[str]] | None = None
) -> Account:
    """Apply a change to any parts of the account, all or nothing, with every part's problems reported.

    `refused`: fields the request already failed to give usably, by dotted name; reported together
    with the problems of the changes given, and nothing is changed.
    """
    errors: dict[str, list[str]] = {name: list(messages) for name, messages in (refused or {}).items()}
    _merge(errors, unknown_fields(changes))
    scheduling: SchedulingSettings | None = None
    reminders: ReminderPreference | None = None
    with transaction.atomic():
        # Each service runs in its own savepoint; one that refuses leaves the others to be checked
        # too, and raising below rolls back whatever the others saved.
        profile_changes = {name: changes[name] for name in PROFILE_FIELDS if name in changes}
        if profile_changes:
            try:
                learner_profile_update(learner=learner, changes=profile_changes)
            except ProfileInvalid as invalid:
                _merge(errors, invalid.fields)
        if "scheduling" in changes:
            try:
                scheduling = scheduling_settings_update(learner=learner, changes=changes["scheduling"])
            except SettingsInvalid as invalid:
                _merge(errors, {f"scheduling.{name}": messages for name, messages in invalid.fields.items()})
        if "email_settings" in changes:
            email = changes["email_settings"]
            if reminder_errors := _reminder_errors(email):
                _merge(errors, {f"email_settings.{name}": messages for name, messages in reminder_errors.items()})
            elif email:
                reminders = reminder_preference_update(
                    learner=learner, enabled=email.get("review_reminders"), local_hour=email.get("reminder_hour")
                )
        if errors:
            raise ProfileInvalid(
                "The account settings are invalid; nothing was changed: "
                + "; ".join(f"{name}: {' '.join(messages)}" for name, messages in errors.items()),
                fields=errors,
            )
    # The learner may carry the settings authentication loaded before the change: use the saved ones.
    return Account(
        learner=learner,
        profile=learner_profile_get(learner=learner),
        scheduling=scheduling if scheduling is not None else scheduling_settings_get(learner=learner),
        reminders=reminders if reminders is not None else reminder_preference_get(learner=learner),
    )
