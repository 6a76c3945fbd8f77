"""A learner's data: exported whole as one JSON document, and deleted whole with the account."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import connection, models
from django.test.utils import CaptureQueriesContext

from apps.accounts.devices import device_token_issue
from apps.accounts.export import EXPORTERS
from apps.accounts.models import AccountEmail, DeviceToken, LearnerProfile, PendingRegistration
from apps.common.jobs import JobStatus
from apps.content.models import Card, ExplorerRegion, PipelineExercise, Question, Quiz
from apps.exercises.models import Submission
from apps.explore.models import RegionVisit
from apps.games.models import MatchAttempt, MatchBoard, MatchItem
from apps.quizzes.models import LessonAnswer, QuestionMemory, QuizAnswer, QuizAttempt
from apps.reminders.models import ReminderEmail, ReminderPreference
from apps.srs.models import (
    AnkiHistoryImport,
    CardMemory,
    CourseMemoryModel,
    DeckPass,
    LearnerMemoryModel,
    ParameterFit,
    Reschedule,
    ReviewKind,
    ReviewLog,
    SchedulingSettings,
    StoredRetentionAdvice,
)
from apps.srs.reviews.services import ReviewInput, review_undo, reviews_submit
from tests.support.accounts import PASSWORD
from tests.support.api import client_with_token

pytestmark = pytest.mark.django_db

ME = "/api/v1/me/"
EXPORT = "/api/v1/me/export/"
NOW = datetime(2026, 5, 4, 10, 0, tzinfo=UTC)

# Every table that holds a learner's rows, directly or through a parent that does.
LEARNER_TABLES: list[type[models.Model]] = [
    DeviceToken,
    LearnerProfile,
    SchedulingSettings,
    CardMemory,
    ReviewLog,
    DeckPass,
    MatchBoard,
    MatchItem,
    MatchAttempt,
    QuizAttempt,
    QuizAnswer,
    LessonAnswer,
    QuestionMemory,
    RegionVisit,
    Submission,
    ReminderPreference,
    ReminderEmail,
    AnkiHistoryImport,
    Reschedule,
    ParameterFit,
    StoredRetentionAdvice,
    LearnerMemoryModel,
]
_OWNER = {MatchItem: "board__learner", MatchAttempt: "board__learner", QuizAnswer: "attempt__learner"}


def rows_of(learner: Any) -> dict[str, int]:
    counts = {}
    for model in LEARNER_TABLES:
        owner = _OWNER.get(model, "user" if model is DeviceToken else "learner")
        counts[model.__name__] = model._default_manager.filter(**{owner: learner}).count()
    return counts


# Each filled learner's device token: only its digest is stored.
_TOKENS: dict[int, str] = {}


@dataclass(frozen=True)
class Filled:
    learner: Any
    code: str
    undone_review_id: int


def fill(learner: Any, tag: str) -> Filled:
    """A row in every table that holds a learner's data, each marked with `tag` where it can be."""
    cards = list(Card.objects.filter(archived=False).order_by("pk")[:3])
    LearnerProfile.objects.create(learner=learner, display_name=f"Name {tag}", show_on_leaderboards=True)
    SchedulingSettings.objects.create(learner=learner, timezone="Europe/Paris")
    ReminderPreference.objects.create(learner=learner, enabled=True, local_hour=7)
    ReminderEmail.objects.create(
        learner=learner, local_date=NOW.date(), status="sent", claim=uuid.uuid4(), claimed_at=NOW, due_cards=4
    )
    outcomes = reviews_submit(
        learner=learner,
        reviews=[
            ReviewInput(card_id=card.pk, rating=3, client_review_id=uuid.uuid4(), reviewed_at=NOW - timedelta(hours=2))
            for card in cards
        ],
        now=NOW,
    )
    # An undo protects the review it undoes: deleting the account must still get through.
    undone = outcomes[0].log
    review_undo(learner=learner, review_id=undone.pk, now=NOW)
    DeckPass.objects.create(
        learner=learner, deck=cards[0].deck, known=2, total=3, started_at=NOW - timedelta(minutes=5), finished_at=NOW
    )
    board = MatchBoard.objects.create(
        learner=learner,
        deck=cards[0].deck,
        pairs=2,
        started_at=NOW,
        expires_at=NOW + timedelta(hours=1),
        penalty_per_wrong_ms=5000,
        matched=1,
    )
    items = [
        MatchItem.objects.create(
            board=board,
            card=card,
            term_id=f"t{tag}{index}",
            definition_id=f"d{tag}{index}",
            term_position=index,
            definition_position=1 - index,
        )
        for index, card in enumerate(cards[1:3])
    ]
    MatchAttempt.objects.create(
        board=board,
        learner=learner,
        term_item=items[0],
        definition_item=items[1],
        correct=False,
        attempted_at=NOW,
        penalty_ms=5000,
    )
    MatchAttempt.objects.create(
        board=board,
        learner=learner,
        term_item=items[0],
        definition_item=items[0],
        correct=True,
        attempted_at=NOW + timedelta(seconds=2),
    )
    quiz = Quiz.objects.order_by("pk")[0]
    question = Question.objects.order_by("pk")[0]
    attempt = QuizAttempt.objects.create(learner=learner, quiz=quiz, question_ids=[question.pk], started_at=NOW)
    QuizAnswer.objects.create(
        attempt=attempt,
        learner=learner,
        question=question,
        response={"text": f"answer {tag}"},
        correct=True,
        credit=1,
        answered_at=NOW,
    )
    LessonAnswer.objects.create(
        learner=learner,
        question=question,
        response={"text": f"in place {tag}"},
        correct=False,
        credit=0,
        scheduled=False,
        answered_at=NOW,
    )
    QuestionMemory.objects.create(
        learner=learner, question=question, stage=2, stability=3.0, difficulty=5.0, due=NOW, last_review=NOW, reps=1
    )
    RegionVisit.objects.create(learner=learner, region=ExplorerRegion.objects.order_by("pk")[0], visited_at=NOW)
    code = f"def pipeline():  # by {tag}\n    return None\n"
    Submission.objects.create(
        learner=learner,
        exercise=PipelineExercise.objects.order_by("pk")[0],
        code=code,
        status="done",
        verdict="accepted",
        score=0.75,
        result={"checks": [f"passed {tag}"]},
    )
    AnkiHistoryImport.objects.create(
        learner=learner, status=JobStatus.DONE, package_bytes=1234, total_entries=3, applied=2,
        skipped={"manual": 1}, finished_at=NOW,
    )  # fmt: skip
    Reschedule.objects.create(
        learner=learner, reason="desired_retention", status="done", cards_total=3, cards_examined=3, cards_moved=2,
        started_at=NOW, finished_at=NOW,
    )  # fmt: skip
    ParameterFit.objects.create(
        learner=learner, status="done", parameters=[0.5] * 21, fitted_on_reviews=400, evaluated_on_reviews=100,
        log_loss=0.3, rmse_bins=0.05, adopted=True, reason=f"Adopted for {tag}", finished_at=NOW,
    )  # fmt: skip
    course_model = CourseMemoryModel.objects.create(
        course=cards[0].deck.lesson.course, status="done", parameters=[0.5] * 21, card_factors={}, learners=5,
        adopted=True, finished_at=NOW,
    )  # fmt: skip
    LearnerMemoryModel.objects.create(
        memory_model=course_model, learner=learner, uses_course_model=True, log_factor=0.25, evaluated_on_reviews=60,
        log_loss=0.31, previous_log_loss=0.33,
    )  # fmt: skip
    StoredRetentionAdvice.objects.create(
        learner=learner, parameters_digest="a" * 64, parameters_source="default", desired_retention=0.9,
        deck_size_bucket=100, limits_digest="b" * 64, status="done", advised_retention=0.8,
        advised_reviews_per_day=10.0, advised_minutes_per_day=5.0, advised_seconds_per_remembered_card=150.0,
        current_reviews_per_day=20.0, current_minutes_per_day=8.0, current_seconds_per_remembered_card=200.0,
        review_seconds_source="default", requested_at=NOW, computed_at=NOW,
    )  # fmt: skip
    _TOKENS[learner.pk] = device_token_issue(user=learner, device_name=f"Phone of {tag}").key
    return Filled(learner=learner, code=code, undone_review_id=undone.pk)


