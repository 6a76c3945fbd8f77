"""Bad input is refused with 400 in the error shape and changes nothing: bodies, JSON itself, query parameters."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework import serializers
from rest_framework.test import APIClient

from apps.common.fields import (
    AwareDateTimeField,
    CanonicalUUIDField,
    CleanCharField,
    JSONBooleanField,
    JSONIntegerField,
    JSONNumberField,
    SingleLineCharField,
)
from apps.common.parsers import MAX_JSON_DEPTH, json_depth_exceeds
from apps.common.query import QueryIntegerField
from apps.content.models import Card, Course, Deck, Lesson
from apps.quizzes.models import QuizAttempt
from apps.srs.models import DeckPass, ReviewLog

DECK = "strict-deck"
GOOD_UUID = "6f1c2a4e-8d3b-4c5a-9e7f-0a1b2c3d4e5f"


@pytest.fixture
def card(db) -> Card:
    course = Course.objects.create(slug="strict-course", title="Strict course")
    lesson = Lesson.objects.create(course=course, slug="strict-lesson", title="Strict lesson", position=1)
    deck = Deck.objects.create(lesson=lesson, slug=DECK, title="Strict deck", position=1)
    return Card.objects.create(deck=deck, slug="only-card", term="Term", definition="Definition", position=1)


def _assert_refused(response: Any, *fields: str) -> dict[str, Any]:
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert set(error) == {"code", "message", "fields"}
    for name in fields:
        assert name in error["fields"], error
    return dict(error)


def _review(target: Card, **changes: Any) -> dict[str, Any]:
    return {"card": target.pk, "rating": 3, "client_review_id": str(uuid.uuid4()), **changes}


def _post_raw(client: APIClient, url: str, body: str) -> Any:
    return client.generic("POST", url, body, content_type="application/json")


BAD_REVIEW_FIELDS = [
    pytest.param({"client_review_id": 7}, "client_review_id", id="uuid-as-integer"),
    pytest.param({"client_review_id": True}, "client_review_id", id="uuid-as-boolean"),
    pytest.param({"client_review_id": {"id": GOOD_UUID}}, "client_review_id", id="uuid-as-object"),
    pytest.param({"client_review_id": f"urn:uuid:{GOOD_UUID}"}, "client_review_id", id="uuid-as-urn"),
    pytest.param({"client_review_id": GOOD_UUID.replace("-", "")}, "client_review_id", id="uuid-without-dashes"),
    pytest.param({"client_review_id": "{" + GOOD_UUID + "}"}, "client_review_id", id="uuid-in-braces"),
    pytest.param({"reviewed_at": "0001-01-01T00:00:00Z"}, "reviewed_at", id="year-one"),
    pytest.param({"reviewed_at": "1999-12-31T23:59:59Z"}, "reviewed_at", id="before-2000"),
    pytest.param({"reviewed_at": "2026-01-01\x0010:00:00Z"}, "reviewed_at", id="nul-as-separator"),
    pytest.param({"reviewed_at": "2026-01-01T10:00:00"}, "reviewed_at", id="no-offset"),
    pytest.param({"reviewed_at": "2026-01-01 10:00:00Z"}, "reviewed_at", id="space-separator"),
    pytest.param({"reviewed_at": 1767261600}, "reviewed_at", id="epoch-number"),
    pytest.param({"reviewed_at": "2999-01-01T00:00:00Z"}, "reviewed_at", id="far-future"),
    pytest.param({"card": " 7 "}, "card", id="card-as-padded-string"),
    pytest.param({"card": "7"}, "card", id="card-as-string"),
    pytest.param({"card": True}, "card", id="card-as-boolean"),
    pytest.param({"card": 7.5}, "card", id="card-as-fraction"),
    pytest.param({"card": 2.0**60}, "card", id="card-as-float-beyond-exact"),
    pytest.param({"card": 2**64}, "card", id="card-beyond-bigint"),
    pytest.param({"rating": "3"}, "rating", id="rating-as-string"),
    pytest.param({"duration_ms": 1.5}, "duration_ms", id="duration-as-float"),
]


@pytest.mark.parametrize(("changes", "field"), BAD_REVIEW_FIELDS)
def test_a_review_with_a_malformed_field_is_refused_and_records_nothing(learner_client, card, changes, field):
    before = ReviewLog.objects.count()
    response = learner_client.post("/api/v1/reviews/", _review(card, **changes), format="json")
    _assert_refused(response, field)
    assert ReviewLog.objects.count() == before


def test_a_knew_flag_must_be_a_json_boolean(learner_client, card):
    body = _review(card, knew="yes")
    del body["rating"]
    _assert_refused(learner_client.post("/api/v1/reviews/", body, format="json"), "knew")
    assert not ReviewLog.objects.exists()


def test_every_bad_field_of_a_review_is_reported_at_once(learner_client, card):
    body = {"card": "7", "rating": True, "client_review_id": 7, "reviewed_at": "0001-01-01T00:00:00Z"}
    error = _assert_refused(
        learner_client.post("/api/v1/reviews/", body, format="json"),
        "card",
        "rating",
        "client_review_id",
        "reviewed_at",
    )
    assert error["code"] == "invalid"


def test_a_well_formed_review_is_still_recorded(learner_client, card):
    at = (timezone.now() - timedelta(minutes=1)).astimezone(UTC).isoformat()
    body = _review(card, client_review_id=GOOD_UUID.upper(), reviewed_at=at)
    response = learner_client.post("/api/v1/reviews/", body, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["client_review_id"] == GOOD_UUID


def test_a_bad_review_inside_a_batch_refuses_the_batch(learner_client, card):
    body = {"reviews": [_review(card), _review(card, client_review_id="not-a-uuid")]}
    _assert_refused(learner_client.post("/api/v1/reviews/batch/", body, format="json"), "reviews.1.client_review_id")
    assert not ReviewLog.objects.exists()


def test_a_deck_pass_takes_only_canonical_ids_and_sane_times(learner_client, card):
    body = {
        "known": "1",
        "total": 1.5,
        "started_at": "0001-01-01T00:00:00Z",
        "finished_at": "2026-01-01T00:00:00",
        "client_pass_id": GOOD_UUID.replace("-", ""),
    }
    _assert_refused(
        learner_client.post(f"/api/v1/decks/{DECK}/passes/", body, format="json"),
        "known",
        "total",
        "started_at",
        "finished_at",
        "client_pass_id",
    )
    assert not DeckPass.objects.exists()


# --- The JSON itself ------------------------------------------------------------------------------


def test_a_body_of_nested_arrays_is_a_400_not_a_recursion_error(learner_client, card):
    body = "[" * (200 * 1024)
    error = _assert_refused(_post_raw(learner_client, "/api/v1/reviews/", body))
    assert error["code"] == "malformed_json"
    assert str(MAX_JSON_DEPTH) in error["message"]


def test_nesting_just_past_the_limit_is_refused_and_at_it_is_read(learner_client, card):
    deep = '{"reviews": ' + "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH + "}"
    assert _assert_refused(_post_raw(learner_client, "/api/v1/reviews/batch/", deep))["code"] == "malformed_json"
    at_limit = '{"reviews": ' + "[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1) + "}"
    assert _assert_refused(_post_raw(learner_client, "/api/v1/reviews/batch/", at_limit))["code"] == "invalid"


def test_duplicate_keys_are_refused(learner_client, card):
    body = f'{{"card": {card.pk}, "rating": 3, "rating": 1, "client_review_id": "{GOOD_UUID}"}}'
    error = _assert_refused(_post_raw(learner_client, "/api/v1/reviews/", body))
    assert error["code"] == "malformed_json"
    assert "rating" in error["message"]
    assert not ReviewLog.objects.exists()


def test_duplicate_keys_in_a_nested_object_are_refused(learner_client, card):
    review = f'{{"card": {card.pk}, "card": {card.pk}, "rating": 3, "client_review_id": "{GOOD_UUID}"}}'
    response = _post_raw(learner_client, "/api/v1/reviews/batch/", f'{{"reviews": [{review}]}}')
    assert _assert_refused(response)["code"] == "malformed_json"


@pytest.mark.parametrize("body", ["null", "[]", "7", '"text"', "true"])
def test_a_body_that_is_not_an_object_is_refused(learner_client, body):
    # Starting an attempt takes an all-optional body, the case where null used to pass as {}.
    response = _post_raw(learner_client, "/api/v1/quizzes/any-quiz/attempts/", body)
    assert _assert_refused(response, "non_field_errors")["code"] == "invalid"
    assert not QuizAttempt.objects.exists()


def test_nan_is_not_a_number(learner_client, card):
    body = '{"desired_retention": NaN}'
    request = learner_client.generic("PATCH", "/api/v1/srs/settings/", body, content_type="application/json")
    assert _assert_refused(request)["code"] == "malformed_json"


def test_brackets_inside_strings_do_not_count_towards_the_depth():
    text = json.dumps({"code": "[" * 1000, "quoted": '\\"[[[['})
    assert not json_depth_exceeds(text, limit=2)
    assert json_depth_exceeds("[[[]]]", limit=2)


# --- Query parameters -----------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["null", "-5077.01", "0", "abc", "", "201", "1e2", " 5", "٣"])
def test_page_size_outside_1_to_200_is_refused_on_list_endpoints(learner_client, card, value):
    _assert_refused(learner_client.get(f"/api/v1/decks/{DECK}/cards/", {"page_size": value}), "page_size")


@pytest.mark.parametrize("value", ["0", "-1", "last", "abc", ""])
def test_page_must_be_a_positive_whole_number(learner_client, card, value):
    _assert_refused(learner_client.get(f"/api/v1/decks/{DECK}/cards/", {"page": value}), "page")


def test_a_page_number_past_a_bigint_is_refused_as_too_large(learner_client, card):
    error = _assert_refused(learner_client.get(f"/api/v1/decks/{DECK}/cards/", {"page": "5" * 24}), "page")
    assert error["fields"]["page"] == [f"Ensure this value is less than or equal to {2**63 - 1}."]


def test_a_repeated_page_size_is_refused(learner_client, card):
    _assert_refused(learner_client.get(f"/api/v1/decks/{DECK}/cards/?page_size=5&page_size=7"), "page_size")


def test_good_page_parameters_still_page(learner_client, card):
    response = learner_client.get(f"/api/v1/decks/{DECK}/cards/", {"page": "1", "page_size": "200"})
    assert response.status_code == 200
    assert [item["slug"] for item in response.json()["results"]] == ["only-card"]


@pytest.mark.parametrize(
    ("url", "fields"),
    [
        ("/api/v1/submissions/?status=nope&exercise=", ["status", "exercise"]),
        ("/api/v1/decks/?course=bad%20slug&page_size=null", ["course", "page_size"]),
        ("/api/v1/exercises/?course=", ["course"]),
        ("/api/v1/quizzes/?lesson=%0A", ["lesson"]),
        ("/api/v1/quiz-attempts/?quiz=a/b", ["quiz"]),
        (f"/api/v1/decks/{DECK}/study/?limit=7.0", ["limit"]),
        (f"/api/v1/decks/{DECK}/study/?limit=", ["limit"]),
        (f"/api/v1/decks/{DECK}/match/leaderboard/?pairs=-3", ["pairs"]),
        (f"/api/v1/decks/{DECK}/match/history/?page_size=0", ["page_size"]),
        ("/api/v1/stats/?deck=", ["deck"]),
        ("/api/v1/leeches/?deck=%20x", ["deck"]),
        ("/api/v1/activity/?page_size=null&before=2026-01-01T00:00:00", ["page_size", "before"]),
        ("/api/v1/activity/?kind=", ["kind"]),
    ],
)
def test_every_query_parameter_an_endpoint_reads_is_validated(learner_client, card, url, fields):
    _assert_refused(learner_client.get(url), *fields)


# --- The fields themselves ------------------------------------------------------------------------


def _check(field: serializers.Field, value: Any) -> Any:
    class Body(serializers.Serializer):
        value = field

    body = Body(data={"value": value})
    return body.validated_data["value"] if body.is_valid() else None


def test_canonical_uuid_field_takes_only_the_hyphenated_string():
    assert _check(CanonicalUUIDField(), GOOD_UUID) == uuid.UUID(GOOD_UUID)
    assert _check(CanonicalUUIDField(), GOOD_UUID.upper()) == uuid.UUID(GOOD_UUID)
    bad: Any
    for bad in [7, True, None, {}, GOOD_UUID.replace("-", ""), f"urn:uuid:{GOOD_UUID}", f" {GOOD_UUID}", "x" * 36]:
        assert _check(CanonicalUUIDField(), bad) is None, bad


def test_json_integer_field_takes_only_integers_within_a_bigint():
    assert _check(JSONIntegerField(), 7) == 7
    # JSON Schema's integer: the same number with a fraction of zero, as long as a float holds it exactly.
    assert _check(JSONIntegerField(), 7.0) == 7
    for bad in ["7", " 7 ", True, 7.5, 2.0**53 + 2, 2**63, None]:
        assert _check(JSONIntegerField(), bad) is None, bad


def test_json_number_field_takes_only_finite_numbers():
    assert _check(JSONNumberField(), 1) == 1.0
    assert _check(JSONNumberField(), 0.9) == 0.9
    for bad in ["0.9", True, float("inf"), float("nan"), 10**400]:
        assert _check(JSONNumberField(), bad) is None, bad


def test_json_boolean_field_takes_only_true_and_false():
    assert _check(JSONBooleanField(), False) is False
    for bad in ["true", "yes", 1, 0, "on"]:
        assert _check(JSONBooleanField(), bad) is None, bad


def test_aware_date_time_field_takes_rfc_3339_with_offset_between_2000_and_now():
    now = timezone.now()
    moment = _check(AwareDateTimeField(), "2026-01-02T03:04:05.123456789+01:00")
    assert moment == datetime(2026, 1, 2, 2, 4, 5, 123456, tzinfo=UTC)
    assert _check(AwareDateTimeField(), "2000-01-01T00:00:00Z") == datetime(2000, 1, 1, tzinfo=UTC)
    assert _check(AwareDateTimeField(), (now + timedelta(minutes=4)).isoformat()) is not None
    for bad in [
        (now + timedelta(minutes=6)).isoformat(),
        "1999-12-31T23:59:59.999999Z",
        "0001-01-01T00:00:00+01:00",
        "2026-01-02T03:04:05",
        "2026-01-02",
        "2026-01-02T03:04:05+24:00",
        "\uff12\uff10\uff12\uff16-01-02T03:04:05Z",
        "20260102T030405Z",
        1767323045,
    ]:
        assert _check(AwareDateTimeField(), bad) is None, bad
    cursor = AwareDateTimeField(earliest=None, allow_future=True)
    assert _check(cursor, "0001-01-01T00:00:00Z") == datetime(1, 1, 1, tzinfo=UTC)
    assert _check(cursor, "2999-01-01T00:00:00Z") is not None


def test_single_line_text_refuses_every_control_character():
    assert _check(SingleLineCharField(), "Ada Lovelace") == "Ada Lovelace"
    for bad in ["a\tb", "a\nb", "a\x00b", "a\x1bb", "a\x7fb", "a\x85b", "a\u2028b", "a\ud800b", 7, True]:
        assert _check(SingleLineCharField(), bad) is None, repr(bad)


def test_multi_line_text_keeps_tab_newline_and_carriage_return_only():
    code = "def f():\r\n\treturn 1\n"
    assert _check(CleanCharField(trim_whitespace=False), code) == code
    for bad in ["a\x00b", "a\x0cb", "a\x1bb", "a\x7fb", "a\ud800b", 7]:
        assert _check(CleanCharField(), bad) is None, repr(bad)


def test_query_integer_field_takes_only_ascii_digits():
    assert _check(QueryIntegerField(), "42") == 42
    for bad in ["", " 42", "42.0", "-1", "+1", "4e1", "٤٢", "null", 42]:
        assert _check(QueryIntegerField(), bad) is None, repr(bad)


def test_text_fields_of_real_endpoints_refuse_control_characters(db, api_client):
    body = {"email": "new@example.com", "password": "a long enough pass\x00phrase", "display_name": "New\tName"}
    body["timezone"] = "Europe/Paris\n"
    _assert_refused(
        api_client.post("/api/v1/auth/register/", body, format="json"), "password", "display_name", "timezone"
    )
