"""Failed sign-ins per account, counted in the database, and the lockout they lead to.

The per-IP login throttle slows one address down; this stops many addresses guessing one account's
password. Counting is keyed by a keyed hash (HMAC with SECRET_KEY) of the normalized email, so the
table never holds addresses and a copy of it cannot be matched against a list of emails; unknown
emails are counted like known ones, so a lockout says nothing about who has an account. The counts
live in the database, not the cache: sign-in must go on, lockouts included, while the cache is down.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from apps.accounts.models import LoginLockout

_DIGEST_SALT = "apps.accounts.lockout"


def normalize_email(email: str) -> str:
    """The form emails are stored, compared and counted in: trimmed and lower-cased throughout."""
    return email.strip().lower()


def _digest(email: str) -> str:
    return salted_hmac(_DIGEST_SALT, normalize_email(email), algorithm="sha256").hexdigest()


def _moment(now: float | None) -> datetime:
    return timezone.now() if now is None else datetime.fromtimestamp(now, tz=UTC)


def login_locked_for(*, email: str, now: float | None = None) -> int:
    """Seconds until the account may try again; 0 when it is not locked out."""
    at = _moment(now)
    until = (
        LoginLockout.objects.filter(email_digest=_digest(email), locked_until__gt=at)
        .values_list("locked_until", flat=True)
        .first()
    )
    if until is None:
        return 0
    return max(1, math.ceil((until - at).total_seconds()))


def login_failure_record(*, email: str, now: float | None = None) -> int:
    """Count a failed sign-in; returns the seconds of lockout it started, 0 when none.

    The row is locked while it is counted, so failures made at the same moment are all counted. The
    window starts at the first failure; reaching the limit locks the account for a whole window.
    """
    at = _moment(now)
    window = timedelta(seconds=settings.LOGIN_LOCKOUT_WINDOW_SECONDS)
    with transaction.atomic():
        row, _ = LoginLockout.objects.select_for_update().get_or_create(
            email_digest=_digest(email), defaults={"expires_at": at}
        )
        if row.expires_at <= at:
            # A new row, or the last window (or lockout) is over: this failure opens the next window.
            row.failures, row.expires_at, row.locked_until = 0, at + window, None
        row.failures += 1
        locks = row.failures >= settings.LOGIN_LOCKOUT_FAILURES
        if locks:
            # After the lockout, the account starts again with its full number of attempts.
            row.failures, row.expires_at, row.locked_until = 0, at + window, at + window
        row.save(update_fields=["failures", "expires_at", "locked_until"])
    return settings.LOGIN_LOCKOUT_WINDOW_SECONDS if locks else 0


def login_failures_clear(*, email: str) -> None:
    """Forget the failures and any lockout of an account, as support staff may need to."""
    LoginLockout.objects.filter(email_digest=_digest(email)).delete()


def login_failures_reset(*, email: str, now: float | None = None) -> None:
    """A successful sign-in: earlier failures no longer count towards a lockout.

    A lockout that a concurrent failure has just started stands.
    """
    LoginLockout.objects.filter(email_digest=_digest(email)).exclude(locked_until__gt=_moment(now)).delete()


def login_lockouts_expire(*, now: float | None = None) -> int:
    """Delete the rows whose window and lockout are over (they count nothing any more); how many went."""
    deleted, _ = LoginLockout.objects.filter(expires_at__lte=_moment(now)).delete()
    return deleted
