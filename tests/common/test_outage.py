"""The cache (and broker) Redis down or hung: sign-in, lockouts and every endpoint keep working, /healthz says so.

Each test points the cache and the health check's broker at a private redis-server, then kills it (as a
crash would: connections refused) or freezes it with SIGSTOP (connections accepted, nothing answered,
as a black-holed host); both must cost a request at most the cache client's short bounds.
"""

from __future__ import annotations

import os
import signal
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.test import Client
from rest_framework.test import APIClient

from apps.accounts.devices import device_token_issue
from apps.accounts.models import LoginLockout
from apps.content.content_files.load import content_sources_load
from apps.content.content_files.source import ContentSource
from apps.content.models import Card
from quizsite.celery import app as celery_app
from tests.support.course_files import minimal_course, to_yaml
from tests.support.processes import RedisServer, redis_server

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"


@pytest.fixture
def cache_redis(settings) -> Iterator[RedisServer]:
    """A private redis-server as the default cache (with the production client options) and the broker."""
    with redis_server() as server:
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": server.url,
                "OPTIONS": django_settings.REDIS_CACHE_OPTIONS,
            }
        }
        original_broker = celery_app.conf.broker_url
        celery_app.conf.broker_url = server.url
        try:
            yield server
        finally:
            celery_app.conf.broker_url = original_broker


@pytest.fixture
def accounts(db, settings) -> dict[str, str]:
    """Three learners by email, and sign-in rates that the test's many attempts from one address stay under."""
    for name in ("ada", "bo", "cy"):
        get_user_model().objects.create_user(username=name, email=f"{name}@example.com", password=PASSWORD)
    rates = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "login_ip": "1000/min", "account_ip": "1000/min"}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
    return {name: f"{name}@example.com" for name in ("ada", "bo", "cy")}


def answered(call: Callable[[], Any]) -> Any:
    """The response of `call`, checked to be no 5xx."""
    response = call()
    assert response.status_code < 500, (response.status_code, getattr(response, "content", b"")[:300])
    return response


def test_a_cache_that_hangs_costs_a_request_little():
    # What bounds a request's wait on a Redis that is down or hangs: short timeouts and no retries.
    options = django_settings.REDIS_CACHE_OPTIONS
    assert options["socket_connect_timeout"] <= 0.25 and options["socket_timeout"] <= 0.5
    assert options["retry"].get_retries() == 0


def login(email: str, password: str = PASSWORD) -> Any:
    client = APIClient()
    return answered(lambda: client.post("/api/v1/auth/login/", {"email": email, "password": password}, format="json"))


def fail_until_locked(email: str) -> None:
    for _ in range(django_settings.LOGIN_LOCKOUT_FAILURES):
        assert login(email, "not the password").status_code == 400
    assert_locked(email)


def assert_locked(email: str) -> None:
    response = login(email)
    assert response.status_code == 429, response.json()
    assert response.json()["error"]["code"] == "locked_out"
    assert int(response["Retry-After"]) > 0


def health() -> dict[str, Any]:
    response = answered(lambda: APIClient().get("/healthz"))
    assert response.status_code == 200, "only a database outage makes the service unavailable"
    body: dict[str, Any] = response.json()
    return body


def cache_keys() -> list[bytes]:
    client = caches[DEFAULT_CACHE_ALIAS]._cache.get_client()  # type: ignore[attr-defined]
    return list(client.keys("*"))


def test_sign_in_and_lockouts_go_on_through_a_cache_outage(cache_redis, accounts):
    ada, bo, cy = accounts["ada"], accounts["bo"], accounts["cy"]
    assert health()["cache"]["ok"] is True
    fail_until_locked(ada)
    # Only the per-address throttle counted in the cache; the failures are in the database.
    assert [key for key in cache_keys() if b"throttle_" not in key] == []
    # One row counts the email from this address, one from everywhere.
    assert LoginLockout.objects.count() == 2

    cache_redis.stop()
    assert_locked(ada)  # the lock outlives the cache
    assert login(bo).status_code == 200
    token = answered(
        lambda: APIClient().post("/api/v1/auth/token/", {"username": "bo", "password": PASSWORD}, format="json")
    )
    assert token.status_code == 200
    assert APIClient(HTTP_AUTHORIZATION=f"Token {token.json()['token']}").get("/api/v1/me/").status_code == 200
    fail_until_locked(cy)
    fail_until_locked("nobody@example.com")
    body = health()
    assert body["status"] == "degraded"
    assert body["database"]["ok"] is True
    assert body["cache"]["ok"] is False
    assert "ConnectionError" in body["cache"]["detail"]
    assert body["broker"]["ok"] is False
    assert body["worker"]["ok"] is False

    cache_redis.start()  # empty: nothing was saved
    assert cache_keys() == []
    assert_locked(ada)
    assert_locked(cy)
    assert_locked("nobody@example.com")
    assert login(bo).status_code == 200
    assert health()["cache"]["ok"] is True


