"""What a grading host gives the timing phase: a host-wide lock, so one grading times at a time, and cores.

A speedup is a ratio of epoch times measured on a shared machine: anything else running while a
pipeline is timed slows that pipeline and not the others. Two gradings timing at the same time
(two worker processes, two workers on one host) are the largest such disturbance, so every
timing phase on a host holds one lock, a `flock` on one file; checking runs need no lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Collection
from pathlib import Path

# A machine with fewer cores than this keeps them all for the timed runs: taking one away for the
# rest of the host would leave a pipeline too few to show its parallelism.
AUTO_PINNING_MIN_CPUS = 4
# How often a waiting grading tries the lock again: short beside a timing phase (tens of seconds).
LOCK_POLL_SECONDS = 0.1


class TimingLock:
    """The host's timing lock. The kernel releases a `flock` when the process holding it dies, so a
    grading killed mid-phase never leaves the host locked. Each instance opens the file itself: two
    instances conflict even within one process (the lock belongs to the open file, not the process)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, timeout: float, on_wait: Callable[[], None] | None = None) -> bool:
        """Take the lock, waiting at most `timeout` seconds; `on_wait` is called once if the lock is
        busy. False when the wait ran out (the caller decides whether to go on without it)."""
        if self._fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        deadline = time.monotonic() + timeout
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                if not told and on_wait is not None:
                    on_wait()
                    told = True
                time.sleep(LOCK_POLL_SECONDS)
                continue
            self._fd = fd
            return True

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def cpu_list_parse(text: str) -> frozenset[int]:
    """CPUs written as Linux writes them (`0-3,8,10-11`, as in Cpus_allowed_list and cpusets)."""
    cpus: set[int] = set()
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        first, dash, last = part.partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise ValueError(f"not a CPU list: {text!r}")
        low, high = int(first), int(last or first)
        if high < low:
            raise ValueError(f"not a CPU list: {text!r}")
        cpus.update(range(low, high + 1))
    return frozenset(cpus)


def timing_cpus_resolve(setting: str, available: Collection[int]) -> frozenset[int]:
    """The CPUs timed runs are pinned to, from the setting; empty means not pinned.

    `auto`: every CPU this process may use but the first, when it may use at least
    AUTO_PINNING_MIN_CPUS (the first, usually core 0, takes most interrupts, and is left to the web
    server, checking runs and the rest); `none` (or empty): no pinning; otherwise a CPU list, which
    must lie within the CPUs this process may use."""
    usable = frozenset(available)
    value = setting.strip().lower()
    if value in ("", "none", "off"):
        return frozenset()
    if value == "auto":
        if len(usable) < AUTO_PINNING_MIN_CPUS:
            return frozenset()
        return usable - {min(usable)}
    wanted = cpu_list_parse(value)
    if not wanted or not wanted <= usable:
        raise ValueError(
            f"the timing CPUs {setting!r} are not all among the CPUs this worker may use ({cpu_list_format(usable)})"
        )
    return wanted


def cpu_list_format(cpus: Collection[int]) -> str:
    ordered = sorted(cpus)
    ranges: list[str] = []
    start = previous = None
    for cpu in [*ordered, None]:
        if cpu is not None and previous is not None and cpu == previous + 1:
            previous = cpu
            continue
        if start is not None:
            ranges.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = cpu
    return ",".join(ranges)