@pytest.fixture
def two_learners(shipped_course, learner, django_user_model) -> tuple[Filled, Filled]:
    other = django_user_model.objects.create_user(username="bo", email="bo@example.com", password=PASSWORD)
    return fill(learner, "ada"), fill(other, "bo")


def client_of(user: Any) -> Any:
    return client_with_token(_TOKENS[user.pk])


def test_every_learner_table_has_rows_in_the_fixture(two_learners):
    ada, bo = two_learners
    for filled in (ada, bo):
        counts = rows_of(filled.learner)
        assert all(counts.values()), counts
    assert ReviewLog.objects.filter(learner=ada.learner, kind=ReviewKind.UNDO).count() == 1


def test_the_export_holds_everything_stored_about_the_learner(two_learners):
    ada, _ = two_learners
    response = client_of(ada.learner).get(EXPORT)
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith('attachment; filename="quizsite-account-')
    raw = response.content.decode()
    assert "password" not in raw
    assert '"bo' not in raw and "Name bo" not in raw
    document = json.loads(raw)
    assert set(document) == {"format_version", "exported_at", *EXPORTERS}
    assert set(EXPORTERS) == {"accounts", "srs", "reminders", "games", "quizzes", "explore", "exercises"}
    assert document["format_version"] == 1

    accounts = document["accounts"]
    assert accounts["user"]["id"] == ada.learner.pk
    assert accounts["user"]["email"] == "ada@example.com"
    assert accounts["profile"]["display_name"] == "Name ada"
    srs = document["srs"]
    assert srs["scheduling_settings"]["timezone"] == "Europe/Paris"
    assert len(srs["card_memories"]) == 2
    assert {"card__slug", "stability", "difficulty", "due", "reps"} <= set(srs["card_memories"][0])
    log = srs["review_log"]
    assert [entry["kind"] for entry in log].count("undo") == 1
    assert len(log) == 4
    undo = next(entry for entry in log if entry["kind"] == "undo")
    assert undo["undo_of_id"] == ada.undone_review_id
    reviewed = next(entry for entry in log if entry["id"] == ada.undone_review_id)
    assert reviewed["state_before"] is None
    assert reviewed["state_after"]["stability"] > 0
    assert undo["state_before"] == reviewed["state_after"]
    assert srs["deck_passes"][0]["known"] == 2
    assert [(row["status"], row["applied"], row["skipped"]) for row in srs["anki_history_imports"]] == [
        ("done", 2, {"manual": 1})
    ]
    assert "package" not in srs["anki_history_imports"][0]
    assert [(row["reason"], row["cards_moved"]) for row in srs["reschedules"]] == [("desired_retention", 2)]
    assert [(row["adopted"], row["reason"]) for row in srs["parameter_fits"]] == [(True, "Adopted for ada")]
    assert [(row["advised_retention"], row["current_minutes_per_day"]) for row in srs["retention_advice"]] == [
        (0.8, 8.0)
    ]
    reminders = document["reminders"]
    assert reminders["reminder_preference"]["local_hour"] == 7
    assert reminders["reminder_emails"][0]["due_cards"] == 4
    [board] = document["games"]["match_boards"]
    assert board["pairs"] == 2
    assert len(board["items"]) == 2
    assert [attempt["correct"] for attempt in board["attempts"]] == [False, True]
    assert board["items"][0]["term_id"] == "tada0"
    quizzes = document["quizzes"]
    [attempt] = quizzes["quiz_attempts"]
    assert attempt["answers"][0]["response"] == {"text": "answer ada"}
    assert [row["response"] for row in quizzes["lesson_answers"]] == [{"text": "in place ada"}]
    assert quizzes["question_memories"][0]["stability"] == 3.0
    assert len(document["explore"]["region_visits"]) == 1
    [submission] = document["exercises"]["submissions"]
    assert submission["code"] == ada.code
    assert submission["result"] == {"checks": ["passed ada"]}
    assert submission["verdict"] == "accepted"


