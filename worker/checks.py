"""Correctness checks of a learner's pipeline output against the expected examples (NumPy only).

The process that runs the learner's pipeline reduces every example it yields to a signature: for
small examples the values themselves, for images block means per channel plus the mean square,
minimum and maximum. Two images within a per-pixel tolerance t have block means, minimum and
maximum within t and mean squares within 2t of each other, so comparing signatures with that
tolerance accepts `x / 255`, `convert_image_dtype` and a same-size resize alike, while a different
image, a wrong scaling, a flip or a blur does not match. Examples are compared as multisets per
epoch, never batch by batch.
"""

from __future__ import annotations

import ast
import base64
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
BLOCKS = 4
SMALL_EXAMPLE = 64
# Absolute slack for float comparisons that are meant to be exact (values read back from records).
EXACT = 1e-6


def batch_signatures(values: npt.NDArray[Any]) -> FloatArray:
    """One signature row per example of a batch: a short vector that identifies the example up to
    a small per-value tolerance."""
    array = np.asarray(values)
    if array.dtype != np.float32:
        array = array.astype(np.float64)
    count = array.shape[0]
    if array[0].size <= SMALL_EXAMPLE or array.ndim < 3:
        return array.reshape(count, -1).astype(np.float32)
    height, width = array.shape[1], array.shape[2]
    row_starts = np.linspace(0, height, BLOCKS, endpoint=False).astype(int)
    column_starts = np.linspace(0, width, BLOCKS, endpoint=False).astype(int)
    sums = np.add.reduceat(np.add.reduceat(array, row_starts, axis=1), column_starts, axis=2)
    sizes = np.outer(np.diff([*row_starts, height]), np.diff([*column_starts, width]))
    means = sums / sizes.reshape(1, BLOCKS, BLOCKS, *([1] * (array.ndim - 3)))
    flat = array.reshape(count, -1)
    mean_squares = np.einsum("ij,ij->i", flat, flat) / flat.shape[1]
    stats = np.stack([mean_squares, flat.min(axis=1), flat.max(axis=1)], axis=1)
    return np.concatenate([means.reshape(count, -1), stats], axis=1).astype(np.float32)


def example_signature(value: npt.NDArray[Any]) -> FloatArray:
    return batch_signatures(np.asarray(value)[None])[0]


def signature_tolerance(length: int, per_value: float) -> FloatArray:
    """Per-component tolerance of a signature of this length (the mean square allows twice as much)."""
    tolerance = np.full(length, per_value + EXACT, dtype=np.float32)
    if length > SMALL_EXAMPLE:
        tolerance[-3] = 2 * per_value + EXACT
    return tolerance


def encode_array(array: npt.NDArray[Any]) -> dict[str, Any]:
    contiguous = np.ascontiguousarray(array)
    return {
        "dtype": str(contiguous.dtype),
        "shape": list(contiguous.shape),
        "data": base64.b64encode(contiguous.tobytes()).decode(),
    }


def decode_array(encoded: Mapping[str, Any]) -> npt.NDArray[Any]:
    raw = base64.b64decode(encoded["data"])
    return np.frombuffer(raw, dtype=np.dtype(encoded["dtype"])).reshape(encoded["shape"])


@dataclass(frozen=True)
class ExpectedExamples:
    signatures: FloatArray
    labels: IntArray
    shards: IntArray
    flipped_signatures: FloatArray | None = None

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, npt.NDArray[Any]]) -> ExpectedExamples:
        flipped = arrays.get("flipped_signatures")
        return cls(
            signatures=np.asarray(arrays["signatures"], dtype=np.float32),
            labels=np.asarray(arrays["labels"], dtype=np.int64),
            shards=np.asarray(arrays["shards"], dtype=np.int64),
            flipped_signatures=None if flipped is None else np.asarray(flipped, dtype=np.float32),
        )

    def encode(self) -> dict[str, Any]:
        arrays: dict[str, npt.NDArray[Any]] = {
            "signatures": self.signatures,
            "labels": self.labels,
            "shards": self.shards,
        }
        if self.flipped_signatures is not None:
            arrays["flipped_signatures"] = self.flipped_signatures
        return {name: encode_array(array) for name, array in arrays.items()}

    @classmethod
    def decode(cls, encoded: Mapping[str, Any]) -> ExpectedExamples:
        return cls.from_arrays({name: decode_array(value) for name, value in encoded.items()})


