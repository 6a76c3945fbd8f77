"""Everything stored about a learner, as one JSON document they can download (their data, portable).

Each app that stores personal data has one exporter here and one line in EXPORTERS; the document
has one key per line. Exporters read each table once with `.values()` (one query per table, never
one per row) and nest child rows in Python. Each is given the moment the document is made, for the
figures that depend on it (a card's probability of recall).
"""

from __future__ import annotations

import contextlib
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from django.db.models import F

from apps.accounts.models import LearnerProfile
from apps.common.clock import time_text
from apps.exercises.models import Submission
from apps.explore.models import RegionVisit
from apps.games.models import MatchAttempt, MatchBoard, MatchItem
from apps.quizzes.models import LessonAnswer, QuestionMemory, QuizAnswer, QuizAttempt
from apps.reminders.models import ReminderEmail, ReminderPreference
from apps.srs.models import (
    AnkiHistoryImport,
    CardMemory,
    DeckPass,
    LearnerMemoryModel,
    ParameterFit,
    Reschedule,
    ReviewLog,
    SchedulingSettings,
    StoredRetentionAdvice,
)
from apps.srs.reviews.recall import RecallBasis
from apps.srs.settings.memory_models import card_configs_get
from apps.srs.settings.rules import SETTINGS_FIELDS

EXPORT_FORMAT_VERSION = 1

Exporter = Callable[[Any, datetime], dict[str, Any]]

_USER_FIELDS = (
    "id",
    "username",
    "email",
    "first_name",
    "last_name",
    "date_joined",
    "last_login",
    "is_active",
    "is_staff",
)


def _portable(value: Any) -> Any:
    # A float column may hold NaN or an infinity, which JSON has no number for: they are written as
    # the words JavaScript uses for them, so the export stays valid JSON and loses nothing.
    if isinstance(value, float) and not math.isfinite(value):
        return str(value).replace("inf", "Infinity").replace("nan", "NaN")
    return value


# Stored memory states (a review's before and after) hold their times as text, some from before
# every time was written with Z: the export writes them as every response does.
_STATE_TIMES = ("due", "last_review")


def _state_portable(state: Any) -> Any:
    if not isinstance(state, dict):
        return state
    written = dict(state)
    for name in _STATE_TIMES:
        value = written.get(name)
        if isinstance(value, str):
            # A value that does not parse is shown as stored: the export never fails on a row.
            with contextlib.suppress(ValueError):
                written[name] = time_text(datetime.fromisoformat(value))
    return written


def _rows(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {name: _state_portable(value) if name in _STATE_COLUMNS else _portable(value) for name, value in row.items()}
        for row in rows
    ]


_STATE_COLUMNS = frozenset({"state_before", "state_after"})


