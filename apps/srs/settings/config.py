"""A learner's scheduling settings as the core's SchedulerConfig, and its stored profile."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from datetime import datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.db import IntegrityError, transaction

from apps.srs.core.scheduling import DEFAULT_DAY_START_HOUR, DEFAULT_PARAMETERS, SchedulerConfig
from apps.srs.models import SchedulerProfile, SchedulingSettings
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


def _config_json(config: SchedulerConfig) -> dict[str, Any]:
    data = asdict(config)
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
    )


def _config_digest(config: SchedulerConfig) -> str:
    return hashlib.sha256(json.dumps(_config_json(config), sort_keys=True).encode()).hexdigest()


def review_scheduling_get(*, learner: Any) -> tuple[SchedulingSettings, SchedulerConfig, int]:
    """Settings, scheduler config and profile id for recording reviews.

    The settings row remembers its profile, so once a learner has reviewed this is one query; the
    row is created (with the defaults) by the first review, and re-pointed after a settings change.
    """
    settings = scheduling_settings_get(learner=learner)
    config = scheduler_config_from_settings(settings)
    if settings.profile is not None and settings.profile.digest == _config_digest(config):
        return settings, config, settings.profile.pk
    profile_id = scheduler_profile_id(config)
    settings.profile_id = profile_id
    if settings.pk is None:
        # A concurrent first review may create the row first: the IntegrityError makes the caller retry.
        settings.save(force_insert=True)
    else:
        SchedulingSettings.objects.filter(pk=settings.pk).update(profile_id=profile_id)
    return settings, config, profile_id


def scheduler_profile_id(config: SchedulerConfig) -> int:
    """The id of the stored profile for this configuration, created on first use."""
    payload = _config_json(config)
    digest = _config_digest(config)
    profile = SchedulerProfile.objects.filter(digest=digest).first()
    if profile is None:
        try:
            with transaction.atomic():
                profile = SchedulerProfile.objects.create(digest=digest, config=payload)
        except IntegrityError:
            profile = SchedulerProfile.objects.get(digest=digest)
    return profile.pk


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
