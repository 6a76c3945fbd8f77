"""A learner's public profile: the name shown on leaderboards, and whether to appear there at all."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from knox.models import AbstractAuthToken

DISPLAY_NAME_MAX_LENGTH = 50


class LearnerProfile(models.Model):
    """Created on the first change; a learner without a row has the defaults (no name, not listed)."""

    learner = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="learner_profile")
    display_name = models.CharField(
        max_length=DISPLAY_NAME_MAX_LENGTH, blank=True, help_text="Shown to other learners instead of the username."
    )
    show_on_leaderboards = models.BooleanField(
        default=False, help_text="Opt-in: list this learner's best scores, by display name, on leaderboards."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            # The service refuses this too; the constraint keeps admin edits and scripts honest.
            models.CheckConstraint(
                condition=models.Q(show_on_leaderboards=False) | ~models.Q(display_name=""),
                name="leaderboard_needs_display_name",
            ),
        ]

    def __str__(self) -> str:
        return f"Profile of {self.learner}"


class LoginLockout(models.Model):
    """Failed sign-ins for one email and the lockout they led to; the row means nothing after `expires_at`.

    Keyed by a keyed hash of the normalized email (see apps.accounts.lockout), never the address itself.
    Kept in the database rather than the cache so that an outage or restart of the cache neither stops
    sign-in nor forgets a lockout.
    """

    email_digest = models.CharField(max_length=64, primary_key=True)
    # Failures counted in the window that ends at `expires_at`; reset to 0 when they lock the account.
    failures = models.PositiveIntegerField(default=0)
    # The end of the counting window, or of the lockout while there is one: expired rows are deleted.
    expires_at = models.DateTimeField(db_index=True)
    locked_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(locked_until__isnull=True) | models.Q(locked_until__lte=models.F("expires_at")),
                name="lockout_within_row_lifetime",
            ),
        ]

    def __str__(self) -> str:
        return f"Sign-in failures of {self.email_digest[:12]}…"


class AccountEmailKind(models.TextChoices):
    PASSWORD_RESET = "password_reset", "Password reset link"
    REGISTRATION = "registration", "Registration: confirm the address, or be told it has an account"
    SIGN_IN_PAUSED = "sign_in_paused", "Sign-in paused after many failures"


class AccountEmailStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    # Claimed by a worker, whose relay has it now; handed back to the queue if no answer is recorded in time.
    SENDING = "sending", "Being sent"
    SENT = "sent", "Sent"
    # Nothing to send: a reset asked for an address no active account has.
    NOT_SENT = "not_sent", "Nothing to send"
    FAILED = "failed", "Failed after every retry"


class AccountEmail(models.Model):
    """An account email to send, and the record of sending it: the outbox between a request and the mail relay.

    The request only adds the row, the same row whether or not the address has an account, so neither
    the answer nor its timing tells. A worker reads the account and writes the message when it sends;
    no link or secret is stored here.
    """

    kind = models.CharField(max_length=32, choices=AccountEmailKind.choices)
    to = models.CharField(max_length=254, help_text="The canonical address it is for.")
    # The registration a REGISTRATION email confirms; deleted with it.
    registration = models.ForeignKey(
        "accounts.PendingRegistration", null=True, blank=True, on_delete=models.CASCADE, related_name="emails"
    )
    status = models.CharField(
        max_length=16, choices=AccountEmailStatus.choices, default=AccountEmailStatus.QUEUED, db_index=True
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(help_text="A queued email is handed to a worker again from then on.")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["status", "next_attempt_at"], name="account_email_due")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.get_status_display()})"


class PendingRegistration(models.Model):
    """A sign-up waiting for its address to be confirmed; the account is created from it when the link is used.

    Until then nothing exists that a sign-in or another registration could tell apart from an unknown address.
    """

    email = models.CharField(max_length=254, db_index=True)
    password_hash = models.CharField(max_length=128)
    display_name = models.CharField(max_length=DISPLAY_NAME_MAX_LENGTH)
    timezone = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return f"Registration {self.pk} waiting for confirmation"


DEVICE_NAME_MAX_LENGTH = 100


class DeviceToken(AbstractAuthToken):
    """One signed-in device: its API token (stored as a digest only), its name and when it expires.

    The expiry moves forward as the token is used (REST_KNOX's AUTO_REFRESH), so a device in use stays
    signed in and a token left unused, or leaked and forgotten, stops working.
    """

    # The id the learner names a device by; the digest is the key, and the token's first characters
    # (token_key) are part of the secret.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    device_name = models.CharField(max_length=DEVICE_NAME_MAX_LENGTH, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["expiry"], name="device_token_expiry")]

    def __str__(self) -> str:
        return f"{self.device_name or 'Unnamed device'} of {self.user_id}"
