"""The server's list of client routes (apps/web/routes.py) and the app's router (src/router.ts) agree.

A route the app draws but the server does not serve would 404 on reload; one the server serves but the
app does not know would show "Page not found" at a link the server promised.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import Resolver404, resolve

from apps.web.routes import ROUTES

ROUTER_TS = Path(settings.BASE_DIR) / "apps" / "web" / "frontend" / "src" / "router.ts"
_ROUTE_ENTRY = re.compile(r'\{\s*pattern:\s*"([^"]+)",\s*name:\s*"([^"]+)"')


def client_routes() -> dict[str, str]:
    """The app's routes by name: their path patterns, `:param` for a path segment."""
    return {name: pattern for pattern, name in _ROUTE_ENTRY.findall(ROUTER_TS.read_text(encoding="utf-8"))}


def example_path(pattern: str) -> str:
    return "/".join("some-slug-1" if part.startswith(":") else part for part in pattern.split("/")) or "/"


def test_both_sides_name_the_same_routes() -> None:
    assert set(client_routes()) == {route.name for route in ROUTES}


@pytest.mark.parametrize("name", sorted(route.name for route in ROUTES))
def test_each_route_resolves_to_itself_on_the_server(name: str) -> None:
    path = example_path(client_routes()[name])
    for candidate in {path, path.rstrip("/") + "/"}:
        try:
            match = resolve(candidate)
        except Resolver404:
            pytest.fail(f"{candidate} (the app's {name!r}) is not served")
        assert match.url_name == name, candidate
