"""Every learner read survives whatever the columns allow: rows written straight to the database, at their extremes.

Old rows, imports and admin edits can hold values the API would refuse today. The rows below are
written with the ORM, bypassing every service, and then every GET route of the API is asked for,
so a route added later is covered without changing this test.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from apps.accounts.models import LearnerProfile
from apps.common.jobs import JobStatus
from apps.content.models import Card, Course, ExplorerRegion, PipelineExercise, Question, Quiz
from apps.exercises.models import Submission, SubmissionStatus, Verdict
from apps.explore.models import RegionVisit
from apps.games.models import MatchBoard, MatchItem
from apps.quizzes.models import QuestionMemory, QuizAnswer, QuizAttempt
from apps.srs.core.scheduling import MemoryStage, SchedulerConfig
from apps.srs.models import AnkiHistoryImport, CardMemory, DeckPass, ReviewKind, ReviewLog, SchedulingSettings
from apps.srs.settings.services import scheduler_profile_ensure

pytestmark = pytest.mark.django_db

API_PREFIX = "api/v1/"
YEAR_1 = datetime(1, 1, 1, tzinfo=UTC)
YEAR_9999 = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
INT_MAX = 2**31 - 1
SMALLINT_MAX = 2**15 - 1
# Routes that read nothing of the learner's.
NOT_LEARNER_READS = {"schema/", "docs/"}
DECK = "tf-data-pipelines"


def _api_get_routes() -> Iterator[str]:
    """Every route under /api/v1/ whose view answers GET, as its Django route string."""

    def walk(patterns: list[Any], prefix: str) -> Iterator[tuple[str, Any]]:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern):
                yield route, pattern.callback

    for route, callback in walk(get_resolver().url_patterns, ""):
        view_class = getattr(callback, "view_class", None) or getattr(callback, "cls", None)
        if route.startswith(API_PREFIX) and view_class is not None and hasattr(view_class, "get"):
            yield route.removeprefix(API_PREFIX)


def _time_extremes(model: Any, pk: Any, **fields: datetime) -> None:
    # auto_now and auto_now_add columns ignore values given to save(); an update writes them as given.
    model.objects.filter(pk=pk).update(**fields)


def _memory_extremes() -> list[dict[str, Any]]:
    """Memory states at the edges of their columns, one per card or question they are given to."""
    return [
        {"stage": MemoryStage.REVIEW, "step": None, "stability": 0.0, "difficulty": 0.0, "due": YEAR_1,
         "last_review": YEAR_1, "reps": INT_MAX, "lapses": INT_MAX},
        {"stage": MemoryStage.REVIEW, "step": SMALLINT_MAX, "stability": 1e308, "difficulty": 1e308,
         "due": YEAR_9999, "last_review": YEAR_9999, "reps": 1, "lapses": 0},
        {"stage": MemoryStage.LEARNING, "step": None, "stability": -1e308, "difficulty": -1e308,
         "due": YEAR_1, "last_review": YEAR_9999, "reps": 1, "lapses": 0},
        {"stage": MemoryStage.LEARNING, "step": -SMALLINT_MAX, "stability": 1e-300, "difficulty": 11.0,
         "due": YEAR_9999, "last_review": YEAR_1, "reps": 1, "lapses": 0},
        {"stage": MemoryStage.RELEARNING, "step": SMALLINT_MAX, "stability": float("inf"),
         "difficulty": float("-inf"), "due": YEAR_9999, "last_review": YEAR_9999, "reps": INT_MAX, "lapses": 0},
    ]  # fmt: skip


@pytest.fixture
def extreme_rows(learner, shipped_course) -> dict[str, Any]:
    """One learner whose every row is at an edge of what its columns allow; what the routes' ids are filled from."""
    user_model = get_user_model()
    user_model.objects.filter(pk=learner.pk).update(date_joined=YEAR_1, last_login=YEAR_9999, first_name="")
    LearnerProfile.objects.create(learner=learner, display_name="", show_on_leaderboards=False)
    SchedulingSettings.objects.create(
        learner=learner,
        desired_retention=0.99,
        # Steps and parameters are JSON: anything at all may be stored there.
        learning_steps=["soon", -5, None],
        relearning_steps=[],
        maximum_interval_days=INT_MAX,
        new_cards_per_day=9999,
        max_reviews_per_day=99999,
        timezone="Atlantis/Lost_City",
        day_start_hour=23,
        fsrs_parameters=[1, "two", 3],
        leech_threshold=INT_MAX,
    )
    cards = list(Card.objects.filter(deck__slug=DECK, archived=False).order_by("position"))
    profile_id = scheduler_profile_ensure(SchedulerConfig())
    for card, memory in zip(cards, _memory_extremes(), strict=False):
        created = CardMemory.objects.create(learner=learner, card=card, first_review=YEAR_1, **memory)
        _time_extremes(CardMemory, created.pk, updated_at=YEAR_9999)
    leech = cards[0]
    CardMemory.objects.filter(learner=learner, card=leech).update(is_leech=True, suspended=True)
    for index, (card, at) in enumerate(zip(cards, [YEAR_1, YEAR_9999, YEAR_1, YEAR_9999], strict=False)):
        ReviewLog.objects.create(
            learner=learner,
            card=card,
            kind=ReviewKind.REVIEW,
            client_review_id=uuid.uuid4(),
            rating=1 + index % 4,
            reviewed_at=at,
            duration_ms=INT_MAX if index % 2 else 0,
            state_before={"stage": 2, "stability": "lots"} if index % 2 else None,
            state_after=["not", "a", "state"],
            profile_id=profile_id,
        )
    deck = cards[0].deck
    DeckPass.objects.create(
        learner=learner, deck=deck, known=INT_MAX, total=INT_MAX, started_at=YEAR_1, finished_at=YEAR_9999
    )
    DeckPass.objects.create(learner=learner, deck=deck, known=0, total=1, started_at=YEAR_9999, finished_at=YEAR_9999)
    course = Course.objects.get(pk=deck.lesson.course_id)
    region = ExplorerRegion.objects.filter(scene__course=course, archived=False, scene__archived=False).first()
    assert region is not None
    RegionVisit.objects.create(learner=learner, region=region, visited_at=YEAR_1)
    RegionVisit.objects.create(learner=learner, region=region, visited_at=YEAR_9999)
    exercise = PipelineExercise.objects.filter(archived=False).first()
    assert exercise is not None
    submissions = [
        Submission.objects.create(
            learner=learner, exercise=exercise, code="", status=SubmissionStatus.DONE, verdict=Verdict.ACCEPTED,
            score=1e308, result={"unexpected": [None, {"deep": True}]}, progress=1.0, attempts=SMALLINT_MAX,
            started_at=YEAR_9999, finished_at=YEAR_1, updated_at=YEAR_1,
        ),
        Submission.objects.create(
            learner=learner, exercise=exercise, code="x" * 10_000, status="", verdict="",
            score=-1e308, result=["a", "list"], progress=0.0,
        ),
    ]  # fmt: skip
    for submission, created_at in zip(submissions, [YEAR_1, YEAR_9999], strict=True):
        _time_extremes(Submission, submission.pk, created_at=created_at)
    boards = []
    for started, finished, elapsed, score in ((YEAR_1, YEAR_9999, INT_MAX, INT_MAX), (YEAR_9999, YEAR_1, -1, -INT_MAX)):
        board = MatchBoard.objects.create(
            learner=learner, deck=deck, pairs=2, started_at=started, expires_at=YEAR_1, penalty_per_wrong_ms=INT_MAX,
            matched=2, wrong_attempts=INT_MAX, penalty_ms=INT_MAX, finished_at=finished, elapsed_ms=elapsed,
            score_ms=score, personal_best=True,
        )  # fmt: skip
        for position, card in enumerate(cards[:2]):
            MatchItem.objects.create(
                board=board, card=card, term_id=f"t{position}", definition_id=f"d{position}",
                term_position=position, definition_position=1 - position, matched_at=YEAR_9999,
            )  # fmt: skip
        boards.append(board)
    MatchBoard.objects.create(
        learner=learner, deck=deck, pairs=12, started_at=YEAR_9999, expires_at=YEAR_9999, penalty_per_wrong_ms=0
    )
    quiz = Quiz.objects.filter(lesson__course=course, archived=False).first()
    assert quiz is not None
    question = quiz.items.select_related("question").first().question  # type: ignore[union-attr]
    attempts = [
        QuizAttempt.objects.create(
            learner=learner, quiz=quiz, question_ids=[question.pk, 2**53, "x", None], choice_orders={"x": 5},
            choice_keys={str(question.pk): ["not", "a", "mapping"]},
            started_at=YEAR_1, finished_at=YEAR_9999, score=1.0,
        ),
        QuizAttempt.objects.create(
            learner=learner, quiz=quiz, question_ids=[], choice_orders=[], started_at=YEAR_9999,
        ),
        QuizAttempt.objects.create(
            learner=learner, quiz=quiz, question_ids={"not": "a list"}, choice_orders="nothing", choice_keys=7,
            started_at=YEAR_9999, finished_at=YEAR_1, score=0.0,
        ),
    ]  # fmt: skip
    QuizAnswer.objects.create(
        attempt=attempts[0], learner=learner, question=question, response={"choices": [None, 7]}, correct=True,
        credit=1.0, answered_at=YEAR_1,
    )  # fmt: skip
    for memory, item in zip(_memory_extremes(), Question.objects.filter(archived=False)[:5], strict=False):
        QuestionMemory.objects.create(learner=learner, question=item, **memory)
    history_imports = [
        AnkiHistoryImport.objects.create(
            learner=learner, status=JobStatus.DONE, package_bytes=INT_MAX, total_entries=INT_MAX,
            matched=INT_MAX, applied=INT_MAX, skipped={"unknown_kind": "lots", "": None}, progress_done=INT_MAX,
            progress_total=INT_MAX, error_message="x" * 10_000, finished_at=YEAR_1,
        ),
        AnkiHistoryImport.objects.create(
            learner=learner, status=JobStatus.RUNNING, skipped=["not", "a", "mapping"]
        ),
    ]  # fmt: skip
    for history_import, at in zip(history_imports, [YEAR_1, YEAR_9999], strict=True):
        _time_extremes(AnkiHistoryImport, history_import.pk, created_at=at, updated_at=at)
    return {
        "history_import": history_imports[0],
        "course": course,
        "deck": deck,
        "card": leech,
        "region": region,
        "quiz": quiz,
        "question": question,
        "exercise": exercise,
        "submission": submissions[0],
        "attempt": attempts[0],
        "board": boards[0],
    }