def learner_client() -> APIClient:
    token = device_token_issue(user=get_user_model().objects.get(username="ada"), device_name=None)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def sweep(client: APIClient, card: Card) -> dict[str, int]:
    """Representative endpoints, reads and writes; each must answer within the bound and without a 5xx."""

    def review() -> dict[str, Any]:
        return {"card": card.pk, "rating": 3, "client_review_id": str(uuid.uuid4())}

    at = datetime.now(tz=UTC).isoformat()
    calls: dict[str, Callable[[], Any]] = {
        "courses": lambda: client.get("/api/v1/courses/"),
        "course": lambda: client.get("/api/v1/courses/pipelines-101/"),
        "study": lambda: client.get("/api/v1/decks/basics/study/"),
        "review": lambda: client.post("/api/v1/reviews/", review(), format="json"),
        "batch": lambda: client.post(
            "/api/v1/reviews/batch/", {"reviews": [{**review(), "reviewed_at": at}]}, format="json"
        ),
        "match": lambda: client.post("/api/v1/decks/basics/match/", {"pairs": 2}, format="json"),
        "quiz": lambda: client.post("/api/v1/quizzes/first-quiz/attempts/", {}, format="json"),
        "me": lambda: client.get("/api/v1/me/"),
        "stats": lambda: client.get("/api/v1/stats/"),
        "passes": lambda: client.get("/api/v1/deck-passes/"),
        "activity": lambda: client.get("/api/v1/activity/"),
        "reset": lambda: APIClient().post("/api/v1/auth/password/reset/", {"email": "ada@example.com"}, format="json"),
        "healthz": lambda: APIClient().get("/healthz"),
    }
    return {name: answered(call).status_code for name, call in calls.items()}


@pytest.fixture
def course(db) -> Card:
    content_sources_load(sources=[ContentSource("course.yaml", to_yaml(minimal_course()))])
    card = Card.objects.filter(deck__slug="basics").order_by("position").first()
    assert card is not None
    return card


def test_every_endpoint_answers_without_the_cache(cache_redis, accounts, course, staff_user):
    client = learner_client()
    expected = {
        "courses": 200,
        "course": 200,
        "study": 200,
        "review": 201,
        "batch": 200,
        "match": 201,
        "quiz": 201,
        "me": 200,
        "stats": 200,
        "passes": 200,
        "activity": 200,
        "reset": 202,
        "healthz": 200,
    }
    assert sweep(client, course) == expected  # with the cache up, for comparison
    cache_redis.stop()
    assert sweep(client, course) == expected
    # The admin's sign-in and its pages use the database's sessions, not the cache.
    admin = Client()
    signed_in = answered(
        lambda: admin.post("/admin/login/?next=/admin/", {"username": "grace", "password": "another long passphrase"})
    )
    assert signed_in.status_code == 302, signed_in.content[:300]
    assert answered(lambda: admin.get("/admin/")).status_code == 200


def test_a_cache_that_hangs_costs_each_request_a_bounded_wait(cache_redis, accounts, course):
    client = learner_client()
    assert client.get("/api/v1/me/").status_code == 200  # connections are open before the freeze
    assert cache_redis.process is not None
    os.kill(cache_redis.process.pid, signal.SIGSTOP)
    # Without the client's timeouts the requests below would wait for ever; a crash ends them instead.
    watchdog = threading.Timer(10, cache_redis.stop)
    watchdog.start()
    try:
        assert login(accounts["bo"]).status_code == 200
        assert answered(lambda: client.get("/api/v1/decks/basics/study/")).status_code == 200
        review = {"card": course.pk, "rating": 3, "client_review_id": str(uuid.uuid4())}
        assert answered(lambda: client.post("/api/v1/reviews/", review, format="json")).status_code == 201
        body = health()
        assert body["cache"]["ok"] is False
        assert "Timeout" in body["cache"]["detail"]
        assert body["broker"]["ok"] is False
    finally:
        watchdog.cancel()
