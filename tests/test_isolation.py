"""Each learner reads and changes only their own progress: another learner's ids are a 404 that
changes nothing, lists never show another learner's rows, and course content is edited by staff only.

Every API route taking an id is listed below, and a test derives the routes from the resolver, so a
new endpoint with an id cannot be added without saying how it is isolated.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import models
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.urls.converters import IntConverter, UUIDConverter
from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounts.devices import device_token_issue
from apps.accounts.models import DeviceToken
from apps.common.jobs import JobStatus
from apps.content.models import Card, Course, Deck, Question
from apps.exercises.models import Submission
from apps.explore.models import RegionVisit
from apps.games.models import MatchAttempt, MatchBoard, MatchItem
from apps.quizzes.models import QuestionMemory, QuizAnswer, QuizAttempt
from apps.reminders.models import ReminderPreference
from apps.srs.models import AnkiHistoryImport, CardMemory, DeckPass, ReviewLog, SchedulingSettings
from tests.support.api import client_for

pytestmark = pytest.mark.django_db

API = "/api/v1/"
DECK = "tf-data-pipelines"
QUIZ = "tf-data-page-check"
QUESTION = "overlap-transformation"
EXERCISE = "tfrecord-image-pipeline"
SCENE = "input-pipeline-explorer"
REGION = "shuffle-buffer"
CODE = "import tensorflow as tf\n\n\ndef build_pipeline(files):\n    return tf.data.TFRecordDataset(files)\n"


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.content
    return response.json()


@dataclass
class Owner:
    """Learner A, with something of theirs in every app, and the ids another learner might try."""

    user: Any
    client: APIClient
    review_id: int
    leech_card_id: int
    board_id: str
    board_pair: tuple[str, str]
    attempt_id: int
    submission_id: int
    history_import_id: int
    spare_device_id: str


@pytest.fixture
def owner(shipped_course) -> Owner:
    user = get_user_model().objects.create_user(username="ada", password="a long enough passphrase")
    client = client_for(user)
    cards = list(Card.objects.filter(deck__slug=DECK, archived=False).order_by("position")[:3])
    now = timezone.now()

    # Progress: reviews of three cards (the first is made a suspended leech last, as reviews reassess it).
    for card in cards:
        body = {"card": card.pk, "rating": 1, "client_review_id": str(uuid.uuid4())}
        ok(client.post(f"{API}reviews/", body, format="json"), 201)
    ok(client.patch(f"{API}srs/settings/", {"desired_retention": 0.85}, format="json"))
    ReminderPreference.objects.create(learner=user, enabled=True, local_hour=7)
    pass_body = {
        "known": 2,
        "total": 3,
        "started_at": (now - timedelta(minutes=5)).isoformat(),
        "finished_at": now.isoformat(),
        "client_pass_id": str(uuid.uuid4()),
    }
    ok(client.post(f"{API}decks/{DECK}/passes/", pass_body, format="json"), 201)

    # Games: one finished board (history, best score) and one in play with a wrong attempt.
    finished = ok(client.post(f"{API}decks/{DECK}/match/", {"pairs": 2}, format="json"), 201)["id"]
    for item in MatchItem.objects.filter(board_id=finished):
        pair = {"term_id": item.term_id, "definition_id": item.definition_id}
        ok(client.post(f"{API}match/{finished}/attempts/", pair, format="json"), 201)
    board_id = ok(client.post(f"{API}decks/{DECK}/match/", {"pairs": 2}, format="json"), 201)["id"]
    first, second = MatchItem.objects.filter(board_id=board_id).order_by("pk")
    wrong = {"term_id": first.term_id, "definition_id": second.definition_id}
    assert not ok(client.post(f"{API}match/{board_id}/attempts/", wrong, format="json"), 201)["correct"]

    # Quizzes: an unfinished attempt with one answer (and so a question memory).
    attempt = ok(client.post(f"{API}quizzes/{QUIZ}/attempts/", {}, format="json"), 201)
    attempt_id = attempt["id"]
    shown = next(q for q in attempt["questions"] if q["slug"] == "caching-large-datasets")
    answer = {"question": shown["slug"], "choice": shown["choices"][0]["key"]}
    ok(client.post(f"{API}quiz-attempts/{attempt_id}/answers/", answer, format="json"), 201)

    # Explorer and exercises.
    ok(client.post(f"{API}explorer/{SCENE}/regions/{REGION}/visits/", {}, format="json"), 201)
    submission_id = ok(client.post(f"{API}exercises/{EXERCISE}/submissions/", {"code": CODE}, format="json"), 202)["id"]
    CardMemory.objects.filter(learner=user, card=cards[0]).update(is_leech=True, suspended=True, lapses=8)
    history_import = AnkiHistoryImport.objects.create(
        learner=user, status=JobStatus.DONE, total_entries=2, applied=2, finished_at=now
    )

    return Owner(
        user=user,
        client=client,
        # The latest review (games and quizzes review cards too) is the one its learner may undo.
        review_id=ReviewLog.objects.filter(learner=user, kind="review").latest("pk").pk,
        leech_card_id=cards[0].pk,
        board_id=board_id,
        board_pair=(first.term_id, first.definition_id),
        attempt_id=attempt_id,
        submission_id=submission_id,
        history_import_id=history_import.pk,
        # Another device of the owner's, not the one the owner's client signs in with.
        spare_device_id=str(device_token_issue(user=user, device_name="Spare phone").device.public_id),
    )


@pytest.fixture
def intruder(db) -> APIClient:
    return client_for(get_user_model().objects.create_user(username="mallory", password="another long passphrase"))


# Learner A's rows in every app, with each row's every value (updated_at included).
OWNED: dict[type[models.Model], str] = {
    CardMemory: "learner",
    ReviewLog: "learner",
    SchedulingSettings: "learner",
    DeckPass: "learner",
    MatchBoard: "learner",
    MatchItem: "board__learner",
    MatchAttempt: "board__learner",
    QuizAttempt: "learner",
    QuizAnswer: "attempt__learner",
    QuestionMemory: "learner",
    RegionVisit: "learner",
    Submission: "learner",
    ReminderPreference: "learner",
    AnkiHistoryImport: "learner",
    DeviceToken: "user",
}


def snapshot(user: Any) -> dict[str, Any]:
    rows: dict[str, Any] = {
        model.__name__: list(model._default_manager.filter(**{path: user}).order_by("pk").values())
        for model, path in OWNED.items()
    }
    # Every table's size too, so a row made for someone else shows up as well.
    rows["counts"] = {model.__name__: model._default_manager.count() for model in OWNED}
    return rows


def first_choice_id(owner: Owner) -> str:
    """Choices are answered by the attempt's random ids; any one of them is a valid answer."""
    attempt = QuizAttempt.objects.get(pk=owner.attempt_id)
    return attempt.choice_ids_of(Question.objects.get(slug=QUESTION).pk)[0]


