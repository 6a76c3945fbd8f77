"""A learner's statistics: due forecast, reviews per day, true retention, streaks and per-deck mastery.

Days are the learner's own: their time zone, starting at their day-start hour. The database groups
by local calendar date and by whether the local hour is before the day-start hour; a moment before
that hour belongs to the previous day. Counting wall-clock hours, not elapsed ones, keeps a
daylight-saving change from skipping or doubling a day, exactly as `learner_day_bounds` does.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import BooleanField, Case, Count, DateField, Exists, F, OuterRef, Q, QuerySet, Value, When
from django.db.models.functions import ExtractHour, TruncDate

from apps.common.stored import time_clamped_expression
from apps.content.models import Deck, visible_card_filter
from apps.srs.core.scheduling import MemoryStage, Rating
from apps.srs.models import CardMemory, ReviewLog, SchedulingSettings
from apps.srs.reviews.recall import RecallBasis, mastery_contribution
from apps.srs.settings.config import learner_day_bounds, scheduling_settings_get
from apps.srs.settings.memory_models import card_configs_get

FORECAST_DAYS = 30
# A year of daily counts: what a calendar heatmap shows.
HEATMAP_DAYS = 365
RETENTION_WEEKS = 52
RETENTION_MONTHS = 12

_VISIBLE_DECK = Q(archived=False, lesson__archived=False, lesson__course__archived=False)


@dataclass(frozen=True)
class DayCount:
    day: date
    count: int


@dataclass(frozen=True)
class RetentionPeriod:
    """Reviews of cards that were in the review stage, and how many of them were not rated Again."""

    start: date
    reviews: int
    passed: int

    @property
    def retention(self) -> float | None:
        return self.passed / self.reviews if self.reviews else None


@dataclass(frozen=True)
class Streak:
    current: int
    longest: int


@dataclass(frozen=True)
class DeckStats:
    deck: Deck
    total: int
    new: int
    learning: int
    review: int
    relearning: int
    suspended: int
    # Mean probability of recall now over the deck's cards, a new card counting as 0.
    mastery: float


@dataclass(frozen=True)
class LearnerStats:
    today: date
    day_start: datetime
    day_end: datetime
    timezone: str
    due_forecast: list[DayCount]
    reviews_per_day: list[DayCount]
    retention_by_week: list[RetentionPeriod]
    retention_by_month: list[RetentionPeriod]
    streak: Streak
    decks: list[DeckStats]


def learner_stats_get(*, learner: Any, now: datetime, deck_slug: str | None = None) -> LearnerStats:
    """Everything the statistics page shows, in a fixed number of queries whatever the history's size.

    With deck_slug, only that deck's cards count; a slug no deck has leaves nothing to count.
    """
    settings = scheduling_settings_get(learner=learner)
    day_start, day_end = learner_day_bounds(settings, now=now)
    today = day_start.date()
    review_days = _review_days(learner=learner, settings=settings, deck_slug=deck_slug, today=today)
    heatmap_from = today - timedelta(days=HEATMAP_DAYS - 1)
    return LearnerStats(
        today=today,
        day_start=day_start,
        day_end=day_end,
        timezone=settings.timezone,
        due_forecast=_due_forecast(learner=learner, settings=settings, deck_slug=deck_slug, today=today),
        reviews_per_day=[
            DayCount(day, counts.reviews) for day, counts in sorted(review_days.items()) if day >= heatmap_from
        ],
        retention_by_week=_retention_by_week(review_days, today=today),
        retention_by_month=_retention_by_month(review_days, today=today),
        streak=streak_of_days(set(review_days), today=today),
        decks=_deck_stats(learner=learner, settings=settings, deck_slug=deck_slug, now=now),
    )


@dataclass(frozen=True)
class DailyGoal:
    """Today's reviews against the learner's goal, and how many days in a row they have met it."""

    goal: int
    reviews_today: int
    # Days in a row, up to today, with at least `goal` reviews; today not met yet does not break it. 0 without a goal.
    streak: int
    day_end: datetime

    @property
    def met(self) -> bool:
        return self.goal > 0 and self.reviews_today >= self.goal


# A goal streak is counted back at most this far: reading a whole history for it is not worth it.
GOAL_STREAK_DAYS = 365


def daily_goal_get(*, learner: Any, now: datetime) -> DailyGoal:
    """Today's standing reviews (every source: decks, Match, quizzes) and the goal streak, in one query."""
    settings = scheduling_settings_get(learner=learner)
    day_start, day_end = learner_day_bounds(settings, now=now)
    today = day_start.date()
    logs = ReviewLog.objects.standing().filter(
        learner=learner, reviewed_at__gte=_day_start(settings, today - timedelta(days=GOAL_STREAK_DAYS))
    )
    rows = with_local_day(logs, field="reviewed_at", settings=settings).values("local_date", "early")
    per_day: dict[date, int] = defaultdict(int)
    for row in rows.annotate(reviews=Count("pk")).order_by():
        per_day[learner_day(row["local_date"], row["early"])] += row["reviews"]
    goal = settings.daily_goal
    met_days = {day for day, reviews in per_day.items() if day <= today and reviews >= goal} if goal else set()
    return DailyGoal(
        goal=goal,
        reviews_today=per_day.get(today, 0),
        streak=streak_of_days(met_days, today=today).current,
        day_end=day_end,
    )


