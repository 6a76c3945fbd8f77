"""A learner's public profile: the name shown on leaderboards, and whether to appear there at all."""

from __future__ import annotations

from django.conf import settings
from django.db import models

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
