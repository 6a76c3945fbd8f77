"""OpenAPI generation: each operation lists every status it can answer, and responses say what is always sent."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.conf import settings
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import ComponentIdentity, ResolvedComponent, build_parameter_type
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.permissions import AllowAny

from apps.common.throttling import throttle_may_refuse

Declared = TypeVar("Declared", bound=Callable[..., Any] | type)

# What each error status means on this API; every one of them has the body of ErrorSerializer.
ERROR_DESCRIPTIONS: dict[int, str] = {
    400: "The request is invalid: a malformed body or query parameter, or a value a rule refuses. "
    "error.fields names every problem at once, by dotted path.",
    401: "Not signed in: no credentials, or a token that is unknown or revoked.",
    403: "Not allowed: a session sign-in without its CSRF token, or an action this account may not take.",
    404: "Nothing with this id or slug, or it belongs to another learner.",
    406: "The Accept header names no type the API answers in: it answers application/json only.",
    408: "The request did not arrive in time (code request_timeout): a client that stalls for 10 s while "
    "sending a request is disconnected, usually before any answer.",
    409: "Refused because of what is already stored; nothing was changed. error.code says why, e.g. "
    "idempotency_key_reused when a client-made id was already used with a different payload, or "
    "sync_in_progress (with Retry-After) while other reviews of the learner's are being recorded.",
    413: "The request body is larger than the server accepts (code too_large).",
    414: "The request line (method, path and query) is longer than the server reads (code uri_too_long).",
    415: "The body is not JSON: send Content-Type: application/json.",
    429: "Too many requests (code throttled or locked_out), or too many connections from this address (code "
    "too_many_connections): try again after Retry-After seconds.",
    431: "The request's headers are larger than the server reads (code headers_too_large).",
    500: "Something went wrong on the server; it has been logged.",
    501: "The body is sent in a transfer coding other than chunked (code not_implemented).",
    503: "A service this operation needs is not available (code database_unavailable when the database did not "
    "answer: nothing was changed); try again after Retry-After seconds.",
}

# Methods whose body the server may receive, and so refuse for its size (RequestBodyLimitMiddleware).
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

_BLANK_STRING = {"type": "string", "maxLength": 0}

_RETRY_AFTER_HEADER = {
    "Retry-After": {
        "schema": {"type": "integer", "minimum": 1},
        "description": "Whole seconds to wait before trying again.",
        "required": True,
    }
}
# On a status that is sometimes a refusal for now (a 409 sync_in_progress) and otherwise final.
_RETRY_AFTER_SOMETIMES = {
    "Retry-After": {
        "schema": {"type": "integer", "minimum": 1},
        "description": "Sent when the refusal is only for now: whole seconds to wait before trying again.",
        "required": False,
    }
}


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


def error_statuses(*statuses: int, retry_after: tuple[int, ...] = ()) -> Callable[[Declared], Declared]:
    """Declares the error statuses of an operation that its view alone does not imply.

    The schema derives the generic ones (400 for a body or query parameters, 401 and 403 for a
    signed-in view, 404 for path parameters, 413, 415, 429, 500); put this on a view method (one
    operation) or a view class (all of them) for the rest, such as 409 for a conflict with stored
    data or 404 for a body that names a row. retry_after: those of them that may carry a Retry-After
    header (a domain error with retry_after), documented as an optional header."""
    unknown = set(statuses) - set(ERROR_DESCRIPTIONS)
    if unknown:
        raise ValueError(f"No error description for the statuses {sorted(unknown)}: add them to ERROR_DESCRIPTIONS.")
    if not set(retry_after) <= set(statuses):
        raise ValueError(f"retry_after {retry_after} names statuses not among {statuses}.")

    def declare(target: Declared) -> Declared:
        target.error_statuses = frozenset(statuses)  # type: ignore[union-attr]
        target.retry_after_statuses = frozenset(retry_after)  # type: ignore[union-attr]
        return target

    return declare


@dataclass(frozen=True)
class BodyRules:
    """What a request body's serializer does not say itself, because a service checks it."""

    closed: bool = False
    exactly_one_of: tuple[str, ...] = ()
    ranges: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    keywords: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def body_rules(
    *,
    closed: bool = False,
    exactly_one_of: tuple[str, ...] = (),
    ranges: Mapping[str, tuple[float, float]] | None = None,
    keywords: Mapping[str, Mapping[str, Any]] | None = None,
) -> Callable[[Declared], Declared]:
    """Documents rules on a request serializer that the server enforces outside the serializer's fields.

    closed: unknown fields are refused (400), not ignored. exactly_one_of: one, and only one, of these
    fields must be sent. ranges: inclusive bounds of number fields that a service checks, so that it can
    report them together with its other findings. keywords: any other JSON Schema keywords a service
    enforces on a field (an enum, item counts, item bounds), merged into the field's schema."""

    def declare(target: Declared) -> Declared:
        rules = BodyRules(closed, exactly_one_of, dict(ranges or {}), dict(keywords or {}))
        target.body_rules = rules  # type: ignore[union-attr]
        return target

    return declare


