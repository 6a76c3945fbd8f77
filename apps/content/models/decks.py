"""Memory decks and their cards."""

from django.db import models

from apps.content.models.base import ArchivableModel
from apps.content.models.courses import Lesson


class Deck(ArchivableModel):
    lesson = models.ForeignKey(Lesson, on_delete=models.PROTECT, related_name="decks")
    slug = models.SlugField(max_length=80, unique=True)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    position = models.IntegerField()

    class Meta:
        ordering = ["lesson_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["lesson", "position"], name="deck_position_unique"),
        ]

    def __str__(self) -> str:
        return self.title


class Card(ArchivableModel):
    deck = models.ForeignKey(Deck, on_delete=models.PROTECT, related_name="cards")
    slug = models.SlugField(max_length=80)
    term = models.CharField(max_length=200)
    definition = models.TextField()
    example = models.TextField(blank=True)
    code = models.TextField(blank=True)
    position = models.IntegerField()

    class Meta:
        ordering = ["deck_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["deck", "slug"], name="card_slug_unique"),
            models.UniqueConstraint(fields=["deck", "position"], name="card_position_unique"),
        ]

    def __str__(self) -> str:
        return self.term
