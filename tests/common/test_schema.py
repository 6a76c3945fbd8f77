"""The OpenAPI schema generates cleanly and documents every endpoint with its types."""

from __future__ import annotations

import io
import json

import pytest
import yaml
from django.core.management import call_command


@pytest.fixture(scope="module")
def schema(django_db_blocker) -> dict:
    out = io.StringIO()
    with django_db_blocker.unblock():
        # --fail-on-warn turns any warning drf-spectacular emits into a failure; --validate checks OpenAPI 3.
        call_command("spectacular", "--fail-on-warn", "--validate", "--format", "openapi", stdout=out)
    return yaml.safe_load(out.getvalue())


def test_schema_covers_every_endpoint(schema):
    paths = set(schema["paths"])
    for expected in (
        "/api/v1/auth/token/",
        "/api/v1/courses/",
        "/api/v1/courses/{slug}/",
        "/api/v1/courses/{slug}/concept-graph/",
        "/api/v1/lessons/{slug}/",
        "/api/v1/decks/",
        "/api/v1/decks/{slug}/",
        "/api/v1/decks/{slug}/cards/",
        "/api/v1/cards/{card_id}/",
        "/api/v1/questions/{slug}/",
        "/api/v1/exercises/",
        "/api/v1/exercises/{slug}/",
        "/api/v1/explorer/",
        "/api/v1/explorer/{slug}/",
        "/healthz",
    ):
        assert expected in paths


# Operations whose success is a file download: the body is the file, typed as binary.
FILE_DOWNLOADS = {("/api/v1/decks/{slug}/anki-package/", "get")}
FILE_CONTENT = {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}


def test_every_operation_has_typed_responses_and_the_error_shape(schema):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            ok = [code for code in operation["responses"] if code.startswith("2")]
            assert ok, (path, method)
            for code in ok:
                if code == "204":  # No Content: nothing to type
                    assert "content" not in operation["responses"][code], (path, method)
                    continue
                if (path, method) in FILE_DOWNLOADS:
                    assert operation["responses"][code]["content"] == FILE_CONTENT, (path, method)
                    continue
                assert "application/json" in operation["responses"][code]["content"], (path, method)
            for code, response in operation["responses"].items():
                if code >= "400" and (path, code) != ("/healthz", "503"):
                    error = response["content"]["application/json"]["schema"]
                    assert error == {"$ref": "#/components/schemas/Error"}, (path, method, code)
    assert "LessonBlock" in schema["components"]["schemas"]


def test_schema_and_docs_are_served(client):
    assert client.get("/api/v1/schema/").status_code == 200
    docs = client.get("/api/v1/docs/")
    assert docs.status_code == 200
    # The docs page loads its scripts from this server, so it works offline.
    assert b"drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in docs.content
    assert b"cdn.jsdelivr.net" not in docs.content


# --- Statuses: every one an operation can answer is documented, in the one error shape ---------------

ERROR_SHAPE = {"$ref": "#/components/schemas/Error"}
# Open to anyone: no 401 or 403.
PUBLIC_PATHS = {
    "/healthz",
    "/api/v1/auth/login/",
    "/api/v1/auth/register/",
    "/api/v1/auth/register/confirm/",
    "/api/v1/auth/token/",
    "/api/v1/auth/password/reset/",
    "/api/v1/auth/password/reset/confirm/",
}
# Domain conflicts: a client-made id reused with another payload, or a state that refuses the action.
CONFLICTING_OPERATIONS = {
    ("post", "/api/v1/reviews/"),
    ("post", "/api/v1/reviews/batch/"),
    ("post", "/api/v1/reviews/{review_id}/undo/"),
    ("post", "/api/v1/srs/optimize/"),
    ("post", "/api/v1/decks/{slug}/passes/"),
    ("post", "/api/v1/explorer/{slug}/regions/{region_slug}/visits/"),
    ("post", "/api/v1/quiz-attempts/{attempt_id}/answers/"),
    ("post", "/api/v1/questions/{slug}/answers/"),
    ("post", "/api/v1/quiz-attempts/{attempt_id}/finish/"),
    ("post", "/api/v1/match/{board_id}/attempts/"),
    ("post", "/api/v1/exercises/{slug}/submissions/"),
}


