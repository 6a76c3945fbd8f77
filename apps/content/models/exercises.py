"""Pipeline exercises: a prompt and starter code for learners, a grading spec for the worker."""

from django.db import models

from apps.content.fields import AuthoredCharField, AuthoredTextField
from apps.content.models.base import ArchivableModel
from apps.content.models.courses import Lesson


class PipelineExercise(ArchivableModel):
    lesson = models.ForeignKey(Lesson, on_delete=models.PROTECT, related_name="exercises")
    slug = models.SlugField(max_length=80, unique=True)
    title = AuthoredCharField(max_length=200)
    prompt = AuthoredTextField()
    entry_point = models.CharField(max_length=80, help_text="Name of the function the learner's code must define.")
    starter_code = AuthoredTextField(blank=True)
    spec = models.JSONField(
        default=dict,
        blank=True,
        help_text="Grading spec: data generator, expected output, references. Never sent to learners.",
    )
    position = models.IntegerField()
    concepts = models.ManyToManyField(
        "content.Concept", related_name="exercises", blank=True, help_text="What the exercise practises."
    )

    class Meta:
        ordering = ["lesson_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["lesson", "position"], name="exercise_position_unique"),
        ]

    def __str__(self) -> str:
        return self.title