@dataclass(frozen=True)
class EpochMatch:
    """For each output example in order: the expected example it is (-1: none), and whether flipped."""

    indices: IntArray
    flipped: npt.NDArray[np.bool_]
    closest_difference: float


def match_epoch(
    signatures: FloatArray, labels: IntArray, expected: ExpectedExamples, per_value_tolerance: float
) -> EpochMatch:
    count = len(labels)
    indices = np.full(count, -1, dtype=np.int64)
    flipped = np.zeros(count, dtype=bool)
    if count == 0 or signatures.shape[1:] != expected.signatures.shape[1:]:
        return EpochMatch(indices, flipped, float("inf"))
    # The label is one more component, which must match exactly.
    tolerance = np.append(signature_tolerance(expected.signatures.shape[1], per_value_tolerance), 0.5)
    outputs = np.column_stack([signatures, labels]).astype(np.float64)
    best = np.full(count, np.inf)
    variants = [(expected.signatures, False)]
    if expected.flipped_signatures is not None:
        variants.append((expected.flipped_signatures, True))
    for reference, is_flipped in variants:
        candidates, worst = _nearest_within(
            outputs, np.column_stack([reference, expected.labels]).astype(np.float64), tolerance
        )
        better = (worst <= 1.0) & (worst < best)
        indices[better] = candidates[better]
        flipped[better] = is_flipped
        best = np.minimum(best, worst)
    return EpochMatch(indices, flipped, float(best.min()))


def _nearest_within(
    outputs: npt.NDArray[np.float64], references: npt.NDArray[np.float64], tolerance: npt.NDArray[Any]
) -> tuple[IntArray, npt.NDArray[np.float64]]:
    """For each output row, the reference row nearest to it in tolerance units (worst component),
    among those whose first component is within tolerance; -1 and inf where there is none.
    Sorting on one component keeps this near linear instead of comparing every pair."""
    order = np.argsort(references[:, 0], kind="stable")
    keys = references[order, 0]
    low = np.searchsorted(keys, outputs[:, 0] - tolerance[0], side="left")
    high = np.searchsorted(keys, outputs[:, 0] + tolerance[0], side="right")
    best = np.full(len(outputs), np.inf)
    nearest = np.full(len(outputs), -1, dtype=np.int64)
    for offset in range(int((high - low).max(initial=0))):
        active = np.flatnonzero(low + offset < high)
        candidates = order[low[active] + offset]
        worst = (np.abs(outputs[active] - references[candidates]) / tolerance).max(axis=1)
        better = worst < best[active]
        best[active[better]] = worst[better]
        nearest[active[better]] = candidates[better]
    return nearest, best


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    message: str
    # False for a check that could not run because an earlier one failed (it is not passed either).
    ran: bool = True
    # For a check that can be partly met (a learner's test that tells some pipelines apart): the share
    # of the correctness points it still earns when it fails.
    credit: float | None = None

    def as_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"name": self.name, "passed": self.passed, "message": self.message, "ran": self.ran}
        if self.credit is not None:
            result["credit"] = round(self.credit, 4)
        return result


def check_not_run(name: str, reason: str) -> Check:
    return Check(name, False, f"Not run: {reason}.", ran=False)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def multiset_check(matches: Sequence[EpochMatch], example_count: int, unmatched_hint: str) -> Check:
    for epoch, match in enumerate(matches, start=1):
        matched = match.indices[match.indices >= 0]
        unmatched = int((match.indices < 0).sum())
        counts = Counter(matched.tolist())
        repeated = sum(times - 1 for times in counts.values() if times > 1)
        missing = example_count - len(counts)
        problems = []
        if unmatched:
            verb = "matches" if unmatched == 1 else "match"
            problems.append(f"{plural(unmatched, 'example')} {verb} no input example ({unmatched_hint})")
        if repeated:
            problems.append(f"{plural(repeated, 'example')} {'appears' if repeated == 1 else 'appear'} more than once")
        if missing:
            problems.append(f"{plural(missing, 'input example')} never appear")
        if problems:
            return Check("every_example_once", False, f"epoch {epoch}: " + "; ".join(problems) + ".")
    return Check(
        "every_example_once", True, f"Every one of the {example_count} examples appears exactly once per epoch."
    )


