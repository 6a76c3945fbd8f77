"""What the database's day counts (apps.srs.reviews.due_load) must agree with: the same answers read row by row.

Each reads every row it needs and counts the days in Python with scheduling.learner_day, so a test can
hold the SQL to it on any data.
"""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime

from apps.srs.core.scheduling import MemoryStage, MemoryState, learner_day
from apps.srs.models import CardMemory, ReviewKind, ReviewLog, SchedulingSettings
from apps.srs.reviews.due_load import ReviewedSince


def due_counts_read_here(
    *, learner_id: int, settings: SchedulingSettings, spans: list[tuple[date, date]]
) -> dict[date, int]:
    """Review cards due per learner day within `spans`: in review, not suspended, card not archived."""
    days = Counter(
        learner_day(due, timezone=settings.timezone, day_start_hour=settings.day_start_hour)
        for due in CardMemory.objects.filter(
            learner_id=learner_id, stage=MemoryStage.REVIEW, suspended=False, card__archived=False
        ).values_list("due", flat=True)
    )
    return {day: count for day, count in days.items() if any(first <= day <= last for first, last in spans)}


def reviewed_since_read_here(
    *, learner_id: int, settings: SchedulingSettings, day_start: datetime
) -> list[ReviewedSince]:
    """Each card's first standing review since `day_start`, its state before it, and the card as it is now."""

    def day_of(moment: datetime) -> date:
        return learner_day(moment, timezone=settings.timezone, day_start_hour=settings.day_start_hour)

    undone = set(ReviewLog.objects.filter(undo_of__isnull=False).values_list("undo_of_id", flat=True))
    first_before: dict[int, object] = {}
    for log in ReviewLog.objects.filter(
        learner_id=learner_id, kind=ReviewKind.REVIEW, reviewed_at__gte=day_start
    ).order_by("reviewed_at", "pk"):
        if log.pk not in undone and log.card_id not in first_before:
            first_before[log.card_id] = log.state_before
    found = []
    for memory in CardMemory.objects.filter(
        learner_id=learner_id, last_review__gte=day_start, card_id__in=first_before
    ).select_related("card"):
        before = first_before[memory.card_id]
        if before is not None and not isinstance(before, dict):
            continue
        state = MemoryState.from_dict(before) if before is not None else None
        found.append(
            ReviewedSince(
                card_id=memory.card_id,
                day_now=day_of(memory.due) if memory.stage == MemoryStage.REVIEW else None,
                day_then=day_of(state.due) if state is not None and state.stage == MemoryStage.REVIEW else None,
                weighs=not (memory.suspended or memory.card.archived),
            )
        )
    return found
