"""The game's and /me/'s endpoints are in the OpenAPI schema with their request and response bodies."""

from __future__ import annotations

import io

import yaml
from django.core.management import call_command


def test_the_schema_documents_the_game_and_me(db):
    out = io.StringIO()
    call_command("spectacular", "--fail-on-warn", "--format", "openapi", stdout=out)
    paths = yaml.safe_load(out.getvalue())["paths"]
    expected = {
        "/api/v1/decks/{slug}/match/": {"post"},
        "/api/v1/match/{board_id}/attempts/": {"post"},
        "/api/v1/match/{board_id}/": {"get"},
        "/api/v1/decks/{slug}/match/history/": {"get"},
        "/api/v1/decks/{slug}/match/leaderboard/": {"get"},
        "/api/v1/me/": {"get", "patch"},
    }
    for path, methods in expected.items():
        assert methods <= set(paths[path]), path
        for method in methods:
            responses = paths[path][method]["responses"]
            assert any(code.startswith("2") for code in responses), (path, method)
            # A path that names a board or a deck can name one that does not exist; /me/ cannot.
            assert ("404" in responses) == ("{" in path), (path, method)
    attempt = paths["/api/v1/match/{board_id}/attempts/"]["post"]
    assert attempt["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/MatchAttemptInputRequest"
    }
