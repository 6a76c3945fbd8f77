"""The pipelines a learner's epoch-coverage test is run against: a correct one and broken ones, each
the id order of its two epochs, as the usual faults of a tf.data pipeline give them.

Pure NumPy: the checking run turns each into a dataset of (features, ids) batches, calls the
learner's function with it and the ids an epoch must hold, and notes whether it raised."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

IdArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class CoverageCase:
    name: str
    broken: bool
    # What the fault is and what it does to an epoch, as a learner reads it.
    description: str
    epochs: tuple[IdArray, IdArray]

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "broken": self.broken, "description": self.description}


def coverage_cases(count: int, batch: int, seed: int) -> list[CoverageCase]:
    """The correct pipeline first, then the broken ones, over the ids 0..count-1."""
    rng = np.random.default_rng(seed)
    ids = np.arange(count, dtype=np.int64)

    def shuffled(values: IdArray) -> IdArray:
        return rng.permutation(values)

    remainder = count % batch or batch
    overlap = batch // 2
    half = count // 2
    shards = np.concatenate([ids[: half + overlap // 2], ids[half - overlap // 2 :]])
    kept = count - 40
    subset = shuffled(ids)[:kept]
    first = shuffled(ids)
    cached = int(count * 0.8)
    # shuffle() after repeat(): a window over two epochs' records, cut into epochs of `count`.
    stream = np.concatenate([shuffled(ids), shuffled(ids)])
    window = list(stream[:100])
    blended: list[int] = []
    for value in stream[100:]:
        blended.append(window.pop(int(rng.integers(len(window)))))
        window.append(value)
    blended += [window.pop(int(rng.integers(len(window)))) for _ in range(len(window))]
    unordered = shuffled(ids)
    return [
        CoverageCase(
            "correct",
            False,
            "a correct pipeline: every record once per epoch, a new order each epoch",
            (shuffled(ids), shuffled(ids)),
        ),
        CoverageCase(
            "dropped remainder",
            True,
            f"batch({batch}, drop_remainder=True) over {count:,} records: each epoch loses its last {remainder}",
            (shuffled(ids)[: count - remainder], shuffled(ids)[: count - remainder]),
        ),
        CoverageCase(
            "overlapping shards",
            True,
            f"two readers whose shards share {overlap} records: those come twice in every epoch",
            (shuffled(shards), shuffled(shards)),
        ),
        CoverageCase(
            "take before repeat",
            True,
            f"take({kept}) before repeat(): every epoch is the same {kept} of the {count:,} records",
            (shuffled(subset), shuffled(subset)),
        ),
        CoverageCase(
            "repeat before shuffle",
            True,
            "repeat() before shuffle(): the epochs run into each other, some records twice in an epoch and"
            " others missing",
            (np.array(blended[:count], dtype=np.int64), np.array(blended[count:], dtype=np.int64)),
        ),
        CoverageCase(
            "partial cache",
            True,
            f"cache() filled by a first pass that stopped early: the second epoch serves only the {cached} records"
            " it cached",
            (first, shuffled(first[:cached])),
        ),
        CoverageCase(
            "no reshuffle",
            True,
            "shuffle(..., reshuffle_each_iteration=False): every epoch in the same order",
            (unordered, unordered.copy()),
        ),
    ]