# Every route with an id, and what another learner's request to it sends: (method, url, body) from A's ids.
Call = tuple[str, str, dict[str, Any] | None]
ID_ROUTES: dict[str, Callable[[Owner], Call]] = {
    "reviews/<int:review_id>/undo/": lambda a: ("post", f"reviews/{a.review_id}/undo/", None),
    "leeches/<int:card_id>/unsuspend/": lambda a: ("post", f"leeches/{a.leech_card_id}/unsuspend/", None),
    "match/<uuid:board_id>/": lambda a: ("get", f"match/{a.board_id}/", None),
    "match/<uuid:board_id>/attempts/": lambda a: (
        "post",
        f"match/{a.board_id}/attempts/",
        {"term_id": a.board_pair[0], "definition_id": a.board_pair[1]},
    ),
    "quiz-attempts/<int:attempt_id>/": lambda a: ("get", f"quiz-attempts/{a.attempt_id}/", None),
    "quiz-attempts/<int:attempt_id>/answers/": lambda a: (
        "post",
        f"quiz-attempts/{a.attempt_id}/answers/",
        {"question": QUESTION, "choice": first_choice_id(a)},
    ),
    "quiz-attempts/<int:attempt_id>/finish/": lambda a: ("post", f"quiz-attempts/{a.attempt_id}/finish/", None),
    "submissions/<int:submission_id>/": lambda a: ("get", f"submissions/{a.submission_id}/", None),
    "anki-history/<int:import_id>/": lambda a: ("get", f"anki-history/{a.history_import_id}/", None),
    "auth/devices/<uuid:device_id>/": lambda a: ("delete", f"auth/devices/{a.spare_device_id}/", None),
}
# Routes with an id that hold course content, the same for every learner.
CONTENT_ID_ROUTES: dict[str, Callable[[Owner], str]] = {
    "cards/<int:card_id>/": lambda a: f"cards/{a.leech_card_id}/",
}
# Routes whose id names shared course content and whose answer is the caller's own memory of it.
CALLERS_OWN_ID_ROUTES: dict[str, Callable[[Owner], str]] = {
    "cards/<int:card_id>/history/": lambda a: f"cards/{a.leech_card_id}/history/",
}


