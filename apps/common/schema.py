"""OpenAPI generation: every operation documents the error shape for the errors it can return."""

from __future__ import annotations

from typing import Any, Literal

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from rest_framework import serializers

from apps.common.throttling import throttle_may_refuse


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable machine-readable code, e.g. not_found.")
    message = serializers.CharField(help_text="What went wrong, for people.")
    # Named like Serializer.fields: DRF moves declared fields aside, so the property is untouched.
    fields = serializers.DictField(  # type: ignore[assignment]
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Per-field messages, keyed by the field's dotted path.",
    )


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


class AutoSchema(SpectacularAutoSchema):
    def _get_response_bodies(self, direction: Literal["request", "response"] = "response") -> dict[str, Any]:
        responses: dict[str, Any] = super()._get_response_bodies(direction)
        # Any operation may get a 400: a malformed body, or a query parameter it cannot use.
        error_codes = ["400", "401", "403", "404", "405", "500"]
        if self.method in {"POST", "PUT", "PATCH"}:
            error_codes = ["415", *error_codes]
        if not self.view.get_permissions() or all(
            type(permission).__name__ == "AllowAny" for permission in self.view.get_permissions()
        ):
            error_codes = [code for code in error_codes if code not in {"401", "403"}]
        if self.method in {"POST", "PUT", "PATCH"}:
            # RequestBodyLimitMiddleware refuses a body over DATA_UPLOAD_MAX_MEMORY_SIZE.
            error_codes.append("413")
        if throttle_may_refuse(self.view, self.method):
            error_codes.append("429")
        for code in error_codes:
            responses.setdefault(code, self._get_response_for_code(ErrorSerializer, code))
        return responses
