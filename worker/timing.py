"""Timing figures from the marks a timed run sends, stamped by the process that receives them.

A timed run writes one mark per event to a pipe: `c` (about to call the learner's function),
`i` (an epoch starts), `b` (a batch arrived), `s` (the accelerator step finished), `e` (the epoch
ended). The grading process stamps each mark with its own clock as it arrives, so code in the
timed process cannot change the figures by patching its clocks or its `sleep`.

Around each timed run the grading process also measures how busy the run's CPUs were with
anything else (`RunLoad`), so that a disturbed round is timed again; speedups come from the
rounds' own ratios (`round_speedups`), and speed points have a noise tolerance (`speed_points`).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Collection, Mapping, Sequence
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


def measured_seconds(run: RunTiming, warmup_epochs: int) -> float:
    """The run's mean epoch time after the warm-up (what `pipeline_timing` takes the median of)."""
    epochs = run.epochs[warmup_epochs:]
    if not epochs:
        raise MarksInvalid("no epoch after the warm-up")
    return statistics.fmean(epoch.seconds for epoch in epochs)


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
            # The epoch ends with its last batch's step. The wait after it, for the iterator to say
            # the data has run out, is left out: on a 2-core host the shipped pipelines take either
            # about 2 ms or about 140 ms to wind down, at random, which says nothing of how fast
            # they deliver batches.
            ended = ready_since if batches else stamp
            epochs.append(EpochTiming(ended - epoch_start, batches, waited))
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


# ----------------------------------------------------------------------------- host load

# Jiffies per second in /proc/stat (USER_HZ, 100 on every Linux ABI).
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class CpuTimes:
    """Cumulative busy and total CPU seconds of some CPUs, from /proc/stat."""

    busy: float
    total: float


def cpu_times(stat_text: str, cpus: Collection[int]) -> CpuTimes:
    """Busy and total seconds summed over `cpus` (all of them when empty). Busy is user, nice,
    system, irq, softirq and steal (a hypervisor's other guests take CPU as surely as a neighbour's
    process); idle and iowait are not."""
    wanted = {f"cpu{cpu}" for cpu in cpus}
    busy = total = 0
    for line in stat_text.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu" or (wanted and name not in wanted):
            continue
        values = [int(value) for value in rest.split()[:8]]
        values += [0] * (8 - len(values))
        user, nice, system, idle, iowait, irq, softirq, steal = values
        busy += user + nice + system + irq + softirq + steal
        total += user + nice + system + idle + iowait + irq + softirq + steal
    return CpuTimes(busy / _CLOCK_TICKS, total / _CLOCK_TICKS)


@dataclass(frozen=True)
class RunLoad:
    """How much else the run's CPUs did while it ran.

    `busy_fraction` is the CPU time used on those CPUs by anything but the timed run and the
    process stamping its marks, as a share of their capacity over the run's wall time: 0 on an
    idle host, 0.5 on two CPUs with a busy loop on one. `cpu_per_wall` is the timed run's own CPU
    time over its wall time (about 1 for a serial pipeline, more for a parallel one)."""

    wall_seconds: float
    cpu_seconds: float
    busy_fraction: float
    cpus: int

    @property
    def cpu_per_wall(self) -> float:
        return self.cpu_seconds / self.wall_seconds if self.wall_seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "wall_seconds": round(self.wall_seconds, 3),
            "cpu_seconds": round(self.cpu_seconds, 3),
            "cpu_per_wall": round(self.cpu_per_wall, 3),
            "busy_fraction": round(self.busy_fraction, 3),
        }


def run_load(before: CpuTimes, after: CpuTimes, own_cpu_seconds: float, wall_seconds: float, cpus: int) -> RunLoad:
    capacity = after.total - before.total
    if capacity <= 0:
        capacity = wall_seconds * cpus
    others = max(0.0, after.busy - before.busy - own_cpu_seconds)
    fraction = min(others / capacity, 1.0) if capacity > 0 else 0.0
    return RunLoad(wall_seconds, own_cpu_seconds, fraction, cpus)


# ----------------------------------------------------------------------------- speedups and points


def round_speedups(rounds: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Speedups from rounds of back-to-back runs: the median over the rounds of each round's own
    ratio. A slow drift of the machine, or a burst that escaped the disturbance check, changes the
    runs of one round together or one round alone; per-round ratios cancel the first and the
    median drops the second, where a ratio of medians taken over different rounds would not."""
    if not rounds:
        raise ValueError("no timed round")

    def median_ratio(numerator: str, denominator: str) -> float:
        return statistics.median(times[numerator] / times[denominator] for times in rounds)

    vs_naive = [times["naive"] / times["submission"] for times in rounds]
    middle = statistics.median(vs_naive)
    return {
        "vs_naive": middle,
        "vs_expert": median_ratio("expert", "submission"),
        "expert_vs_naive": median_ratio("naive", "expert"),
        "spread": (max(vs_naive) - min(vs_naive)) / middle if middle else 0.0,
    }


def rounds_agree(rounds: Sequence[Mapping[str, float]], agreement: float) -> bool:
    """Whether the rounds' own speedups, against both references, lie within `agreement` (relative
    spread about their median) of one another: more rounds would not move the medians by more."""
    if len(rounds) < 2 or agreement <= 0:
        return False
    for reference in ("naive", "expert"):
        ratios = [times[reference] / times["submission"] for times in rounds]
        middle = statistics.median(ratios)
        if not middle or (max(ratios) - min(ratios)) / middle > agreement:
            return False
    return True


def rounds_to_use(busy_fractions: Sequence[float], limit: float, rounds: int) -> list[int]:
    """Which timed rounds the figures come from (indices, in order): the first `rounds` rounds
    within the load limit; when too few were (the host stayed busy through every retry), all of
    them, calm or not, so that more rounds outvote more bursts in the medians."""
    calm = [index for index, busy in enumerate(busy_fractions) if busy <= limit]
    if len(calm) >= rounds:
        return calm[:rounds]
    return list(range(len(busy_fractions)))


def speed_points(
    speedup_vs_naive: float,
    expert_speedup_vs_naive: float,
    targets: Mapping[str, float],
    points: float,
    *,
    vs_expert: float | None = None,
    tolerance: float = 0.0,
) -> float:
    """Speed points, linear from no credit to full credit; the full-credit threshold is capped by
    what the expert reference itself reached on this machine.

    `tolerance` is the relative noise of a measured speedup on the grading host: a difference
    smaller than that is not a difference. A pipeline within it of the expert reference's speed
    gets full points, one within it of the naive reference's (no faster than no_credit_at_or_below
    times (1 + tolerance)) none, so neither the solutions the references stand for nor their
    near copies change score with the noise; between the two, points grow linearly up to the
    full-credit threshold less the tolerance. Where the full-credit threshold is at or below the
    no-credit floor (the expert reference itself barely beat the naive one here), speed cannot be
    told apart and every timed solution gets full points."""
    floor = float(targets.get("no_credit_at_or_below", 1.0))
    full = min(
        float(targets.get("full_credit_at", 2.0)), float(targets.get("expert_fraction", 0.8)) * expert_speedup_vs_naive
    )
    if full <= floor:
        return points
    if vs_expert is not None and vs_expert >= 1.0 - tolerance:
        return points
    low = floor * (1.0 + tolerance)
    high = full * (1.0 - tolerance)
    if speedup_vs_naive <= low:
        return 0.0
    if high <= low:
        # The band between the two is narrower than the noise: past the naive's noise is full credit.
        return points
    fraction = (speedup_vs_naive - low) / (high - low)
    return points * min(max(fraction, 0.0), 1.0)
