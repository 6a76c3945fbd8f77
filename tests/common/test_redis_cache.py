"""The Redis cache and the throttles that count in it.

The cache makes one redis.Redis per connection pool and reuses it, keeping the configured timeouts and
no retries, and stays usable on both sides of a fork. A throttle counts in one round trip, the throttles
of one request together, with exactly DRF's sliding window: the same verdicts and Retry-After as DRF's
get and set, refused requests not counted, and a Redis that is down lets requests through.

Each test runs on a private redis-server, so its keys and command counts are its own.
"""

from __future__ import annotations

import fnmatch
import json
import os
import random
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.redis import RedisCache
from redis.connection import Connection
from rest_framework.exceptions import Throttled
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from apps.common import throttling
from apps.common.throttling import (
    THROTTLE_KEY_PATTERN,
    LearnerRateThrottle,
    ScopedAddressRateThrottle,
    ScopedLearnerRateThrottle,
    throttle_history_clear,
)
from apps.content.models import Card, Course, Deck, Lesson
from tests.support.clocks import FakeClock
from tests.support.processes import RedisServer, redis_server

BACKEND = "apps.common.cache.ReusedClientRedisCache"


class CountingConnection(Connection):
    """A redis-py connection that counts what it sends (a command, a pipeline or a script: one round
    trip each) and its attempts to connect."""

    sends = 0
    connection_attempts = 0

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        type(self).sends += 1
        super().send_packed_command(command, check_health)

    def _connect(self) -> Any:
        type(self).connection_attempts += 1
        return super()._connect()


@pytest.fixture(scope="module")
def server() -> Iterator[RedisServer]:
    with redis_server() as started:
        yield started


@pytest.fixture
def cache(server: RedisServer, settings) -> Iterator[Any]:
    """The default cache on the private server (emptied), as production configures it, connected."""
    server.start()  # a test may have stopped it
    settings.CACHES = {
        "default": {
            "BACKEND": BACKEND,
            "LOCATION": server.url,
            "KEY_PREFIX": "quizsite",
            "OPTIONS": {**django_settings.REDIS_CACHE_OPTIONS, "connection_class": CountingConnection},
        }
    }
    default: Any = caches[DEFAULT_CACHE_ALIAS]
    default._cache.get_client(write=True).flushdb()
    yield default
    default._cache.get_client(write=True).connection_pool.disconnect()


def ready() -> None:
    """Connects the cache and has Redis know the throttles' script, so what follows is all that is sent."""
    ReadView().check_throttles(make_request("GET", learner=999_999))


def server_calls(cache: Any) -> dict[str, int]:
    """Calls of each command since the server started (INFO's own included)."""
    stats = cache._cache.get_client(write=True).info("commandstats")
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


# --- The cache backend ----------------------------------------------------------------------------------


def test_settings_use_the_backend_that_reuses_clients():
    if django_settings.REDIS_URL:
        assert django_settings.CACHES["default"]["BACKEND"] == BACKEND
    else:
        assert django_settings.CACHES["default"]["BACKEND"] == "django.core.cache.backends.filebased.FileBasedCache"


def test_every_operation_uses_one_client_object(cache):
    client = cache._cache.get_client(write=True)
    assert cache._cache.get_client() is client
    assert cache._cache.get_client("some-key", write=True) is client
    cache.set("reused", 1, 60)
    assert cache.get("reused") == 1
    assert cache._cache.get_client() is client
    # Django's own backend makes one an operation: what this backend is for.
    plain = RedisCache(cache._servers, {"OPTIONS": django_settings.REDIS_CACHE_OPTIONS})
    assert plain._cache.get_client() is not plain._cache.get_client()


def test_the_client_keeps_the_configured_timeouts_and_no_retries(cache):
    pool = cache._cache.get_client().connection_pool
    options = django_settings.REDIS_CACHE_OPTIONS
    assert pool.connection_kwargs["socket_connect_timeout"] == options["socket_connect_timeout"]
    assert pool.connection_kwargs["socket_timeout"] == options["socket_timeout"]
    connection = pool.get_connection()
    try:
        assert connection.retry.get_retries() == 0
    finally:
        pool.release(connection)