def shuffle_check(matches: Sequence[EpochMatch]) -> Check:
    orders = [match.indices for match in matches]
    if any(np.array_equal(order, np.sort(order)) for order in orders):
        return Check(
            "shuffled", False, "The examples come out in file order: shuffle them (after any cache, before batch)."
        )
    if len(orders) > 1 and np.array_equal(orders[0], orders[1]):
        return Check(
            "shuffled",
            False,
            "Epochs 1 and 2 have the same order: shuffle must reshuffle each iteration"
            " (keep reshuffle_each_iteration on, and do not cache after shuffle).",
        )
    return Check("shuffled", True, "The order differs from file order and from one epoch to the next.")


def shard_mix_check(first_batch_indices: IntArray, expected: ExpectedExamples, minimum: int) -> Check:
    found = np.unique(expected.shards[first_batch_indices[first_batch_indices >= 0]]).size
    if found < minimum:
        return Check(
            "mixes_shards",
            False,
            f"The first batch holds records from {plural(found, 'shard')}, expected at least {minimum}:"
            " read several files at once with interleave and shuffle the file names.",
        )
    return Check("mixes_shards", True, f"The first batch mixes records from {found} shards.")


def augmentation_check(
    matches: Sequence[EpochMatch],
    first_epoch: int,
    minimum_fraction: float,
    cause: str = "random augmentation must come after cache(), so each epoch draws anew",
) -> Check:
    if len(matches) < first_epoch + 2:
        return Check("augmentation_varies", False, "Not enough epochs ran to compare augmentation.")
    flips = []
    for match in matches[first_epoch : first_epoch + 2]:
        by_example = np.zeros(match.indices.max() + 1 if match.indices.size else 0, dtype=bool)
        by_example[match.indices[match.indices >= 0]] = match.flipped[match.indices >= 0]
        flips.append(by_example)
    changed = float(np.mean(flips[0] != flips[1])) if flips[0].size == flips[1].size and flips[0].size else 0.0
    if changed < minimum_fraction:
        return Check(
            "augmentation_varies",
            False,
            f"Only {changed:.0%} of the examples were flipped differently in epochs {first_epoch + 1} and"
            f" {first_epoch + 2}: {cause}.",
        )
    return Check("augmentation_varies", True, f"{changed:.0%} of the examples were flipped differently between epochs.")


def range_check(minimum: float, maximum: float, allowed: Sequence[float], name: str) -> Check:
    low, high = allowed
    if minimum < low - EXACT or maximum > high + EXACT:
        hint = " (they look like 0-255 pixel values: divide by 255)" if maximum > 1.5 and high <= 1.0 else ""
        return Check(
            "value_range",
            False,
            f"{name} range from {minimum:.3g} to {maximum:.3g}, expected values in [{low:g}, {high:g}]{hint}.",
        )
    return Check("value_range", True, f"{name} lie in [{low:g}, {high:g}].")


def from_generator_signature_check(code: str) -> Check:
    """The exercise asks for Dataset.from_generator with output_signature (not output_types)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return Check("from_generator_signature", False, "The code does not parse.")
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "from_generator"
    ]
    if not calls:
        return Check("from_generator_signature", False, "Build the dataset with tf.data.Dataset.from_generator.")
    for call in calls:
        keywords = {keyword.arg for keyword in call.keywords}
        if "output_signature" not in keywords:
            return Check(
                "from_generator_signature",
                False,
                f"line {call.lineno}: pass output_signature= (tf.TensorSpec for each component) to"
                " from_generator; output_types and output_shapes are deprecated.",
            )
    return Check("from_generator_signature", True, "from_generator declares its output_signature.")


def encode_observation_arrays(observation: dict[str, Any]) -> dict[str, Any]:
    """The checking run's observation with its arrays made JSON-safe (those of further splits too)."""

    def encoded(epoch: dict[str, Any]) -> dict[str, Any]:
        return {**epoch, "signatures": encode_array(epoch["signatures"]), "labels": encode_array(epoch["labels"])}

    result = {**observation, "epochs": [encoded(epoch) for epoch in observation["epochs"]]}
    if "splits" in observation:
        result["splits"] = {name: encoded(epoch) for name, epoch in observation["splits"].items()}
    return result


def per_value_tolerance(rules: Mapping[str, Any]) -> float:
    if "pixel_tolerance" in rules:
        return float(rules["pixel_tolerance"]) / 255.0
    return float(rules.get("value_tolerance", 0.0))
