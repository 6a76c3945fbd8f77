"""The rules of a learner's scheduling settings: every value checked, and the settings as they take effect.

Pure rules over a SchedulingSettings instance: nothing here reads or writes the database."""

from __future__ import annotations

import math
import zoneinfo
from collections.abc import Mapping
from functools import cache
from itertools import pairwise
from typing import Any

from apps.common.errors import DomainError
from apps.srs.core.load_balancing import WEEKDAYS
from apps.srs.core.scheduling import DEFAULT_PARAMETERS, parameters_valid
from apps.srs.models import SchedulingSettings

SETTINGS_FIELDS: tuple[str, ...] = (
    "desired_retention",
    "learning_steps",
    "relearning_steps",
    "maximum_interval_days",
    "new_cards_per_day",
    "max_reviews_per_day",
    "daily_goal",
    "timezone",
    "day_start_hour",
    "fsrs_parameters",
    "leech_threshold",
    "suspend_leeches",
    "auto_optimize",
    "parameters_pinned",
    "load_balancing",
    "easy_days",
)

# Below 0.70 FSRS schedules so rarely that most cards are forgotten; above 0.99 the workload explodes.
RETENTION_RANGE = (0.70, 0.99)
# Anki's limits; ten steps is already far more than any deck needs.
MAX_STEPS = 10
# A learning step of a day or more overlaps what FSRS itself schedules once the card is learned.
LEARNING_STEP_LIMIT_SECONDS = 24 * 3600
MAXIMUM_INTERVAL_RANGE = (1, 36_500)
NEW_CARDS_PER_DAY_RANGE = (0, 9_999)
MAX_REVIEWS_PER_DAY_RANGE = (0, 99_999)
# Reviews a day; 0 sets no goal.
DAILY_GOAL_RANGE = (0, 9_999)
DAY_START_HOUR_RANGE = (0, 23)
LEECH_THRESHOLD_RANGE = (1, 100)
# Whatever names the tz database holds, these two are host aliases, not zones the database knows.
_NOT_ZONES = frozenset({"localtime", "posixrules"})


class SettingsInvalid(DomainError):
    code = "invalid"


# The shape of a tz database name (Europe/Paris, America/Argentina/Buenos_Aires, Etc/GMT+1), for the
# schema; which names exist is what time_zone_names() says.
TIME_ZONE_NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*$"


@cache
def time_zone_names() -> frozenset[str]:
    # Scanning the tz database reads hundreds of files; the set does not change while the process runs.
    return frozenset(zoneinfo.available_timezones()) - _NOT_ZONES


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)) and math.isfinite(value)


def _int_in_range(value: Any, bounds: tuple[int, int]) -> list[str]:
    low, high = bounds
    if not _is_int(value) or not low <= value <= high:
        return [f"Expected a whole number from {low} to {high}, got {value!r}."]
    return []


def _steps_errors(value: Any, *, longest_seconds: int, limit_text: str) -> list[str]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_STEPS:
        return [f"Expected a list of 1 to {MAX_STEPS} steps in seconds, got {value!r}."]
    if not all(_is_int(step) and step > 0 for step in value):
        return [f"Each step must be a whole number of seconds above 0, got {value!r}."]
    if any(later <= earlier for earlier, later in pairwise(value)):
        return [f"Steps must go up, each longer than the one before, got {value!r}."]
    if value[-1] > longest_seconds:
        return [f"Each step must be {limit_text}, got {value[-1]} seconds."]
    return []


def _parameters_errors(value: Any) -> list[str]:
    if value is None:
        return []
    expected = len(DEFAULT_PARAMETERS)
    if not isinstance(value, list) or len(value) != expected:
        return [f"Expected null (the defaults) or a list of exactly {expected} numbers."]
    if not all(_is_number(weight) for weight in value):
        return ["Every parameter must be a finite number."]
    if not parameters_valid([float(weight) for weight in value]):
        return ["These parameters are outside the ranges FSRS accepts; run the optimizer again."]
    return []


