"""The OpenAPI schema generates cleanly and documents every endpoint with its types."""

from __future__ import annotations

import io

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


def test_every_operation_has_typed_responses_and_the_error_shape(schema):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            ok = [code for code in operation["responses"] if code.startswith("2")]
            assert ok, (path, method)
            for code in ok:
                if code == "204":  # No Content: nothing to type
                    assert "content" not in operation["responses"][code], (path, method)
                    continue
                assert "application/json" in operation["responses"][code]["content"], (path, method)
            if path != "/healthz":
                error = operation["responses"]["404"]["content"]["application/json"]["schema"]
                assert error == {"$ref": "#/components/schemas/Error"}, (path, method)
    assert "LessonBlock" in schema["components"]["schemas"]


def test_schema_and_docs_are_served(client):
    assert client.get("/api/v1/schema/").status_code == 200
    docs = client.get("/api/v1/docs/")
    assert docs.status_code == 200
    # The docs page loads its scripts from this server, so it works offline.
    assert b"drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in docs.content
    assert b"cdn.jsdelivr.net" not in docs.content
