"""Request bodies over DATA_UPLOAD_MAX_MEMORY_SIZE are a 413 too_large in the error shape, refused
before anything reads them; the largest legitimate bodies (a full review batch, 64 KiB of code) fit."""

from __future__ import annotations

import io
import json
import uuid
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import HttpRequest, JsonResponse
from django.urls import path, reverse
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.test import APIClient
from rest_framework.views import APIView

from apps.content.models import Card, Course, Deck, Lesson
from apps.exercises.models import Submission
from apps.srs.models import ReviewLog
from apps.srs.reviews.services import BATCH_LIMIT
from quizsite.urls import urlpatterns as project_urlpatterns
from tests.support.paths import DECKS_DIR
from worker.limits import MAX_CODE_BYTES

pytestmark = pytest.mark.django_db

LIMIT = 256 * 1024
LIMIT_MIDDLEWARE = "apps.common.middleware.RequestBodyLimitMiddleware"
REVIEWS = "/api/v1/reviews/"


class BodyReadingApiView(APIView):
    """Reads the raw body through Django, which applies DATA_UPLOAD_MAX_MEMORY_SIZE itself."""

    permission_classes = [AllowAny]

    def post(self, request: Request) -> Response:
        return Response({"size": len(request.body)})


def body_reading_plain_view(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"size": len(request.body)})


urlpatterns = [
    path("api/v1/body-test/drf/", BodyReadingApiView.as_view()),
    path("api/v1/body-test/plain/", body_reading_plain_view),
    *project_urlpatterns,
]


class UnreadableStream(io.RawIOBase):
    def read(self, size: int = -1) -> bytes:
        raise AssertionError("the body was read")


@pytest.fixture
def card(db) -> Card:
    course = Course.objects.create(slug="body-course", title="Body course")
    lesson = Lesson.objects.create(course=course, slug="body-lesson", title="Body lesson", position=1)
    deck = Deck.objects.create(lesson=lesson, slug="body-deck", title="Body deck", position=1)
    return Card.objects.create(deck=deck, slug="body-card", term="Cache", definition="Keeps elements.", position=1)


def review_json(card: Card, size: int | None = None) -> bytes:
    """One review as JSON, padded with trailing spaces (still valid JSON) to exactly size bytes."""
    body = json.dumps({"card": card.pk, "rating": 3, "client_review_id": str(uuid.uuid4())}).encode()
    return body if size is None else body.ljust(size)


def assert_too_large(response: Any) -> None:
    assert response.status_code == 413, response.content
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "error": {
            "code": "too_large",
            "message": f"The request body is larger than the {LIMIT} bytes accepted.",
            "fields": {},
        }
    }


def test_the_limit_is_256_kib_and_checked_before_every_other_middleware():
    assert django_settings.DATA_UPLOAD_MAX_MEMORY_SIZE == LIMIT
    assert django_settings.MIDDLEWARE[0] == LIMIT_MIDDLEWARE


def test_a_body_over_the_limit_is_a_413_before_authentication(api_client):
    # Anonymous: a 413, not a 401, so nothing ran before the check.
    response = api_client.post(REVIEWS, b"{" + b" " * LIMIT + b"}", content_type="application/json")
    assert_too_large(response)


def test_an_oversized_body_is_refused_on_its_length_alone(learner_client):
    response = learner_client.generic(
        "POST",
        REVIEWS,
        content_type="application/json",
        CONTENT_LENGTH=str(LIMIT + 1),
        **{"wsgi.input": UnreadableStream()},
    )
    assert_too_large(response)
    assert not ReviewLog.objects.exists()


def test_a_body_of_exactly_the_limit_reaches_the_view(learner_client, card):
    response = learner_client.post(REVIEWS, review_json(card, LIMIT), content_type="application/json")
    assert response.status_code == 201, response.content
    assert ReviewLog.objects.count() == 1