# The first path segment says which kind of thing a route's <slug> names.
_SLUG_OWNERS = {
    "courses": "course",
    "lessons": "lesson",
    "decks": "deck",
    "questions": "question",
    "quizzes": "quiz",
    "exercises": "exercise",
    "explorer": "scene",
}


def _path_value(route: str, name: str, rows: dict[str, Any]) -> str:
    region: ExplorerRegion = rows["region"]
    if name == "slug":
        owner = _SLUG_OWNERS.get(route.split("/", 1)[0])
        values = {
            "course": rows["course"].slug,
            "lesson": rows["deck"].lesson.slug,
            "deck": rows["deck"].slug,
            "question": rows["question"].slug,
            "quiz": rows["quiz"].slug,
            "exercise": rows["exercise"].slug,
            "scene": region.scene.slug,
        }
        if owner in values:
            return str(values[owner])
    fixed = {
        "region_slug": region.slug,
        "card_id": rows["card"].pk,
        "submission_id": rows["submission"].pk,
        "attempt_id": rows["attempt"].pk,
        "board_id": rows["board"].pk,
        "import_id": rows["history_import"].pk,
    }
    if name not in fixed:
        pytest.fail(f"No value for <{name}> in the route {route}: say here which row it names.")
    return str(fixed[name])


