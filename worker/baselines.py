"""The references' timing on this host, measured once and reused by later gradings.

Timing the naive and expert references in every grading is most of a grading's time, and on one
host their ratio hardly moves between gradings. So the first grading of an exercise (or one whose
stored figures are too old, or whose calibration says the host changed) times all three pipelines
and stores the references' figures here; later gradings time the expert reference beside the
submission as a calibration, and take the naive reference's time from the store, scaled by how far
the expert's calibration runs moved from its stored time.

A stored baseline belongs to one exercise's references, data, timing plan, CPUs and grader code:
its key hashes all of them, so any change makes a fresh measurement.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The grader code whose changes invalidate stored figures (what runs, and how it is timed).
TIMING_SOURCES = ("harness.py", "timing.py")


@dataclass(frozen=True)
class ReferenceBaseline:
    """The references' figures as one grading measured them: each reference's median epoch time
    (`naive_seconds`, `expert_seconds`), the naive-to-expert ratio of its rounds, and each
    reference's figures as the result reports them."""

    naive_seconds: float
    expert_seconds: float
    expert_vs_naive: float
    figures: Mapping[str, Any]
    measured_at: float
    rounds: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "naive_seconds": self.naive_seconds,
            "expert_seconds": self.expert_seconds,
            "expert_vs_naive": self.expert_vs_naive,
            "figures": dict(self.figures),
            "measured_at": self.measured_at,
            "rounds": self.rounds,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReferenceBaseline:
        return cls(
            naive_seconds=float(data["naive_seconds"]),
            expert_seconds=float(data["expert_seconds"]),
            expert_vs_naive=float(data["expert_vs_naive"]),
            figures=dict(data["figures"]),
            measured_at=float(data["measured_at"]),
            rounds=int(data["rounds"]),
        )

    def age_seconds(self, now: float | None = None) -> float:
        return (time.time() if now is None else now) - self.measured_at


def baseline_key(parts: Mapping[str, Any], worker_dir: Path) -> str:
    """The key of the references' figures for these parts (exercise, references, data, plan, CPUs)
    and the grader code that times them."""
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode())
    for name in TIMING_SOURCES:
        digest.update((worker_dir / name).read_bytes())
    return digest.hexdigest()[:24]


class BaselineStore:
    """Baselines as one JSON file per key in a directory shared by the host's graders."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, slug: str, key: str) -> Path:
        return self.directory / f"{slug}-{key}.json"

    def get(self, slug: str, key: str, max_age_seconds: float) -> ReferenceBaseline | None:
        """The stored baseline, or None when there is none, it is unreadable or older than the limit."""
        try:
            baseline = ReferenceBaseline.from_dict(json.loads(self._path(slug, key).read_text()))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if baseline.expert_seconds <= 0 or baseline.naive_seconds <= 0:
            return None
        if not 0 <= baseline.age_seconds() <= max_age_seconds:
            return None
        return baseline

    def put(self, slug: str, key: str, baseline: ReferenceBaseline) -> None:
        """Store atomically (a grader reading at the same time sees the old file or the new one)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".baseline-")
        try:
            with os.fdopen(handle, "w") as file:
                json.dump(baseline.as_dict(), file)
            os.replace(temporary, self._path(slug, key))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
