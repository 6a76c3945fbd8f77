"""Changing a learner's scheduling settings, all or nothing; a change that moves intervals queues a reschedule."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import IntegrityError, transaction

from apps.common.jobs import job_publish_after_commit
from apps.srs.core.load_balancing import WEEKDAYS
from apps.srs.core.scheduling import DEFAULT_PARAMETERS, SchedulerConfig
from apps.srs.jobs import RESCHEDULES
from apps.srs.models import Reschedule, RescheduleReason, SchedulerProfile, SchedulingSettings
from apps.srs.settings.config import (
    scheduler_config_digest,
    scheduler_config_from_settings,
    scheduler_config_json,
    scheduling_settings_get,
)
from apps.srs.settings.rules import (
    SETTINGS_FIELDS,
    SettingsInvalid,
    scheduling_settings_errors,
    scheduling_settings_in_force,
    scheduling_settings_values,
)

_SAVE_ATTEMPTS = 2


def scheduling_settings_update(
    *, learner: Any, changes: Mapping[str, Any], refused: Mapping[str, list[str]] | None = None
) -> SchedulingSettings:
    """Apply `changes` to the learner's settings, all or nothing; the row is created on the first change.

    `refused`: settings the request already failed to give usably, by name; they are reported
    together with whatever is wrong with `changes`, and nothing is changed. Reviews already made
    keep the scheduler profile they were made with, so nothing in the review log is rewritten: new
    values take effect from the next review, except that a new desired retention or new weights
    also queue a reschedule of the learner's review cards once the change commits.
    """
    unknown = {name: ["No such setting."] for name in sorted(set(changes) - set(SETTINGS_FIELDS))}
    if unknown:
        raise _invalid(unknown | dict(refused or {}))
    for attempt in range(_SAVE_ATTEMPTS):
        try:
            with transaction.atomic():
                return _update_locked(learner=learner, changes=changes, refused=refused or {})
        except IntegrityError:
            # Two first changes at once: the loser finds the winner's row on its second attempt.
            if attempt == _SAVE_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def _locked_row(*, learner: Any) -> SchedulingSettings | None:
    return SchedulingSettings.objects.select_for_update().filter(learner=learner).first()


def _invalid(errors: Mapping[str, list[str]]) -> SettingsInvalid:
    return SettingsInvalid(
        "The settings are invalid; nothing was changed: "
        + "; ".join(f"{name}: {' '.join(messages)}" for name, messages in errors.items()),
        fields=dict(errors),
    )


def _update_locked(*, learner: Any, changes: Mapping[str, Any], refused: Mapping[str, list[str]]) -> SchedulingSettings:
    settings = _locked_row(learner=learner)
    if settings is None:
        if not changes and not refused:
            return SchedulingSettings(learner=learner)
        settings = SchedulingSettings(learner=learner)
    values = scheduling_settings_values(scheduling_settings_in_force(settings)) | dict(changes)
    # A refused setting keeps its stored value here, so the rules between settings are still checked.
    errors = dict(refused) | {
        name: messages for name, messages in scheduling_settings_errors(values).items() if name not in refused
    }
    if errors:
        raise _invalid(errors)
    if not changes:
        return settings
    schedule_before = _schedule_inputs(settings)
    for name, value in changes.items():
        setattr(settings, name, _stored(name, value))
    if settings.pk is None:
        settings.save(force_insert=True)
    else:
        settings.save()
    _reschedule_if_changed(settings, before=schedule_before)
    return settings


def _schedule_inputs(settings: SchedulingSettings) -> tuple[float, tuple[float, ...]]:
    """What a review card's interval follows from, besides its memory: desired retention and the weights in use."""
    parameters = tuple(float(weight) for weight in settings.fsrs_parameters or DEFAULT_PARAMETERS)
    return float(settings.desired_retention), parameters


def _reschedule_if_changed(settings: SchedulingSettings, *, before: tuple[float, tuple[float, ...]]) -> None:
    """Queue a reschedule of the learner's review cards when the change moves their intervals."""
    retention, parameters = _schedule_inputs(settings)
    if parameters != before[1]:
        reason = RescheduleReason.PARAMETERS
    elif retention != before[0]:
        reason = RescheduleReason.DESIRED_RETENTION
    else:
        return
    learner_reschedule_start(learner_id=settings.learner_id, reason=reason)


def _stored(name: str, value: Any) -> Any:
    # JSON numbers may arrive as ints; the scheduler and the profile digest expect floats.
    if name == "desired_retention":
        return float(value)
    if name == "fsrs_parameters" and value is not None:
        return [float(weight) for weight in value]
    if name == "easy_days":
        # JSON numbers may arrive as ints; the days are kept in week order, for whoever reads the row.
        return {day: float(value[day]) for day in WEEKDAYS if day in value}
    return value


def learner_reschedule_start(*, learner_id: int, reason: str) -> None:
    """Queue a reschedule of the learner's review cards under their settings in force, once this transaction commits.

    `reason` says what changed: "parameters", "desired_retention" or "memory_model". The run reads the settings
    when it starts, so a change made while one is queued is covered by it and queues nothing more;
    a change made while one runs queues the next.
    """
    if reason not in RescheduleReason.values:
        raise ValueError(f"unknown reschedule reason {reason!r}")
    from_profile_id = (
        SchedulingSettings.objects.filter(learner_id=learner_id).values_list("profile_id", flat=True).first()
    )
    try:
        with transaction.atomic():
            row = Reschedule.objects.create(learner_id=learner_id, reason=reason, from_profile_id=from_profile_id)
    except IntegrityError:
        # The learner's one queued run (reschedule_one_queued) is there already.
        return
    # Robust: the row is stored whatever the broker does, and jobs_resume hands it over again.
    job_publish_after_commit(RESCHEDULES, row)


def review_scheduling_ensure(*, learner: Any) -> tuple[SchedulingSettings, SchedulerConfig, int]:
    """Settings, scheduler config and profile id for recording reviews; stores what is missing of them.

    The settings row remembers its profile, so once a learner has reviewed this is one query; the
    row is created (with the defaults) by the first review, and re-pointed after a settings change.
    """
    settings = scheduling_settings_get(learner=learner)
    config = scheduler_config_from_settings(settings)
    if settings.profile is not None and settings.profile.digest == scheduler_config_digest(config):
        return settings, config, settings.profile.pk
    profile_id = scheduler_profile_ensure(config)
    settings.profile_id = profile_id
    if settings.pk is None:
        # A concurrent first review may create the row first: the IntegrityError makes the caller retry.
        settings.save(force_insert=True)
    else:
        SchedulingSettings.objects.filter(pk=settings.pk).update(profile_id=profile_id)
    return settings, config, profile_id


def scheduler_profile_ensure(config: SchedulerConfig) -> int:
    """The id of the stored profile for this configuration, created on first use."""
    payload = scheduler_config_json(config)
    digest = scheduler_config_digest(config)
    profile = SchedulerProfile.objects.filter(digest=digest).first()
    if profile is None:
        try:
            with transaction.atomic():
                profile = SchedulerProfile.objects.create(digest=digest, config=payload)
        except IntegrityError:
            profile = SchedulerProfile.objects.get(digest=digest)
    return profile.pk
