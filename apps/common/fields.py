"""Request fields that accept one JSON type in one canonical form, so that a value can mean only one thing.

DRF's own fields coerce: `7`, `true` and `" 7 "` become ids, `urn:uuid:...` a UUID, any character a
date separator, `"0.9"` a number. Every request serializer uses these instead; each refuses what it
does not take with a field error, so a body with several bad fields reports all of them at once.
"""

from __future__ import annotations

import math
import re
import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from django.utils import timezone as django_timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.common.clock import CLOCK_SKEW_ALLOWANCE, EARLIEST_CLIENT_TIME, latest_client_time, time_text

# Ids are PostgreSQL bigints; a larger number names nothing and cannot even be bound in a query.
BIGINT_MAX = 2**63 - 1
BIGINT_MIN = -(2**63)

# Unicode control characters (C0, DEL, C1) and lone surrogates, which no text needs and PostgreSQL
# cannot store (NUL, surrogates); line and paragraph separators break a single line just as well.
# Bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069), zero-width characters
# (U+200B-U+200F) and U+FEFF are refused too: in a name they make "adm\u202eni" read as "admin"
# or two different names look the same.
_NOT_IN_A_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")
# Text that spans lines (code, answers, definitions) keeps tab, newline and carriage return.
_NOT_IN_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


# The same rules as OpenAPI patterns (ECMA 262 syntax), so that clients and generated tests know them.
# Lone surrogates are left out: ECMA 262 reads a string as UTF-16 units, where a class naming them would
# also refuse every character outside the Basic Multilingual Plane; the server still refuses them.
LINE_SCHEMA_PATTERN = r"^[^\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]*$"
TEXT_SCHEMA_PATTERN = r"^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]*$"


def _forbidden_character(value: str, pattern: re.Pattern[str]) -> str | None:
    found = pattern.search(value)
    return f"U+{ord(found.group()):04X}" if found else None


def line_character_refused(value: str) -> str | None:
    """The first character the single-line rule refuses in `value`, as U+XXXX; None when there is none."""
    return _forbidden_character(value, _NOT_IN_A_LINE)


class SingleLineCharField(serializers.CharField):
    """A string on one line: names, ids, slugs, passwords. No control character at all, tab included."""

    _forbidden = _NOT_IN_A_LINE
    schema_pattern = LINE_SCHEMA_PATTERN
    default_error_messages = {
        "not_a_string": "Expected a string.",
        "control_character": (
            "Contains {character}, a control, invisible or text-direction character, which this field does not take."
        ),
    }

    def to_internal_value(self, data: Any) -> str:
        # DRF turns numbers and booleans into text; a client that sends them has a type bug.
        if not isinstance(data, str):
            self.fail("not_a_string")
        if character := _forbidden_character(data, self._forbidden):
            self.fail("control_character", character=character)
        return str(super().to_internal_value(data))


class CleanCharField(SingleLineCharField):
    """A string that may span lines (code, answers): tab, newline and carriage return are its only controls."""

    _forbidden = _NOT_IN_TEXT
    schema_pattern = TEXT_SCHEMA_PATTERN


class CleanSlugField(SingleLineCharField, serializers.SlugField):
    """A slug, as a string: letters, digits, hyphens and underscores."""

    schema_pattern = r"^[-a-zA-Z0-9_]+$"

    def __init__(self, **kwargs: Any) -> None:
        # " x" is not the slug "x": trimmed, a padded value would name something it does not spell.
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)


class CleanEmailField(SingleLineCharField, serializers.EmailField):
    """An email address, as a string."""

    schema_format = "email"


# Every whole number up to this size has a float of exactly its value; past it, 2**53 + 1 written as a
# float arrives as 2**53, another id.
_EXACT_FLOAT_INTEGER = 2**53


class JSONIntegerField(serializers.IntegerField):
    """A JSON integer: not a string of digits, not a boolean, not a fraction such as 7.5.

    A whole number written with a fraction or exponent (7.0, 1e2) is the same number to JSON Schema,
    whose `integer` type admits it, so it is taken below 2**53: from there on a float cannot hold it
    exactly (2**53 + 1 arrives as 2**53). Without bounds of its own it takes what a PostgreSQL bigint
    holds, so no value reaches the database that it cannot store.
    """

    default_error_messages = {
        "not_an_integer": "Expected a JSON integer.",
        "inexact": "Expected a JSON integer written without a fraction or exponent: a float holds whole "
        "numbers exactly only below 2**53.",
    }

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("min_value", BIGINT_MIN)
        kwargs.setdefault("max_value", BIGINT_MAX)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, float) and data.is_integer():
            # 2**53 itself is refused too: 2**53 + 1 written as a float arrives as exactly that.
            if abs(data) >= _EXACT_FLOAT_INTEGER:
                self.fail("inexact")
            data = int(data)
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("not_an_integer")
        return int(super().to_internal_value(data))


