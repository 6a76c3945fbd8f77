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
