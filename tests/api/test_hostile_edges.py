"""What a hostile or careless client finds at the API's edges: each answer a declared status in the one error shape."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import uuid
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from tests.support.paths import REPO_ROOT

pytestmark = pytest.mark.django_db

# An RFC 3339 time with its offset written as +00:00 (responses write Z).
_PLUS_ZERO = re.compile(r'"\d{4}-\d{2}-\d{2}T[^"]*\+00:00"')


@pytest.mark.parametrize("path", ["/healthz", "/api/v1/courses/", "/api/v1/me/"])
@pytest.mark.parametrize("value", ["json", "api", "foo", "xml"])
def test_a_format_parameter_is_ignored_like_any_unknown_one(learner_client, path, value):
    plain = learner_client.get(path)
    with_format = learner_client.get(path, {"format": value})
    assert with_format.status_code == plain.status_code == 200, with_format.content
    assert with_format["Content-Type"].startswith("application/json")


def test_accept_naming_no_type_the_api_answers_in_is_a_406_in_the_error_shape(learner_client):
    response = learner_client.get("/api/v1/courses/", HTTP_ACCEPT="application/xml")
    assert response.status_code == 406
    assert response.json()["error"]["code"] == "not_acceptable"


@pytest.mark.parametrize("written", ["9007199254740993.0", "9007199254740992.0", "-9007199254740992.0", "1e16"])
def test_a_whole_number_a_float_cannot_hold_exactly_is_refused(learner_client, written):
    body = f'{{"reviews": [{{"card": {written}, "rating": 3, "client_review_id": "{uuid.uuid4()}"}}]}}'
    response = learner_client.post("/api/v1/reviews/batch/", body, content_type="application/json")
    assert response.status_code == 400, response.content
    assert "reviews.0.card" in response.json()["error"]["fields"]


def test_a_whole_number_below_two_to_the_53_written_as_a_float_is_still_that_number(learner_client):
    body = f'{{"reviews": [{{"card": 9007199254740991.0, "rating": 3, "client_review_id": "{uuid.uuid4()}"}}]}}'
    response = learner_client.post("/api/v1/reviews/batch/", body, content_type="application/json")
    # A card with that id does not exist: the number was read, not refused for its form.
    assert response.status_code == 404, response.content


def test_every_time_in_the_responses_is_written_with_z(shipped_course, learner, learner_client):
    deck = learner_client.get("/api/v1/decks/").json()["results"][0]["slug"]
    queue = learner_client.get(f"/api/v1/decks/{deck}/study/").json()
    card = queue["cards"][0]["card"]["id"]
    review = {"card": card, "rating": 3, "client_review_id": str(uuid.uuid4())}
    bodies = [learner_client.post("/api/v1/reviews/", review, format="json").content.decode()]
    for path in (
        f"/api/v1/decks/{deck}/study/",
        "/api/v1/srs/settings/",
        "/api/v1/stats/",
        "/api/v1/deck-passes/",
        "/api/v1/leeches/",
        "/api/v1/activity/",
        "/api/v1/me/",
        "/api/v1/auth/devices/",
        "/api/v1/me/export/",
    ):
        response = learner_client.get(path)
        assert response.status_code == 200, (path, response.content)
        bodies.append(response.content.decode())
    assert any('Z"' in body for body in bodies)
    for body in bodies:
        assert not _PLUS_ZERO.search(body), _PLUS_ZERO.search(body)


@pytest.mark.django_db(transaction=True)
class TestALostDatabaseConnection:
    """The server ends the connection a request is using: a read is tried again, a write is a 503."""

    @staticmethod
    def _end_own_connection_soon() -> None:
        """Ends this thread's database connection from another one, as a restarting server would."""
        from django.db import connections

        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        other = connections.create_connection("default")
        try:
            with other.cursor() as cursor:
                cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
        finally:
            other.close()
        time.sleep(0.2)  # the server's farewell reaches the socket

    def test_a_read_is_tried_again_on_a_new_connection(self, shipped_course, learner_client):
        learner_client.get("/api/v1/courses/")
        # Django checks a connection's health only at a request's start, with conn_health_checks:
        # ending it inside the request is what a server restart mid-request does.
        from apps.common import middleware

        calls: list[str] = []
        original = middleware.DatabaseRetryMiddleware.__call__

        def end_then_serve(self: Any, request: Any) -> Any:
            if not calls:
                TestALostDatabaseConnection._end_own_connection_soon()
            calls.append(request.path)
            return original(self, request)

        middleware.DatabaseRetryMiddleware.__call__ = end_then_serve  # type: ignore[method-assign]
        try:
            response = learner_client.get("/api/v1/courses/")
        finally:
            middleware.DatabaseRetryMiddleware.__call__ = original  # type: ignore[method-assign]
        assert response.status_code == 200, response.content
        assert response.json()["results"]

    def test_a_write_answers_503_with_retry_after_and_changes_nothing(self, shipped_course, learner, learner_client):
        from apps.common import middleware
        from apps.srs.models import ReviewLog

        deck = learner_client.get("/api/v1/decks/").json()["results"][0]["slug"]
        card = learner_client.get(f"/api/v1/decks/{deck}/cards/").json()["results"][0]["id"]
        original = middleware.DatabaseRetryMiddleware.__call__

        def end_then_serve(self: Any, request: Any) -> Any:
            TestALostDatabaseConnection._end_own_connection_soon()
            return original(self, request)

        middleware.DatabaseRetryMiddleware.__call__ = end_then_serve  # type: ignore[method-assign]
        body = {"card": card, "rating": 3, "client_review_id": str(uuid.uuid4())}
        try:
            response = learner_client.post("/api/v1/reviews/", body, format="json")
        finally:
            middleware.DatabaseRetryMiddleware.__call__ = original  # type: ignore[method-assign]
        assert response.status_code == 503, response.content
        assert response.json()["error"]["code"] == "database_unavailable"
        assert int(response["Retry-After"]) > 0
        # As a server does once the request is over (the test client leaves it to the caller).
        connection.close_if_unusable_or_obsolete()
        assert not ReviewLog.objects.filter(client_review_id=body["client_review_id"]).exists()
        # Sent again, it is recorded once.
        assert learner_client.post("/api/v1/reviews/", body, format="json").status_code == 201


