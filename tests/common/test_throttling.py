"""Abuse limits: reviews and submissions per learner and per address, signing in per address, and a
generous rate for everything else; a refused request is a 429 in the error shape with Retry-After."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.core.cache import cache
from django.urls import URLPattern, URLResolver, get_resolver
from drf_spectacular.generators import SchemaGenerator
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.test import APIClient, APIRequestFactory
from rest_framework.throttling import ScopedRateThrottle, SimpleRateThrottle
from rest_framework.views import APIView

from apps.common import throttling
from apps.common.throttling import (
    LearnerRateThrottle,
    ScopedAddressRateThrottle,
    ScopedLearnerRateThrottle,
    throttle_history_clear,
)
from apps.content.models import Card, Course, Deck, Lesson
from apps.exercises.models import Submission
from apps.srs.models import ReviewLog
from tests.support.api import make_learner
from tests.support.clocks import FakeClock

pytestmark = pytest.mark.django_db

REVIEWS = "/api/v1/reviews/"
BATCH = "/api/v1/reviews/batch/"
SUBMIT = "/api/v1/exercises/tfrecord-image-pipeline/submissions/"
CODE = "import tensorflow as tf\n\n\ndef build_pipeline(files):\n    return tf.data.TFRecordDataset(files)\n"


@pytest.fixture
def card(db) -> Card:
    course = Course.objects.create(slug="limits-course", title="Limits course")
    lesson = Lesson.objects.create(course=course, slug="limits-lesson", title="Limits lesson", position=1)
    deck = Deck.objects.create(lesson=lesson, slug="limits-deck", title="Limits deck", position=1)
    return Card.objects.create(deck=deck, slug="limits-card", term="Prefetch", definition="Overlaps work.", position=1)


@pytest.fixture
def rates(settings):
    """Sets some throttle rates for this test; the others keep their configured values."""

    def set_rates(**changes: str) -> None:
        current = settings.REST_FRAMEWORK
        settings.REST_FRAMEWORK = {
            **current,
            "DEFAULT_THROTTLE_RATES": {**current["DEFAULT_THROTTLE_RATES"], **changes},
        }

    return set_rates


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    fake = FakeClock(1_000_000.0)
    monkeypatch.setattr(SimpleRateThrottle, "timer", fake)
    return fake


def review(client: APIClient, card: Card, **extra: Any) -> Any:
    body = {"card": card.pk, "rating": 3, "client_review_id": str(uuid.uuid4())}
    return client.post(REVIEWS, body, format="json", **extra)


def batch(client: APIClient, card: Card, size: int) -> Any:
    body = {"reviews": [{"card": card.pk, "rating": 3, "client_review_id": str(uuid.uuid4())} for _ in range(size)]}
    return client.post(BATCH, body, format="json")


def assert_throttled(response: Any) -> int:
    assert response.status_code == 429, response.content
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == "throttled"
    assert body["error"]["fields"] == {}
    assert body["error"]["message"].startswith("Request was throttled.")
    retry_after = response["Retry-After"]
    assert retry_after.isdigit(), retry_after
    return int(retry_after)


def test_reviews_over_the_learner_rate_are_a_429_with_retry_after(card, rates):
    rates(reviews_learner="3/min")
    client = make_learner("ada")[1]
    for _ in range(3):
        assert review(client, card).status_code == 201
    retry_after = assert_throttled(review(client, card))
    assert 1 <= retry_after <= 60
    assert ReviewLog.objects.count() == 3
    # Another learner at the same address has their own allowance.
    assert review(make_learner("linus")[1], card).status_code == 201


def test_retry_after_is_when_the_oldest_counted_request_leaves_the_window(card, rates, clock):
    rates(reviews_learner="2/min")
    client = make_learner("ada")[1]
    assert review(client, card).status_code == 201
    clock.now += 10
    assert review(client, card).status_code == 201
    clock.now += 5
    # The first review leaves the one-minute window 60 - 15 = 45 s from now.
    assert assert_throttled(review(client, card)) == 45
    clock.now += 44
    assert assert_throttled(review(client, card)) == 1
    clock.now += 1
    assert review(client, card).status_code == 201


def test_a_batch_counts_as_one_request(card, rates):
    rates(reviews_learner="2/min")
    client = make_learner("ada")[1]
    assert batch(client, card, 5).status_code == 200
    assert batch(client, card, 5).status_code == 200
    assert_throttled(batch(client, card, 1))
    # Single reviews and batches share the scope.
    assert_throttled(review(client, card))
    assert ReviewLog.objects.count() == 10


def test_reviews_are_also_counted_by_how_many_a_request_carries(card, rates):
    """One learner's uploads cannot take the CPU everyone shares: a batch counts as the reviews in it."""
    rates(review_volume_learner="10/min")
    client = make_learner("ada")[1]
    assert batch(client, card, 6).status_code == 200
    assert batch(client, card, 3).status_code == 200
    retry_after = assert_throttled(batch(client, card, 6))
    assert 1 <= retry_after <= 60
    # The window is full for this learner now: what would still fit is refused too, unread, until it ends.
    assert_throttled(batch(client, card, 1))
    # Single reviews cost milliseconds: the request rates alone count them.
    assert review(client, card).status_code == 201
    assert ReviewLog.objects.filter(learner__username="ada").count() == 10
    # Another learner has their own count.
    assert batch(make_learner("linus")[1], card, 10).status_code == 200


