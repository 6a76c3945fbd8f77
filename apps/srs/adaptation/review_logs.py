"""A course's review log as researchers read one: standing reviews, learners under pseudonyms."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from apps.srs.core.evaluation import ExportedReview
from apps.srs.models import ReviewLog


def course_review_log(*, course_id: int) -> Iterator[ExportedReview]:
    """Every standing review of the course's cards, oldest first; learners numbered in order of first review.

    The numbers are this export's own: nothing in the log names a learner or links two exports. An
    account deleted before the export has no reviews left to export.
    """
    pseudonyms: dict[int, str] = {}
    rows = (
        ReviewLog.objects.standing()
        .of_course(course_id)
        .order_by("reviewed_at", "pk")
        .values_list("learner_id", "card__deck__slug", "card__slug", "reviewed_at", "rating", "duration_ms")
    )
    for learner_id, deck, card, reviewed_at, rating, duration_ms in rows.iterator(chunk_size=5000):
        pseudonym = pseudonyms.setdefault(learner_id, f"learner-{len(pseudonyms) + 1}")
        moment: datetime = reviewed_at
        yield ExportedReview(
            learner=pseudonym, card=f"{deck}/{card}", reviewed_at=moment, rating=rating or 0, duration_ms=duration_ms
        )
