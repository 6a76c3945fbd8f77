"""Every error leaves in one JSON shape: {"error": {"code", "message", "fields"}}."""

from __future__ import annotations

import pytest

from tests.support.api import assert_error

pytestmark = pytest.mark.django_db


def test_unknown_api_path_is_json_404(learner_client):
    assert_error(learner_client.get("/api/v1/no-such-thing/"), 404, "not_found")
    assert_error(learner_client.get("/api/v2/courses/"), 404, "not_found")


def test_unknown_object_is_json_404(learner_client, shipped_course):
    assert_error(learner_client.get("/api/v1/decks/no-such-deck/"), 404, "not_found")
    assert_error(learner_client.get("/api/v1/cards/999999/"), 404, "not_found")


def test_wrong_method_is_405(learner_client, shipped_course):
    assert_error(learner_client.delete("/api/v1/courses/"), 405, "method_not_allowed")


def test_malformed_json_is_400(api_client):
    response = api_client.post("/api/v1/auth/token/", data='{"username": "ada", ', content_type="application/json")
    error = assert_error(response, 400, "malformed_json")
    assert "not valid JSON" in error["message"]


def test_unsupported_media_type_is_415(api_client):
    response = api_client.post("/api/v1/auth/token/", data="username=ada", content_type="text/plain")
    assert_error(response, 415, "unsupported_media_type")


def test_validation_errors_name_their_fields(api_client):
    error = assert_error(api_client.post("/api/v1/auth/token/", {"username": "ada"}, format="json"), 400, "invalid")
    assert error["fields"] == {"password": ["This field is required."]}


def test_invalid_token_is_401(api_client):
    api_client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert_error(api_client.get("/api/v1/courses/"), 401, "authentication_failed")


@pytest.mark.urls("tests.support.failing_urls")
def test_unhandled_error_in_api_view_is_json_500(api_client, caplog):
    error = assert_error(api_client.get("/api/v1/failing/api/"), 500, "server_error")
    assert "boom" not in error["message"]
    assert "boom in an API view" in caplog.text


@pytest.mark.urls("tests.support.failing_urls")
def test_unhandled_error_outside_drf_is_json_500(api_client, caplog):
    error = assert_error(api_client.get("/api/v1/failing/plain/"), 500, "server_error")
    assert "boom" not in error["message"]
    assert "boom in a plain view" in caplog.text


@pytest.mark.urls("tests.support.failing_urls")
def test_json_404_holds_with_debug_on(api_client, settings):
    settings.DEBUG = True
    assert_error(api_client.get("/api/v1/nothing-here/"), 404, "not_found")


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/api/v1/cards/99999999999999999999999/"),
        ("post", "/api/v1/reviews/99999999999999999999999/undo/"),
        ("post", "/api/v1/leeches/99999999999999999999999/unsuspend/"),
    ],
)
def test_ids_beyond_the_integer_range_are_404(learner_client, method, url):
    assert_error(getattr(learner_client, method)(url), 404, "not_found")


def test_a_nul_character_in_a_query_parameter_is_a_400_not_a_database_error(learner_client, shipped_course):
    response = learner_client.get("/api/v1/stats/", {"deck": "tf-data\x00pipelines"})
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "invalid",
        "message": "Query parameters may not contain NUL characters.",
        "fields": {"deck": ["Contains a NUL character."]},
    }
