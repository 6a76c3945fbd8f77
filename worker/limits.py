"""What a submission may be, known before any grading: read by the web process without loading the grader."""

from __future__ import annotations

MAX_CODE_BYTES = 64 * 1024