def scheduling_settings_errors(values: Mapping[str, Any]) -> dict[str, list[str]]:
    """What is wrong with a complete set of settings, per field; empty when all is well."""
    errors: dict[str, list[str]] = {}
    retention = values["desired_retention"]
    low, high = RETENTION_RANGE
    if not _is_number(retention) or not low <= retention <= high:
        errors["desired_retention"] = [f"Expected a number from {low} to {high}, got {retention!r}."]
    maximum_interval = values["maximum_interval_days"]
    checks: dict[str, list[str]] = {
        "learning_steps": _steps_errors(
            values["learning_steps"], longest_seconds=LEARNING_STEP_LIMIT_SECONDS - 1, limit_text="under one day"
        ),
        "maximum_interval_days": _int_in_range(maximum_interval, MAXIMUM_INTERVAL_RANGE),
        "new_cards_per_day": _int_in_range(values["new_cards_per_day"], NEW_CARDS_PER_DAY_RANGE),
        "max_reviews_per_day": _int_in_range(values["max_reviews_per_day"], MAX_REVIEWS_PER_DAY_RANGE),
        "daily_goal": _int_in_range(values["daily_goal"], DAILY_GOAL_RANGE),
        "day_start_hour": _int_in_range(values["day_start_hour"], DAY_START_HOUR_RANGE),
        "fsrs_parameters": _parameters_errors(values["fsrs_parameters"]),
        "leech_threshold": _int_in_range(values["leech_threshold"], LEECH_THRESHOLD_RANGE),
    }
    # A relearning step longer than the maximum interval would outlast any interval FSRS may give.
    longest_days = MAXIMUM_INTERVAL_RANGE[1] if checks["maximum_interval_days"] else maximum_interval
    checks["relearning_steps"] = _steps_errors(
        values["relearning_steps"],
        longest_seconds=longest_days * 24 * 3600,
        limit_text=f"at most the maximum interval ({longest_days} days)",
    )
    zone = values["timezone"]
    if not isinstance(zone, str) or zone not in time_zone_names():
        checks["timezone"] = [f"{zone!r} is not an IANA time zone name such as Europe/Paris or America/New_York."]
    for name in ("suspend_leeches", "auto_optimize", "parameters_pinned", "load_balancing"):
        if not isinstance(values[name], bool):
            checks[name] = [f"Expected true or false, got {values[name]!r}."]
    checks["easy_days"] = _easy_days_errors(values["easy_days"])
    errors |= {name: messages for name, messages in checks.items() if messages}
    return errors


def _easy_days_errors(value: Any) -> list[str]:
    if not isinstance(value, dict):
        return [f"Expected an object of weekday names to shares from 0 to 1, got {value!r}."]
    unknown = sorted(str(name) for name in value if name not in WEEKDAYS)
    if unknown:
        return [f"{', '.join(unknown)}: not a weekday; use {', '.join(WEEKDAYS)}."]
    wrong = [name for name, share in value.items() if not _is_number(share) or not 0 <= share <= 1]
    if wrong:
        return [f"Each day's share of a normal load must be a number from 0 to 1; {', '.join(wrong)} is not."]
    return []


def scheduling_settings_values(settings: SchedulingSettings) -> dict[str, Any]:
    return {name: getattr(settings, name) for name in SETTINGS_FIELDS}


def scheduling_settings_in_force(settings: SchedulingSettings) -> SchedulingSettings:
    """The settings as they take effect: a stored value that breaks a rule is read as its default.

    Rows written before a rule existed, imports and admin edits may hold anything their columns
    allow (a JSON list of words as steps, a time zone the tz database no longer has); reading them
    must not fail, so each such value is replaced on the instance, never saved by a read. The next
    change the learner saves stores the defaults in their place.
    """
    defaults = SchedulingSettings()
    # Resetting one field can make another valid or not (relearning steps are bounded by the
    # maximum interval), so the check runs again until nothing is left to reset.
    for _ in SETTINGS_FIELDS:
        errors = scheduling_settings_errors(scheduling_settings_values(settings))
        if not errors:
            break
        for name in errors:
            setattr(settings, name, getattr(defaults, name))
    return settings
