"""The span of times a client may report for something it did: after the service's era began, not ahead of now."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

# Phones' clocks drift; a time stamped a little ahead of the server's clock is still accepted.
CLOCK_SKEW_ALLOWANCE = timedelta(minutes=5)
# No learner used this service before then: an earlier time is a corrupt or reset client clock, and
# FSRS, which schedules from the days elapsed between reviews, would turn it into centuries of
# forgetting (and the day arithmetic of the statistics out of the dates PostgreSQL and Python share).
EARLIEST_CLIENT_TIME = datetime(2000, 1, 1, tzinfo=UTC)


def latest_client_time(*, now: datetime) -> datetime:
    """The latest time a client may report at server time `now`."""
    return now + CLOCK_SKEW_ALLOWANCE


def time_text(moment: datetime) -> str:
    """A time as every response writes it: RFC 3339, in UTC with a `Z` (never `+00:00`)."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
