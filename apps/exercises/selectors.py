"""Reading submissions (a learner sees their own, staff see everyone's) and the exercises a grading host serves."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from apps.exercises.models import PipelineExercise, Submission


def submissions_visible(
    *, user: AbstractBaseUser | AnonymousUser, exercise_slug: str | None = None, status: str | None = None
) -> QuerySet[Submission]:
    submissions = Submission.objects.select_related("exercise", "learner")
    if not getattr(user, "is_staff", False):
        submissions = submissions.filter(learner_id=user.pk)
    if exercise_slug:
        submissions = submissions.filter(exercise__slug=exercise_slug)
    if status:
        submissions = submissions.filter(status=status)
    return submissions.order_by("-created_at", "-id")


def submission_get(*, user: AbstractBaseUser | AnonymousUser, submission_id: int) -> Submission:
    """Someone else's submission is as absent as one that does not exist."""
    return get_object_or_404(submissions_visible(user=user), pk=submission_id)


def pipeline_exercises() -> QuerySet[PipelineExercise]:
    """Every pipeline exercise, for the grading host's work between gradings."""
    return PipelineExercise.objects.order_by("slug")
