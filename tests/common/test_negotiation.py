"""Content negotiation: the shortcut for clients that take JSON picks what DRF's own negotiation picks."""

from __future__ import annotations

import pytest
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer, BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from apps.common.negotiation import JsonFirstContentNegotiation


def _request(accept: str | None) -> Request:
    factory = APIRequestFactory()
    request = factory.get("/api/v1/courses/") if accept is None else factory.get("/api/v1/courses/", HTTP_ACCEPT=accept)
    return Request(request)


@pytest.mark.parametrize("accept", [None, "", "*/*", "application/json", "text/html", "application/*", "text/*;q=0.9"])
@pytest.mark.parametrize("renderers", [[JSONRenderer()], [JSONRenderer(), BrowsableAPIRenderer()]])
def test_the_shortcut_picks_what_drf_picks(accept: str | None, renderers: list[BaseRenderer]) -> None:
    def outcome(negotiation: DefaultContentNegotiation) -> object:
        try:
            renderer, media_type = negotiation.select_renderer(_request(accept), renderers)
        except Exception as exc:
            return type(exc)
        return type(renderer), media_type

    assert outcome(JsonFirstContentNegotiation()) == outcome(DefaultContentNegotiation())