def _apply_body_rules(schema: dict[str, Any], rules: BodyRules) -> None:
    if rules.closed:
        schema["additionalProperties"] = False
    for name, (low, high) in rules.ranges.items():
        schema["properties"][name].update(minimum=low, maximum=high)
    for name, keywords in rules.keywords.items():
        _merge_keywords(schema["properties"][name], keywords)


def _variant(schema: dict[str, Any], *, chosen: str, others: tuple[str, ...]) -> dict[str, Any]:
    """The body with `chosen` as its one field of `others`: its own properties and required list, so that a
    generated client models it as a class (a bare `oneOf` of `required` lists leaves the body untyped)."""
    properties = {name: value for name, value in schema["properties"].items() if name == chosen or name not in others}
    required = [name for name in properties if name == chosen or name in schema.get("required", [])]
    variant = {"type": "object", "properties": properties, "required": required}
    if "additionalProperties" in schema:
        variant["additionalProperties"] = schema["additionalProperties"]
    return variant


def _merge_keywords(schema: dict[str, Any], keywords: Mapping[str, Any]) -> None:
    # Nested schemas (an array's items) keep what the field says of them, such as their type.
    for key, value in keywords.items():
        if isinstance(value, Mapping) and isinstance(schema.get(key), dict):
            _merge_keywords(schema[key], value)
        else:
            schema[key] = value


def _always_sent(field: serializers.Field, serializer: serializers.Serializer) -> bool:
    """Whether DRF always writes the field when it serializes, so a response schema must require it.

    DRF leaves a field out only when its source is missing and it is optional without a default or
    null; fields a ModelSerializer makes from model columns always have their source."""
    declared = field.field_name in getattr(serializer, "_declared_fields", {})
    skippable = not field.required and field.default is empty and not field.allow_null
    return field.read_only or not (declared and skippable)


