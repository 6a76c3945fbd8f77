"""The learner's activity feed: a registry of sources merged newest first, paged with a time cursor.

A source is a function `(*, learner, before, limit) -> list[ActivityItem]` returning the learner's
own items strictly older than `before` (all when None), newest first, at most `limit` of them.
Adding a kind of activity is one such function and one line in ACTIVITY_SOURCES.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from django.db.models import Count, DateTimeField, ExpressionWrapper, Max, Min, Q
from django.db.models.functions import TruncDate

from apps.common.clock import time_text
from apps.common.stored import time_after, time_clamped_expression
from apps.exercises.models import Submission, SubmissionStatus
from apps.explore.models import RegionVisit
from apps.games.models import MatchBoard
from apps.quizzes.models import QuizAttempt
from apps.srs.core.scheduling import Rating
from apps.srs.models import DeckPass, ReviewLog, ReviewSource
from apps.srs.settings.config import scheduling_settings_get

# Times are stored to the microsecond: "older than t plus one microsecond" means "at t or older".
_TICK = timedelta(microseconds=1)
_TIE_FETCH_START = 64


@dataclass(frozen=True)
class ActivityItem:
    kind: str
    # Unique within the kind; with `at`, orders items that share a time.
    key: str
    at: datetime
    summary: str
    detail: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.key}"


class ActivitySource(Protocol):
    def __call__(self, *, learner: Any, before: datetime | None, limit: int) -> list[ActivityItem]: ...


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def review_items(*, learner: Any, before: datetime | None, limit: int) -> list[ActivityItem]:
    """One item per deck per learner's day: how many reviews, and how many were Again.

    Grouped in the database, so a day of two hundred reviews is one row read and one item shown. An
    item's time is its latest review; reviews later undone are left out. Only reviews from memory
    decks: match boards and quizzes are reported by their own sources.
    """
    settings = scheduling_settings_get(learner=learner)
    # The day starts at the learner's day-start hour in their zone (elapsed hours: a daylight-saving
    # change moves that boundary by an hour on one night).
    shifted = ExpressionWrapper(
        time_clamped_expression("reviewed_at") - timedelta(hours=settings.day_start_hour), output_field=DateTimeField()
    )
    groups = (
        ReviewLog.objects.standing()
        .filter(learner=learner, source=ReviewSource.DECK)
        .annotate(day=TruncDate(shifted, tzinfo=ZoneInfo(settings.timezone)))
        .values("day", "card__deck_id", "card__deck__slug", "card__deck__title")
        .annotate(
            at=Max("reviewed_at"),
            first_at=Min("reviewed_at"),
            reviews=Count("pk"),
            again=Count("pk", filter=Q(rating=Rating.AGAIN)),
        )
        .order_by("-at", "card__deck_id")
    )
    if before is not None:
        groups = groups.filter(at__lt=before)
    return [
        ActivityItem(
            kind="review",
            key=f"{row['card__deck_id']}:{row['day'].isoformat()}",
            at=row["at"],
            summary=f"Reviewed {_plural(row['reviews'], 'card')} in {row['card__deck__title']}",
            detail={
                "deck": row["card__deck__slug"],
                "deck_title": row["card__deck__title"],
                "day": row["day"].isoformat(),
                "reviews": row["reviews"],
                "again": row["again"],
                "first_at": time_text(row["first_at"]),
            },
        )
        for row in groups[:limit]
    ]


def deck_pass_items(*, learner: Any, before: datetime | None, limit: int) -> list[ActivityItem]:
    passes = DeckPass.objects.filter(learner=learner).select_related("deck").order_by("-finished_at", "-pk")
    if before is not None:
        passes = passes.filter(finished_at__lt=before)
    return [
        ActivityItem(
            kind="deck_pass",
            key=str(item.pk),
            at=item.finished_at,
            summary=f"Finished {item.deck.title}: {item.known}/{item.total} known",
            detail={
                "pass_id": item.pk,
                "deck": item.deck.slug,
                "deck_title": item.deck.title,
                "known": item.known,
                "total": item.total,
                "started_at": time_text(item.started_at),
            },
        )
        for item in passes[:limit]
    ]


def region_visit_items(*, learner: Any, before: datetime | None, limit: int) -> list[ActivityItem]:
    visits = RegionVisit.objects.filter(learner=learner).select_related("region__scene").order_by("-visited_at", "-pk")
    if before is not None:
        visits = visits.filter(visited_at__lt=before)
    return [
        ActivityItem(
            kind="region_visit",
            key=str(visit.pk),
            at=visit.visited_at,
            summary=f"Explored {visit.region.title} in {visit.region.scene.title}",
            detail={
                "visit_id": visit.pk,
                "scene": visit.region.scene.slug,
                "scene_title": visit.region.scene.title,
                "region": visit.region.slug,
                "region_title": visit.region.title,
            },
        )
        for visit in visits[:limit]
    ]


def _submission_outcome(submission: Submission) -> str:
    if submission.status == SubmissionStatus.DONE:
        verdict = submission.verdict.replace("_", " ")
        return f"{verdict}, score {submission.score:g}" if submission.score is not None else verdict
    if submission.status == SubmissionStatus.FAILED:
        return "could not be graded"
    return "grading"


def submission_items(*, learner: Any, before: datetime | None, limit: int) -> list[ActivityItem]:
    submissions = (
        Submission.objects.filter(learner=learner)
        .select_related("exercise")
        .only("created_at", "status", "verdict", "score", "exercise__slug", "exercise__title")
        .order_by("-created_at", "-pk")
    )
    if before is not None:
        submissions = submissions.filter(created_at__lt=before)
    return [
        ActivityItem(
            kind="submission",
            key=str(submission.pk),
            at=submission.created_at,
            summary=f"Submitted {submission.exercise.title}: {_submission_outcome(submission)}",
            detail={
                "submission_id": submission.pk,
                "exercise": submission.exercise.slug,
                "exercise_title": submission.exercise.title,
                "status": submission.status,
                "verdict": submission.verdict or None,
                "score": submission.score,
            },
        )
        for submission in submissions[:limit]
    ]


def match_board_items(*, learner: Any, before: datetime | None, limit: int) -> list[ActivityItem]:
    """Finished Match the Pairs boards, at the moment the last pair was matched."""
    boards = (
        MatchBoard.objects.filter(learner=learner, finished_at__isnull=False)
        .select_related("deck")
        .order_by("-finished_at", "-pk")
    )
    if before is not None:
        boards = boards.filter(finished_at__lt=before)
    items = []
    for board in boards[:limit]:
        assert board.finished_at is not None and board.score_ms is not None  # noqa: S101 - filtered above
        best = " (personal best)" if board.personal_best else ""
        items.append(
            ActivityItem(
                kind="match",
                key=str(board.pk),
                at=board.finished_at,
                summary=f"Matched {board.pairs} pairs of {board.deck.title} in {board.score_ms / 1000:.1f} s{best}",
                detail={
                    "board_id": str(board.pk),
                    "deck": board.deck.slug,
                    "deck_title": board.deck.title,
                    "pairs": board.pairs,
                    "score_ms": board.score_ms,
                    "wrong_attempts": board.wrong_attempts,
                    "personal_best": board.personal_best,
                },
            )
        )
    return items


def quiz_attempt_items(*, learner: Any, before: datetime | None, limit: int) -> list[ActivityItem]:
    """Finished quiz attempts, at the moment they were finished."""
    attempts = (
        QuizAttempt.objects.filter(learner=learner, finished_at__isnull=False)
        .select_related("quiz")
        .annotate(answered=Count("answers"))
        .order_by("-finished_at", "-pk")
    )
    if before is not None:
        attempts = attempts.filter(finished_at__lt=before)
    items = []
    for attempt in attempts[:limit]:
        assert attempt.finished_at is not None  # noqa: S101 - filtered above
        score = attempt.score or 0.0
        items.append(
            ActivityItem(
                kind="quiz",
                key=str(attempt.pk),
                at=attempt.finished_at,
                summary=f"Finished the quiz {attempt.quiz.title}: {score:.0%}",
                detail={
                    "attempt_id": attempt.pk,
                    "quiz": attempt.quiz.slug,
                    "quiz_title": attempt.quiz.title,
                    "score": attempt.score,
                    "answered": attempt.answered,
                    "questions": attempt.question_count,
                },
            )
        )
    return items


ACTIVITY_SOURCES: dict[str, ActivitySource] = {
    "review": review_items,
    "deck_pass": deck_pass_items,
    "region_visit": region_visit_items,
    "submission": submission_items,
    "match": match_board_items,
    "quiz": quiz_attempt_items,
}
ACTIVITY_KINDS: tuple[str, ...] = tuple(ACTIVITY_SOURCES)


@dataclass(frozen=True)
class ActivityPage:
    items: list[ActivityItem]
    # The `before` of the next, older page; None when this page is the last.
    next_before: datetime | None


def _newest_first(items: list[ActivityItem]) -> list[ActivityItem]:
    # Two stable sorts: newest first, and items of one time in a fixed order.
    return sorted(sorted(items, key=lambda item: (item.kind, item.key)), key=lambda item: item.at, reverse=True)


def _items_at(sources: Sequence[ActivitySource], *, learner: Any, moment: datetime) -> list[ActivityItem]:
    """Every item at exactly this time, however many: asked for in growing batches until one falls short."""
    found: list[ActivityItem] = []
    for source in sources:
        limit = _TIE_FETCH_START
        while True:
            items = source(learner=learner, before=time_after(moment, _TICK), limit=limit)
            if len(items) < limit or items[-1].at < moment:
                break
            limit *= 2
        found.extend(item for item in items if item.at == moment)
    return _newest_first(found)


def activity_page(
    *, learner: Any, kinds: Sequence[str] | None = None, before: datetime | None = None, limit: int = 50
) -> ActivityPage:
    """One page of the learner's activity, newest first, strictly older than `before`.

    Each source gives its newest limit+1 items, which is enough to know the newest `limit` of all. A
    page never ends inside a group of items sharing one time, since the next page starts strictly
    before the last time shown: it stops just before such a group, or, when the group alone fills the
    page, holds the whole group. So paging through returns every item exactly once.
    """
    sources = [ACTIVITY_SOURCES[kind] for kind in dict.fromkeys(kinds or ACTIVITY_KINDS)]
    merged: list[ActivityItem] = []
    for source in sources:
        merged.extend(source(learner=learner, before=before, limit=limit + 1))
    merged = _newest_first(merged)
    if len(merged) <= limit:
        return ActivityPage(items=merged, next_before=None)
    boundary = merged[limit].at
    page = [item for item in merged[:limit] if item.at > boundary]
    if not page:
        page = _items_at(sources, learner=learner, moment=boundary)
    return ActivityPage(items=page, next_before=page[-1].at)