def _url(route: str, rows: dict[str, Any]) -> str:
    filled = re.sub(r"<(?:\w+:)?(\w+)>", lambda match: _path_value(route, match.group(1), rows), route)
    return f"/{API_PREFIX}{filled}"


def _query_variants(rows: dict[str, Any]) -> dict[str, list[str]]:
    """Routes whose query parameters choose other code paths, with those parameters."""
    deck = rows["deck"].slug
    return {
        "stats/": [f"?deck={deck}"],
        "activity/": ["?page_size=1"],
        "deck-passes/": [f"?deck={deck}"],
        "deck-passes/best/": [f"?deck={deck}"],
        "decks/<slug:slug>/match/leaderboard/": ["?pairs=2", "?pairs=12"],
        "decks/<slug:slug>/study/": ["?limit=200"],
        "quiz-attempts/": [f"?quiz={rows['quiz'].slug}"],
        "submissions/": ["?status=done"],
    }


def test_the_route_list_holds_the_learner_reads():
    routes = set(_api_get_routes())
    for expected in ("stats/", "activity/", "me/", "me/export/", "srs/settings/", "decks/<slug:slug>/study/"):
        assert expected in routes


def test_every_learner_read_survives_extreme_stored_rows(extreme_rows, learner_client: APIClient):
    variants = _query_variants(extreme_rows)
    failures: list[str] = []
    checked = 0
    for route in sorted(set(_api_get_routes()) - NOT_LEARNER_READS):
        url = _url(route, extreme_rows)
        for query in ["", *variants.get(route, [])]:
            response = learner_client.get(url + query)
            checked += 1
            if response.status_code != 200:
                failures.append(f"GET {url}{query}: {response.status_code} {response.content[:300]!r}")
    assert checked > 30
    assert not failures, "\n".join(failures)


def test_the_activity_pages_through_extreme_times_to_the_end(extreme_rows, learner_client: APIClient):
    url: str | None = "/api/v1/activity/?page_size=1"
    seen: list[str] = []
    while url is not None:
        response = learner_client.get(url)
        assert response.status_code == 200, response.content
        seen += [item["id"] for item in response.json()["results"]]
        url = response.json()["next"]
        assert len(seen) < 100
    assert len(seen) == len(set(seen))
    everything = learner_client.get("/api/v1/activity/?page_size=200").json()["results"]
    assert seen == [item["id"] for item in everything]
