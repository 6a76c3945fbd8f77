"""Changes to course content made outside course files (the admin's bulk actions)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils import timezone


def content_archived_set(*, items: QuerySet[Any], archived: bool) -> int:
    """Archive or restore archivable content; returns how many rows changed."""
    # update() skips auto_now, so updated_at is set here to keep "last changed" honest.
    return items.exclude(archived=archived).update(archived=archived, updated_at=timezone.now())
