"""The smallest WSGI application: 11 bytes for any request, the HTTP limit bench/http.py compares the site with.

It imports nothing of the project, so a server's worker serving it costs only the server itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

BODY = b"hello world"
HEADERS = [("Content-Type", "text/plain"), ("Content-Length", str(len(BODY)))]


def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    start_response("200 OK", HEADERS)
    return [BODY]


async def asgi_application(scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
    """The same answer over ASGI, for servers that speak only that."""
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": BODY})
