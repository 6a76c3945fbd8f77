"""A course's concept graph: concepts with definitions, typed links, and the cards that teach them."""

from django.db import models
from django.db.models import F, Q

from apps.content.fields import AuthoredCharField, AuthoredTextField
from apps.content.models.base import ArchivableModel, TimestampedModel
from apps.content.models.courses import Course
from apps.content.models.decks import Card


class Concept(ArchivableModel):
    course = models.ForeignKey(Course, on_delete=models.PROTECT, related_name="concepts")
    slug = models.SlugField(max_length=80)
    name = AuthoredCharField(max_length=200)
    definition = AuthoredTextField()
    position = models.IntegerField()
    cards = models.ManyToManyField(Card, related_name="concepts", blank=True)

    class Meta:
        ordering = ["course_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["course", "slug"], name="concept_slug_unique"),
            models.UniqueConstraint(fields=["course", "position"], name="concept_position_unique"),
        ]

    def __str__(self) -> str:
        return self.name


class LinkKind(models.TextChoices):
    PREREQUISITE = "prerequisite", "is a prerequisite of"
    PART_OF = "part_of", "is part of"
    ENABLES = "enables", "enables"
    RELATED = "related", "is related to"
    CONTRASTS = "contrasts", "contrasts with"
    PREVENTS = "prevents", "prevents"


class ConceptLink(TimestampedModel):
    source = models.ForeignKey(Concept, on_delete=models.CASCADE, related_name="outgoing_links")
    target = models.ForeignKey(Concept, on_delete=models.CASCADE, related_name="incoming_links")
    kind = models.CharField(max_length=20, choices=LinkKind.choices)
    position = models.IntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["source", "target", "kind"], name="concept_link_unique"),
            models.CheckConstraint(condition=~Q(source=F("target")), name="concept_link_not_self"),
            models.CheckConstraint(condition=Q(kind__in=LinkKind.values), name="concept_link_kind_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.source} {self.get_kind_display()} {self.target}"
