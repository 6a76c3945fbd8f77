"""Memory decks and their cards."""

from __future__ import annotations

from django.core.validators import MaxLengthValidator
from django.db import models
from django.db.models import Q

from apps.content.bounds import (
    CARD_CODE_MAX_CHARS,
    CARD_DEFINITION_MAX_CHARS,
    CARD_EXAMPLE_MAX_CHARS,
    CARD_TERM_MAX_CHARS,
)
from apps.content.fields import AuthoredCharField, AuthoredTextField
from apps.content.models.base import ArchivableModel
from apps.content.models.courses import Lesson


class Deck(ArchivableModel):
    lesson = models.ForeignKey(Lesson, on_delete=models.PROTECT, related_name="decks")
    slug = models.SlugField(max_length=80, unique=True)
    title = AuthoredCharField(max_length=200)
    description = AuthoredTextField(blank=True)
    position = models.IntegerField()

    class Meta:
        ordering = ["lesson_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["lesson", "position"], name="deck_position_unique"),
        ]

    def __str__(self) -> str:
        return self.title


class CardFormat(models.TextChoices):
    TEXT = "text", "Plain text"
    HTML = "html", "Sanitized HTML"


def visible_card_filter(path: str = "") -> Q:
    """Cards a learner may study: not archived, nor in an archived deck, lesson or course.

    The one rule of which cards a learner sees. `path` leads from the queried model to the card, e.g.
    "card__" from a memory row; from Card itself, `Card.objects.visible()`.
    """
    return Q(
        **{
            f"{path}archived": False,
            f"{path}deck__archived": False,
            f"{path}deck__lesson__archived": False,
            f"{path}deck__lesson__course__archived": False,
        }
    )


class CardQuerySet(models.QuerySet["Card"]):
    def visible(self) -> CardQuerySet:
        """The cards a learner may study (visible_card_filter)."""
        return self.filter(visible_card_filter())


class Card(ArchivableModel):
    objects = CardQuerySet.as_manager()

    deck = models.ForeignKey(Deck, on_delete=models.PROTECT, related_name="cards")
    slug = models.SlugField(max_length=80)
    term = AuthoredCharField(max_length=CARD_TERM_MAX_CHARS)
    definition = AuthoredTextField(validators=[MaxLengthValidator(CARD_DEFINITION_MAX_CHARS)])
    example = AuthoredTextField(blank=True, validators=[MaxLengthValidator(CARD_EXAMPLE_MAX_CHARS)])
    code = AuthoredTextField(blank=True, validators=[MaxLengthValidator(CARD_CODE_MAX_CHARS)])
    tags = models.JSONField(default=list, blank=True, help_text="Labels carried over from Anki or a CSV file.")
    anki_guid = models.CharField(
        max_length=100, blank=True, help_text="The Anki note this card was imported from; re-imports update it."
    )
    format = models.CharField(
        max_length=10,
        choices=CardFormat.choices,
        default=CardFormat.TEXT,
        help_text="How clients render the definition and example: plain text, or sanitized HTML.",
    )
    position = models.IntegerField()

    class Meta:
        ordering = ["deck_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["deck", "slug"], name="card_slug_unique"),
            models.UniqueConstraint(fields=["deck", "position"], name="card_position_unique"),
            models.UniqueConstraint(
                fields=["deck", "anki_guid"], condition=~Q(anki_guid=""), name="card_anki_guid_unique"
            ),
            models.CheckConstraint(condition=Q(format__in=CardFormat.values), name="card_format_valid"),
        ]

    def __str__(self) -> str:
        return self.term
