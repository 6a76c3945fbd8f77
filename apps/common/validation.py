"""A request body checked in one round: the fields that passed go on to the service, with every refusal so far.

DRF stops at its own errors, so a missing field would hide a taken email or a short password until
the next try. Views hand the service both halves instead; the service checks what passed and
reports its findings together with these (see `DomainError.fields`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers
from rest_framework.fields import empty

from apps.common.errors import field_errors_flattened


def _passed_fields(serializer: serializers.Serializer, data: Any) -> dict[str, Any]:
    """The value of each field that is present and valid on its own; nested sections field by field."""
    if not isinstance(data, Mapping):
        return {}
    values: dict[str, Any] = {}
    for field in serializer.fields.values():
        if field.read_only:
            continue
        primitive = field.get_value(data)
        if primitive is empty:
            continue
        if isinstance(field, serializers.Serializer):
            values[str(field.source)] = _passed_fields(field, primitive)
            continue
        try:
            values[str(field.source)] = field.run_validation(primitive)
        except serializers.ValidationError:
            continue
    return values


def body_checked(serializer: serializers.Serializer) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """(values that passed, errors by dotted field name); the errors are empty when the whole body is valid."""
    if serializer.is_valid():
        return dict(serializer.validated_data), {}
    return _passed_fields(serializer, serializer.initial_data), field_errors_flattened(serializer.errors)
