"""What a submission's grading is doing, as the API shows it: a pure mapping of the row."""

from __future__ import annotations

from typing import Any

from apps.exercises.models import Submission, SubmissionStatus

# What each status says while the grader has said nothing more.
STATUS_LABELS: dict[str, str] = {
    SubmissionStatus.QUEUED: "Waiting for a grader",
    SubmissionStatus.RUNNING: "Starting the grading",
    SubmissionStatus.CHECKING: "Checking your pipeline's output",
    SubmissionStatus.TIMING: "Timing your pipeline against the references",
    SubmissionStatus.DONE: "Graded",
    SubmissionStatus.FAILED: "Could not be graded",
}


def submission_phase(submission: Submission) -> dict[str, Any]:
    """The phase (the status), what it is doing in words, its counts, and the seconds left where known."""
    detail = submission.progress_detail or {}
    return {
        "name": submission.status,
        "label": detail.get("label") or STATUS_LABELS.get(submission.status, submission.status),
        "done": detail.get("done"),
        "total": detail.get("total"),
        "seconds_left": detail.get("seconds_left"),
    }