def _day_start(settings: SchedulingSettings, day: date) -> datetime:
    return datetime.combine(day, time(settings.day_start_hour), tzinfo=ZoneInfo(settings.timezone))


def with_local_day(queryset: QuerySet[Any], *, field: str, settings: SchedulingSettings) -> QuerySet[Any]:
    """Annotate `local_date` and `early` (local hour before the day start): the day is local_date - early.

    A stored time outside the computable range counts at its bound, so its local day, and the day
    before it, are dates that both PostgreSQL and Python hold.
    """
    zone = ZoneInfo(settings.timezone)
    moment = time_clamped_expression(field)
    return queryset.annotate(
        local_date=TruncDate(moment, tzinfo=zone),
        local_hour=ExtractHour(moment, tzinfo=zone),
    ).annotate(
        early=Case(
            When(local_hour__lt=settings.day_start_hour, then=Value(True)),
            default=Value(False),
            output_field=BooleanField(),
        )
    )


def learner_day(local_date: date, early: bool) -> date:
    return local_date - timedelta(days=1) if early else local_date


@dataclass
class _DayReviews:
    reviews: int = 0
    mature: int = 0
    mature_passed: int = 0


def _review_days(
    *, learner: Any, settings: SchedulingSettings, deck_slug: str | None, today: date
) -> dict[date, _DayReviews]:
    """Per learner-local day up to today, all time: reviews that stand (neither undone nor undos)."""
    logs = ReviewLog.objects.standing().filter(learner=learner)
    if deck_slug is not None:
        logs = logs.filter(card__deck__slug=deck_slug)
    mature = Q(state_before__stage=int(MemoryStage.REVIEW))
    rows = (
        with_local_day(logs, field="reviewed_at", settings=settings)
        .values("local_date", "early")
        .annotate(
            reviews=Count("pk"),
            mature=Count("pk", filter=mature),
            mature_passed=Count("pk", filter=mature & ~Q(rating=int(Rating.AGAIN))),
        )
        .order_by()
    )
    days: dict[date, _DayReviews] = defaultdict(_DayReviews)
    for row in rows:
        day = learner_day(row["local_date"], row["early"])
        # A review stamped a little ahead of the server's clock may fall in tomorrow; it is not shown yet.
        if day > today:
            continue
        totals = days[day]
        totals.reviews += row["reviews"]
        totals.mature += row["mature"]
        totals.mature_passed += row["mature_passed"]
    return dict(days)


def _due_forecast(*, learner: Any, settings: SchedulingSettings, deck_slug: str | None, today: date) -> list[DayCount]:
    """Cards falling due on each of the next FORECAST_DAYS days; today's count includes overdue cards."""
    today_start = _day_start(settings, today)
    memories = CardMemory.objects.filter(
        visible_card_filter("card__"),
        learner=learner,
        suspended=False,
        due__lt=_day_start(settings, today + timedelta(FORECAST_DAYS)),
    )
    if deck_slug is not None:
        memories = memories.filter(card__deck__slug=deck_slug)
    # Overdue cards are folded into today in the database, so the rows do not grow with the backlog's age.
    overdue = Q(due__lt=today_start)
    rows = (
        with_local_day(memories, field="due", settings=settings)
        .annotate(
            forecast_date=Case(When(overdue, then=Value(today)), default="local_date", output_field=DateField()),
            forecast_early=Case(When(overdue, then=Value(False)), default="early", output_field=BooleanField()),
        )
        .values("forecast_date", "forecast_early")
        .annotate(cards=Count("pk"))
        .order_by()
    )
    counts: dict[date, int] = defaultdict(int)
    for row in rows:
        counts[learner_day(row["forecast_date"], row["forecast_early"])] += row["cards"]
    days = [today + timedelta(days=offset) for offset in range(FORECAST_DAYS)]
    return [DayCount(day, counts.get(day, 0)) for day in days]


