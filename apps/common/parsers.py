"""The API's JSON parser: one meaning per body, so duplicate keys, deep nesting and non-object bodies are refused."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import IO, Any

from rest_framework import exceptions, parsers

# Refuses byte-to-byte codecs such as bz2_codec, which would decompress a body past the size limit.
from rest_framework.parsers import get_encoding  # type: ignore[attr-defined]

# Deepest nesting of arrays and objects in a body. The deepest real body (a batch of reviews) is 3
# levels deep; 32 leaves room for any client's wrapping, and stays far below the C parser's
# recursion limit (about 1,000 levels, the RecursionError a body of nested `[` used to cause).
MAX_JSON_DEPTH = 32

# Strings as whole tokens (so brackets inside them do not count), or a single bracket. The string
# alternative is the "unrolled loop" form, which the regex engine matches without backtracking.
_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


def json_depth_exceeds(text: str, *, limit: int) -> bool:
    """Whether arrays and objects in `text` nest deeper than `limit`, counted without recursion.

    Malformed text may be miscounted; json.loads refuses it afterwards either way.
    """
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        bracket = match.group()
        if bracket in "[{":
            depth += 1
            if depth > limit:
                return True
        elif bracket in "]}":
            depth -= 1
    return False


def _refuse_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            # Parsers disagree on which copy wins; the client's intent is unknowable.
            raise ValueError(f"the key {key!r} appears twice in one object")
        obj[key] = value
    return obj


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string" if isinstance(value, str) else "an array"


class StrictJSONParser(parsers.JSONParser):
    """JSON bodies as the API reads them: a JSON object, at most MAX_JSON_DEPTH deep, every key once.

    Every endpoint takes an object: a body of `null`, `[]` or `7` is refused here rather than read
    as no fields at all. A request without a body never reaches a parser and stays `{}`.
    """

    def parse(
        self, stream: IO[bytes], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        encoding = get_encoding(parser_context or {})
        try:
            text = stream.read().decode(encoding)
        except UnicodeDecodeError as exc:
            raise exceptions.ParseError(f"the body is not valid {encoding}") from exc
        if json_depth_exceeds(text, limit=MAX_JSON_DEPTH):
            raise exceptions.ParseError(f"arrays and objects nest deeper than {MAX_JSON_DEPTH} levels")
        try:
            data = json.loads(text, object_pairs_hook=_refuse_duplicate_keys, parse_constant=_refuse_constant)
        except ValueError as exc:
            raise exceptions.ParseError(str(exc)) from exc
        if not isinstance(data, dict):
            raise exceptions.ValidationError({"non_field_errors": [f"Expected a JSON object, got {_json_kind(data)}."]})
        return data
