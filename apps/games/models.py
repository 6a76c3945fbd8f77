"""Match the Pairs: boards, the cards on them behind random per-board ids, and every attempt made."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from apps.content.models import Card, Deck

MIN_PAIRS = 2
MAX_PAIRS = 12
DEFAULT_PAIRS = 6


class MatchBoard(models.Model):
    """One game. The rules it was started with (penalty, expiry) are stored, so changing settings
    never changes a game already running, and scores stay comparable to how they were earned."""

    # Random (uuid4): the id is the only handle a client has, so it must not be guessable.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="match_boards")
    deck = models.ForeignKey(Deck, on_delete=models.PROTECT, related_name="match_boards")
    pairs = models.SmallIntegerField()
    started_at = models.DateTimeField()
    expires_at = models.DateTimeField(help_text="Unfinished after this, the board takes no attempts and no score.")
    penalty_per_wrong_ms = models.IntegerField(help_text="Added to the score for each wrong attempt.")
    matched = models.SmallIntegerField(default=0)
    wrong_attempts = models.IntegerField(default=0)
    penalty_ms = models.IntegerField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True)
    elapsed_ms = models.IntegerField(null=True, blank=True, help_text="finished_at - started_at, by the server.")
    score_ms = models.IntegerField(null=True, blank=True, help_text="elapsed_ms + penalty_ms; lower is better.")
    personal_best = models.BooleanField(default=False, help_text="Better than every earlier board of this size.")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(pairs__gte=MIN_PAIRS, pairs__lte=MAX_PAIRS), name="match_pairs_range"),
            models.CheckConstraint(condition=Q(matched__gte=0, matched__lte=F("pairs")), name="match_matched_range"),
            models.CheckConstraint(
                condition=Q(wrong_attempts__gte=0, penalty_ms__gte=0, penalty_per_wrong_ms__gte=0),
                name="match_counts_non_negative",
            ),
            # Finished exactly when every pair is matched, and then it has its score.
            models.CheckConstraint(
                condition=(
                    Q(finished_at__isnull=True, score_ms__isnull=True, elapsed_ms__isnull=True)
                    & Q(matched__lt=F("pairs"))
                )
                | (
                    Q(finished_at__isnull=False, score_ms__isnull=False, elapsed_ms__isnull=False)
                    & Q(matched=F("pairs"))
                ),
                name="match_finished_scored",
            ),
        ]
        indexes = [
            models.Index(fields=["learner", "deck", "finished_at"], name="match_board_history"),
            models.Index(fields=["deck", "pairs", "score_ms"], name="match_board_leaderboard"),
        ]

    def __str__(self) -> str:
        return f"{self.pairs} pairs on {self.deck_id} by {self.learner_id}"


class MatchItem(models.Model):
    """A card on a board. Its term and its definition each have their own random id and position,
    so what the client sees of one side says nothing about the other."""

    board = models.ForeignKey(MatchBoard, on_delete=models.CASCADE, related_name="items")
    card = models.ForeignKey(Card, on_delete=models.PROTECT, related_name="+")
    term_id = models.CharField(max_length=32)
    definition_id = models.CharField(max_length=32)
    term_position = models.SmallIntegerField()
    definition_position = models.SmallIntegerField()
    # Part of a wrong attempt on either side: the card's review will be "after a mistake".
    missed = models.BooleanField(default=False)
    matched_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["board", "card"], name="match_item_card_unique"),
            models.UniqueConstraint(fields=["board", "term_id"], name="match_item_term_unique"),
            models.UniqueConstraint(fields=["board", "definition_id"], name="match_item_definition_unique"),
            models.UniqueConstraint(fields=["board", "term_position"], name="match_item_term_position_unique"),
            models.UniqueConstraint(
                fields=["board", "definition_position"], name="match_item_definition_position_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.card_id} on {self.board_id}"


class MatchAttempt(models.Model):
    """Append-only: every attempt the board accepted, right or wrong, in the order it was made."""

    board = models.ForeignKey(MatchBoard, on_delete=models.CASCADE, related_name="attempts")
    # The board's learner, repeated here so one learner's client_attempt_id is unique across all boards.
    learner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    client_attempt_id = models.UUIDField(
        null=True, blank=True, help_text="Made by the client to make retries safe; absent when it sent none."
    )
    term_item = models.ForeignKey(MatchItem, on_delete=models.CASCADE, related_name="+")
    definition_item = models.ForeignKey(MatchItem, on_delete=models.CASCADE, related_name="+")
    correct = models.BooleanField()
    attempted_at = models.DateTimeField()
    penalty_ms = models.IntegerField(default=0, help_text="Added to the board's penalty by this attempt.")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(Q(correct=True) & Q(term_item=F("definition_item")) & Q(penalty_ms=0))
                | (Q(correct=False) & ~Q(term_item=F("definition_item")) & Q(penalty_ms__gte=0)),
                name="match_attempt_consistent",
            ),
            models.UniqueConstraint(fields=["learner", "client_attempt_id"], name="match_attempt_client_id_unique"),
        ]
        indexes = [models.Index(fields=["board", "attempted_at"], name="match_attempt_board_time")]

    def __str__(self) -> str:
        return f"{'right' if self.correct else 'wrong'} on {self.board_id} at {self.attempted_at}"
