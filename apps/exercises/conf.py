"""Names the exercises app shares between the code that hands gradings over and the worker that runs them."""

from __future__ import annotations

# Gradings are published by this name (apps.common.publish); the tasks module registers the task under it.
GRADE_SUBMISSION_TASK = "apps.exercises.tasks.grade_submission"
