"""Grading one answer against a question's key. Pure: no database, no clock.

The rules, per kind (decks/SCHEMA.md and docs/games-and-quizzes.md describe them for authors and learners):

- single choice: full credit for the correct key, none otherwise;
- multiple choice: correct means exactly the correct set; credit is
  (correct keys picked - wrong keys picked) / number of correct keys, floored at 0;
- short text: both sides are normalized (Unicode NFKC, case folded, every whitespace and
  punctuation character removed), then an answer matches an accepted one when it is equal, is
  a simple plural of it or the other way round ("tfrecords" for "tfrecord"), or, for accepted
  answers of at least TYPO_MIN_LENGTH normalized characters, is one edit away (an insertion,
  deletion, substitution or swap of neighbours) without changing any digit and without only
  adding or dropping letters at the end (that makes another word);
- numeric: within the question's absolute tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz.distance import DamerauLevenshtein

from apps.content.text import normalize_text

# Below this length one edit turns a word into another word ("batch" / "patch"), so no typo is forgiven.
TYPO_MIN_LENGTH = 8
# A plural is only recognised on a stem this long: "as" is not the plural of "a".
PLURAL_MIN_STEM = 3
# Floating-point slack on the tolerance, so 0.1 + 0.2 still equals an answer of 0.3 with tolerance 0.
NUMERIC_SLACK = 1e-9


@dataclass(frozen=True)
class Grade:
    credit: float

    @property
    def correct(self) -> bool:
        return self.credit >= 1.0

    @property
    def outcome(self) -> str:
        """ "correct", "partial" or "wrong": what the scheduler and the card ratings are told."""
        if self.correct:
            return "correct"
        return "partial" if self.credit > 0 else "wrong"


def _is_plural(word: str, stem: str) -> bool:
    return len(stem) >= PLURAL_MIN_STEM and word == f"{stem}s"


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def text_matches(answer: str, accepted: str) -> bool:
    given, wanted = normalize_text(answer), normalize_text(accepted)
    if not given or not wanted:
        return False
    if given == wanted or _is_plural(given, wanted) or _is_plural(wanted, given):
        return True
    # A changed digit is a different answer (float32 / float64, resnet50 / resnet56), never a typo.
    if len(wanted) < TYPO_MIN_LENGTH or _digits(given) != _digits(wanted):
        return False
    # Letters added or dropped at the end make another word (profile / profiler, shuffle / shuffled), not a slip.
    if given.startswith(wanted) or wanted.startswith(given):
        return False
    return DamerauLevenshtein.distance(given, wanted, score_cutoff=1) <= 1


def grade_short_text(answer: str, accepted: Iterable[str]) -> Grade:
    return Grade(1.0 if any(text_matches(answer, option) for option in accepted) else 0.0)


def grade_single_choice(choice: str, correct: set[str]) -> Grade:
    return Grade(1.0 if choice in correct else 0.0)


def grade_multiple_choice(choices: set[str], correct: set[str]) -> Grade:
    if choices == correct:
        return Grade(1.0)
    right, wrong = len(choices & correct), len(choices - correct)
    return Grade(max(0.0, (right - wrong) / len(correct)))


def grade_numeric(number: float, answer: float, tolerance: float) -> Grade:
    if not math.isfinite(number):
        raise ValueError("the number must be finite")
    slack = NUMERIC_SLACK * max(1.0, abs(answer))
    return Grade(1.0 if abs(number - answer) <= tolerance + slack else 0.0)
