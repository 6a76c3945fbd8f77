"""Courses and lessons: a lesson is a manual of ordered sections made of typed blocks."""

from django.db import models
from django.db.models import Q

from apps.content.fields import AuthoredCharField, AuthoredTextField
from apps.content.models.base import ArchivableModel, TimestampedModel


class Course(ArchivableModel):
    slug = models.SlugField(max_length=80, unique=True)
    title = AuthoredCharField(max_length=200)
    subject = AuthoredCharField(max_length=200, blank=True)
    description = AuthoredTextField(blank=True)

    class Meta:
        ordering = ["title", "id"]

    def __str__(self) -> str:
        return self.title


class Lesson(ArchivableModel):
    course = models.ForeignKey(Course, on_delete=models.PROTECT, related_name="lessons")
    slug = models.SlugField(max_length=80, unique=True)
    title = AuthoredCharField(max_length=200)
    manual = AuthoredCharField(max_length=120, blank=True)
    subject = AuthoredCharField(max_length=200, blank=True)
    summary = AuthoredTextField(blank=True)
    position = models.IntegerField()

    class Meta:
        ordering = ["course_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["course", "position"], name="lesson_position_unique"),
        ]

    def __str__(self) -> str:
        return self.title


class LessonSection(TimestampedModel):
    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE, related_name="sections")
    slug = models.SlugField(max_length=80)
    title = AuthoredCharField(max_length=200)
    position = models.IntegerField()

    class Meta:
        ordering = ["lesson_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["lesson", "slug"], name="section_slug_unique"),
            models.UniqueConstraint(fields=["lesson", "position"], name="section_position_unique"),
        ]

    def __str__(self) -> str:
        return self.title


class BlockKind(models.TextChoices):
    PROSE = "prose", "Prose"
    TERMS = "terms", "List of terms with definitions"
    COMPARISON = "comparison", "Trade-off comparison"
    STEPS = "steps", "Numbered steps"
    CALLOUT = "callout", "Callout"
    CODE = "code", "Code listing"
    QUESTION = "question", "Inline question"


class LessonBlock(TimestampedModel):
    """One typed block; its payload's shape is fixed by its kind (see decks/SCHEMA.md)."""

    section = models.ForeignKey(LessonSection, on_delete=models.CASCADE, related_name="blocks")
    position = models.IntegerField()
    kind = models.CharField(max_length=20, choices=BlockKind.choices)
    heading = AuthoredCharField(max_length=200, blank=True)
    payload = models.JSONField(default=dict, blank=True)
    question = models.ForeignKey(
        "content.Question", null=True, blank=True, on_delete=models.PROTECT, related_name="blocks"
    )

    class Meta:
        ordering = ["section_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["section", "position"], name="block_position_unique"),
            models.CheckConstraint(condition=Q(kind__in=BlockKind.values), name="block_kind_valid"),
            models.CheckConstraint(
                condition=(Q(kind=BlockKind.QUESTION) & Q(question__isnull=False))
                | (~Q(kind=BlockKind.QUESTION) & Q(question__isnull=True)),
                name="block_question_iff_question_kind",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} #{self.position}"