def _operations(schema):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            yield path, method, operation


def test_every_operation_documents_the_statuses_its_view_implies(schema):
    for path, method, operation in _operations(schema):
        responses = operation["responses"]
        parameters = operation.get("parameters", [])
        # What the HTTP layer, content negotiation and the database may answer anywhere.
        expected = {"400", "406", "408", "414", "429", "431", "500", "503"}
        if "requestBody" in operation:
            expected |= {"400", "415"}
        if any(parameter["in"] == "query" for parameter in parameters):
            expected.add("400")
        if any(parameter["in"] == "path" for parameter in parameters):
            expected.add("404")
        if method in {"post", "put", "patch", "delete"}:
            expected |= {"413", "501"}
        if path not in PUBLIC_PATHS:
            expected |= {"401", "403"}
        assert expected <= set(responses), (method, path, expected - set(responses))
        # The health check answers its own report with 503 when the database is down.
        in_error_shape = expected - {"503"} if path == "/healthz" else expected
        for code in in_error_shape:
            assert responses[code]["content"]["application/json"]["schema"] == ERROR_SHAPE, (method, path, code)
        assert "405" not in responses, (method, path)
        assert responses["429"]["headers"]["Retry-After"]["required"] is True, (method, path)
        if "503" in in_error_shape:
            assert "Retry-After" in responses["503"]["headers"], (method, path)


def test_conflicts_throttling_and_outages_are_documented(schema):
    conflicting = {(method, path) for path, method, operation in _operations(schema) if "409" in operation["responses"]}
    assert conflicting == CONFLICTING_OPERATIONS
    for path, method, operation in _operations(schema):
        if "429" in operation["responses"]:
            header = operation["responses"]["429"]["headers"]["Retry-After"]
            assert header["required"] is True and header["schema"]["type"] == "integer", (method, path)
    assert "503" in schema["paths"]["/healthz"]["get"]["responses"]
    # Signing in is throttled per address even though it needs no account.
    assert "429" in schema["paths"]["/api/v1/auth/login/"]["post"]["responses"]
    # A page past the last is a 404 on every paginated list.
    assert "404" in schema["paths"]["/api/v1/courses/"]["get"]["responses"]


# --- Nullable fields: null validates under a strict OpenAPI 3.1 validator --------------------------


def _admits_null(node) -> bool:
    if not isinstance(node, dict):
        return False
    types = node.get("type")
    return (
        node.get("nullable") is True
        or (isinstance(types, list) and "null" in types)
        or any(branch == {"type": "null"} for branch in node.get("oneOf", []) + node.get("anyOf", []))
    )


def _validator_for(schema):
    from openapi_schema_validator import OAS30Validator, OAS31Validator

    validator = OAS31Validator if schema["openapi"].startswith("3.1") else OAS30Validator
    # The components ride along at the root, so that "#/components/..." references resolve.
    return lambda subschema: validator({**subschema, "components": schema["components"]})


def test_the_schema_is_openapi_3_1_without_the_3_0_nullable_keyword(schema):
    assert schema["openapi"].startswith("3.1")
    assert '"nullable"' not in json.dumps(schema)