def test_reads_from_a_replica_use_its_own_client(server, settings):
    # Django writes to the first server and reads from the others: one client (and pool) each.
    settings.CACHES = {
        "default": {
            "BACKEND": BACKEND,
            "LOCATION": f"redis://127.0.0.1:{server.port}/1,redis://127.0.0.1:{server.port}/2",
        }
    }
    cache: Any = caches[DEFAULT_CACHE_ALIAS]
    writer, reader = cache._cache.get_client(write=True), cache._cache.get_client()
    assert reader is not writer
    assert reader.connection_pool is not writer.connection_pool
    assert reader.connection_pool.connection_kwargs["db"] == 2
    assert cache._cache.get_client(write=True) is writer
    assert cache._cache.get_client() is reader


# Forking is what this test is about; other tests may have left threads in this process.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_client_made_before_a_fork_works_on_both_sides(cache):
    client = cache._cache.get_client(write=True)
    cache.set("before-fork", "parent", 60)
    parent_connection = client.connection_pool.get_connection()
    client.connection_pool.release(parent_connection)
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe and never returns
        status = 1
        try:
            os.close(read_end)
            child_client = cache._cache.get_client(write=True)
            seen = cache.get("before-fork")
            cache.set("from-child", os.getpid(), 60)
            connection = child_client.connection_pool.get_connection()
            fresh = connection is not parent_connection
            child_client.connection_pool.release(connection)
            report = {"same_client": child_client is client, "seen": seen, "fresh_connection": fresh}
            os.write(write_end, json.dumps(report).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        report = json.loads(pipe.read() or b"{}")
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert report == {"same_client": True, "seen": "parent", "fresh_connection": True}
    # The parent's connection was not touched by the child: its replies are still its own.
    assert cache.get("from-child") == child
    assert cache.get("before-fork") == "parent"
    assert client.connection_pool.get_connection() is parent_connection


def test_the_client_outlives_a_redis_restart(cache, server):
    client = cache._cache.get_client(write=True)
    cache.set("lost", 1, 60)
    server.stop()
    with pytest.raises(redis.ConnectionError):
        cache.get("lost")
    server.start()
    assert cache.get("lost") is None  # nothing is saved to disk
    cache.set("after", 2, 60)
    assert cache.get("after") == 2
    assert cache._cache.get_client(write=True) is client


# --- Throttles counting in Redis ------------------------------------------------------------------------


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    # A time with a fraction, so a window's edge falls between whole seconds.
    fake = FakeClock(1_700_000_000.123456)
    monkeypatch.setattr(SimpleRateThrottle, "timer", fake)
    return fake


@pytest.fixture
def rates(settings):
    def set_rates(**changes: str) -> None:
        current = settings.REST_FRAMEWORK
        settings.REST_FRAMEWORK = {
            **current,
            "DEFAULT_THROTTLE_RATES": {**current["DEFAULT_THROTTLE_RATES"], **changes},
        }

    return set_rates


class ReviewsView(APIView):
    throttle_scope = "reviews"
    throttle_classes = [ScopedLearnerRateThrottle, ScopedAddressRateThrottle]


class ReadView(APIView):
    throttle_classes = [LearnerRateThrottle]


def make_request(method: str = "POST", learner: int = 1, address: str = "198.51.100.1") -> Request:
    request = Request(APIRequestFactory().generic(method, "/limits/", REMOTE_ADDR=address))
    request.user = get_user_model()(pk=learner, username=f"learner-{learner}")  # never saved: no database
    return request


def verdicts(view: APIView, request: Request) -> list[tuple[bool, float | None]]:
    """Each throttle's verdict and, when refused, its wait: what DRF's check_throttles asks of them."""
    answers = []
    for throttle in view.get_throttles():
        allowed = throttle.allow_request(request, view)
        answers.append((allowed, None if allowed else throttle.wait()))
    return answers


def stored_key(cache: Any, scope: str, ident: object) -> str:
    return str(cache.make_key(f"throttle_{scope}_{ident}"))


def history(cache: Any, scope: str, ident: object) -> list[float]:
    client = cache._cache.get_client(write=True)
    return [float(at) for at in client.lrange(stored_key(cache, scope, ident), 0, -1)]


def test_n_requests_are_allowed_and_the_next_refused_without_being_counted(cache, rates, clock):
    rates(reviews_learner="3/min", reviews_ip="100/min")
    view = ReviewsView()
    for _ in range(3):
        view.check_throttles(make_request())
        clock.now += 1
    for _ in range(2):
        with pytest.raises(Throttled):
            view.check_throttles(make_request())
    assert history(cache, "reviews_learner", 1) == [clock.now - 1, clock.now - 2, clock.now - 3]
    # The address's throttle counted every request, the refused ones too: DRF asks each throttle on its own.
    assert len(history(cache, "reviews_ip", "198.51.100.1")) == 5
    key = stored_key(cache, "reviews_learner", 1)
    assert fnmatch.fnmatchcase(key, cache.make_key(THROTTLE_KEY_PATTERN))
    assert 0 < cache._cache.get_client().ttl(key) <= 60
    assert throttle_history_clear() == 2
    assert history(cache, "reviews_learner", 1) == []


def test_requests_leave_the_window_after_its_duration(cache, rates, clock):
    rates(reviews_learner="2/min", reviews_ip="100/min")
    view = ReviewsView()
    assert verdicts(view, make_request()) == [(True, None), (True, None)]
    clock.now += 10
    assert verdicts(view, make_request()) == [(True, None), (True, None)]
    clock.now += 5
    # The first request leaves the one-minute window 60 - 15 = 45 s from now.
    assert verdicts(view, make_request())[0] == (False, pytest.approx(45))
    clock.now += 44
    assert verdicts(view, make_request())[0] == (False, pytest.approx(1))
    clock.now += 1  # exactly a minute after the first: it has left, as DRF counts
    assert verdicts(view, make_request())[0] == (True, None)
    assert len(history(cache, "reviews_learner", 1)) == 2


def test_the_verdicts_and_waits_are_those_of_drf_get_and_set(server, settings, rates, monkeypatch):
    """A long random sequence, once through DRF's get and set on a local-memory cache, once in Redis."""
    rates(reviews_learner="2/min", reviews_ip="3/min", learner="3/min")
    generator = random.Random(20240611)  # noqa: S311 - a fixed sequence, not a secret
    steps = [
        (
            generator.choice([0.0, 0.0, 0.25, 0.5, 1.0, 2.0, 3.0, 7.5, 15.0, 59.75, 60.0, 61.0]),
            generator.randint(1, 3),
            generator.choice(["198.51.100.1", "198.51.100.2"]),
            generator.choice(["POST", "POST", "GET"]),
        )
        for _ in range(400)
    ]

    def run() -> list[list[tuple[bool, float | None]]]:
        clock = FakeClock(1_700_000_000.5)
        monkeypatch.setattr(SimpleRateThrottle, "timer", clock)
        answers = []
        for advance, learner, address, method in steps:
            clock.now += advance
            for view in (ReviewsView(), ReadView()):
                answers.append(verdicts(view, make_request(method, learner, address)))
        return answers

    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    by_get_and_set = run()
    settings.CACHES = {"default": {"BACKEND": BACKEND, "LOCATION": server.url, "KEY_PREFIX": "equivalence"}}
    redis_cache: Any = caches[DEFAULT_CACHE_ALIAS]
    redis_cache._cache.get_client(write=True).flushdb()
    in_redis = run()
    refused = sum(not allowed for answer in in_redis for allowed, _ in answer)
    assert refused > 100  # the sequence tries the limits, not only the happy path
    assert in_redis == by_get_and_set


def test_a_rate_of_zero_refuses_everything_and_counts_nothing(cache, rates):
    rates(reviews_learner="0/min", reviews_ip="100/min")
    assert verdicts(ReviewsView(), make_request()) == [(False, 60.0), (True, None)]
    assert history(cache, "reviews_learner", 1) == []


def test_a_write_with_two_throttles_is_one_round_trip(cache, rates):
    rates(reviews_learner="10/min", reviews_ip="10/min")
    ready()
    before = server_calls(cache)
    sends = CountingConnection.sends
    ReviewsView().check_throttles(make_request())
    assert CountingConnection.sends - sends == 1
    after = server_calls(cache)
    assert after.get("evalsha", 0) + after.get("eval", 0) - before.get("evalsha", 0) - before.get("eval", 0) == 1
    assert after.get("get", 0) == before.get("get", 0)
    assert after.get("set", 0) == before.get("set", 0)
    assert len(history(cache, "reviews_learner", 1)) == len(history(cache, "reviews_ip", "198.51.100.1")) == 1


def test_a_read_is_one_round_trip_and_the_scoped_rates_none(cache, rates):
    rates(learner="10/min", reviews_learner="1/min", reviews_ip="1/min")
    ready()
    sends = CountingConnection.sends
    ReadView().check_throttles(make_request("GET"))
    assert CountingConnection.sends - sends == 1
    for _ in range(3):  # reads are not counted by the scoped rates: nothing is asked of Redis
        ReviewsView().check_throttles(make_request("GET"))
    assert CountingConnection.sends - sends == 1


def test_a_review_over_the_api_costs_one_round_trip(cache, rates, learner, learner_client):
    rates(reviews_learner="10/min", reviews_ip="10/min")
    course = Course.objects.create(slug="redis-course", title="Redis course")
    lesson = Lesson.objects.create(course=course, slug="redis-lesson", title="Redis lesson", position=1)
    deck = Deck.objects.create(lesson=lesson, slug="redis-deck", title="Redis deck", position=1)
    card = Card.objects.create(deck=deck, slug="redis-card", term="Term", definition="Definition.", position=1)
    body = {"card": card.pk, "rating": 3, "client_review_id": str(uuid.uuid4())}
    ready()
    sends = CountingConnection.sends
    assert learner_client.post("/api/v1/reviews/", body, format="json").status_code == 201
    assert CountingConnection.sends - sends == 1
    assert len(history(cache, "reviews_learner", learner.pk)) == 1


def test_a_redis_that_is_down_lets_requests_through_trying_once_a_request(cache, server, rates, monkeypatch, caplog):
    rates(reviews_learner="1/min", reviews_ip="1/min")
    monkeypatch.setattr(throttling, "_outage_logged_at", None)
    view = ReviewsView()
    view.check_throttles(make_request())
    server.stop()
    attempts = CountingConnection.connection_attempts
    for _ in range(3):
        view.check_throttles(make_request())  # over both rates, but nothing can count them
    # The learner's throttle tried for both; the address's did not try again.
    assert CountingConnection.connection_attempts - attempts == 3
    assert caplog.text.count("could not use the cache") == 1

    server.start()  # empty, without the script: it is loaded again
    view.check_throttles(make_request())
    with pytest.raises(Throttled):
        view.check_throttles(make_request())


def test_a_history_left_by_drf_get_and_set_is_replaced(cache, rates, clock):
    rates(reviews_learner="2/min", reviews_ip="100/min")
    cache.set("throttle_reviews_learner_1", [clock.now, clock.now], 60)  # full, in DRF's pickled form
    assert verdicts(ReviewsView(), make_request()) == [(True, None), (True, None)]
    assert history(cache, "reviews_learner", 1) == [clock.now]


def test_a_throttle_asked_alone_counts_alone(cache, rates):
    class LoginView(APIView):
        throttle_scope = "login"

    rates(login_ip="2/min")
    # Not among the view's throttles (the view has the general one): it counts its own window only.
    for expected in (True, True, False):
        assert ScopedAddressRateThrottle().allow_request(make_request(), LoginView()) is expected
    assert len(history(cache, "login_ip", "198.51.100.1")) == 2