def test_the_export_reads_each_table_once_whatever_the_rows(two_learners):
    ada, _ = two_learners
    client = client_of(ada.learner)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(EXPORT).status_code == 200
        return len(captured.captured_queries)

    # The first export reads what a process then keeps: the course memory model's weights and card factors.
    queries()
    before = queries()
    board = MatchBoard.objects.get(learner=ada.learner)
    board.pk = uuid.uuid4()
    board.save(force_insert=True)
    RegionVisit.objects.create(learner=ada.learner, region=ExplorerRegion.objects.order_by("-pk")[0], visited_at=NOW)
    quiz = Quiz.objects.order_by("pk")[0]
    QuizAttempt.objects.create(learner=ada.learner, quiz=quiz, question_ids=[], started_at=NOW)
    assert queries() == before
    # One per table at most, plus authentication.
    assert before <= len(LEARNER_TABLES) + 2


def test_deleting_the_account_removes_every_row_and_keeps_the_others(two_learners):
    ada, bo = two_learners
    bo_before = rows_of(bo.learner)
    client = client_of(ada.learner)
    response = client.post(f"{ME}delete/", {"password": PASSWORD}, format="json")
    assert response.status_code == 204, response.content
    assert not get_user_model().objects.filter(pk=ada.learner.pk).exists()
    assert set(rows_of(ada.learner.pk).values()) == {0}
    assert rows_of(bo.learner) == bo_before
    assert client.get(ME).status_code == 401


