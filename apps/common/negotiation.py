"""Content negotiation that answers at once for the clients that take JSON, which are nearly all of them.

DRF parses the Accept header into media types and matches each against each renderer on every
request. A request with no Accept header, or with `*/*` or `application/json`, gets the JSON renderer
either way; only other headers go through DRF's own negotiation (which answers 406 when nothing matches).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

JSON = "application/json"
# None: no Accept header, which takes anything. An empty one takes nothing (406), as DRF reads it.
_TAKES_JSON = frozenset({None, "*/*", JSON})


class JsonFirstContentNegotiation(DefaultContentNegotiation):
    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderers = list(renderers)
        accept: Any = request.META.get("HTTP_ACCEPT")
        if format_suffix is None and accept in _TAKES_JSON and renderers and renderers[0].media_type == JSON:
            return renderers[0], JSON
        return super().select_renderer(request, renderers, format_suffix)
