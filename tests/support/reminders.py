"""Learners with reminders set, as the reminder tests make them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from django.contrib.auth import get_user_model

from apps.accounts.profiles import learner_profile_update
from apps.content.models import Card
from apps.reminders.models import ReminderPreference
from apps.srs.models import CardMemory, SchedulingSettings

PARIS = ZoneInfo("Europe/Paris")


def make_learner(
    username: str,
    *,
    timezone: str = "Europe/Paris",
    hour: int = 18,
    due_cards: int = 3,
    display_name: str | None = None,
) -> int:
    learner = get_user_model().objects.create_user(
        username=username, email=f"{username}@example.com", password="a long enough passphrase"
    )
    if display_name is not None:
        learner_profile_update(learner=learner, changes={"display_name": display_name})
    SchedulingSettings.objects.create(learner=learner, timezone=timezone)
    ReminderPreference.objects.create(learner=learner, enabled=True, local_hour=hour)
    long_ago = datetime(2026, 1, 1, tzinfo=UTC)
    for card in Card.objects.order_by("pk")[:due_cards]:
        CardMemory.objects.create(
            learner=learner,
            card=card,
            stage=2,
            stability=3.0,
            difficulty=5.0,
            due=long_ago + timedelta(days=3),
            last_review=long_ago,
            first_review=long_ago,
            reps=2,
        )
    return learner.pk


def local(year: int, month: int, day: int, hour: int, minute: int = 0, zone: ZoneInfo = PARIS) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=zone).astimezone(UTC)
