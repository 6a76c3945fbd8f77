"""The game's settings, read when used (so tests can override them) and checked at startup."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error

from apps.srs.core.scheduling import Rating

DEFAULT_PENALTY_SECONDS = 5
DEFAULT_EXPIRY_MINUTES = 60
DEFAULT_RATINGS: dict[str, int] = {"first_try": int(Rating.GOOD), "after_mistake": int(Rating.AGAIN)}


@dataclass(frozen=True)
class MatchSettings:
    penalty_ms: int
    expiry: timedelta
    rating_first_try: Rating
    rating_after_mistake: Rating


def _ratings() -> dict[str, Any]:
    return {**DEFAULT_RATINGS, **getattr(settings, "MATCH_RATINGS", {})}


def match_settings_errors() -> list[str]:
    problems: list[str] = []
    penalty = getattr(settings, "MATCH_WRONG_ATTEMPT_PENALTY_SECONDS", DEFAULT_PENALTY_SECONDS)
    if isinstance(penalty, bool) or not isinstance(penalty, int | float) or not math.isfinite(penalty) or penalty < 0:
        problems.append(f"MATCH_WRONG_ATTEMPT_PENALTY_SECONDS must be a number of seconds >= 0, got {penalty!r}.")
    expiry = getattr(settings, "MATCH_BOARD_EXPIRY_MINUTES", DEFAULT_EXPIRY_MINUTES)
    if isinstance(expiry, bool) or not isinstance(expiry, int | float) or not math.isfinite(expiry) or expiry <= 0:
        problems.append(f"MATCH_BOARD_EXPIRY_MINUTES must be a number of minutes > 0, got {expiry!r}.")
    ratings = _ratings()
    unknown = sorted(set(ratings) - set(DEFAULT_RATINGS))
    if unknown:
        problems.append(f"MATCH_RATINGS has unknown keys {unknown}; use first_try and after_mistake.")
    for key in DEFAULT_RATINGS:
        if ratings[key] not in {int(rating) for rating in Rating}:
            problems.append(f"MATCH_RATINGS[{key!r}] must be 1 (Again), 2 (Hard), 3 (Good) or 4 (Easy).")
    return problems


def match_settings_check(**kwargs: Any) -> list[CheckMessage]:
    """A Django system check: a bad value stops the server at startup instead of failing a game."""
    return [Error(problem, id="games.E001") for problem in match_settings_errors()]


def match_settings() -> MatchSettings:
    ratings = _ratings()
    penalty = getattr(settings, "MATCH_WRONG_ATTEMPT_PENALTY_SECONDS", DEFAULT_PENALTY_SECONDS)
    expiry = getattr(settings, "MATCH_BOARD_EXPIRY_MINUTES", DEFAULT_EXPIRY_MINUTES)
    return MatchSettings(
        penalty_ms=round(penalty * 1000),
        expiry=timedelta(minutes=expiry),
        rating_first_try=Rating(ratings["first_try"]),
        rating_after_mistake=Rating(ratings["after_mistake"]),
    )