def test_every_nullable_property_accepts_null_under_a_strict_validator(schema):
    validator = _validator_for(schema)
    nullable: set[str] = set()
    for name, component in schema["components"]["schemas"].items():
        for field, subschema in component.get("properties", {}).items():
            if _admits_null(subschema) or (subschema.get("allOf") and subschema.get("nullable")):
                nullable.add(f"{name}.{field}")
                errors = [error.message for error in validator(subschema).iter_errors(None)]
                assert not errors, (name, field, errors)
    # The nested objects clients meet as null.
    assert {
        "StudyItemOutput.state",
        "ReviewOutput.state",
        "MatchAttemptOutput.score",
        "MatchAttemptOutput.pair",
        "MatchBoardOutput.score",
        "SubmissionOutput.result",
        "GradingResultOutput.timing",
        "GradingResultOutput.speedup",
        "LeaderboardOutput.me",
        "PaginatedDeckOutputList.next",
    } <= nullable


# --- Required fields, ranges and formats are the server's ------------------------------------------

# Only the field of the question's kind is present in a graded answer's response.
OPTIONAL_RESPONSE_FIELDS = {
    "ResponseOutput": {"choice", "choices", "text", "number"},
    # Grading results are served as stored: those graded before the timing lock lack these.
    "SpeedupOutput": {"rounds", "spread", "tolerance"},
    "TimingOutput": {"host"},
    # Those graded before every failing check was reported, and before the score's parts had their maximums;
    # credit only on a check that can be partly met.
    "CheckOutput": {"ran", "credit"},
    "ScoreOutput": {"correctness_max", "speed_max"},
    "TimingHostOutput": {"rounds_planned", "stopped_early", "references"},
    # Those graded before the references' figures were stored per host, or the pipeline profiled.
    "TimingReferencesOutput": {"why", "drift", "measured_at", "expert_vs_naive"},
    "GradingResultOutput": {"profile"},
}


def _components_under(schema, node, found: set[str]) -> set[str]:
    if isinstance(node, dict):
        reference = node.get("$ref", "")
        if reference.startswith("#/components/schemas/"):
            name = reference.rsplit("/", 1)[1]
            if name not in found:
                found.add(name)
                _components_under(schema, schema["components"]["schemas"][name], found)
        for value in node.values():
            _components_under(schema, value, found)
    elif isinstance(node, list):
        for value in node:
            _components_under(schema, value, found)
    return found


def test_response_components_require_every_field_the_server_always_sends(schema):
    components: set[str] = set()
    for _, _, operation in _operations(schema):
        _components_under(schema, operation["responses"], components)
    for name in sorted(components):
        component = schema["components"]["schemas"][name]
        properties = set(component.get("properties", {}))
        optional = properties - set(component.get("required", []))
        assert optional == OPTIONAL_RESPONSE_FIELDS.get(name, set()), (name, optional)


def _query_parameter(schema, path, name):
    (parameter,) = [p for p in schema["paths"][path]["get"]["parameters"] if p["name"] == name and p["in"] == "query"]
    return parameter["schema"]


def test_ranges_and_formats_are_the_ones_the_server_enforces(schema):
    components = schema["components"]["schemas"]
    settings_body = components["PatchedSchedulingSettingsInputRequest"]
    retention = settings_body["properties"]["desired_retention"]
    assert (retention["minimum"], retention["maximum"]) == (0.7, 0.99)
    assert settings_body["additionalProperties"] is False
    me_scheduling = components["MeSchedulingInputRequest"]["properties"]["desired_retention"]
    assert (me_scheduling["minimum"], me_scheduling["maximum"]) == (0.7, 0.99)
    limit = _query_parameter(schema, "/api/v1/decks/{slug}/study/", "limit")
    assert (limit["minimum"], limit["maximum"]) == (1, 200)
    pairs = _query_parameter(schema, "/api/v1/decks/{slug}/match/leaderboard/", "pairs")
    assert (pairs["minimum"], pairs["maximum"]) == (2, 12)
    match_body = components["MatchStartInputRequest"]["properties"]["pairs"]
    assert (match_body["minimum"], match_body["maximum"]) == (2, 12)
    for path, method, operation in _operations(schema):
        for parameter in operation.get("parameters", []):
            if parameter["name"] == "page_size":
                bounds = (parameter["schema"]["minimum"], parameter["schema"]["maximum"])
                assert bounds == (1, 200), (method, path)
            if parameter["name"] == "page":
                bounds = (parameter["schema"]["minimum"], parameter["schema"]["maximum"])
                assert bounds == (1, 2**63 - 1), (method, path)


