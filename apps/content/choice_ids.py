"""Choice ids of a question shown outside any attempt (a lesson, the question's page, the admin preview).

A board is a nonce; the ids it gives are keyed hashes of the nonce and each authored key, so reading an
answer back needs no stored state, and no authored key or authored order shows."""

from __future__ import annotations

import re
import secrets
from typing import TYPE_CHECKING

from django.utils.crypto import salted_hmac

if TYPE_CHECKING:
    from apps.content.models import Question

# 12 random bytes (96 bits), as for match boards: far beyond guessing, short enough to send back.
CHOICE_ID_BYTES = 12
# A board's nonce: as many random bytes as a choice id, so it is as hard to guess.
BOARD_NONCE_BYTES = CHOICE_ID_BYTES
BOARD_NONCE = re.compile(r"[A-Za-z0-9_-]{16}")
# The salt predates the board's use outside the admin preview; changing it would change every id.
_BOARD_SALT = "apps.content.previews.question_board"
# As long as the ids an attempt shows a learner: 16 characters.
_BOARD_CHOICE_ID_CHARS = 16


def board_nonce_draw() -> str:
    """A fresh nonce: the choices it derives come in a fresh order behind fresh ids."""
    return secrets.token_urlsafe(BOARD_NONCE_BYTES)


def board_choice_keys(*, question: Question, nonce: str) -> dict[str, str]:
    """{choice id: authored key} of the question's choices on the board `nonce`; sorting the ids shuffles them."""
    return {
        salted_hmac(_BOARD_SALT, f"{nonce}:{question.pk}:{choice.key}").hexdigest()[:_BOARD_CHOICE_ID_CHARS]: choice.key
        for choice in question.choices.all()
    }