def _production_defaults(names: list[str]) -> dict[str, Any]:
    """The settings as a deployment gets them when it sets nothing: a fresh process, a bare environment."""
    script = (
        "import json, django; from django.conf import settings; django.setup(); "
        f"print(json.dumps({{name: getattr(settings, name, None) for name in {names!r}}}, default=str))"
    )
    environment = {
        "PATH": os.environ.get("PATH", ""),
        "DJANGO_SETTINGS_MODULE": "quizsite.settings",
        "SECRET_KEY": "defaults-only",
        "HOME": os.environ.get("HOME", "/tmp"),
    }
    printed = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, env=environment, capture_output=True, text=True, check=True
    )
    return dict(json.loads(printed.stdout.strip().splitlines()[-1]))


def test_every_setting_the_docs_give_a_figure_for_has_that_default():
    pages = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").rglob("*.md"))]
    text = "\n".join(page.read_text() for page in pages)
    rows = re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \| ([^|]+) \|", text, re.MULTILINE)
    figures: dict[str, float] = {}
    for name, default in rows:
        written = default.strip()
        found = re.search(r"\(([\d,.]+)\)$", written) or re.fullmatch(r"`?([\d,.]+)`?", written)
        if found:
            figures[name] = float(found.group(1).replace(",", ""))
    # The grading timeouts drifted once (720 s written, 1,080 s in force): they are among these.
    assert {"GRADER_TASK_SOFT_SECONDS", "GRADING_REDELIVERY_SECONDS", "PASSWORD_RESET_TIMEOUT"} <= set(figures)
    actual = _production_defaults(sorted(figures))
    differing = {name: (figure, actual[name]) for name, figure in figures.items() if float(actual[name]) != figure}
    assert differing == {}


@pytest.mark.django_db(transaction=True)
def test_uploads_sent_at_once_by_one_learner_hold_no_thread_waiting(shipped_course, learner):
    """All but the upload holding the learner's turn are refused at once, not after a wait."""
    from apps.accounts.devices import device_token_issue
    from apps.content.models import Card
    from apps.srs.models import ReviewLog

    token = device_token_issue(user=learner, device_name=None).key
    cards = list(Card.objects.filter(archived=False).values_list("pk", flat=True)[:40])
    uploads = [
        {"reviews": [{"card": card, "rating": 3, "client_review_id": str(uuid.uuid4())} for card in cards]}
        for _ in range(6)
    ]
    answers: list[tuple[int, float]] = []
    start = threading.Barrier(len(uploads))

    def send(body: dict[str, Any]) -> None:
        client = Client(HTTP_AUTHORIZATION=f"Token {token}")
        start.wait(timeout=30)
        began = time.monotonic()
        response = client.post("/api/v1/reviews/batch/", body, content_type="application/json")
        answers.append((response.status_code, time.monotonic() - began))
        connection.close()

    threads = [threading.Thread(target=send, args=(body,)) for body in uploads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    statuses = sorted(status for status, _ in answers)
    assert len(statuses) == len(uploads)
    assert set(statuses) <= {200, 409}, statuses
    assert 200 in statuses
    recorded = statuses.count(200)
    assert ReviewLog.objects.filter(learner=learner).count() == recorded * len(cards)
