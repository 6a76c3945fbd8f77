"""The worker process's grader, configured from settings (one per process, made on first use)."""

from __future__ import annotations

import threading
from pathlib import Path

from django.conf import settings

from apps.content.models import PipelineExercise
from worker.grader import ExerciseJob, Grader, GraderConfig
from worker.sandbox import Limits

_grader: Grader | None = None
_lock = threading.Lock()


def grader_config(*, warm_processes: int | None = None) -> GraderConfig:
    return GraderConfig(
        data_dir=Path(settings.GRADER_DATA_DIR),
        warm_processes=settings.GRADER_WARM_PROCESSES if warm_processes is None else warm_processes,
        timing_rounds=settings.GRADER_TIMING_ROUNDS,
        timing_min_rounds=settings.GRADER_TIMING_MIN_ROUNDS,
        timing_agreement=settings.GRADER_TIMING_AGREEMENT,
        warmup_epochs=settings.GRADER_WARMUP_EPOCHS,
        measured_epochs=settings.GRADER_MEASURED_EPOCHS,
        baselines=settings.GRADER_BASELINES,
        baseline_max_age_seconds=settings.GRADER_BASELINE_MAX_AGE_SECONDS,
        baseline_drift_limit=settings.GRADER_BASELINE_DRIFT,
        run_seconds=settings.GRADER_RUN_SECONDS,
        timing_cpus=settings.GRADER_TIMING_CPUS,
        timing_lock_path=Path(settings.GRADER_TIMING_LOCK),
        timing_lock_seconds=settings.GRADER_TIMING_LOCK_SECONDS,
        max_busy_fraction=settings.GRADER_TIMING_MAX_BUSY,
        timing_retries=settings.GRADER_TIMING_RETRIES,
        speedup_tolerance=settings.GRADER_SPEEDUP_TOLERANCE,
        limits=Limits(
            wall_seconds=settings.GRADER_JOB_SECONDS,
            cpu_seconds=settings.GRADER_JOB_SECONDS,
            memory_bytes=settings.GRADER_MEMORY_BYTES,
            processes=1024,
            open_files=1024,
            scratch_bytes=512 * 1024**2,
            result_bytes=32 * 1024**2,
            cpus=settings.GRADER_SANDBOX_CPUS or None,
            sandbox_uid=settings.GRADER_SANDBOX_UID,
        ),
    )


def grader_get() -> Grader:
    global _grader
    with _lock:
        if _grader is None:
            _grader = Grader(grader_config())
        return _grader


def grader_close() -> None:
    """Stop this process's warm sandboxes, if it made any."""
    global _grader
    with _lock:
        if _grader is not None:
            _grader.close()
            _grader = None


def exercise_job(exercise: PipelineExercise) -> ExerciseJob:
    return ExerciseJob(slug=exercise.slug, entry_point=exercise.entry_point, spec=exercise.spec)