class AutoSchema(SpectacularAutoSchema):
    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation: dict[str, Any] | None = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        responses: dict[str, Any] = operation["responses"]
        retry_after = self._declared("retry_after_statuses")
        for status in self._error_statuses(operation):
            responses.setdefault(str(status), self._error_response(status, retry_after=status in retry_after))
        operation["responses"] = dict(sorted(responses.items()))
        return operation

    def _process_override_parameters(self, direction: str = "request") -> dict[tuple[str, str], Any]:
        result: dict[tuple[str, str], Any] = super()._process_override_parameters(direction)
        # A view that reads its query through a nested Query serializer documents exactly that
        # serializer's rules (types, ranges, slugs), keeping a hand-written parameter's description.
        query = getattr(self.view, "Query", None)
        if self.method != "GET" or not (isinstance(query, type) and issubclass(query, serializers.Serializer)):
            return result
        mapped = self._map_serializer(query(), "request")
        for name, schema in mapped["properties"].items():
            written = result.get((name, OpenApiParameter.QUERY)) or {}
            result[name, OpenApiParameter.QUERY] = build_parameter_type(
                name=name,
                schema=schema,
                location=OpenApiParameter.QUERY,
                required=name in mapped.get("required", []),
                description=schema.pop("description", None) or written.get("description"),
            )
        return result

    def _error_statuses(self, operation: dict[str, Any]) -> set[int]:
        parameters = operation.get("parameters", [])
        has_body = "requestBody" in operation
        # The HTTP layer may refuse any request (400 for what it cannot parse, 408, 414, 431, and 429 for
        # an address over its connections), content negotiation any Accept header (406), and the
        # database may fail to answer any operation (503).
        statuses = {400, 406, 408, 414, 429, 431, 500, 503, *self._declared_error_statuses()}
        if has_body:
            statuses.add(415)
        if any(parameter["in"] == "path" for parameter in parameters) or self._paginated():
            # A page past the last is a 404 too (DRF's "Invalid page.").
            statuses.add(404)
        if self.method in _BODY_METHODS and settings.DATA_UPLOAD_MAX_MEMORY_SIZE is not None:
            statuses.add(413)
        if self.method in _BODY_METHODS:
            statuses.add(501)
        if not all(isinstance(permission, AllowAny) for permission in self.view.get_permissions()):
            statuses |= {401, 403}
        if throttle_may_refuse(self.view, self.method):
            statuses.add(429)
        return statuses

    def _paginated(self) -> bool:
        return bool(self._is_list_view() and self._get_paginator())

    def _declared_error_statuses(self) -> frozenset[int]:
        return self._declared("error_statuses")

    def _declared(self, name: str) -> frozenset[int]:
        handler = getattr(self.view, self.method.lower(), None)
        declared = getattr(handler, name, None) or getattr(self.view, name, None)
        return frozenset(declared or ())

    def _error_response(self, status: int, *, retry_after: bool = False) -> dict[str, Any]:
        component = self.resolve_serializer(ErrorSerializer, "response")
        response: dict[str, Any] = {
            "description": ERROR_DESCRIPTIONS[status],
            "content": {"application/json": {"schema": component.ref}},
        }
        if status == 429:
            response["headers"] = _RETRY_AFTER_HEADER
        elif retry_after or status == 503:
            response["headers"] = _RETRY_AFTER_SOMETIMES
        return response

    def _map_serializer_field(self, field: Any, direction: str, bypass_extensions: bool = False) -> dict[str, Any]:
        schema: dict[str, Any] = super()._map_serializer_field(field, direction, bypass_extensions)
        # The characters a text field refuses; a slug's own pattern already leaves them out.
        pattern = getattr(field, "schema_pattern", None)
        if pattern is not None and schema.get("type") == "string" and "pattern" not in schema:
            schema["pattern"] = pattern
        schema_format = getattr(field, "schema_format", None)
        if schema_format is not None and schema.get("type") == "string":
            schema.setdefault("format", schema_format)
        # DRF refuses an empty list unless allow_empty; drf-spectacular reads only min_length.
        if isinstance(field, serializers.ListField) and not field.allow_empty:
            schema["minItems"] = max(schema.get("minItems", 0), 1)
        return schema

    def _insert_field_validators(self, field: Any, schema: dict[str, Any]) -> None:
        super()._insert_field_validators(field, schema)
        # drf-spectacular offers "" beside a constrained string with oneOf, which refuses "" whenever the
        # constrained branch takes it too (a pattern alone does): either branch may match.
        if _BLANK_STRING in schema.get("oneOf", []):
            schema["anyOf"] = schema.pop("oneOf")

    def _map_basic_serializer(self, serializer: Any, direction: str) -> dict[str, Any]:
        schema: dict[str, Any] = super()._map_basic_serializer(serializer, direction)
        rules: BodyRules | None = getattr(serializer, "body_rules", None)
        if direction == "request" and rules is not None:
            _apply_body_rules(schema, rules)
            if rules.exactly_one_of:
                return self._exactly_one_of(serializer, schema, rules.exactly_one_of)
        if direction == "response" and "properties" in schema:
            fields = serializer.fields if isinstance(serializer, serializers.Serializer) else {}
            required = [
                name for name in schema["properties"] if name not in fields or _always_sent(fields[name], serializer)
            ]
            if required:
                schema["required"] = required
        return schema

    def _get_request_for_media_type(self, serializer: Any, direction: str = "request") -> tuple[Any, bool]:
        schema, required = super()._get_request_for_media_type(serializer, direction)
        # A body of variants has no required list of its own to tell drf-spectacular that it must be sent.
        rules: BodyRules | None = getattr(serializer, "body_rules", None)
        return schema, required or bool(rules and rules.exactly_one_of)

    def _exactly_one_of(self, serializer: Any, schema: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
        """One component per field of `fields` (ReviewInputRequest: ReviewWithRatingRequest, ReviewWithKnewRequest),
        and the body `oneOf` them: a body with none of the fields, or with two, matches no variant or two."""
        name = self._get_serializer_name(serializer, "request")
        stem = name.removesuffix("Request")
        suffix, stem = name[len(stem) :], stem.removesuffix("Input")
        variants = []
        for chosen in fields:
            component = ResolvedComponent(
                name=f"{stem}With{chosen.title().replace('_', '')}{suffix}",
                type=ResolvedComponent.SCHEMA,
                schema=_variant(schema, chosen=chosen, others=fields),
                object=ComponentIdentity((type(serializer), chosen)),
            )
            self.registry.register_on_missing(component)
            variants.append(component.ref)
        joined = ", ".join(fields[:-1]) + f" or {fields[-1]}"
        return {"oneOf": variants, "description": f"Send exactly one of {joined}."}


def _nullable_as_json_schema(node: Any) -> Any:
    if isinstance(node, list):
        return [_nullable_as_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _nullable_as_json_schema(value) for key, value in node.items()}
    if node.pop("nullable", False):
        if "type" in node:
            types = node["type"] if isinstance(node["type"], list) else [node["type"]]
            node["type"] = [*types, *(["null"] if "null" not in types else [])]
        else:
            parts = node.pop("allOf", None) or [
                {key: node.pop(key) for key in ("$ref", "oneOf", "anyOf") if key in node}
            ]
            node["oneOf"] = [parts[0] if len(parts) == 1 else {"allOf": parts}, {"type": "null"}]
    return node


def nullable_as_json_schema(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: OpenAPI 3.1 has no `nullable`; a few schemas from DRF itself still carry it
    (the pagination envelope's next and previous), and a 3.1 validator would refuse their null."""
    if not str(result.get("openapi", "")).startswith("3.1"):
        return result
    converted: dict[str, Any] = _nullable_as_json_schema(result)
    return converted
