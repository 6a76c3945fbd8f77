"""Keeps the API's error shape for failures that happen outside DRF views, even with DEBUG on, and
refuses what the API will not read: oversized bodies, NUL characters in query parameters."""

from __future__ import annotations

import io
import logging
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.handlers.asgi import ASGIRequest
from django.core.handlers.wsgi import WSGIRequest
from django.db import connections
from django.http import HttpRequest, HttpResponse, JsonResponse

from apps.common.errors import (
    DATABASE_LOST_ATTRIBUTE,
    database_unavailable,
    database_unavailable_response,
    error_body,
    error_response,
    too_large_response,
)

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"

_GENERIC_ERRORS = {
    400: ("bad_request", "The request could not be understood."),
    403: ("permission_denied", "You may not do this."),
    404: ("not_found", "Nothing is at this address."),
    405: ("method_not_allowed", "This method is not allowed here."),
    413: ("too_large", "The request body is too large."),
    500: ("server_error", "Something went wrong on our side; it has been logged."),
}


class QueryStringMiddleware:
    """Refuses API query parameters holding a NUL character, which PostgreSQL cannot store or compare.

    Bodies go through serializers, whose text fields already refuse it; query parameters often go
    straight into a filter.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith(API_PREFIX):
            bad = sorted({key for key, value in request.GET.items() if "\x00" in key or "\x00" in value})
            if bad:
                return JsonResponse(
                    error_body(
                        "invalid",
                        "Query parameters may not contain NUL characters.",
                        {key.replace("\x00", "\\0"): ["Contains a NUL character."] for key in bad},
                    ),
                    status=400,
                )
        return self.get_response(request)


class ApiErrorMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            request.path.startswith(API_PREFIX)
            and response.status_code >= 400
            and not isinstance(response, JsonResponse)
            and "json" not in response.get("Content-Type", "")
        ):
            code, message = _GENERIC_ERRORS.get(response.status_code, ("error", "The request failed."))
            return error_response(response.status_code, code, message)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not request.path.startswith(API_PREFIX):
            return None
        if isinstance(exception, RequestDataTooBig):
            return too_large_response()
        if database_unavailable(exception):
            logger.warning("The database failed in %s: %r", request.path, exception)
            return database_unavailable_response()
        logger.exception("Unhandled error in %s", request.path, exc_info=exception)
        return error_response(500, "server_error", _GENERIC_ERRORS[500][1])


class DatabaseRetryMiddleware:
    """A read whose database connection was lost is tried once more on a new connection.

    Only safe methods are tried again: they change nothing, so running one twice is harmless. A write
    answers 503 with Retry-After (its transaction rolled back: nothing was changed), and the client
    sends it again, with its idempotency key where it has one.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.method in ("GET", "HEAD", "OPTIONS") and getattr(response, DATABASE_LOST_ATTRIBUTE, False):
            # Lost connections are replaced at the next use; one that is fine but whose query failed
            # is closed all the same, so the retry starts clean.
            for connection in connections.all(initialized_only=True):
                if not connection.in_atomic_block:
                    connection.close()
            logger.info("Trying %s %s again on a new database connection", request.method, request.path)
            response = self.get_response(request)
        return response


# Read a body without a length in pieces of this size, so an endless one costs at most limit + this.
_READ_CHUNK_BYTES = 64 * 1024


class RequestBodyLimitMiddleware:
    """Refuses an API request whose body is over DATA_UPLOAD_MAX_MEMORY_SIZE: 413 too_large.

    It runs first, so an oversized request costs neither a session, a token lookup nor a parse. DRF
    reads the body stream directly and never applies Django's own limit, so this is the one check
    for JSON bodies. A body declared by Content-Length is refused on the header alone; a chunked one
    is read up to the limit, refused past it, and otherwise handed on with its length set, so the
    parsers see it like any other. Pages outside the API (the admin's course import takes files of
    several MiB) keep Django's own limits; API paths that take a file have theirs in API_UPLOAD_BODY_LIMITS.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit: int | None = settings.API_UPLOAD_BODY_LIMITS.get(request.path, settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        if limit is None or not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        declared = request.META.get("CONTENT_LENGTH") or ""
        if declared.strip():
            try:
                length = int(declared)
            except ValueError:
                length = -1
            if length < 0:
                return error_response(400, "bad_request", "The Content-Length header is not a whole number of bytes.")
            if length > limit:
                return too_large_response()
        elif "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
            refused = _take_chunked_body(request, limit)
            if refused is not None:
                return refused
        return self.get_response(request)


def _take_chunked_body(request: HttpRequest, limit: int) -> JsonResponse | None:
    """Read a body sent without Content-Length; on success the request carries it with its length."""
    if isinstance(request, WSGIRequest):
        # Without this promise from the server, reading past the (absent) length may wait forever.
        if not request.environ.get("wsgi.input_terminated"):
            return error_response(411, "length_required", "Send the request body with a Content-Length header.")
        stream = request.environ["wsgi.input"]
    elif isinstance(request, ASGIRequest):
        stream = request._stream  # the whole body, already spooled by the ASGI handler
    else:
        return None
    body = bytearray()
    while chunk := stream.read(_READ_CHUNK_BYTES):
        body += chunk
        if len(body) > limit:
            return too_large_response()
    # Django and DRF read exactly CONTENT_LENGTH bytes of the stream, and nothing without it.
    request.META["CONTENT_LENGTH"] = str(len(body))
    request._stream = io.BytesIO(bytes(body))
    return None