def _id_routes(patterns: list[URLPattern | URLResolver], prefix: str = "", has_id: bool = False) -> set[str]:
    routes: set[str] = set()
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        converters = getattr(pattern.pattern, "converters", {}).values()
        with_id = has_id or any(isinstance(converter, IntConverter | UUIDConverter) for converter in converters)
        if isinstance(pattern, URLResolver):
            routes |= _id_routes(pattern.url_patterns, route, with_id)
        elif with_id:
            routes.add(route)
    return routes


def test_every_api_route_with_an_id_is_checked_here():
    api_routes = {
        route.removeprefix("api/v1/")
        for route in _id_routes(get_resolver().url_patterns)
        if route.startswith("api/v1/")
    }
    assert api_routes, "no API route with an id: the resolver walk is broken"
    checked = set(ID_ROUTES) | set(CONTENT_ID_ROUTES) | set(CALLERS_OWN_ID_ROUTES)
    unchecked = api_routes - checked
    assert not unchecked, f"routes with an id that this module does not check for isolation: {sorted(unchecked)}"
    assert not checked - api_routes, "a checked route no longer exists"


def test_another_learners_ids_are_a_404_that_changes_nothing(owner, intruder):
    before = snapshot(owner.user)
    for route, call in ID_ROUTES.items():
        method, url, body = call(owner)
        response = getattr(intruder, method)(API + url, body, format="json")
        assert response.status_code == 404, (route, response.status_code, response.content)
        assert response.json()["error"]["code"] == "not_found", route
    assert snapshot(owner.user) == before

    # Course content with an id reads the same for everyone.
    for route, content_url in CONTENT_ID_ROUTES.items():
        assert ok(intruder.get(API + content_url(owner))) == ok(owner.client.get(API + content_url(owner))), route

    # The same calls by the owner work, so the 404s above were about whose the ids are.
    for route, call in ID_ROUTES.items():
        method, url, body = call(owner)
        response = getattr(owner.client, method)(API + url, body, format="json")
        assert response.status_code in {200, 201, 204}, (route, response.status_code, response.content)
    assert snapshot(owner.user) != before


def test_a_cards_history_is_the_callers_own(owner, intruder):
    for route, url in CALLERS_OWN_ID_ROUTES.items():
        mine = ok(owner.client.get(API + url(owner)))
        theirs = ok(intruder.get(API + url(owner)))
        assert mine["history"] and mine["reviews"] > 0, route
        assert (theirs["history"], theirs["stage"], theirs["reviews"]) == ([], "new", 0), route
        assert theirs["card"] == mine["card"], route


def test_unsuspending_a_card_both_studied_changes_only_the_callers_memory(owner, intruder):
    # Card ids are shared course content: the route names a card, and the learner is always the caller.
    body = {"card": owner.leech_card_id, "rating": 3, "client_review_id": str(uuid.uuid4())}
    ok(intruder.post(f"{API}reviews/", body, format="json"), 201)
    theirs = CardMemory.objects.exclude(learner=owner.user).get(card_id=owner.leech_card_id)
    CardMemory.objects.filter(pk=theirs.pk).update(is_leech=True, suspended=True)
    before = snapshot(owner.user)["CardMemory"]
    leech = ok(intruder.post(f"{API}leeches/{owner.leech_card_id}/unsuspend/"))
    assert leech["card"]["id"] == owner.leech_card_id and leech["suspended"] is False
    assert CardMemory.objects.get(pk=theirs.pk).suspended is False
    assert snapshot(owner.user)["CardMemory"] == before
    assert CardMemory.objects.get(learner=owner.user, card_id=owner.leech_card_id).suspended is True