def test_the_address_rate_counts_every_learner_at_that_address(card, rates):
    rates(reviews_learner="10/min", reviews_ip="4/min")
    ada, linus = make_learner("ada")[1], make_learner("linus")[1]
    for client in (ada, ada, linus, linus):
        assert review(client, card).status_code == 201
    assert_throttled(review(linus, card))
    assert_throttled(review(make_learner("grace")[1], card))
    # Another address has its own allowance.
    assert review(linus, card, REMOTE_ADDR="203.0.113.9").status_code == 201
    assert ReviewLog.objects.count() == 5


def test_reading_the_study_queue_is_not_limited_by_the_review_rates(card, rates):
    rates(reviews_learner="1/min", reviews_ip="1/min")
    client = make_learner("ada")[1]
    assert review(client, card).status_code == 201
    assert_throttled(review(client, card))
    for _ in range(3):
        assert client.get("/api/v1/decks/limits-deck/study/").status_code == 200


def test_x_forwarded_for_is_ignored_unless_num_proxies_is_set(card, rates, settings):
    rates(reviews_learner="100/min", reviews_ip="2/min")
    client = make_learner("ada")[1]
    # Any client can write the header: by default only REMOTE_ADDR counts.
    assert review(client, card, HTTP_X_FORWARDED_FOR="198.51.100.1").status_code == 201
    assert review(client, card, HTTP_X_FORWARDED_FOR="198.51.100.2").status_code == 201
    assert_throttled(review(client, card, HTTP_X_FORWARDED_FOR="198.51.100.3"))

    throttle_history_clear()
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    # Behind one proxy, the address it appended (the last) is the client's; what came before is the client's word.
    for spoofed in ("192.0.2.1", "192.0.2.2"):
        header = f"{spoofed}, 198.51.100.1"
        assert review(client, card, HTTP_X_FORWARDED_FOR=header).status_code == 201
    assert_throttled(review(client, card, HTTP_X_FORWARDED_FOR="192.0.2.3, 198.51.100.1"))
    assert review(client, card, HTTP_X_FORWARDED_FOR="198.51.100.2").status_code == 201


def test_submissions_over_the_address_rate_are_a_429_and_store_nothing(shipped_course, rates):
    rates(submissions_ip="2/min")
    for username in ("ada", "linus"):
        assert make_learner(username)[1].post(SUBMIT, {"code": CODE}, format="json").status_code == 202
    grace = make_learner("grace")[1]
    assert 1 <= assert_throttled(grace.post(SUBMIT, {"code": CODE}, format="json")) <= 60
    assert Submission.objects.count() == 2
    # Following a submission is a read, limited only by the general rate.
    assert grace.get("/api/v1/submissions/").status_code == 200


def test_submissions_per_learner_are_limited_once_by_the_service(shipped_course, settings):
    settings.SUBMISSIONS_PER_MINUTE = 1
    client = make_learner("ada")[1]
    assert client.post(SUBMIT, {"code": CODE}, format="json").status_code == 202
    response = client.post(SUBMIT, {"code": CODE}, format="json")
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "throttled"
    assert "At most 1 submissions a minute" in response.json()["error"]["message"]
    assert 1 <= int(response["Retry-After"]) <= 61
    # One rule per learner: the view adds no second per-learner throttle for submissions.
    view = get_resolver().resolve(SUBMIT).func.view_class  # type: ignore[attr-defined]
    assert view.throttle_classes == [ScopedAddressRateThrottle]