class JSONNumberField(serializers.FloatField):
    """A finite JSON number: not a string of digits, not a boolean, not too large for a double."""

    default_error_messages = {"not_a_number": "Expected a finite JSON number."}

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("not_a_number")
        try:
            value = float(data)
        except OverflowError:
            self.fail("not_a_number")
        # JSON's 1e400 arrives as infinity.
        if not math.isfinite(value):
            self.fail("not_a_number")
        return float(super().to_internal_value(value))


class JSONBooleanField(serializers.BooleanField):
    """A JSON true or false: not "yes", "on", 1 or "true"."""

    default_error_messages = {"not_a_boolean": "Expected a JSON boolean, true or false."}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("not_a_boolean")
        return data


# RFC 9562's string form: 8-4-4-4-12 hex digits. Hex is read in either case, as the RFC asks of
# parsers; the server writes it in lower case. No braces, no urn:uuid: prefix, no missing hyphens.
UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
_UUID = re.compile(UUID_PATTERN)


@extend_schema_field({"type": "string", "format": "uuid", "pattern": UUID_PATTERN})
class CanonicalUUIDField(serializers.UUIDField):
    """A UUID as the 36-character hyphenated string, hex digits in either case."""

    default_error_messages = {
        "not_canonical": "Expected a UUID as 36 characters: 8-4-4-4-12 hex digits separated by hyphens."
    }

    def to_internal_value(self, data: Any) -> uuid.UUID:
        if not isinstance(data, str) or not _UUID.fullmatch(data):
            self.fail("not_canonical")
        return uuid.UUID(data)


# RFC 3339's date-time (the OpenAPI `date-time` format): the offset is required. Digits are ASCII
# only; up to nine fractional digits are read (Go and Java send nanoseconds) and cut to microseconds.
_DATE_TIME = re.compile(
    r"(?P<year>[0-9]{4})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})[Tt]"
    r"(?P<hour>[0-9]{2}):(?P<minute>[0-9]{2}):(?P<second>[0-9]{2})(?:\.(?P<fraction>[0-9]{1,9}))?"
    r"(?:(?P<utc>[Zz])|(?P<sign>[+-])(?P<offset_hours>[0-9]{2}):(?P<offset_minutes>[0-9]{2}))"
)


def _parse_date_time(value: str) -> datetime | None:
    match = _DATE_TIME.fullmatch(value)
    if match is None:
        return None
    parts = match.groupdict()
    if parts["utc"]:
        zone = UTC
    else:
        hours, minutes = int(parts["offset_hours"]), int(parts["offset_minutes"])
        if hours > 23 or minutes > 59:
            return None
        offset = timedelta(hours=hours, minutes=minutes)
        zone = timezone(-offset if parts["sign"] == "-" else offset)
    try:
        return datetime(
            int(parts["year"]),
            int(parts["month"]),
            int(parts["day"]),
            int(parts["hour"]),
            int(parts["minute"]),
            int(parts["second"]),
            int((parts["fraction"] or "0").ljust(6, "0")[:6]),
            tzinfo=zone,
        )
    except ValueError:
        return None


class AwareDateTimeField(serializers.DateTimeField):
    """An RFC 3339 time with its UTC offset, from 2000 to now plus the allowed clock skew.

    A time without offset is refused rather than read in the server's zone, where a phone's local
    time would land hours off. A time that filters rather than records (a cursor, which echoes
    whatever is stored) passes `earliest=None, allow_future=True` to drop the bounds.
    """

    default_error_messages = {
        "not_rfc3339": "Expected an RFC 3339 time with its UTC offset, e.g. 2026-11-29T08:30:00+01:00.",
        "too_early": "{value} is before {earliest}; no time that early belongs to this service.",
        "in_future": "{value} is ahead of the server's clock ({now}) by more than {skew}.",
    }

    def __init__(
        self, *, earliest: datetime | None = EARLIEST_CLIENT_TIME, allow_future: bool = False, **kwargs: Any
    ) -> None:
        self.earliest = earliest
        self.allow_future = allow_future
        bounds = []
        if earliest is not None:
            bounds.append(f"not before {time_text(earliest)}")
        if not allow_future:
            bounds.append(f"not ahead of the server's clock by more than {CLOCK_SKEW_ALLOWANCE}")
        if bounds:
            help_text = kwargs.get("help_text")
            rule = "; ".join(bounds)
            rule = f"{rule[0].upper()}{rule[1:]}."
            kwargs["help_text"] = f"{help_text} {rule}" if help_text else rule
        super().__init__(**kwargs)

    def to_internal_value(self, value: Any) -> datetime:
        parsed = _parse_date_time(value) if isinstance(value, str) else None
        if parsed is None:
            self.fail("not_rfc3339")
        if self.earliest is not None and parsed < self.earliest:
            self.fail("too_early", value=value, earliest=time_text(self.earliest))
        now = django_timezone.now()
        if not self.allow_future and parsed > latest_client_time(now=now):
            self.fail("in_future", value=value, now=now.isoformat(), skew=CLOCK_SKEW_ALLOWANCE)
        aware: datetime = self.enforce_timezone(parsed)
        return aware
