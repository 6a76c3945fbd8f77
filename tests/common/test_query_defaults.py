"""Query parameters with none sent: the serializer's defaults, the same as validating an empty query."""

from __future__ import annotations

import itertools

import pytest
from django.http import QueryDict
from rest_framework import serializers

from apps.common.query import QueryIntegerField, query_params_validate

_counter = itertools.count()


class _Fixed(serializers.Serializer):
    limit = QueryIntegerField(default=50)
    page = QueryIntegerField(required=False)


class _Computed(serializers.Serializer):
    seed = QueryIntegerField(default=lambda: next(_counter))


class _Required(serializers.Serializer):
    deck = serializers.CharField()


def test_an_empty_query_gives_the_defaults_and_a_caller_cannot_change_them_for_the_next():
    first = query_params_validate(query_params=QueryDict(""), serializer_class=_Fixed)
    assert first == {"limit": 50}
    first["limit"] = 1
    assert query_params_validate(query_params=QueryDict(""), serializer_class=_Fixed) == {"limit": 50}
    assert query_params_validate(query_params=QueryDict("page=3"), serializer_class=_Fixed) == {"limit": 50, "page": 3}


def test_a_default_computed_per_call_is_computed_on_every_call():
    first = query_params_validate(query_params=QueryDict(""), serializer_class=_Computed)["seed"]
    second = query_params_validate(query_params=QueryDict(""), serializer_class=_Computed)["seed"]
    assert second != first


def test_a_required_parameter_missing_is_still_refused():
    for _ in range(2):
        with pytest.raises(serializers.ValidationError) as refused:
            query_params_validate(query_params=QueryDict(""), serializer_class=_Required)
        assert "deck" in refused.value.detail
