"""Soak: the load benchmark's learners for a long run, watching the memory of every server process.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizsite_bench python -m bench.soak [--minutes 30] [--learners 50]
The same stack and session mix as bench.load (see there); the web server never recycles its workers,
so a leak shows instead of being reset. Every --interval seconds (default 30) it reads VmRSS from
/proc/<pid>/status of the web server's main process and each of its workers, and of the Celery
worker's main process and each pool process (the grading sandboxes, made anew for every submission,
are not counted). It prints each sample, then per process the start,
the end and the growth in each interval, and whether growth levelled off: growth in the last third
of the run at most LEVELLED_FRACTION of the growth in the first third, or under LEVELLED_FLOOR_MIB.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field

from bench.load import (
    Recorder,
    Run,
    RunOptions,
    Stack,
    arguments_parse,
    gradings_report,
    learners_run,
    report,
    stack_up,
)
from bench.stack import children, rss_kib

# Growth in the last third of the run, as a share of the first third's, below which memory has levelled off.
LEVELLED_FRACTION = 0.2
# Below this, growth over a third of the run is allocator noise (RSS moves by pages as arenas come and go).
LEVELLED_FLOOR_MIB = 1.0


@dataclass
class Series:
    """One process's RSS at each sample (None before it existed or once it was gone)."""

    label: str
    pid: int
    rss_kib: list[int | None] = field(default_factory=list)


@dataclass
class Memory:
    times: list[float] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)
    series: dict[int, Series] = field(default_factory=dict)


def processes(stack: Stack) -> list[tuple[str, int]]:
    """(label, pid) of the web server's main process and workers and of the Celery main and pool processes, now."""
    web, worker = stack.server.process.pid, stack.worker.process.pid
    found = [("web main", web)]
    found += [(f"web worker {n}", pid) for n, pid in enumerate(children(web), start=1)]
    found.append(("celery main", worker))
    found += [(f"celery pool {n}", pid) for n, pid in enumerate(children(worker), start=1)]
    return found


def sample(stack: Stack, memory: Memory, recorder: Recorder, started: float) -> None:
    index = len(memory.times)
    memory.times.append(time.monotonic() - started)
    memory.requests.append(len(recorder.samples))
    for label, pid in processes(stack):
        if pid not in memory.series:
            memory.series[pid] = Series(label=label, pid=pid, rss_kib=[None] * index)
        memory.series[pid].rss_kib.append(rss_kib(pid))
    for series in memory.series.values():
        if len(series.rss_kib) <= index:
            series.rss_kib.append(None)
    line = "  ".join(
        f"{series.label.replace('web ', 'w-').replace('celery ', 'c-')} {_mib(series.rss_kib[-1])}"
        for series in memory.series.values()
        if series.rss_kib[-1] is not None
    )
    rate = ""
    if index:
        seconds = memory.times[-1] - memory.times[-2]
        rate = f", {(memory.requests[-1] - memory.requests[-2]) / seconds:.1f} req/s"
    print(f"t={memory.times[-1]:>5.0f} s{rate}: {line} (MiB)", flush=True)


def _mib(kib: int | None) -> str:
    return "gone" if kib is None else f"{kib / 1024:.1f}"


def sampler(stack: Stack, memory: Memory, recorder: Recorder, interval: float, stop: threading.Event) -> None:
    started = time.monotonic()
    sample(stack, memory, recorder, started)
    while not stop.wait(interval):
        sample(stack, memory, recorder, started)
    sample(stack, memory, recorder, started)


def growth_report(memory: Memory) -> bool:
    """Per process: start, end, growth per interval and the verdict; True when every process levelled off."""
    intervals = len(memory.times) - 1
    third = max(1, intervals // 3)
    print(f"\n== memory (VmRSS, MiB) over {memory.times[-1] / 60:.1f} min, {intervals} intervals")
    columns = f"{'process':<20} {'pid':>8} {'start':>8} {'end':>8} {'first 1/3':>10} {'last 1/3':>9}"
    print(f"{columns}  verdict; growth per interval")
    all_levelled = True
    for series in memory.series.values():
        values = series.rss_kib
        present = [value for value in values if value is not None]
        if len(present) != len(values) or intervals < 2:
            # A process that came or went mid-run (a worker restarted) has no whole series to judge.
            print(f"{series.label:<20} {series.pid:>8} " + " ".join(_mib(value) for value in values) + "  (not whole)")
            if series.label.startswith(("web worker", "celery pool")) and len(present) != len(values):
                all_levelled = False
            continue
        mib = [value / 1024 for value in present]
        first, last = mib[third] - mib[0], mib[-1] - mib[-1 - third]
        levelled = last <= max(LEVELLED_FRACTION * first, LEVELLED_FLOOR_MIB)
        all_levelled &= levelled
        steps = " ".join(f"{b - a:+.1f}" for a, b in itertools.pairwise(mib))
        print(
            f"{series.label:<20} {series.pid:>8} {mib[0]:>8.1f} {mib[-1]:>8.1f} {first:>+10.1f} {last:>+9.1f}  "
            f"{'levelled' if levelled else 'STILL GROWING'}; {steps}"
        )
    print(
        f"growth levelled off (last third <= {LEVELLED_FRACTION:.0%} of the first third, or < "
        f"{LEVELLED_FLOOR_MIB:.0f} MiB): {'yes' if all_levelled else 'NO'}"
    )
    return all_levelled


def main() -> None:
    args = arguments_parse(__doc__.splitlines()[0] if __doc__ else "", seconds=False)
    seconds = args.minutes * 60
    options = RunOptions(
        learners=args.learners,
        seconds=seconds,
        think=args.think,
        submissions=args.submissions if args.submissions is not None else max(1, round(args.minutes / 5)),
        ramp_seconds=min(args.ramp, seconds / 4),
    )
    with stack_up(learners=args.learners) as stack:
        print(
            f"soak: {options.learners} learners arriving over {options.ramp_seconds:.0f} s, {args.minutes:g} min, "
            f"think x{options.think}, {options.submissions} submissions; RSS every {args.interval:.0f} s"
        )
        recorder, memory, stop = Recorder(), Memory(), threading.Event()
        watcher = threading.Thread(target=sampler, args=(stack, memory, recorder, args.interval, stop))
        watcher.start()
        try:
            run: Run = learners_run(world=stack.world, emails=stack.emails, options=options, recorder=recorder)
        finally:
            stop.set()
            watcher.join(timeout=60)
        report(run, title=f"{options.learners} learners, {args.minutes:g} min")
        gradings_report(run, server=stack.server, drain_seconds=args.drain)
        growth_report(memory)


if __name__ == "__main__":
    main()
