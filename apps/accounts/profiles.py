"""Reading and changing a learner's profile; the row is created by the first change."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction

from apps.accounts.models import DISPLAY_NAME_MAX_LENGTH, LearnerProfile
from apps.common.errors import DomainError
from apps.common.fields import line_character_refused

PROFILE_FIELDS: tuple[str, ...] = ("display_name", "show_on_leaderboards")


class ProfileInvalid(DomainError):
    code = "invalid"


def learner_profile_get(*, learner: Any) -> LearnerProfile:
    """The learner's profile; an unsaved row with the defaults when they never changed it."""
    found = LearnerProfile.objects.filter(learner=learner).first()
    return found if found is not None else LearnerProfile(learner=learner)


def learner_profile_errors(values: Mapping[str, Any]) -> dict[str, list[str]]:
    """What is wrong with a profile as a whole; shared with the admin so both enforce the same rules."""
    errors: dict[str, list[str]] = {}
    name = values["display_name"]
    if not isinstance(name, str) or len(name) > DISPLAY_NAME_MAX_LENGTH:
        errors["display_name"] = [f"Expected text of at most {DISPLAY_NAME_MAX_LENGTH} characters."]
    elif character := line_character_refused(name):
        # The API's fields refuse these already; the admin and scripts come through here alone.
        errors["display_name"] = [f"Contains {character}, a control, invisible or text-direction character."]
    elif values["show_on_leaderboards"] and not name.strip():
        # Leaderboards never fall back to the username, so a listed learner needs a name to show.
        errors["display_name"] = ["Set a display name to appear on leaderboards."]
    return errors


def learner_profile_update(*, learner: Any, changes: Mapping[str, Any]) -> LearnerProfile:
    """Apply the changes all or nothing; the rules are checked on the profile as it would be saved."""
    unknown = sorted(set(changes) - set(PROFILE_FIELDS))
    if unknown:
        raise ProfileInvalid(
            "Only display_name and show_on_leaderboards can be changed.",
            fields={name: ["This field cannot be changed."] for name in unknown},
        )
    with transaction.atomic():
        # Locked so two changes at once cannot each pass the checks and together break them.
        profile, _ = LearnerProfile.objects.select_for_update().get_or_create(learner=learner)
        values = {name: changes.get(name, getattr(profile, name)) for name in PROFILE_FIELDS}
        if isinstance(values["display_name"], str):
            values["display_name"] = values["display_name"].strip()
        errors = learner_profile_errors(values)
        if errors:
            raise ProfileInvalid(
                "The profile is invalid; nothing was changed: "
                + "; ".join(f"{name}: {' '.join(messages)}" for name, messages in errors.items()),
                fields=errors,
            )
        for name, value in values.items():
            setattr(profile, name, value)
        profile.save()
    return profile
