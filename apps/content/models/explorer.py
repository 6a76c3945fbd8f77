"""Explorer scenes: a 3D model asset and its named clickable regions."""

from django.db import models

from apps.content.fields import AuthoredCharField, AuthoredTextField
from apps.content.models.base import ArchivableModel
from apps.content.models.courses import Course
from apps.content.models.decks import Card


class ExplorerScene(ArchivableModel):
    course = models.ForeignKey(Course, on_delete=models.PROTECT, related_name="scenes")
    slug = models.SlugField(max_length=80, unique=True)
    title = AuthoredCharField(max_length=200)
    instructions = AuthoredCharField(max_length=300, blank=True)
    model_asset = AuthoredCharField(
        max_length=300, help_text="Path of the 3D model (glTF) relative to EXPLORER_ASSET_BASE_URL."
    )
    position = models.IntegerField()

    class Meta:
        ordering = ["course_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["course", "position"], name="scene_position_unique"),
        ]

    def __str__(self) -> str:
        return self.title


class ExplorerRegion(ArchivableModel):
    scene = models.ForeignKey(ExplorerScene, on_delete=models.CASCADE, related_name="regions")
    slug = models.SlugField(max_length=80)
    title = AuthoredCharField(max_length=200)
    description = AuthoredTextField()
    position = models.IntegerField()
    cards = models.ManyToManyField(Card, related_name="regions", blank=True)

    class Meta:
        ordering = ["scene_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["scene", "slug"], name="region_slug_unique"),
            models.UniqueConstraint(fields=["scene", "position"], name="region_position_unique"),
        ]

    def __str__(self) -> str:
        return self.title