def test_deleting_takes_a_post_with_a_json_body_that_a_schema_can_describe(two_learners):
    ada, _ = two_learners
    # DELETE may not carry a body in OpenAPI, so generated clients could not send the password.
    response = client_of(ada.learner).delete(ME, {"password": PASSWORD}, format="json")
    assert response.status_code == 405
    assert get_user_model().objects.filter(pk=ada.learner.pk).exists()


def test_a_wrong_password_deletes_nothing(two_learners):
    ada, _ = two_learners
    before = rows_of(ada.learner)
    response = client_of(ada.learner).post(f"{ME}delete/", {"password": "not it"}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"password": ["The password is wrong."]}
    assert rows_of(ada.learner) == before
    missing = client_of(ada.learner).post(f"{ME}delete/", {}, format="json")
    assert missing.status_code == 400
    assert rows_of(ada.learner) == before


def test_staff_can_delete_their_own_account(staff_user):
    token = device_token_issue(user=staff_user, device_name=None)
    response = client_with_token(token.key).post(f"{ME}delete/", {"password": "another long passphrase"}, format="json")
    assert response.status_code == 204
    assert not get_user_model().objects.filter(pk=staff_user.pk).exists()


def test_every_table_that_points_at_a_learner_is_listed_here():
    # The export and the deletion tests cover LEARNER_TABLES; a new table of learners' rows must join it.
    user_model = get_user_model()
    staff_only = {"admin.LogEntry"}
    # Neither points at an account: an outbox row and a sign-up are keyed by address.
    assert not {AccountEmail, PendingRegistration} & {
        model for model in apps.get_models() for field in model._meta.get_fields() if field.related_model is user_model
    }
    pointing = {
        model
        for model in apps.get_models()
        if not model._meta.proxy
        for field in model._meta.get_fields()
        if field.is_relation and field.concrete and field.related_model is user_model
    }
    unlisted = sorted(model._meta.label for model in pointing - set(LEARNER_TABLES))
    assert [label for label in unlisted if label not in staff_only] == []


def test_no_relation_to_a_user_can_block_deleting_them():
    user_model = get_user_model()
    for model in apps.get_models():
        for field in model._meta.get_fields():
            if field.is_relation and field.concrete and field.related_model is user_model:
                assert isinstance(field, models.ForeignKey), f"{model._meta.label}.{field.name}"
                assert field.remote_field.on_delete is models.CASCADE, f"{model._meta.label}.{field.name}"
