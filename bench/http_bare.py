"""The smallest WSGI application: 11 bytes for any request, the HTTP limit bench/http.py compares the site with.

It imports nothing of the project, so a gunicorn worker serving it costs only gunicorn itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

BODY = b"hello world"
HEADERS = [("Content-Type", "text/plain"), ("Content-Length", str(len(BODY)))]


def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    start_response("200 OK", HEADERS)
    return [BODY]
