"""Request and response bodies of Match the Pairs.

Before a pair is earned, nothing sent to the client names a card: items carry only their random
per-board id and their text. Card ids appear in `pair` and `matched_pairs`, once matched.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from rest_framework import serializers

from apps.common.fields import CanonicalUUIDField, JSONIntegerField, SingleLineCharField
from apps.common.schema import body_rules
from apps.games.models import DEFAULT_PAIRS, MAX_PAIRS, MIN_PAIRS, MatchBoard, MatchItem
from apps.games.services import AttemptOutcome


@body_rules(closed=True)
class _StrictInput(serializers.Serializer):
    """Refuses fields it does not know: a client cannot believe it sent a time or a score that counts."""

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        initial = self.initial_data if isinstance(self.initial_data, dict) else {}
        unknown = sorted(set(initial) - set(self.fields))
        if unknown:
            raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return attrs


class MatchStartInput(_StrictInput):
    pairs = JSONIntegerField(
        min_value=MIN_PAIRS,
        max_value=MAX_PAIRS,
        default=DEFAULT_PAIRS,
        help_text=f"Pairs on the board, {MIN_PAIRS}-{MAX_PAIRS}; at most the deck's cards.",
    )


class MatchAttemptInput(_StrictInput):
    term_id = SingleLineCharField(max_length=64, help_text="The id of a term of this board.")
    definition_id = SingleLineCharField(max_length=64, help_text="The id of a definition of this board.")
    client_attempt_id = CanonicalUUIDField(
        required=False,
        help_text=(
            "Made by the client to make retries safe: sent again with the same board and ids, it records "
            "nothing and answers the first outcome; with anything else it is refused (409)."
        ),
    )


def _stamp(moment: datetime | None) -> str | None:
    return serializers.DateTimeField().to_representation(moment) if moment is not None else None


def penalty_rule(board: MatchBoard) -> dict[str, Any]:
    seconds = board.penalty_per_wrong_ms / 1000
    return {
        "wrong_attempt_penalty_ms": board.penalty_per_wrong_ms,
        "description": (
            f"Each wrong attempt adds {seconds:g} s. Score = time from start to the last match, "
            "by the server's clock, plus penalties; lower is better."
        ),
    }


class PenaltyRuleOutput(serializers.Serializer):
    wrong_attempt_penalty_ms = serializers.IntegerField(help_text="Added to the score for each wrong attempt.")
    description = serializers.CharField()


class MatchItemOutput(serializers.Serializer):
    id = serializers.CharField(help_text="Random for this board; unrelated to the card and to the other list.")
    text = serializers.CharField()


class MatchBoardItemOutput(MatchItemOutput):
    matched = serializers.BooleanField()


class MatchPairOutput(serializers.Serializer):
    term_id = serializers.CharField()
    definition_id = serializers.CharField()
    card_id = serializers.IntegerField()
    term = serializers.CharField()
    definition = serializers.CharField()

    def to_representation(self, item: MatchItem) -> dict[str, Any]:
        return {
            "term_id": item.term_id,
            "definition_id": item.definition_id,
            "card_id": item.card_id,
            "term": item.card.term,
            "definition": item.card.definition,
        }


class MatchScoreOutput(serializers.Serializer):
    elapsed_ms = serializers.IntegerField(help_text="From start to the last match, by the server's clock.")
    penalty_ms = serializers.IntegerField()
    score_ms = serializers.IntegerField(help_text="elapsed_ms + penalty_ms; lower is better.")
    personal_best = serializers.BooleanField(help_text="Better than every earlier board of this size on this deck.")

    def to_representation(self, board: MatchBoard) -> dict[str, Any]:
        return {
            "elapsed_ms": board.elapsed_ms,
            "penalty_ms": board.penalty_ms,
            "score_ms": board.score_ms,
            "personal_best": board.personal_best,
        }


def _score(board: MatchBoard) -> dict[str, Any] | None:
    return MatchScoreOutput(board).data if board.finished_at is not None else None


def _elapsed_ms(board: MatchBoard, *, until: datetime) -> int:
    return max(0, (until - board.started_at) // timedelta(milliseconds=1))


def _counts(board: MatchBoard) -> dict[str, Any]:
    return {
        "matched": board.matched,
        "remaining": board.pairs - board.matched,
        "wrong_attempts": board.wrong_attempts,
        "penalty_ms": board.penalty_ms,
        "finished": board.finished_at is not None,
    }


class MatchBoardStartOutput(serializers.Serializer):
    id = serializers.UUIDField()
    pairs = serializers.IntegerField()
    started_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(help_text="Unfinished by then, the board takes no more attempts.")
    penalty_rule = PenaltyRuleOutput()
    terms = MatchItemOutput(many=True, help_text="Shuffled.")
    definitions = MatchItemOutput(many=True, help_text="Shuffled independently of the terms.")

    def to_representation(self, board: MatchBoard) -> dict[str, Any]:
        items = list(board.items.select_related("card"))
        return {
            "id": str(board.pk),
            "pairs": board.pairs,
            "started_at": _stamp(board.started_at),
            "expires_at": _stamp(board.expires_at),
            "penalty_rule": penalty_rule(board),
            "terms": [
                {"id": item.term_id, "text": item.card.term}
                for item in sorted(items, key=lambda item: item.term_position)
            ],
            "definitions": [
                {"id": item.definition_id, "text": item.card.definition}
                for item in sorted(items, key=lambda item: item.definition_position)
            ],
        }


class MatchAttemptOutput(serializers.Serializer):
    correct = serializers.BooleanField()
    pair = MatchPairOutput(allow_null=True, help_text="The pair earned by a correct attempt; null otherwise.")
    matched = serializers.IntegerField()
    remaining = serializers.IntegerField()
    wrong_attempts = serializers.IntegerField()
    penalty_ms = serializers.IntegerField()
    finished = serializers.BooleanField()
    elapsed_ms = serializers.IntegerField(
        help_text="From the board's start to this attempt, by the server's clock: the client's clock follows it."
    )
    score = MatchScoreOutput(allow_null=True, help_text="Set once the last pair is matched.")
    client_attempt_id = serializers.UUIDField(allow_null=True)
    duplicate = serializers.BooleanField(
        help_text="True when this client_attempt_id was already recorded; the counts are then as first answered."
    )

    def to_representation(self, outcome: AttemptOutcome) -> dict[str, Any]:
        client_attempt_id = outcome.attempt.client_attempt_id
        return {
            "correct": outcome.attempt.correct,
            "pair": MatchPairOutput(outcome.item).data if outcome.item is not None else None,
            **_counts(outcome.board),
            "elapsed_ms": _elapsed_ms(outcome.board, until=outcome.attempt.attempted_at),
            "score": _score(outcome.board),
            "client_attempt_id": str(client_attempt_id) if client_attempt_id is not None else None,
            "duplicate": not outcome.created,
        }


class MatchBoardOutput(serializers.Serializer):
    id = serializers.UUIDField()
    pairs = serializers.IntegerField()
    status = serializers.ChoiceField(
        choices=["playing", "finished", "expired"],
        help_text="expired: left unfinished past expires_at; it takes no attempts and has no score.",
    )
    started_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    penalty_rule = PenaltyRuleOutput()
    terms = MatchBoardItemOutput(many=True)
    definitions = MatchBoardItemOutput(many=True)
    matched_pairs = MatchPairOutput(many=True, help_text="In the order they were matched.")
    matched = serializers.IntegerField()
    remaining = serializers.IntegerField()
    wrong_attempts = serializers.IntegerField()
    penalty_ms = serializers.IntegerField()
    finished = serializers.BooleanField()
    elapsed_ms = serializers.IntegerField(
        help_text=(
            "By the server's clock: from the start to now while playing, to the last match once finished, "
            "to the expiry once expired."
        )
    )
    score = MatchScoreOutput(allow_null=True)

    def to_representation(self, board: MatchBoard) -> dict[str, Any]:
        items = list(board.items.all())
        status: str = self.context["status"]
        now: datetime = self.context["now"]
        earned = sorted(
            (item for item in items if item.matched_at is not None),
            key=lambda item: (item.matched_at, item.term_position),
        )
        return {
            "id": str(board.pk),
            "pairs": board.pairs,
            "status": status,
            "started_at": _stamp(board.started_at),
            "expires_at": _stamp(board.expires_at),
            "finished_at": _stamp(board.finished_at),
            "penalty_rule": penalty_rule(board),
            "terms": [
                {"id": item.term_id, "text": item.card.term, "matched": item.matched_at is not None}
                for item in sorted(items, key=lambda item: item.term_position)
            ],
            "definitions": [
                {"id": item.definition_id, "text": item.card.definition, "matched": item.matched_at is not None}
                for item in sorted(items, key=lambda item: item.definition_position)
            ],
            "matched_pairs": MatchPairOutput(earned, many=True).data,
            **_counts(board),
            "elapsed_ms": _elapsed_ms(board, until=board.finished_at or min(now, board.expires_at)),
            "score": _score(board),
        }


class MatchHistoryItemOutput(serializers.Serializer):
    id = serializers.UUIDField()
    pairs = serializers.IntegerField()
    started_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField()
    elapsed_ms = serializers.IntegerField()
    penalty_ms = serializers.IntegerField()
    wrong_attempts = serializers.IntegerField()
    score_ms = serializers.IntegerField()
    personal_best = serializers.BooleanField(help_text="A new personal best when it was played.")


class MatchBestOutput(serializers.Serializer):
    pairs = serializers.IntegerField()
    board_id = serializers.UUIDField(source="pk")
    score_ms = serializers.IntegerField()
    elapsed_ms = serializers.IntegerField()
    penalty_ms = serializers.IntegerField()
    finished_at = serializers.DateTimeField()
    boards_count = serializers.IntegerField(help_text="Finished boards of this size on this deck.")


class MatchHistoryOutput(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = MatchHistoryItemOutput(many=True, help_text="Finished boards, newest first.")
    best = MatchBestOutput(many=True, help_text="The personal best per board size, fewest pairs first.")


class LeaderboardEntryOutput(serializers.Serializer):
    rank = serializers.IntegerField()
    display_name = serializers.CharField()
    score_ms = serializers.IntegerField(help_text="The learner's best score at this board size.")
    finished_at = serializers.DateTimeField(help_text="When that best was set.")


class LeaderboardOutput(serializers.Serializer):
    pairs = serializers.IntegerField()
    results = LeaderboardEntryOutput(many=True, help_text="The top 10.")
    opted_in = serializers.BooleanField(help_text="Whether the caller shows on leaderboards (see /me/).")
    me = LeaderboardEntryOutput(allow_null=True, help_text="The caller's place, when opted in and scored.")
