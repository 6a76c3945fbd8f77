"""The one JSON error shape, and the handlers that turn every failure into it."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response

logger = logging.getLogger(__name__)


class DomainError(Exception):
    """Raised by services; the code and status reach the client unchanged."""

    status_code: int = status.HTTP_400_BAD_REQUEST
    code: str = "invalid"
    # Set on a refusal that is only for now: the answer carries it as its Retry-After header.
    retry_after: int | None = None

    def __init__(self, message: str, *, fields: dict[str, list[str]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields or {}


class NotFound(DomainError):
    status_code = status.HTTP_404_NOT_FOUND
    code = "not_found"


class RetryLater(DomainError):
    """Refused for now: a 429 whose Retry-After header says in how many seconds to try again."""

    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    code = "throttled"

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Conflict(DomainError):
    status_code = status.HTTP_409_CONFLICT
    code = "conflict"


class Busy(Conflict):
    """Refused for now because other work holds what this needs: a 409 whose Retry-After says when to try again."""

    code = "busy"

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class IdempotencyKeyReused(Conflict):
    """A client-made id that was already recorded with a different payload: the new write is refused, not merged."""

    code = "idempotency_key_reused"


class RequestTooLarge(DomainError):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    code = "too_large"


# Seconds a client is asked to wait after the database could not answer: a lost connection is
# replaced on the next request, and a restarting server is back within seconds.
DATABASE_RETRY_AFTER_SECONDS = 5
# Set on a 503 for a failed database call, so that a read may be tried once more on a new connection.
DATABASE_LOST_ATTRIBUTE = "database_connection_lost"


def database_unavailable(exc: BaseException) -> bool:
    """Whether this is the database failing to answer (connection lost, server restarting, too many clients)."""
    return isinstance(exc, OperationalError | InterfaceError)


_DATABASE_UNAVAILABLE = ("database_unavailable", "The database did not answer; nothing was changed. Try again shortly.")


def database_unavailable_response() -> JsonResponse:
    """The 503 for a database that failed outside a DRF view; DRF views answer the same through the handler."""
    response = error_response(503, *_DATABASE_UNAVAILABLE)
    response["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
    setattr(response, DATABASE_LOST_ATTRIBUTE, True)
    return response


def _too_large_message() -> str:
    return f"The request body is larger than the {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes accepted."


def error_body(code: str, message: str, fields: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "fields": fields or {}}}


def error_response(status_code: int, code: str, message: str) -> JsonResponse:
    return JsonResponse(error_body(code, message), status=status_code)


# DRF's default codes, renamed where a client benefits from a plainer word.
_CODE_NAMES = {
    "parse_error": "malformed_json",
    "unsupported_media_type": "unsupported_media_type",
    "method_not_allowed": "method_not_allowed",
    "not_authenticated": "not_authenticated",
    "authentication_failed": "authentication_failed",
    "permission_denied": "permission_denied",
    "not_found": "not_found",
    "throttled": "throttled",
    "not_acceptable": "not_acceptable",
}


def field_errors_flattened(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """Turn DRF's nested error detail into {"a.b.0.c": ["message", ...]}."""
    fields: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            fields.update(field_errors_flattened(value, name))
    elif isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            fields[prefix or "non_field_errors"] = [str(item) for item in detail]
        else:
            for index, item in enumerate(detail):
                if item:
                    fields.update(field_errors_flattened(item, f"{prefix}.{index}" if prefix else str(index)))
    else:
        fields[prefix or "non_field_errors"] = [str(detail)]
    return fields


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF's exception hook: every exception, expected or not, leaves in the error shape."""
    if isinstance(exc, RequestDataTooBig):
        exc = RequestTooLarge(_too_large_message())
    if isinstance(exc, DomainError):
        retry = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else None
        return Response(error_body(exc.code, exc.message, exc.fields), status=exc.status_code, headers=retry)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(detail=exc.messages)

    if isinstance(exc, exceptions.ValidationError):
        fields = field_errors_flattened(exc.detail)
        message = "The request is invalid: " + "; ".join(
            f"{name}: {' '.join(messages)}" for name, messages in fields.items()
        )
        return Response(error_body("invalid", message, fields), status=status.HTTP_400_BAD_REQUEST)

    if isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else exc.default_code
        message = exc.detail if isinstance(exc.detail, str) else str(exc.default_detail)
        if isinstance(exc, exceptions.ParseError):
            message = f"The request body is not valid JSON: {exc.detail}"
        headers: dict[str, str] = {}
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header  # type: ignore[attr-defined]
        if getattr(exc, "wait", None) is not None:
            headers["Retry-After"] = str(int(exc.wait))  # type: ignore[attr-defined]
        return Response(
            error_body(_CODE_NAMES.get(code, code), str(message)),
            status=exc.status_code,
            headers=headers,
        )

    request = context.get("request")
    if database_unavailable(exc):
        logger.warning("The database failed in %s: %r", getattr(request, "path", "an API view"), exc)
        response = Response(
            error_body(*_DATABASE_UNAVAILABLE),
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": str(DATABASE_RETRY_AFTER_SECONDS)},
        )
        setattr(response, DATABASE_LOST_ATTRIBUTE, True)
        return response
    logger.exception("Unhandled error in %s", getattr(request, "path", "an API view"), exc_info=exc)
    return Response(
        error_body("server_error", "Something went wrong on our side; it has been logged."),
        status=status.HTTP_500_INTERNAL_SERVER_ERROR,
    )


# The catch-all route of the API serves this view for every method: without the exemption, the CSRF
# check would answer an unsafe method 403 before the view could say that nothing is there.
@csrf_exempt
def not_found_view(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return error_response(404, "not_found", f"Nothing is at {request.path}.")


def server_error_view(request: HttpRequest) -> JsonResponse:
    return error_response(500, "server_error", "Something went wrong on our side; it has been logged.")


def too_large_response() -> JsonResponse:
    return error_response(RequestTooLarge.status_code, RequestTooLarge.code, _too_large_message())


def bad_request_view(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    # Django answers a body over DATA_UPLOAD_MAX_MEMORY_SIZE (read by a form, say) through this handler.
    if isinstance(exception, RequestDataTooBig):
        return too_large_response()
    return error_response(400, "bad_request", "The request could not be understood.")


def permission_denied_view(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return error_response(403, "permission_denied", "You may not do this.")