def test_the_general_rate_counts_each_signed_in_learner(rates, api_client):
    rates(learner="2/min")
    ada = make_learner("ada")[1]
    assert ada.get("/api/v1/srs/settings/").status_code == 200
    assert ada.patch("/api/v1/srs/settings/", {"new_cards_per_day": 15}, format="json").status_code == 200
    assert_throttled(ada.get("/api/v1/srs/settings/"))
    assert make_learner("linus")[1].get("/api/v1/srs/settings/").status_code == 200
    # Anonymous requests are not counted by it: the health check always answers.
    for _ in range(3):
        assert api_client.get("/healthz").status_code in {200, 503}


def test_signing_in_is_limited_per_address_by_the_login_rate():
    class LoginView(APIView):
        throttle_scope = "login"

    factory = APIRequestFactory()

    def allowed(address: str) -> bool:
        request = Request(factory.post("/api/v1/auth/login/", REMOTE_ADDR=address))
        return ScopedAddressRateThrottle().allow_request(request, LoginView())

    assert api_settings.DEFAULT_THROTTLE_RATES["login_ip"] == "10/min"
    assert all(allowed("198.51.100.7") for _ in range(10))
    assert not allowed("198.51.100.7")
    assert allowed("198.51.100.8")


def _api_views(patterns: list[URLPattern | URLResolver]) -> list[type[APIView]]:
    views: list[type[APIView]] = []
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            views += _api_views(pattern.url_patterns)
        else:
            view = getattr(pattern.callback, "view_class", None)
            if isinstance(view, type) and issubclass(view, APIView):
                views.append(view)
    return views


def test_every_throttle_scope_has_its_rates():
    rates = api_settings.DEFAULT_THROTTLE_RATES
    scoped: dict[str, Any] = {}
    for view in _api_views(get_resolver().url_patterns):
        scope = getattr(view, "throttle_scope", None)
        for throttle in view.throttle_classes:
            if issubclass(throttle, ScopedLearnerRateThrottle | ScopedAddressRateThrottle):
                assert scope, view
                name = f"{scope}_{throttle.suffix}"
            elif issubclass(throttle, ScopedRateThrottle):
                assert scope, view
                name = scope
            else:
                continue
            assert name in rates, (view, name)
            scoped.setdefault(view.__name__, set()).add(name)
    assert scoped["ReviewCreateView"] == scoped["ReviewBatchView"] == {"reviews_learner", "reviews_ip"}
    assert scoped["SubmissionCreateView"] == {"submissions_ip"}
    default_throttles = api_settings.DEFAULT_THROTTLE_CLASSES
    assert default_throttles == [LearnerRateThrottle]


def test_a_cache_outage_lets_requests_through(card, monkeypatch, caplog):
    class DownCache:
        def get(self, *args: Any, **kwargs: Any) -> Any:
            raise ConnectionError("cache down")

        set = get

    monkeypatch.setattr(SimpleRateThrottle, "cache", DownCache())
    monkeypatch.setattr(throttling, "_outage_logged_at", None)
    client = make_learner("ada")[1]
    assert review(client, card).status_code == 201
    assert client.get("/api/v1/srs/settings/").status_code == 200
    # Said once, not once a request: an outage must not flood the log with the same traceback.
    assert caplog.text.count("could not use the cache") == 1


def test_clearing_the_history_removes_only_throttle_keys(card, rates):
    rates(reviews_learner="1/min")
    client = make_learner("ada")[1]
    cache.set("limits-test-other-key", "kept", 60)
    assert review(client, card).status_code == 201
    assert_throttled(review(client, card))
    cleared = throttle_history_clear()
    assert cleared is None or cleared >= 2  # the learner's reviews_learner and the address's reviews_ip
    assert review(client, card).status_code == 201
    if cleared is not None:  # Redis: other keys stay (a machine-local cache is cleared whole)
        assert cache.get("limits-test-other-key") == "kept"
    cache.delete("limits-test-other-key")


def test_the_schema_documents_429_where_a_request_can_be_throttled(db):
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    assert "429" in paths["/api/v1/reviews/"]["post"]["responses"]
    assert "429" in paths["/api/v1/reviews/batch/"]["post"]["responses"]
    assert "429" in paths["/api/v1/exercises/{slug}/submissions/"]["post"]["responses"]
    # Reads count towards the general rate of a signed-in learner.
    assert "429" in paths["/api/v1/decks/{slug}/study/"]["get"]["responses"]
    # Nobody signs in to the health check, so no rate counts it; the server's connection limit per
    # address may still refuse it, as it may any request.
    assert "too_many_connections" in paths["/healthz"]["get"]["responses"]["429"]["description"]
    error = paths["/api/v1/reviews/"]["post"]["responses"]["429"]["content"]["application/json"]["schema"]
    assert error == {"$ref": "#/components/schemas/Error"}