def _retention_by_week(days: dict[date, _DayReviews], *, today: date) -> list[RetentionPeriod]:
    """The last RETENTION_WEEKS weeks, Monday to Sunday, this one last."""
    this_week = today - timedelta(days=today.weekday())
    starts = [this_week - timedelta(weeks=back) for back in reversed(range(RETENTION_WEEKS))]
    totals: dict[date, list[int]] = {start: [0, 0] for start in starts}
    for day, counts in days.items():
        bucket = totals.get(day - timedelta(days=day.weekday()))
        if bucket is not None:
            bucket[0] += counts.mature
            bucket[1] += counts.mature_passed
    return [RetentionPeriod(start, *totals[start]) for start in starts]


def _month_back(month: date, back: int) -> date:
    index = month.year * 12 + month.month - 1 - back
    return date(index // 12, index % 12 + 1, 1)


def _retention_by_month(days: dict[date, _DayReviews], *, today: date) -> list[RetentionPeriod]:
    """The last RETENTION_MONTHS calendar months, this one last."""
    this_month = today.replace(day=1)
    starts = [_month_back(this_month, back) for back in reversed(range(RETENTION_MONTHS))]
    totals: dict[date, list[int]] = {start: [0, 0] for start in starts}
    for day, counts in days.items():
        bucket = totals.get(day.replace(day=1))
        if bucket is not None:
            bucket[0] += counts.mature
            bucket[1] += counts.mature_passed
    return [RetentionPeriod(start, *totals[start]) for start in starts]


def streak_of_days(days: set[date], *, today: date) -> Streak:
    """Consecutive days with a review; today not studied yet does not break the current streak."""
    end = today if today in days else today - timedelta(days=1)
    current = 0
    while end - timedelta(days=current) in days:
        current += 1
    longest = run = 0
    previous: date | None = None
    for day in sorted(days):
        run = run + 1 if previous is not None and day - previous == timedelta(days=1) else 1
        longest = max(longest, run)
        previous = day
    return Streak(current=current, longest=longest)


def _deck_stats(*, learner: Any, settings: SchedulingSettings, deck_slug: str | None, now: datetime) -> list[DeckStats]:
    """Per deck studied (or the one asked for): its cards by state, and mastery."""
    # visible_card_filter seen from the deck's side: the deck, its lesson and course, and each card.
    active_cards = Count(
        "cards",
        filter=Q(cards__archived=False, archived=False, lesson__archived=False, lesson__course__archived=False),
    )
    if deck_slug is not None:
        decks_query = Deck.objects.filter(_VISIBLE_DECK, slug=deck_slug)
    else:
        studied = CardMemory.objects.filter(visible_card_filter("card__"), learner=learner, card__deck=OuterRef("pk"))
        decks_query = Deck.objects.filter(_VISIBLE_DECK, Exists(studied))
    decks = list(
        decks_query.annotate(card_count=active_cards).order_by(
            "lesson__course__title", "lesson__position", "position", "pk"
        )
    )
    if not decks:
        return []
    memories = (
        CardMemory.objects.filter(visible_card_filter("card__"), learner=learner, card__deck__in=[d.pk for d in decks])
        .annotate(deck_pk=F("card__deck_id"))
        .only(
            "card_id", "stage", "step", "stability", "difficulty", "due", "last_review", "reps", "lapses", "suspended"
        )
    )
    basis = RecallBasis(configs=card_configs_get(learner=learner, settings=settings), now=now)
    stages: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    recall: dict[int, float] = defaultdict(float)
    for memory in memories:
        # A suspended card counts only as suspended; its memory still counts towards mastery.
        stage = "suspended" if memory.suspended else MemoryStage(memory.stage).name.lower()
        stages[memory.deck_pk][stage] += 1
        recall[memory.deck_pk] += mastery_contribution(basis.of_memory(memory, card_id=memory.card_id))
    result = []
    for item in decks:
        counts = stages[item.pk]
        total = item.card_count
        result.append(
            DeckStats(
                deck=item,
                total=total,
                new=total - sum(counts.values()),
                learning=counts["learning"],
                review=counts["review"],
                relearning=counts["relearning"],
                suspended=counts["suspended"],
                mastery=recall[item.pk] / total if total else 0.0,
            )
        )
    return result
