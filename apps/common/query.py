"""Query parameters read through a serializer: a malformed, empty or repeated value is a 400, never a default."""

from __future__ import annotations

import functools
import re
from typing import Any

from django.http import QueryDict
from rest_framework import serializers

from apps.common.fields import BIGINT_MAX

_WHOLE_NUMBER = re.compile(r"[0-9]+")
# Enough digits for any bigint; a longer number is refused as too large before Python parses it.
_MAX_DIGITS = 19


class QueryIntegerField(serializers.IntegerField):
    """A whole number written in ASCII digits, without sign, spaces, decimals or exponent.

    Without a bound of its own it takes what a PostgreSQL bigint holds, which the schema then states.
    """

    default_error_messages = {"not_digits": "Expected a whole number written in digits 0-9."}

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_value", BIGINT_MAX)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> int:
        if not isinstance(data, str) or not _WHOLE_NUMBER.fullmatch(data):
            self.fail("not_digits")
        if len(data.lstrip("0")) > _MAX_DIGITS:
            self.fail("max_value", max_value=self.max_value)
        return int(super().to_internal_value(data))


def query_params_validate(*, query_params: QueryDict, serializer_class: type[serializers.Serializer]) -> dict[str, Any]:
    """The parameters `serializer_class` declares, validated; every problem is reported at once.

    Parameters the serializer does not declare are ignored (a cache-busting `_=` harms nothing). A
    declared one given twice is refused: which of the two counts would be a guess.
    """
    data: dict[str, Any] = {}
    repeated: dict[str, list[str]] = {}
    for name in _declared_names(serializer_class):
        values = query_params.getlist(name)
        if len(values) > 1:
            repeated[name] = ["Give this parameter once."]
        elif values:
            # A plain dict, not the QueryDict: DRF reads an empty query value as "absent" and would
            # put the default in its place.
            data[name] = values[0]
    if not data and not repeated:
        defaults = _defaults(serializer_class)
        if defaults is not None:
            return dict(defaults)
    serializer = serializer_class(data=data)
    valid = serializer.is_valid()
    errors = {**(serializer.errors if not valid else {}), **repeated}
    if errors:
        raise serializers.ValidationError(errors)
    return dict(serializer.validated_data)


# Query serializers declare their fields statically: what they declare, and what they give when no
# parameter is sent, are the same on every request, and building a serializer costs more than reading them.


@functools.cache
def _declared_names(serializer_class: type[serializers.Serializer]) -> tuple[str, ...]:
    return tuple(str(field.field_name) for field in serializer_class().fields.values())


@functools.cache
def _defaults(serializer_class: type[serializers.Serializer]) -> dict[str, Any] | None:
    """What the serializer validates an empty query to; None when that may change (a default computed per call)."""
    fields = serializer_class().fields.values()
    if any(callable(field.default) for field in fields):
        return None
    serializer = serializer_class(data={})
    if not serializer.is_valid():
        return None
    return dict(serializer.validated_data)
