"""Reading a learner's scheduling settings, and the core's SchedulerConfig they give (writes: settings.services)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from datetime import datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from apps.srs.core.scheduling import DEFAULT_DAY_START_HOUR, DEFAULT_PARAMETERS, SchedulerConfig
from apps.srs.models import SchedulingSettings
from apps.srs.settings.rules import scheduling_settings_in_force

_SETTINGS_RELATION = SchedulingSettings._meta.get_field("learner").remote_field


def scheduling_settings_get(*, learner: Any) -> SchedulingSettings:
    """The learner's settings; an unsaved row with the defaults when they never changed any.

    Token authentication loads them with the user (apps.accounts.authentication); otherwise, or
    when they were not loaded in this request, they are read here.
    """
    if _SETTINGS_RELATION.is_cached(learner):
        cached = _SETTINGS_RELATION.get_cached_value(learner)
        found = cached if isinstance(cached, SchedulingSettings) else None
    else:
        found = SchedulingSettings.objects.filter(learner=learner).select_related("profile").first()
    # Whatever the row holds, what is read is valid: a stored value that breaks a rule reads as its default.
    return scheduling_settings_in_force(found) if found is not None else SchedulingSettings(learner=learner)


def scheduler_config_from_settings(settings: SchedulingSettings) -> SchedulerConfig:
    return SchedulerConfig(
        desired_retention=float(settings.desired_retention),
        learning_steps=tuple(int(s) for s in settings.learning_steps),
        relearning_steps=tuple(int(s) for s in settings.relearning_steps),
        maximum_interval=int(settings.maximum_interval_days),
        parameters=tuple(float(w) for w in settings.fsrs_parameters)
        if settings.fsrs_parameters
        else DEFAULT_PARAMETERS,
        timezone=settings.timezone,
        day_start_hour=int(settings.day_start_hour),
    )


def scheduler_config_get(*, learner: Any) -> SchedulerConfig:
    """The config the learner's cards are scheduled with now: their settings as `scheduling_settings_get` reads them."""
    return scheduler_config_from_settings(scheduling_settings_get(learner=learner))


def scheduler_config_json(config: SchedulerConfig) -> dict[str, Any]:
    data = asdict(config)
    if data["stability_factor"] == 1.0:
        # Left out where it changes nothing, so a profile stored before it existed keeps its digest.
        del data["stability_factor"]
    return {key: list(value) if isinstance(value, tuple) else value for key, value in data.items()}


def scheduler_config_from_json(data: dict[str, Any]) -> SchedulerConfig:
    return SchedulerConfig(
        desired_retention=float(data["desired_retention"]),
        learning_steps=tuple(data["learning_steps"]),
        relearning_steps=tuple(data["relearning_steps"]),
        maximum_interval=int(data["maximum_interval"]),
        parameters=tuple(float(w) for w in data["parameters"]),
        # Profiles stored before elapsed time counted learner days name no day: they read as the default one.
        timezone=str(data.get("timezone", "UTC")),
        day_start_hour=int(data.get("day_start_hour", DEFAULT_DAY_START_HOUR)),
        stability_factor=float(data.get("stability_factor", 1.0)),
    )


def scheduler_config_digest(config: SchedulerConfig) -> str:
    return hashlib.sha256(json.dumps(scheduler_config_json(config), sort_keys=True).encode()).hexdigest()


def learner_day_bounds(settings: SchedulingSettings, *, now: datetime) -> tuple[datetime, datetime]:
    """The start and end of the learner's current day: local midnight shifted by day_start_hour.

    Built from the local calendar date, so a daylight-saving change makes a 23- or 25-hour day,
    never a skipped or doubled one.
    """
    zone = ZoneInfo(settings.timezone)
    local = now.astimezone(zone) - timedelta(hours=settings.day_start_hour)
    day = local.date()
    start = datetime.combine(day, time(settings.day_start_hour), tzinfo=zone)
    end = datetime.combine(day + timedelta(days=1), time(settings.day_start_hour), tzinfo=zone)
    return start, end
