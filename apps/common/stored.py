"""Stored values made safe to compute with: a row may hold anything its columns allow, and a read never fails.

Input is checked strictly, but rows written before a rule existed, imports and admin edits can hold
a review dated year 1, a stability of zero or a float of 1e308. Reads show what is stored; the
arithmetic done on it (local days, elapsed days, retrievability, sums) uses the values clamped here.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db.models import DateTimeField, F, Value
from django.db.models.functions import Greatest, Least

# Python's dates run from year 1 to 9999 and PostgreSQL's far beyond both. A time used in arithmetic
# is held this far inside Python's range, so that shifting it by a time zone and a day-start hour
# (under two days) or by FSRS's longest interval (100 years) still gives a date both can hold.
EARLIEST_COMPUTABLE_TIME = datetime(2, 1, 1, tzinfo=UTC)
LATEST_COMPUTABLE_TIME = datetime(9800, 1, 1, tzinfo=UTC)
_LATEST_REPRESENTABLE = datetime.max.replace(tzinfo=UTC)


def time_clamped(moment: datetime) -> datetime:
    """The stored time, or the nearest bound of the computable range when it lies outside."""
    return min(max(moment, EARLIEST_COMPUTABLE_TIME), LATEST_COMPUTABLE_TIME)


def time_clamped_expression(field: str) -> Any:
    """time_clamped() in SQL, for grouping by day in the database."""
    earliest = Value(EARLIEST_COMPUTABLE_TIME, output_field=DateTimeField())
    latest = Value(LATEST_COMPUTABLE_TIME, output_field=DateTimeField())
    return Greatest(Least(F(field), latest), earliest, output_field=DateTimeField())


def time_after(moment: datetime, step: timedelta) -> datetime | None:
    """`moment + step`, or None when that is past the last time Python can hold (so: no upper bound)."""
    if moment > _LATEST_REPRESENTABLE - step:
        return None
    return moment + step


def float_clamped(value: Any, *, low: float, high: float, default: float) -> float:
    """A stored float within [low, high]; `default` for NaN or anything that is not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    number = float(value)
    if math.isnan(number):
        return default
    return min(max(number, low), high)


def finite_or_none(value: Any) -> float | None:
    """A stored float as JSON can carry it: NaN and the infinities have no JSON form."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None
