"""Which checks a grading makes of what the checking run observed: one function per rule of the exercise.

Each function reads the exercise's rules and the observation and gives its Check, or None when the
exercise does not ask for it; `evaluate_observation` gives them in the order a learner reads them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from worker.checks import (
    Check,
    EpochMatch,
    ExpectedExamples,
    augmentation_check,
    decode_array,
    from_generator_signature_check,
    match_epoch,
    multiset_check,
    per_value_tolerance,
    plural,
    range_check,
    shard_mix_check,
    shuffle_check,
)


@dataclass(frozen=True)
class Observed:
    """A checking run that finished: what it saw, what was expected, and the exercise's rules."""

    observation: Mapping[str, Any]
    expected: ExpectedExamples
    spec: Mapping[str, Any]

    @property
    def rules(self) -> Mapping[str, Any]:
        rules: Mapping[str, Any] = self.spec.get("rules", {})
        return rules

    @property
    def epochs(self) -> list[Mapping[str, Any]]:
        epochs: list[Mapping[str, Any]] = self.observation["epochs"]
        return epochs

    @property
    def removed_after(self) -> int:
        """The epoch after which the source files are removed (0: never), for exercises that cache."""
        return int(self.rules.get("source_files_removed_after_epoch", 0))

    @cached_property
    def matches(self) -> list[EpochMatch]:
        """Each epoch's examples matched to the expected ones."""
        tolerance = per_value_tolerance(self.rules)
        return [
            match_epoch(decode_array(epoch["signatures"]), decode_array(epoch["labels"]), self.expected, tolerance)
            for epoch in self.epochs
        ]


def element_spec(observed: Observed) -> Check:
    return Check("element_spec", True, f"Every batch is ({_element_spec_text(observed.spec['element_spec'])}).")


def served_from_cache(observed: Observed) -> Check | None:
    if not observed.removed_after:
        return None
    return Check("served_from_cache", True, f"Epochs after {observed.removed_after} were served without the files.")


def batches_per_epoch(observed: Observed) -> Check | None:
    wanted = int(observed.rules.get("batches_per_epoch", 0))
    if not wanted:
        return None
    wrong = [(n, b) for n, b in enumerate((e["batches"] for e in observed.epochs), 1) if b != wanted]
    if not wrong:
        return Check("batches_per_epoch", True, f"Each epoch has {wanted} batches.")
    number, batches = wrong[0]
    return Check(
        "batches_per_epoch",
        False,
        f"epoch {number} had {batches} batches, expected {wanted} (every example once per epoch, in full batches).",
    )


def value_range(observed: Observed) -> Check | None:
    allowed = observed.rules.get("value_range")
    if not allowed:
        return None
    names = [part["name"] for part in observed.spec["element_spec"]]
    low = min(float(epoch["min"]) for epoch in observed.epochs)
    high = max(float(epoch["max"]) for epoch in observed.epochs)
    return range_check(low, high, allowed, names[0].capitalize())


def every_example_once(observed: Observed) -> Check | None:
    if not observed.rules.get("every_example_once", True):
        return None
    return multiset_check(observed.matches, len(observed.expected.labels))


def shuffled(observed: Observed) -> Check | None:
    return shuffle_check(observed.matches) if observed.rules.get("shuffled") else None


def shards_mixed_in_first_batch(observed: Observed) -> Check | None:
    minimum = int(observed.rules.get("min_shards_in_first_batch", 0))
    if not minimum or not observed.epochs:
        return None
    first = observed.matches[0].indices[: int(observed.epochs[0]["first_batch_size"])]
    return shard_mix_check(first, observed.expected, minimum)


def source_called_once_per_epoch(observed: Observed) -> Check | None:
    if not observed.rules.get("source_called_once_per_epoch"):
        return None
    calls = len(observed.observation.get("source_calls", []))
    epochs = len(observed.epochs)
    if calls == epochs:
        return Check("source_called_once_per_epoch", True, "Each epoch made exactly one fresh pass.")
    return Check(
        "source_called_once_per_epoch",
        False,
        f"make_source() was called {plural(calls, 'time')} over {epochs} epochs: pass the"
        " callable itself to from_generator, so each epoch starts a fresh pass.",
    )


def augmentation_varies_between_epochs(observed: Observed) -> Check | None:
    if not observed.rules.get("augmentation_varies_between_epochs"):
        return None
    minimum_fraction = float(observed.rules.get("min_fraction_flipped_differently", 0.2))
    return augmentation_check(observed.matches, max(observed.removed_after, 1), minimum_fraction)


OBSERVATION_CHECKS: tuple[Callable[[Observed], Check | None], ...] = (
    element_spec,
    served_from_cache,
    batches_per_epoch,
    value_range,
    every_example_once,
    shuffled,
    shards_mixed_in_first_batch,
    source_called_once_per_epoch,
    augmentation_varies_between_epochs,
)


def evaluate_observation(
    observation: Mapping[str, Any], expected: ExpectedExamples, spec: Mapping[str, Any], code: str
) -> list[Check]:
    """Every check the exercise's rules ask for, from what the checking run observed."""
    rules = spec.get("rules", {})
    checks: list[Check] = []
    if rules.get("requires_from_generator_output_signature"):
        checks.append(from_generator_signature_check(code))
    error = observation.get("error")
    if error:
        return [
            *checks,
            *_failed_run_checks(error, removed_after=int(rules.get("source_files_removed_after_epoch", 0))),
        ]
    observed = Observed(observation, expected, spec)
    return [*checks, *(check for rule in OBSERVATION_CHECKS if (check := rule(observed)) is not None)]


def _failed_run_checks(error: Mapping[str, Any], *, removed_after: int) -> list[Check]:
    """The check a run that raised failed, when the error says which; none when it does not."""
    if error.get("kind") == "element_spec":
        return [Check("element_spec", False, str(error["message"]))]
    if removed_after and error.get("files_removed"):
        return [
            Check(
                "served_from_cache",
                False,
                f"Epoch {removed_after + 1} failed after the TFRecord files were removed: later epochs must"
                " come from cache(), placed after decoding and resizing. "
                + str(error.get("message", "")).splitlines()[-1][:300],
            )
        ]
    return []


def _element_spec_text(element_spec: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(f"{part['name']} {part['dtype']} {tuple(part['shape'])}" for part in element_spec)