def _variants(schema, component: str) -> dict[str, dict]:
    components = schema["components"]["schemas"]
    return {
        ref["$ref"].rsplit("/", 1)[1]: components[ref["$ref"].rsplit("/", 1)[1]]
        for ref in components[component]["oneOf"]
    }


def test_exactly_one_of_bodies_are_a_union_of_whole_objects(schema):
    # A generated client models each variant as a class; `oneOf` of bare `required` lists left the body untyped.
    answers = _variants(schema, "AnswerInputRequest")
    one_of = ("choice", "choices", "text", "number")
    assert list(answers) == [f"AnswerWith{name.title()}Request" for name in one_of]
    for name, variant in zip(one_of, answers.values(), strict=True):
        assert variant["type"] == "object"
        assert set(variant["properties"]) == {"question", name, "client_answer_id"}
        assert set(variant["required"]) == {"question", name}
    reviews = _variants(schema, "ReviewInputRequest")
    assert list(reviews) == ["ReviewWithRatingRequest", "ReviewWithKnewRequest"]
    for name, variant in zip(("rating", "knew"), reviews.values(), strict=True):
        assert set(variant["required"]) == {"card", name, "client_review_id"}
        assert not {"rating", "knew"} - {name} & set(variant["properties"])
        assert variant["properties"]["client_review_id"]["format"] == "uuid"
    batch = schema["components"]["schemas"]["ReviewBatchInputRequest"]["properties"]["reviews"]
    assert batch["items"] == {"$ref": "#/components/schemas/ReviewInputRequest"}
    for path in ("/api/v1/reviews/", "/api/v1/quiz-attempts/{attempt_id}/answers/"):
        assert schema["paths"][path]["post"]["requestBody"]["required"] is True, path


def test_exactly_one_of_bodies_validate_as_the_server_decides(schema):
    validator = _validator_for(schema)
    review = validator({"$ref": "#/components/schemas/ReviewInputRequest"})
    base = {"card": 1, "client_review_id": "6c367119-e8e2-48ee-a8bd-200aaa2193d8"}
    assert review.is_valid({**base, "rating": 3})
    assert review.is_valid({**base, "knew": True})
    assert not review.is_valid(base)
    assert not review.is_valid({**base, "rating": 3, "knew": True})
    answer = validator({"$ref": "#/components/schemas/AnswerInputRequest"})
    assert answer.is_valid({"question": "q", "text": "batch"})
    assert answer.is_valid({"question": "q", "text": ""})
    assert not answer.is_valid({"question": "q"})
    assert not answer.is_valid({"question": "q", "choice": "x", "number": 1})


def test_blank_strings_validate_where_the_server_takes_them(schema):
    # drf-spectacular's oneOf [pattern, blank] refused "" because both branches matched it.
    validator = _validator_for(schema)
    assert validator({"$ref": "#/components/schemas/PatchedMeInputRequest"}).is_valid({"display_name": ""})
    assert validator({"$ref": "#/components/schemas/AnswerWithTextRequest"}).is_valid({"question": "q", "text": ""})
    assert not validator({"$ref": "#/components/schemas/PatchedMeInputRequest"}).is_valid({"display_name": "a\x00"})


def test_account_deletion_takes_its_password_in_a_described_body(schema):
    assert "delete" not in schema["paths"]["/api/v1/me/"]
    operation = schema["paths"]["/api/v1/me/delete/"]["post"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/AccountDeleteInputRequest"}
    assert schema["components"]["schemas"]["AccountDeleteInputRequest"]["required"] == ["password"]
    assert "204" in operation["responses"]
