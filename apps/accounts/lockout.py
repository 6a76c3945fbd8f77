"""Failed sign-ins, counted in the database, and the lockouts they lead to, made so that they cannot lock an owner out.

Three kinds of row share one table, each keyed by a keyed hash (HMAC with SECRET_KEY), so the table
never holds an email or an address and a copy of it cannot be matched against a list of either:

- an email *from one address*: LOGIN_LOCKOUT_FAILURES failures lock that address out of that email
  for a window. One attacker stops there, and the owner, elsewhere, signs in as usual.
- an email *from everywhere*: LOGIN_LOCKOUT_ACCOUNT_FAILURES failures (many addresses guessing one
  password) pause sign-in to it for a window from every address that is not known to it;
- an address *known* to an email: one it signed in from within LOGIN_KNOWN_ADDRESS_DAYS. The owner's
  usual places are never paused, and the owner is told of the pause by email.

Unknown emails are counted like known ones, so a lockout says nothing about who has an account. The
counts live in the database, not the cache: sign-in must go on, lockouts included, while the cache is down.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from apps.accounts.email_addresses import email_key
from apps.accounts.models import LoginLockout

_DIGEST_SALT = "apps.accounts.lockout"


def _digest(*parts: str) -> str:
    return salted_hmac(_DIGEST_SALT, "\n".join(parts), algorithm="sha256").hexdigest()


def _account_digest(email: str) -> str:
    # The email alone, as rows were keyed before addresses were counted: their counts carry over.
    return _digest(email_key(email))


def _address_digest(email: str, address: str) -> str:
    return _digest("from", email_key(email), address)


def _known_digest(email: str, address: str) -> str:
    return _digest("known", email_key(email), address)


def _moment(now: float | None) -> datetime:
    return timezone.now() if now is None else datetime.fromtimestamp(now, tz=UTC)


def _seconds_until(until: datetime, at: datetime) -> int:
    return max(1, math.ceil((until - at).total_seconds()))


def login_locked_for(*, email: str, address: str, now: float | None = None) -> int:
    """Seconds until this address may try this email again; 0 when it may now."""
    at = _moment(now)
    rows = dict(
        LoginLockout.objects.filter(
            email_digest__in=[_address_digest(email, address), _account_digest(email), _known_digest(email, address)],
            expires_at__gt=at,
        ).values_list("email_digest", "locked_until")
    )
    waits = []
    if (own := rows.get(_address_digest(email, address))) is not None and own > at:
        waits.append(_seconds_until(own, at))
    paused = rows.get(_account_digest(email))
    if paused is not None and paused > at and _known_digest(email, address) not in rows:
        waits.append(_seconds_until(paused, at))
    return max(waits, default=0)


@dataclass(frozen=True)
class FailureCounted:
    """What a failed sign-in led to: seconds of lockout for its address, and whether it paused the account."""

    locked_for: int
    account_paused: bool


def _count_failure(digest: str, *, limit: int, at: datetime) -> bool:
    """One more failure on this row; True when it reached the limit and locked for a window.

    The row is locked while it is counted, so failures made at the same moment are all counted. The
    window starts at the first failure; reaching the limit locks for a whole window, after which the
    count starts again from nothing.
    """
    window = timedelta(seconds=settings.LOGIN_LOCKOUT_WINDOW_SECONDS)
    row, _ = LoginLockout.objects.select_for_update().get_or_create(email_digest=digest, defaults={"expires_at": at})
    if row.expires_at <= at:
        row.failures, row.expires_at, row.locked_until = 0, at + window, None
    row.failures += 1
    locks = row.failures >= limit
    if locks:
        row.failures, row.expires_at, row.locked_until = 0, at + window, at + window
    row.save(update_fields=["failures", "expires_at", "locked_until"])
    return locks


def login_failure_record(*, email: str, address: str, now: float | None = None) -> FailureCounted:
    """Count a failed sign-in against the email from this address and against the email as a whole."""
    at = _moment(now)
    with transaction.atomic():
        locks_address = _count_failure(_address_digest(email, address), limit=settings.LOGIN_LOCKOUT_FAILURES, at=at)
        pauses_account = _count_failure(_account_digest(email), limit=settings.LOGIN_LOCKOUT_ACCOUNT_FAILURES, at=at)
    return FailureCounted(
        locked_for=settings.LOGIN_LOCKOUT_WINDOW_SECONDS if locks_address else 0, account_paused=pauses_account
    )


def login_succeeded(*, email: str, address: str, now: float | None = None) -> None:
    """A right password: this address's failures no longer count, and the address is known to the email.

    A lockout that a concurrent failure has just started stands.
    """
    at = _moment(now)
    LoginLockout.objects.filter(email_digest=_address_digest(email, address)).exclude(locked_until__gt=at).delete()
    LoginLockout.objects.update_or_create(
        email_digest=_known_digest(email, address),
        defaults={
            "failures": 0,
            "locked_until": None,
            "expires_at": at + timedelta(days=settings.LOGIN_KNOWN_ADDRESS_DAYS),
        },
    )


def login_failures_clear(*, email: str, address: str | None = None) -> None:
    """Forget the email's failures and pause, and this address's lockout: its owner has shown they own it."""
    digests = [_account_digest(email)]
    if address is not None:
        digests.append(_address_digest(email, address))
    LoginLockout.objects.filter(email_digest__in=digests).delete()


def login_lockouts_expire(*, now: float | None = None) -> int:
    """Delete the rows whose window, lockout or knowing is over (they count nothing any more); how many went."""
    deleted, _ = LoginLockout.objects.filter(expires_at__lte=_moment(now)).delete()
    return deleted
