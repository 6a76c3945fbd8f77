"""Signed-in devices: each sign-in gives its device a token of its own, which the learner can list and revoke.

Tokens are django-rest-knox's: stored as a SHA-512 digest, with an expiry that use moves on (see
REST_KNOX in the settings). Signing out ends one device; "sign out everywhere" and a new password end all.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from apps.accounts.models import DEVICE_NAME_MAX_LENGTH, DeviceToken
from apps.common.errors import NotFound

# A device that did not say what it is.
UNNAMED_DEVICE = "Unnamed device"


@dataclass(frozen=True)
class IssuedToken:
    """A new device token: `key` is the secret, shown once; only its digest is stored."""

    key: str
    device: DeviceToken


def device_name_clean(name: str | None) -> str:
    name = (name or "").strip()
    return name[:DEVICE_NAME_MAX_LENGTH] or UNNAMED_DEVICE


def device_token_issue(*, user: Any, device_name: str | None) -> IssuedToken:
    """A token for one more device; past TOKENS_PER_ACCOUNT, the devices used least recently are signed out."""
    with transaction.atomic():
        instance, key = DeviceToken.objects.create(
            user=user, device_name=device_name_clean(device_name), last_used_at=timezone.now()
        )
        kept = (
            DeviceToken.objects.filter(user=user)
            .order_by(F("last_used_at").desc(nulls_last=True), "-created")
            .values_list("pk", flat=True)[: settings.TOKENS_PER_ACCOUNT]
        )
        DeviceToken.objects.filter(user=user).exclude(pk__in=list(kept)).exclude(pk=instance.pk).delete()
    return IssuedToken(key=key, device=instance)


def device_tokens_of(*, user: Any, now: datetime | None = None) -> QuerySet[DeviceToken]:
    """The learner's signed-in devices that have not expired, the most recently used first."""
    return (
        DeviceToken.objects.filter(user=user, expiry__gt=now or timezone.now())
        .order_by(F("last_used_at").desc(nulls_last=True), "-created")
        .only("public_id", "device_name", "created", "last_used_at", "expiry", "user_id")
    )


def device_token_revoke(*, token: DeviceToken) -> None:
    """Sign out the one device using this token; the next request with it is a 401."""
    DeviceToken.objects.filter(pk=token.pk).delete()


def device_revoke(*, user: Any, public_id: uuid.UUID) -> None:
    """Sign out one of the learner's devices, by its id; another learner's device is not found."""
    deleted, _ = DeviceToken.objects.filter(user=user, public_id=public_id).delete()
    if not deleted:
        raise NotFound(f"No signed-in device {public_id}.")


def device_tokens_revoke_all(*, user: Any) -> int:
    """Sign out every device of the learner; how many were signed out."""
    deleted, _ = DeviceToken.objects.filter(user=user).delete()
    return deleted


def device_tokens_expire(*, now: datetime | None = None) -> int:
    """Delete the tokens that have expired (they sign nobody in any more); how many went."""
    deleted, _ = DeviceToken.objects.filter(expiry__lte=now or timezone.now()).delete()
    return deleted
