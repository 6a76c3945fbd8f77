"""Opaque choice ids: what a learner sees of a choice in place of its authored key and position."""

from __future__ import annotations

import secrets
from collections.abc import Iterable

# 12 random bytes (96 bits), as for match boards: far beyond guessing, short enough to send back.
CHOICE_ID_BYTES = 12

_random = secrets.SystemRandom()


def choice_ids_draw(*, keys: Iterable[str]) -> list[tuple[str, str]]:
    """The authored keys in a fresh random order, each behind a fresh random id: [(id, key), ...].

    Authored keys follow the file (the correct choice is often `a`) and so do positions; neither
    may show through. The ids are distinct and never equal to an authored key, so a label sent
    back in place of an id is always refused, never mistaken for one.
    """
    shuffled = list(keys)
    _random.shuffle(shuffled)
    taken = set(shuffled)
    drawn: list[tuple[str, str]] = []
    for key in shuffled:
        choice_id = secrets.token_urlsafe(CHOICE_ID_BYTES)
        while choice_id in taken:
            choice_id = secrets.token_urlsafe(CHOICE_ID_BYTES)
        taken.add(choice_id)
        drawn.append((choice_id, key))
    return drawn