def _first(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    found = _rows(rows)
    return found[0] if found else None


def _grouped(rows: Iterable[Mapping[str, Any]], *, key: str) -> dict[Any, list[dict[str, Any]]]:
    """Child rows by their parent's id, the parent id left out of each child."""
    groups: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        child = dict(row)
        groups[child.pop(key)].append({name: _portable(value) for name, value in child.items()})
    return groups


def accounts_export(learner: Any, now: datetime) -> dict[str, Any]:
    # Never the password hash: a copy of the export must not help anyone sign in.
    return {
        "user": {name: getattr(learner, name) for name in _USER_FIELDS},
        "profile": _first(
            LearnerProfile.objects.filter(learner=learner).values(
                "display_name", "show_on_leaderboards", "created_at", "updated_at"
            )
        ),
    }


_MEMORY_STATE_FIELDS = ("stage", "step", "stability", "difficulty", "due", "last_review", "reps", "lapses")


def _card_memories(learner: Any, now: datetime) -> list[dict[str, Any]]:
    """The learner's card memories, each with its probability of recall at `now` as every API response gives it."""
    rows = (
        CardMemory.objects.filter(learner=learner)
        .order_by("card__deck__slug", "card__position", "pk")
        .values(
            "card_id",
            "card__slug",
            "card__deck__slug",
            *_MEMORY_STATE_FIELDS,
            "first_review",
            "is_leech",
            "suspended",
            "updated_at",
        )
    )
    basis = RecallBasis(configs=card_configs_get(learner=learner), now=now)
    memories = []
    for row in rows:
        recall = basis.of_memory(
            CardMemory(**{name: row[name] for name in _MEMORY_STATE_FIELDS}), card_id=row["card_id"]
        )
        memories.append(row | {"recall_probability": recall.probability, "recall_computed_at": recall.computed_at})
    return _rows(memories)


def srs_export(learner: Any, now: datetime) -> dict[str, Any]:
    return {
        "scheduling_settings": _first(
            SchedulingSettings.objects.filter(learner=learner).values(*SETTINGS_FIELDS, "updated_at")
        ),
        "card_memories": _card_memories(learner, now),
        "review_log": _rows(
            ReviewLog.objects.filter(learner=learner)
            .order_by("reviewed_at", "pk")
            .values(
                "id",
                "card_id",
                "card__slug",
                "kind",
                "client_review_id",
                "rating",
                "reviewed_at",
                "duration_ms",
                "source",
                "state_before",
                "state_after",
                "undo_of_id",
                "recorded_at",
            )
        ),
        "deck_passes": _rows(
            DeckPass.objects.filter(learner=learner)
            .order_by("finished_at", "pk")
            .values("id", "deck__slug", "client_pass_id", "known", "total", "started_at", "finished_at", "recorded_at")
        ),
        # The uploaded package is left out: it is the learner's own file, and it is removed once the import ends.
        "anki_history_imports": _rows(
            AnkiHistoryImport.objects.filter(learner=learner)
            .order_by("created_at", "pk")
            .values(
                "id",
                "status",
                "package_bytes",
                "total_entries",
                "matched",
                "applied",
                "skipped",
                "error_message",
                "created_at",
                "finished_at",
            )
        ),
        "reschedules": _rows(
            Reschedule.objects.filter(learner=learner)
            .order_by("created_at", "pk")
            .values(
                "id",
                "reason",
                "status",
                "cards_total",
                "cards_examined",
                "cards_moved",
                "error_message",
                "created_at",
                "started_at",
                "finished_at",
            )
        ),
        "parameter_fits": _rows(
            ParameterFit.objects.filter(learner=learner)
            .order_by("created_at", "pk")
            .values(
                "id",
                "status",
                "trigger",
                "parameters",
                "fitted_on_reviews",
                "evaluated_on_reviews",
                "log_loss",
                "rmse_bins",
                "previous_parameters",
                "previous_log_loss",
                "previous_rmse_bins",
                "adopted",
                "reason",
                "created_at",
                "started_at",
                "finished_at",
            )
        ),
        "memory_model_decisions": _rows(
            LearnerMemoryModel.objects.filter(learner=learner)
            .order_by("memory_model__finished_at", "pk")
            .values(
                "memory_model__course__slug",
                "memory_model__finished_at",
                "uses_course_model",
                "log_factor",
                "first_stability_log_factors",
                "evaluated_on_reviews",
                "log_loss",
                "previous_log_loss",
            )
        ),
        "retention_advice": _rows(
            StoredRetentionAdvice.objects.filter(learner=learner)
            .order_by("requested_at", "pk")
            .values(
                "id",
                "status",
                "parameters_source",
                "desired_retention",
                "deck_size_bucket",
                "advised_retention",
                "advised_reviews_per_day",
                "advised_minutes_per_day",
                "advised_seconds_per_remembered_card",
                "current_reviews_per_day",
                "current_minutes_per_day",
                "current_seconds_per_remembered_card",
                "review_seconds_source",
                "error_message",
                "requested_at",
                "computed_at",
            )
        ),
    }


def reminders_export(learner: Any, now: datetime) -> dict[str, Any]:
    return {
        "reminder_preference": _first(
            ReminderPreference.objects.filter(learner=learner).values("enabled", "local_hour", "updated_at")
        ),
        "reminder_emails": _rows(
            ReminderEmail.objects.filter(learner=learner)
            .order_by("local_date", "pk")
            .values("local_date", "status", "claimed_at", "sent_at", "due_cards", "failure")
        ),
    }


def games_export(learner: Any, now: datetime) -> dict[str, Any]:
    items = _grouped(
        MatchItem.objects.filter(board__learner=learner)
        .order_by("board_id", "term_position")
        .values(
            "board_id",
            "id",
            "card_id",
            "card__slug",
            "term_id",
            "definition_id",
            "term_position",
            "definition_position",
            "missed",
            "matched_at",
        ),
        key="board_id",
    )
    attempts = _grouped(
        MatchAttempt.objects.filter(board__learner=learner)
        .order_by("board_id", "attempted_at", "pk")
        .values(
            "board_id",
            "term_item_id",
            "definition_item_id",
            "correct",
            "attempted_at",
            "penalty_ms",
            "client_attempt_id",
        ),
        key="board_id",
    )
    boards = _rows(
        MatchBoard.objects.filter(learner=learner)
        .order_by("started_at", "pk")
        .values(
            "id",
            "deck__slug",
            "pairs",
            "started_at",
            "expires_at",
            "penalty_per_wrong_ms",
            "matched",
            "wrong_attempts",
            "penalty_ms",
            "finished_at",
            "elapsed_ms",
            "score_ms",
            "personal_best",
        )
    )
    for board in boards:
        board["items"] = items.get(board["id"], [])
        board["attempts"] = attempts.get(board["id"], [])
    return {"match_boards": boards}


def quizzes_export(learner: Any, now: datetime) -> dict[str, Any]:
    answers = _grouped(
        QuizAnswer.objects.filter(attempt__learner=learner)
        .order_by("attempt_id", "answered_at", "pk")
        .values("attempt_id", "question_id", "question__slug", "response", "correct", "credit", "answered_at"),
        key="attempt_id",
    )
    attempts = _rows(
        QuizAttempt.objects.filter(learner=learner)
        .order_by("started_at", "pk")
        .values("id", "quiz__slug", "mode", "question_ids", "choice_orders", "started_at", "finished_at", "score")
    )
    for attempt in attempts:
        attempt["answers"] = answers.get(attempt["id"], [])
    return {
        "quiz_attempts": attempts,
        "lesson_answers": _rows(
            LessonAnswer.objects.filter(learner=learner)
            .order_by("answered_at", "pk")
            .values(
                "question_id",
                "question__slug",
                "response",
                "choice_keys",
                "correct",
                "credit",
                "scheduled",
                "answered_at",
                "client_answer_id",
            )
        ),
        "question_memories": _rows(
            QuestionMemory.objects.filter(learner=learner)
            .order_by("question__slug")
            .values(
                "question_id",
                "question__slug",
                "stage",
                "step",
                "stability",
                "difficulty",
                "due",
                "last_review",
                "reps",
                "lapses",
                "updated_at",
            )
        ),
    }


def explore_export(learner: Any, now: datetime) -> dict[str, Any]:
    return {
        "region_visits": _rows(
            RegionVisit.objects.filter(learner=learner)
            .order_by("visited_at", "pk")
            .values("region__scene__slug", "region__slug", "visited_at", "client_visit_id")
        ),
    }


def exercises_export(learner: Any, now: datetime) -> dict[str, Any]:
    return {
        "submissions": _rows(
            Submission.objects.filter(learner=learner)
            .order_by("created_at", "pk")
            .values(
                "id",
                "exercise__slug",
                "code",
                "client_submission_id",
                "status",
                "verdict",
                "score",
                "result",
                "created_at",
                "started_at",
                "finished_at",
                # The document's name for it, as the API's.
                error=F("error_message"),
            )
        ),
    }


# One line per app that stores personal data; the key names the app's part of the document.
EXPORTERS: dict[str, Exporter] = {
    "accounts": accounts_export,
    "srs": srs_export,
    "reminders": reminders_export,
    "games": games_export,
    "quizzes": quizzes_export,
    "explore": explore_export,
    "exercises": exercises_export,
}


def account_export(*, learner: Any, now: datetime) -> dict[str, Any]:
    """The whole document: when it was made, in which format, then each app's part."""
    document: dict[str, Any] = {"format_version": EXPORT_FORMAT_VERSION, "exported_at": now}
    for name, exporter in EXPORTERS.items():
        document[name] = exporter(learner, now)
    return document
