"""Where a learner's pipeline spends its time, stage by stage, from tf.data's own trace.

The checking run records its first epoch with TensorFlow's profiler. tf.data names each iterator
call after its place in the pipeline ("Iterator::Root::Prefetch::BatchV2::ParallelMapV2::..."),
so a stage's own time is its calls' time less that of the stage it reads from; stages that run
ahead in the background (prefetch, a parallel map) can hide their input's time, and get none.
The input-bound verdict comes from the timed runs instead: the share of each epoch the training
step spent waiting for its next batch, with the TensorFlow Profiler's thresholds.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

# The TensorFlow Profiler's input-pipeline analysis: under 5 % of the step waiting for input is not
# input-bound, 5-20 % moderately, 20 % and over highly.
MODERATELY_INPUT_BOUND = 0.05
HIGHLY_INPUT_BOUND = 0.20

# tf.data iterator names (the last part of a trace name) and the transformation the learner wrote.
_KINDS = (
    ("TFRecord", "read"),
    ("TextLine", "read"),
    ("FixedLengthRecord", "read"),
    ("Generator", "from_generator"),
    ("TensorSlice", "from_tensor_slices"),
    ("FromTensor", "from_tensors"),
    ("Interleave", "interleave"),
    ("FlatMap", "flat_map"),
    ("MapAndBatch", "map"),
    ("Map", "map"),
    ("Shuffle", "shuffle"),
    ("Batch", "batch"),
    ("Prefetch", "prefetch"),
    ("Cache", "cache"),
    ("Repeat", "repeat"),
    ("Filter", "filter"),
    ("Unbatch", "unbatch"),
    ("Zip", "zip"),
    ("Range", "range"),
    ("Take", "take"),
    ("Skip", "skip"),
)
_ADVICE = {
    "read": "Read several files at once: interleave(..., num_parallel_calls=tf.data.AUTOTUNE) over the file list.",
    "interleave": "Give the interleave num_parallel_calls=tf.data.AUTOTUNE so files are read in parallel.",
    "flat_map": "A flat_map reads its inputs one after another: interleave with num_parallel_calls reads them at once.",
    "from_generator": (
        "The Python generator is the bottleneck: it runs under the GIL, one element at a time. Keep its"
        " work small, batch before the expensive maps, and cache what does not change between epochs."
    ),
    "map": (
        "Run the map with num_parallel_calls=tf.data.AUTOTUNE; if it already is parallel, vectorize it"
        " after batch, or cache its output when it is the same every epoch."
    ),
    "shuffle": (
        "A shuffle buffer larger than needed fills before the first batch: a smaller buffer over"
        " shuffled files costs less."
    ),
    "batch": "Batching is the slowest stage: a map after batch works on whole batches at once.",
    "cache": "Put the cache after the expensive, deterministic steps and before the random ones.",
}
_INDEX = re.compile(r"\[\d+\]")


def stage_kind(operation: str) -> str:
    for name, kind in _KINDS:
        if name in operation:
            return kind
    return operation.lower()


def iterator_events(xplane_path: Path) -> list[tuple[str, int]]:
    """(name, duration in picoseconds) of every tf.data iterator call in a profiler trace."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(xplane_path.read_bytes())
    events: list[tuple[str, int]] = []
    for plane in space.planes:
        names = {key: metadata.name for key, metadata in plane.event_metadata.items()}
        for line in plane.lines:
            for event in line.events:
                name = names.get(event.metadata_id, "")
                if name.startswith("Iterator::"):
                    events.append((name, int(event.duration_ps)))
    return events


def stage_profile(events: Iterable[tuple[str, int]], batches: int) -> dict[str, Any] | None:
    """Each stage's own time per batch and share, from the source to the last stage (None when the
    trace holds no stage). Calls of the same stage on different inputs (an interleave's files) count
    together."""
    totals: dict[str, float] = defaultdict(float)
    for name, duration in events:
        path = _INDEX.sub("", name).removeprefix("Iterator::Root").strip(":")
        if path:
            totals[path] += duration / 1e12
    if not totals or batches <= 0:
        return None
    own: dict[str, float] = {}
    for path, seconds in totals.items():
        depth = path.count("::")
        children = sum(
            other for child, other in totals.items() if child.startswith(path + "::") and child.count("::") == depth + 1
        )
        own[path] = max(seconds - children, 0.0)
    spent = sum(own.values())
    stages: list[dict[str, Any]] = []
    # The source first: the deepest paths are the earliest stages.
    for path in sorted(own, key=lambda path: (-path.count("::"), path)):
        operation = path.rsplit("::", 1)[-1]
        stages.append(
            {
                "path": path,
                "operation": operation,
                "kind": stage_kind(operation),
                "parallel": "Parallel" in operation or operation.startswith("Prefetch"),
                "seconds_per_batch": round(own[path] / batches, 6),
                "share": round(own[path] / spent, 4) if spent else 0.0,
            }
        )
    slowest = max(own, key=lambda path: own[path])
    return {"stages": stages, "batches": batches, "slowest": slowest}


def input_bound(input_wait_fraction: float) -> dict[str, Any]:
    if input_wait_fraction >= HIGHLY_INPUT_BOUND:
        verdict = "highly"
    elif input_wait_fraction >= MODERATELY_INPUT_BOUND:
        verdict = "moderately"
    else:
        verdict = "not"
    return {
        "verdict": verdict,
        "input_wait_fraction": round(input_wait_fraction, 4),
        "thresholds": [MODERATELY_INPUT_BOUND, HIGHLY_INPUT_BOUND],
    }


def profile_advice(stages: Sequence[Mapping[str, Any]], slowest: str, bound: Mapping[str, Any] | None) -> str:
    """What the learner reads under the bars (the input-bound verdict is told beside it): the slowest
    stage, and what to do about it when the step waits for input."""
    stage = next(stage for stage in stages if stage["path"] == slowest)
    named = (
        f"The slowest stage is {stage['operation']} ({stage['kind']}, {stage['share']:.0%} of the pipeline's own time)"
    )
    if bound is not None and bound["verdict"] == "not":
        return f"{named}, and it keeps up: the training step hardly waits for it."
    advice = _ADVICE.get(stage["kind"])
    return f"{named}. {advice}" if advice else f"{named}."


def profile_result(observed: Any, bound: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The profile as a result reports it, with the verdict and advice, from what the checking run
    sent (the learner's code ran in that process, so anything malformed is dropped)."""
    try:
        stages = [
            {
                "path": str(stage["path"])[:300],
                "operation": str(stage["operation"])[:100],
                "kind": str(stage["kind"])[:40],
                "parallel": bool(stage["parallel"]),
                "seconds_per_batch": max(float(stage["seconds_per_batch"]), 0.0),
                "share": min(max(float(stage["share"]), 0.0), 1.0),
            }
            for stage in observed["stages"][:64]
        ]
        slowest = str(observed["slowest"])
        batches = int(observed["batches"])
        advice = profile_advice(stages, slowest, bound)
    except (KeyError, TypeError, ValueError, StopIteration):
        return None
    return {"stages": stages, "batches": batches, "slowest": slowest, "input_bound": bound, "advice": advice}
