"""Timing figures from the marks a timed run sends, stamped by the process that receives them.

A timed run writes one mark per event to a pipe: `c` (about to call the learner's function),
`i` (an epoch starts), `b` (a batch arrived), `s` (the accelerator step finished), `e` (the epoch
ended). The grading process stamps each mark with its own clock as it arrives, so code in the
timed process cannot change the figures by patching its clocks or its `sleep`.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Mark = tuple[str, float]


@dataclass(frozen=True)
class EpochTiming:
    seconds: float
    batches: int
    input_wait_seconds: float


@dataclass(frozen=True)
class RunTiming:
    first_batch_seconds: float
    total_seconds: float
    epochs: list[EpochTiming]


class MarksInvalid(ValueError):
    """The marks do not describe complete epochs."""


def run_timing(marks: Sequence[Mark]) -> RunTiming:
    called = next((stamp for mark, stamp in marks if mark == "c"), None)
    if called is None:
        raise MarksInvalid("the run never reached the learner's function")
    epochs: list[EpochTiming] = []
    first_batch: float | None = None
    epoch_start: float | None = None
    ready_since = 0.0
    batches, waited = 0, 0.0
    for mark, stamp in marks:
        if mark == "i":
            epoch_start, ready_since, batches, waited = stamp, stamp, 0, 0.0
        elif mark == "b" and epoch_start is not None:
            first_batch = stamp if first_batch is None else first_batch
            waited += stamp - ready_since
            batches += 1
        elif mark == "s" and epoch_start is not None:
            ready_since = stamp
        elif mark == "e" and epoch_start is not None:
            epochs.append(EpochTiming(stamp - epoch_start, batches, waited))
            epoch_start = None
    if first_batch is None or not epochs:
        raise MarksInvalid("the run produced no complete epoch")
    return RunTiming(first_batch - called, marks[-1][1] - called, epochs)


@dataclass(frozen=True)
class PipelineTiming:
    """Figures for one pipeline over all its timed runs, warm-up epochs left out."""

    first_batch_seconds: float
    epoch_seconds: float
    batches_per_second: float
    input_wait_fraction: float
    total_seconds: float
    measured_epochs: int
    epoch_spread: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "first_batch_seconds": round(self.first_batch_seconds, 4),
            "epoch_seconds": round(self.epoch_seconds, 4),
            "batches_per_second": round(self.batches_per_second, 2),
            "input_wait_fraction": round(self.input_wait_fraction, 3),
            "total_seconds": round(self.total_seconds, 3),
            "measured_epochs": self.measured_epochs,
            "epoch_spread": round(self.epoch_spread, 3),
        }


def pipeline_timing(runs: Sequence[RunTiming], warmup_epochs: int) -> PipelineTiming:
    """Each run's measured epochs are averaged (an exercise may measure its first, uncached epoch
    with its cached ones); the figures are medians over the runs."""
    per_run = [run.epochs[warmup_epochs:] for run in runs]
    if not all(per_run):
        raise MarksInvalid("no epoch after the warm-up")
    seconds = [statistics.fmean(epoch.seconds for epoch in epochs) for epochs in per_run]
    batches = [statistics.fmean(epoch.batches for epoch in epochs) for epochs in per_run]
    waits = [
        sum(epoch.input_wait_seconds for epoch in epochs) / sum(epoch.seconds for epoch in epochs) for epochs in per_run
    ]
    median_seconds = statistics.median(seconds)
    return PipelineTiming(
        first_batch_seconds=statistics.median(run.first_batch_seconds for run in runs),
        epoch_seconds=median_seconds,
        batches_per_second=statistics.median(count / time for count, time in zip(batches, seconds, strict=True)),
        input_wait_fraction=statistics.median(waits),
        total_seconds=sum(run.total_seconds for run in runs),
        measured_epochs=sum(len(epochs) for epochs in per_run),
        epoch_spread=(max(seconds) - min(seconds)) / median_seconds if median_seconds else 0.0,
    )


def speed_points(
    speedup_vs_naive: float, expert_speedup_vs_naive: float, targets: Mapping[str, float], points: float
) -> float:
    """Speed points, linear from no credit to full credit; the full-credit threshold is capped by
    what the expert reference itself reached on this machine."""
    floor = float(targets.get("no_credit_at_or_below", 1.0))
    full = min(
        float(targets.get("full_credit_at", 2.0)), float(targets.get("expert_fraction", 0.8)) * expert_speedup_vs_naive
    )
    if full <= floor:
        return points
    fraction = (speedup_vs_naive - floor) / (full - floor)
    return points * min(max(fraction, 0.0), 1.0)