def test_lists_and_statistics_show_only_the_callers_rows(owner, intruder):
    def results(client: APIClient, url: str) -> list[Any]:
        return ok(client.get(API + url))["results"]

    for url in (
        "deck-passes/",
        "deck-passes/best/",
        "submissions/",
        "quiz-attempts/",
        "activity/",
        f"decks/{DECK}/match/history/",
        "leeches/",
    ):
        assert results(owner.client, url), url  # the owner's rows are there to leak
        assert results(intruder, url) == [], url
    assert ok(intruder.get(f"{API}decks/{DECK}/match/history/"))["best"] == []

    mine, theirs = ok(owner.client.get(f"{API}stats/")), ok(intruder.get(f"{API}stats/"))
    assert mine["reviews_per_day"] and theirs["reviews_per_day"] == []
    assert mine["streak"]["current"] == 1 and theirs["streak"] == {"current": 0, "longest": 0}
    assert [deck["deck"] for deck in mine["decks"]] == [DECK] and theirs["decks"] == []

    assert ok(owner.client.get(f"{API}srs/settings/"))["desired_retention"] == 0.85
    assert ok(intruder.get(f"{API}srs/settings/"))["desired_retention"] == 0.9
    quizzes = {quiz["slug"]: quiz for quiz in results(intruder, "quizzes/")}
    assert quizzes[QUIZ]["attempt_count"] == 0
    assert {quiz["slug"]: quiz for quiz in results(owner.client, "quizzes/")}[QUIZ]["attempt_count"] == 1


CONTENT_URLS = [
    "courses/",
    "courses/tensorflow-ai-phd/",
    "lessons/data-pipelines-tf-data/",
    "decks/",
    f"decks/{DECK}/",
    f"decks/{DECK}/cards/",
    "cards/{card_id}/",
    f"questions/{QUESTION}/",
    "exercises/",
    f"exercises/{EXERCISE}/",
    "explorer/",
    f"explorer/{SCENE}/",
]


@pytest.mark.parametrize("who", ["learner", "staff"])
def test_the_content_api_is_read_only_for_everyone(shipped_course, learner, staff_user, who):
    client = client_for(learner if who == "learner" else staff_user)
    card_id = Card.objects.filter(deck__slug=DECK).order_by("pk").values_list("pk", flat=True).first()
    counts = {model: model.objects.count() for model in (Course, Deck, Card)}
    for url in CONTENT_URLS:
        path = API + url.format(card_id=card_id)
        assert client.get(path).status_code == 200, path
        for method in ("post", "put", "patch", "delete"):
            response = getattr(client, method)(path, {"title": "Changed"}, format="json")
            assert response.status_code == 405, (method, path, response.content)
            assert response.json()["error"]["code"] == "method_not_allowed"
    assert {model: model.objects.count() for model in (Course, Deck, Card)} == counts
    assert not Course.objects.filter(title="Changed").exists()


def test_the_admin_refuses_a_learner_and_lets_staff_in(client, shipped_course, learner, staff_user):
    card = Card.objects.filter(deck__slug=DECK).order_by("pk").first()
    assert card is not None
    change_url = reverse("admin:content_card_change", args=[card.pk])
    client.force_login(learner)
    login = reverse("admin:login")
    for url in (reverse("admin:index"), reverse("admin:content_card_changelist"), change_url):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(login), url
    response = client.post(change_url, {"term": "Changed by a learner"})
    assert response.status_code == 302 and response["Location"].startswith(login)
    card.refresh_from_db()
    assert card.term != "Changed by a learner"

    client.force_login(staff_user)
    assert client.get(reverse("admin:content_card_changelist")).status_code == 200
    assert client.get(change_url).status_code == 200