def test_a_full_batch_of_reviews_fits_even_indented(learner_client):
    item = {
        "card": 2**63 - 1,
        "rating": 3,
        "duration_ms": 24 * 3600 * 1000,
        "reviewed_at": "2026-11-29T08:30:00.123456+01:00",
        "client_review_id": "",
    }
    reviews = [{**item, "client_review_id": str(uuid.uuid4())} for _ in range(BATCH_LIMIT)]
    body = json.dumps({"reviews": reviews}, indent=2).encode()
    assert len(body) < LIMIT * 0.9
    response = learner_client.post("/api/v1/reviews/batch/", body, content_type="application/json")
    # Parsed and validated whole: no such card (a 404), named by each index.
    assert response.status_code == 404, response.content[:300]
    fields = response.json()["error"]["fields"]
    assert f"reviews.{BATCH_LIMIT - 1}.card" in fields


def test_the_largest_submission_fits_even_with_every_character_escaped(learner, learner_client, shipped_course):
    code = "é" * (MAX_CODE_BYTES // 2)  # 2 bytes in UTF-8, 6 as \u00e9 in JSON
    body = json.dumps({"code": code}).encode()
    assert len(body) > 3 * MAX_CODE_BYTES
    response = learner_client.post(
        "/api/v1/exercises/tfrecord-image-pipeline/submissions/", body, content_type="application/json"
    )
    assert response.status_code == 202, response.content
    assert Submission.objects.get().code == code


def chunked(client: Any, body: bytes, *, terminated: bool = True) -> Any:
    """A POST without Content-Length, as a server passes on a chunked body it has de-chunked."""
    extra: dict[str, Any] = {"wsgi.input": io.BytesIO(body), "HTTP_TRANSFER_ENCODING": "chunked"}
    if terminated:
        extra["wsgi.input_terminated"] = True
    return client.generic("POST", REVIEWS, content_type="application/json", **extra)


def test_a_chunked_body_within_the_limit_is_read_and_used(learner_client, card):
    response = chunked(learner_client, review_json(card, LIMIT))
    assert response.status_code == 201, response.content
    assert ReviewLog.objects.count() == 1


def test_a_chunked_body_growing_past_the_limit_is_a_413(learner_client, card):
    assert_too_large(chunked(learner_client, review_json(card, LIMIT + 1)))
    assert not ReviewLog.objects.exists()


def test_a_chunked_body_the_server_cannot_end_is_a_411(learner_client, card):
    response = chunked(learner_client, review_json(card), terminated=False)
    assert response.status_code == 411
    assert response.json()["error"]["code"] == "length_required"
    assert not ReviewLog.objects.exists()


def test_a_content_length_that_is_not_a_number_is_a_400(learner_client):
    response = learner_client.generic("POST", REVIEWS, b"{}", content_type="application/json", CONTENT_LENGTH="12abc")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "bad_request"


@pytest.mark.urls("tests.common.test_body_limits")
@pytest.mark.parametrize("url", ["/api/v1/body-test/drf/", "/api/v1/body-test/plain/"])
def test_djangos_own_request_data_too_big_is_a_413_too(settings, url):
    # Without the middleware, Django's own check on reading the body is what refuses it.
    settings.MIDDLEWARE = [name for name in settings.MIDDLEWARE if name != LIMIT_MIDDLEWARE]
    client = APIClient()  # its handler loads the middleware on its first request
    assert client.post(url, b"12345", content_type="application/octet-stream").json() == {"size": 5}
    assert_too_large(client.post(url, b"x" * (LIMIT + 1), content_type="application/octet-stream"))


def test_a_form_over_the_limit_outside_the_api_is_a_413(client):
    response = client.post(reverse("admin:login"), {"username": "x" * (LIMIT + 1), "password": "secret"})
    assert_too_large(response)


def test_admin_uploads_larger_than_the_api_limit_still_work(client):
    staff = get_user_model().objects.create_user(username="grace", password="a long passphrase", is_staff=True)
    staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    text = (DECKS_DIR / "tensorflow-ai-phd.yaml").read_text()
    padded = text + "# padding\n" * ((LIMIT + 100_000 - len(text)) // 10)
    assert len(padded.encode()) > LIMIT
    upload = SimpleUploadedFile("tensorflow-ai-phd.yaml", padded.encode())
    response = client.post(reverse("admin:content_course_import_yaml"), {"course_files": [upload], "dry_run": "on"})
    assert response.status_code == 200
    assert "Validation passed: nothing was written" in response.content.decode()
