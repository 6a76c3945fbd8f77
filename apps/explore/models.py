"""The stored layout of each course's concept constellation, and learners' visits to explorer regions."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from apps.content.models import Course, ExplorerRegion


class ConstellationLayout(models.Model):
    """A course's 3D constellation coordinates, computed once per change of its concepts or links.

    `digest` fingerprints what the layout was computed from (visible concept slugs, their links and
    the layout parameters); a request whose content hashes differently recomputes and replaces it.
    """

    course = models.OneToOneField(Course, on_delete=models.CASCADE, related_name="constellation_layout")
    digest = models.CharField(max_length=64)
    positions = models.JSONField(help_text='{"concept-slug": [x, y, z], ...}')
    computed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"Constellation layout of {self.course_id} ({self.digest[:12]})"


class RegionVisit(models.Model):
    """A learner opened an explorer region. Append-only: visits are never changed or deleted."""

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="region_visits")
    region = models.ForeignKey(ExplorerRegion, on_delete=models.PROTECT, related_name="visits")
    visited_at = models.DateTimeField()
    client_visit_id = models.UUIDField(default=uuid.uuid4, help_text="Made by the client to make retries safe.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["learner", "client_visit_id"], name="region_visit_client_id_unique"),
        ]
        indexes = [
            models.Index(fields=["learner", "region", "visited_at"], name="region_visit_learner_region"),
            models.Index(fields=["learner", "visited_at"], name="region_visit_learner_time"),
        ]

    def __str__(self) -> str:
        return f"Visit of {self.region_id} by {self.learner_id} at {self.visited_at}"
