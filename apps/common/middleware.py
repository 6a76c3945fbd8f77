"""Keeps the API's error shape for failures that happen outside DRF views, even with DEBUG on."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

from apps.common.errors import error_response

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"

_GENERIC_ERRORS = {
    400: ("bad_request", "The request could not be understood."),
    403: ("permission_denied", "You may not do this."),
    404: ("not_found", "Nothing is at this address."),
    405: ("method_not_allowed", "This method is not allowed here."),
    413: ("request_too_large", "The request body is too large."),
    500: ("server_error", "Something went wrong on our side; it has been logged."),
}


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
        logger.exception("Unhandled error in %s", request.path, exc_info=exception)
        return error_response(500, "server_error", _GENERIC_ERRORS[500][1])
