"""Opaque choice ids: what a learner sees of a choice in place of its authored key and position."""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from typing import TYPE_CHECKING

from apps.content.choice_ids import CHOICE_ID_BYTES, board_choice_keys

if TYPE_CHECKING:
    from apps.content.models import Question
    from apps.quizzes.models import QuizAttempt

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


def question_board(*, question: Question, nonce: str) -> QuizAttempt:
    """An unsaved attempt that shows `question` with its choices behind ids derived from `nonce`.

    The ids are keyed hashes, so a question shown outside any attempt (a lesson, the admin preview)
    needs no stored state to read an answer back and shows no authored key; sorting by id shuffles
    the choices.
    """
    from apps.quizzes.models import QuizAttempt

    keys = board_choice_keys(question=question, nonce=nonce)
    question_id = str(question.pk)
    return QuizAttempt(
        question_ids=[question.pk], choice_orders={question_id: sorted(keys)}, choice_keys={question_id: keys}
    )
