"""Failed sign-ins per account, counted in the shared cache, and the lockout they lead to.

The per-IP login throttle slows one address down; this stops many addresses guessing one account's
password. Counting is keyed by a hash of the normalized email, so the cache never holds addresses,
and unknown emails are counted like known ones, so a lockout says nothing about who has an account.
"""

from __future__ import annotations

import hashlib
import math
import time

from django.conf import settings
from django.core.cache import cache

_PREFIX = "accounts:login"


def normalize_email(email: str) -> str:
    """The form emails are stored, compared and counted in: trimmed and lower-cased throughout."""
    return email.strip().lower()


def _keys(email: str) -> tuple[str, str]:
    digest = hashlib.sha256(normalize_email(email).encode()).hexdigest()
    return f"{_PREFIX}:failures:{digest}", f"{_PREFIX}:locked:{digest}"


def login_locked_for(*, email: str, now: float | None = None) -> int:
    """Seconds until the account may try again; 0 when it is not locked out."""
    _, locked_key = _keys(email)
    until = cache.get(locked_key)
    if until is None:
        return 0
    remaining = float(until) - (time.time() if now is None else now)
    return max(1, math.ceil(remaining)) if remaining > 0 else 0


def login_failure_record(*, email: str, now: float | None = None) -> int:
    """Count a failed sign-in; returns the seconds of lockout it started, 0 when none.

    `add` then `incr` is atomic in Redis, so failures made at the same moment are all counted. The
    window starts at the first failure; reaching the limit locks the account for a whole window.
    """
    window = settings.LOGIN_LOCKOUT_WINDOW_SECONDS
    failures_key, locked_key = _keys(email)
    cache.add(failures_key, 0, timeout=window)
    try:
        failures = cache.incr(failures_key)
    except ValueError:
        # The window ended between add and incr: this failure opens the next one.
        cache.add(failures_key, 1, timeout=window)
        failures = 1
    if failures < settings.LOGIN_LOCKOUT_FAILURES:
        return 0
    started = time.time() if now is None else now
    cache.add(locked_key, started + window, timeout=window)
    # After the lockout, the account starts again with its full number of attempts.
    cache.delete(failures_key)
    return window


def login_failures_clear(*, email: str) -> None:
    """Forget the failures and any lockout of an account, as support staff may need to."""
    cache.delete_many(list(_keys(email)))


def login_failures_reset(*, email: str) -> None:
    """A successful sign-in: earlier failures no longer count towards a lockout."""
    failures_key, _ = _keys(email)
    cache.delete(failures_key)
