"""Which checks a grading makes of what the checking run observed: one function per rule of the exercise.

Each rule says whether the exercise's rules ask for it and gives its Check from the observation;
`evaluate_observation` gives every check asked for, in the order a learner reads them."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise
from typing import Any

import numpy as np

from worker.checks import (
    Check,
    EpochMatch,
    ExpectedExamples,
    augmentation_check,
    check_not_run,
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

# The share of an epoch's examples that must match input ones for the checks of their order to run.
MATCHED_FOR_ORDER = 0.5

# The kinds of bad record an exercise's data may hold (spec.data.bad_records), as a learner reads them.
BAD_RECORD_KINDS = {
    "not_an_example": "not a tf.train.Example at all",
    "missing_label": "without a label",
    "wrong_feature_count": "with the wrong number of features",
    "label_wrong_type": "with a float label",
}


@dataclass(frozen=True)
class Observed:
    """A checking run that finished: what it saw, what was expected, and the exercise's rules."""

    observation: Mapping[str, Any]
    expected: ExpectedExamples
    spec: Mapping[str, Any]
    # An exercise over splits: the further splits' expected examples (validation, validation_changed).
    expected_splits: Mapping[str, ExpectedExamples] = field(default_factory=dict)
    # The learner's code, for messages that name what in it most likely caused a failing check.
    code: str = ""

    @property
    def rules(self) -> Mapping[str, Any]:
        rules: Mapping[str, Any] = self.spec.get("rules", {})
        return rules

    @property
    def epochs(self) -> list[Mapping[str, Any]]:
        epochs: list[Mapping[str, Any]] = self.observation["epochs"]
        return epochs

    @property
    def bad_records(self) -> dict[str, int]:
        """How many records of each kind in an epoch's input must be skipped (none in most exercises)."""
        data = self.spec.get("data", {})
        return {kind: int(count) for kind, count in dict(data.get("bad_records") or {}).items()}

    @property
    def removed_after(self) -> int:
        """The epoch after which the source files are removed (0: never), for exercises that cache."""
        return int(self.rules.get("source_files_removed_after_epoch", 0))

    @property
    def mostly_matched(self) -> bool:
        """Whether most of every epoch's examples match input ones, so that their order says something."""
        return all(match.indices.size and (match.indices >= 0).mean() >= MATCHED_FOR_ORDER for match in self.matches)

    def split_match(self, observed_split: str, expected: ExpectedExamples) -> EpochMatch:
        """A further dataset's one epoch (see worker.harness: validation, and both datasets again
        once the validation files changed) matched to the examples it should hold."""
        epoch = self.observation["splits"][observed_split]
        return match_epoch(
            decode_array(epoch["signatures"]), decode_array(epoch["labels"]), expected, per_value_tolerance(self.rules)
        )

    @cached_property
    def matches(self) -> list[EpochMatch]:
        """Each epoch's examples matched to the expected ones."""
        tolerance = per_value_tolerance(self.rules)
        return [
            match_epoch(decode_array(epoch["signatures"]), decode_array(epoch["labels"]), self.expected, tolerance)
            for epoch in self.epochs
        ]


def element_spec(observed: Observed) -> Check:
    problems = observed.observation.get("spec_problems") or []
    if problems:
        # The run went on with the values converted, so the checks after this one still tell the learner
        # everything else that is wrong.
        return Check("element_spec", False, "; ".join(problems) + ".")
    return Check("element_spec", True, f"Every batch is ({_element_spec_text(observed.spec['element_spec'])}).")


def served_from_cache(observed: Observed) -> Check:
    return Check("served_from_cache", True, f"Epochs after {observed.removed_after} were served without the files.")


def batches_per_epoch(observed: Observed) -> Check:
    wanted = int(observed.rules["batches_per_epoch"])
    wrong = [(n, b) for n, b in enumerate((e["batches"] for e in observed.epochs), 1) if b != wanted]
    if not wrong:
        return Check("batches_per_epoch", True, f"Each epoch has {wanted} batches.")
    number, batches = wrong[0]
    return Check(
        "batches_per_epoch",
        False,
        f"epoch {number} had {batches} batches, expected {wanted} (every example once per epoch, in full batches).",
    )


def value_range(observed: Observed) -> Check:
    names = [part["name"] for part in observed.spec["element_spec"]]
    low = min((float(epoch["min"]) for epoch in observed.epochs), default=0.0)
    high = max((float(epoch["max"]) for epoch in observed.epochs), default=0.0)
    return range_check(low, high, observed.rules["value_range"], names[0].capitalize())


def every_example_once(observed: Observed) -> Check:
    return multiset_check(observed.matches, len(observed.expected.labels), _unmatched_hint(observed.spec))


def _unmatched_hint(spec: Mapping[str, Any]) -> str:
    """What an output example that matches no input one most likely means, in this exercise."""
    data = spec.get("data", {})
    if spec.get("rules", {}).get("splits"):
        return (
            "training features must be normalized with the mean and population standard deviation of the training split"
        )
    if data.get("bad_records"):
        return (
            "bad records got through: a default for a missing feature, or features padded or cut to length,"
            " makes an example that is none of the good records; parse with a fixed schema without defaults"
            " and skip the records that fail"
        )
    if data.get("generator") == "tfrecord_jpeg_images":
        return "check decoding and scaling: values must be the decoded pixels divided by 255"
    if data.get("generator") == "tfrecord_feature_vectors":
        return "check the parsing: the features must be the stored floats, unchanged"
    return "the values must be the source's own, unchanged"


def bad_records_skipped(observed: Observed) -> Check:
    per_epoch = sum(observed.bad_records.values())
    kinds = ", ".join(f"{count} {BAD_RECORD_KINDS[kind]}" for kind, count in observed.bad_records.items())
    readings = []
    counts_calls = (
        "it must count the records the pipeline skips as it skips them (a tf.Variable added to in the"
        " pipeline), not the calls to it"
    )
    before = observed.observation.get("skipped_before")
    if before not in (None, 0):
        return Check(
            "bad_records_skipped",
            False,
            f"skipped gave {before} before the pipeline had read any record: {counts_calls}.",
        )
    for number, epoch in enumerate(observed.epochs, start=1):
        if "skipped" not in epoch:
            return Check(
                "bad_records_skipped",
                False,
                f"skipped could not be read after epoch {number}: {epoch.get('skipped_error', 'no reading')}.",
            )
        reading, wanted = int(epoch["skipped"]), number * per_epoch
        readings.append(str(reading))
        if reading != wanted:
            hint = "count every record you skip"
            if reading == per_epoch and number > 1:
                hint = "the count goes on over the epochs: do not start it again each epoch"
            elif reading > wanted:
                hint = "count only the records you skip, once each"
            return Check(
                "bad_records_skipped",
                False,
                f"skipped gave {reading} after epoch {number}, expected {wanted}: each epoch holds"
                f" {per_epoch} bad records ({kinds}); {hint}.",
            )
    for number, epoch in enumerate(observed.epochs, start=1):
        # A count reset when read is told by the readings above; one that grows with no record read counts calls.
        again = epoch.get("skipped_again")
        if again is not None and again > epoch["skipped"]:
            return Check(
                "bad_records_skipped",
                False,
                f"skipped gave {epoch['skipped']} and then {again} after epoch {number}, with nothing read"
                f" between the two: {counts_calls}.",
            )
    return Check(
        "bad_records_skipped",
        True,
        f"Each epoch went past its {per_epoch} bad records ({kinds}), and skipped counted them:"
        f" {', '.join(readings)} after epochs 1 to {len(readings)}.",
    )


def shuffled(observed: Observed) -> Check:
    return shuffle_check(observed.matches)


def shards_mixed_in_first_batch(observed: Observed) -> Check:
    minimum = int(observed.rules["min_shards_in_first_batch"])
    first = observed.matches[0].indices[: int(observed.epochs[0]["first_batch_size"])]
    return shard_mix_check(first, observed.expected, minimum)


def source_called_once_per_epoch(observed: Observed) -> Check:
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


def augmentation_varies_between_epochs(observed: Observed) -> Check:
    minimum_fraction = float(observed.rules.get("min_fraction_flipped_differently", 0.2))
    cause = "random augmentation must come after cache(), so each epoch draws anew"
    if _uses_fixed_stateless_seed(observed.code):
        cause = (
            "a stateless random op (tf.image.stateless_random_*) with a fixed seed draws the same for each"
            " example every epoch, wherever it sits: use tf.image.random_flip_left_right, or a seed that"
            " changes with each epoch"
        )
    return augmentation_check(observed.matches, max(observed.removed_after, 1), minimum_fraction, cause)


def _uses_fixed_stateless_seed(code: str) -> bool:
    """Whether the code calls a stateless random op whose seed is written out as numbers."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if not name.startswith("stateless_random"):
            continue
        seeds = [keyword.value for keyword in node.keywords if keyword.arg == "seed"] + node.args[1:2]
        if any(isinstance(seed, ast.Tuple | ast.List | ast.Constant) for seed in seeds):
            return True
    return False


# ----- an exercise over a training and a validation split (rules.splits)

VALIDATION_HINT = (
    "validation features must be normalized with the training split's mean and standard deviation,"
    " not with the validation split's own"
)


def validation_normalized(observed: Observed) -> Check:
    name = "validation_normalized"
    for observed_split, expected_split, what in (
        ("validation", "validation", "validation"),
        ("validation_after_change", "validation_changed", "changed validation"),
    ):
        expected = observed.expected_splits[expected_split]
        check = multiset_check([observed.split_match(observed_split, expected)], len(expected.labels), VALIDATION_HINT)
        if not check.passed:
            return Check(name, False, f"{what}: {check.message.removeprefix('epoch 1: ')}")
    return Check(
        name,
        True,
        "Both validation datasets (as given, and with their files changed) hold every example once, normalized"
        " with the training statistics.",
    )


def training_unchanged_by_validation(observed: Observed) -> Check:
    name = "training_unchanged_by_validation"
    # Against the training data of the first build, whatever it holds: only whether it moved counts here.
    first = observed.epochs[0]
    labels = decode_array(first["labels"]).astype(np.int64)
    before = ExpectedExamples(decode_array(first["signatures"]), labels, np.zeros_like(labels))
    match = observed.split_match("train_after_change", before)
    moved = int((match.indices < 0).sum())
    if moved:
        examples = len(match.indices)
        return Check(
            name,
            False,
            f"With only the validation files changed (their values shifted, more examples), {moved} of {examples}"
            " training examples came out different: the training data must not depend on the validation split;"
            " compute the statistics from the training files alone.",
        )
    return Check(name, True, "Changing the validation files left the training output as it was.")


def no_validation_in_training(observed: Observed) -> Check:
    name = "no_validation_in_training"
    validation = observed.expected_splits["validation"]
    tolerance = per_value_tolerance(observed.rules)
    for number, epoch in enumerate(observed.epochs, start=1):
        match = match_epoch(decode_array(epoch["signatures"]), decode_array(epoch["labels"]), validation, tolerance)
        leaked = int((match.indices >= 0).sum())
        if leaked:
            return Check(
                name,
                False,
                f"epoch {number} of the training data holds {plural(leaked, 'validation example')}: keep the splits"
                " apart, and read the training data from the training files only.",
            )
    return Check(name, True, "No validation example reaches the training data.")


# How far from 0 and 1 a normalized training feature's mean and standard deviation may be (float32 sums).
MOMENT_TOLERANCE = 0.01


def normalized_with_training_statistics(observed: Observed) -> Check:
    name = "normalized_with_training_statistics"
    epoch = observed.epochs[0]
    means, deviations = epoch.get("feature_mean") or [], epoch.get("feature_std") or []
    for index, (mean, deviation) in enumerate(zip(means, deviations, strict=True)):
        if abs(mean) > MOMENT_TOLERANCE or abs(deviation - 1.0) > MOMENT_TOLERANCE:
            return Check(
                name,
                False,
                f"After normalization, training feature {index} has mean {mean:.3f} and standard deviation"
                f" {deviation:.3f}, expected 0 and 1: subtract each feature's mean over the training split and"
                " divide by its population standard deviation (tf.math.reduce_std), over all of the training"
                " examples and none of the validation ones.",
            )
    return Check(name, True, f"Every training feature has mean 0 and standard deviation 1 (within {MOMENT_TOLERANCE}).")


# ----- reproducible epochs (rules.reproducible) and the learner's own coverage test (rules.coverage_test)


def reproducible_order(observed: Observed) -> Check:
    name = "reproducible_order"
    splits = observed.observation["splits"]
    seed, other = observed.rules["reproducible"]["seed"], observed.rules["reproducible"]["other_seed"]

    def ids(epoch: Mapping[str, Any]) -> list[int]:
        return [int(value) for value in decode_array(epoch["labels"])]

    for number, epoch in enumerate(observed.epochs[:2], start=1):
        if ids(epoch) != ids(splits[f"same_seed_epoch_{number}"]):
            return Check(
                name,
                False,
                f"Built twice with seed {seed}, the pipeline gave two different orders in epoch {number}: every"
                " shuffle must take the seed (shuffle(..., seed=seed)), and parallel steps must keep their order"
                " (deterministic=True, or leave it out).",
            )
    if ids(observed.epochs[0]) == ids(splits["other_seed_epoch_1"]):
        return Check(
            name,
            False,
            f"Seeds {seed} and {other} gave the same order: the shuffle must use the seed it is given.",
        )
    return Check(
        name, True, f"Seed {seed} gives the same orders when built again, epoch by epoch; seed {other} another."
    )


def coverage_test(observed: Observed) -> Check:
    name = "coverage_test"
    function = observed.rules["coverage_test"]["function"]
    outcome = observed.observation["coverage_test"]
    if "error" in outcome:
        return Check(name, False, f"{outcome['error']}.")
    cases = outcome["cases"]
    told = [case for case in cases if case["passed"] != case["broken"]]
    if len(told) == len(cases):
        broken = ", ".join(case["name"] for case in cases if case["broken"])
        return Check(
            name,
            True,
            f"Your {function} passed the correct pipeline and failed every broken one ({broken}).",
        )
    problems = []
    for case in cases:
        if case["broken"] and case["passed"]:
            problems.append(f"it passed {case['name']} ({case['description']})")
        elif not case["broken"] and not case["passed"]:
            problems.append(f"it failed the correct pipeline, saying {case['said']}")
    return Check(
        name,
        False,
        f"Your {function} told {len(told)} of {len(cases)} pipelines apart: " + "; ".join(problems) + ".",
        credit=len(told) / len(cases),
    )


# ----- sharded input for distributed training (rules.sharded)


def _setup(config: Mapping[str, Any]) -> str:
    """How a message about one setup begins."""
    return f"With {config['workers']} workers over {config['files']} files"


def sharded_every_example_once(observed: Observed) -> Check:
    name = "sharded_every_example_once"
    configs: list[Mapping[str, Any]] = observed.observation["sharding"]
    count = len(observed.expected.labels)
    for config in configs:
        owners: dict[int, list[int]] = {}
        for run in config["runs"]:
            for example in run["ids"]:
                owners.setdefault(int(example), []).append(int(run["worker"]))
        twice = {example: workers for example, workers in owners.items() if len(workers) > 1}
        missing = count - len(owners)
        if twice:
            pairs = sorted({tuple(sorted(set(workers)))[:2] for workers in twice.values()})
            both = " and ".join(f"worker {worker}" for worker in pairs[0])
            return Check(
                name,
                False,
                f"{_setup(config)}, {plural(len(twice), 'example')} came from more than one worker ({both} both"
                " gave some): each worker must keep only its own shard (shard(num_input_pipelines,"
                " input_pipeline_id)).",
            )
        if missing:
            return Check(
                name,
                False,
                f"{_setup(config)}, {plural(missing, 'example')} came from no worker: together the workers must"
                " give every example once per epoch.",
            )
    return Check(name, True, "In every setup, the workers together gave every example exactly once.")


def per_replica_batches(observed: Observed) -> Check:
    name = "per_replica_batches"
    configs: list[Mapping[str, Any]] = observed.observation["sharding"]
    for config in configs:
        for run in config["runs"]:
            if run["batch_sizes"] != [config["per_replica"]]:
                sizes = ", ".join(str(size) for size in run["batch_sizes"]) or "none"
                return Check(
                    name,
                    False,
                    f"{_setup(config)}, worker {run['worker']} gave batches of {sizes}, expected"
                    f" {config['per_replica']} each: batch with input_context.get_per_replica_batch_size(global"
                    " batch size), dropping the remainder.",
                )
    return Check(name, True, "Every worker gave batches of the per-replica size.")


def workers_shuffled(observed: Observed) -> Check:
    name = "workers_shuffled"
    configs: list[Mapping[str, Any]] = observed.observation["sharding"]
    for config in configs:
        orders = []
        for run in config["runs"]:
            ids = np.asarray(run["ids"], dtype=np.int64)
            if ids.size and np.array_equal(ids, np.sort(ids)):
                return Check(
                    name,
                    False,
                    f"{_setup(config)}, worker {run['worker']} gives its examples in file order: shuffle each"
                    " worker's shard.",
                )
            # Where in its own shard each example is: the same sequence means the same shuffle.
            orders.append(np.argsort(np.argsort(ids)))
        for left, right in pairwise(orders):
            if left.size and np.array_equal(left, right):
                return Check(
                    name,
                    False,
                    f"{_setup(config)}, neighbouring workers shuffle their shards the same way: give each worker"
                    " its own seed (for example seed + input_pipeline_id), or none.",
                )
    return Check(name, True, "Every worker shuffles its shard, each its own way.")


def sharded_before_reading(observed: Observed) -> Check:
    name = "sharded_before_reading"
    configs: list[Mapping[str, Any]] = observed.observation["sharding"]
    for config in configs:
        if config["files"] < config["workers"]:
            continue
        for run in config["runs"]:
            read = run["bytes_read"]
            if read is None:
                return check_not_run(name, "this host does not tell how much a process has read")
            if read < 0:
                return Check(
                    name,
                    False,
                    f"{_setup(config)}, worker {run['worker']}: the grader could not measure what it read (the run"
                    " did not mark where the worker began and ended).",
                )
            # A worker's share of the files, with room for buffers read past its end.
            if read > 1.5 * config["file_bytes"] / config["workers"]:
                return Check(
                    name,
                    False,
                    f"{_setup(config)}, worker {run['worker']} read {read / 1e6:.2f} MB of the files'"
                    f" {config['file_bytes'] / 1e6:.2f} MB to keep 1/{config['workers']} of the examples: with at"
                    " least as many files as workers, shard the file list before reading it.",
                )
    return Check(name, True, "With at least as many files as workers, each worker read only its own files.")


def sharded_before_parsing(observed: Observed) -> Check:
    name = "sharded_before_parsing"
    configs: list[Mapping[str, Any]] = observed.observation["sharding"]
    examples = len(observed.expected.labels)
    if not any(run["parsed"] for config in configs for run in config["runs"]):
        return check_not_run(
            name,
            "counts the records tf.io.parse_single_example, tf.io.parse_example and parse_example_dataset"
            " parse, and none ran",
        )
    for config in configs:
        share = examples / config["workers"]
        for run in config["runs"]:
            if run["parsed"] > 1.25 * share:
                return Check(
                    name,
                    False,
                    f"{_setup(config)}, worker {run['worker']} parsed {run['parsed']} records to keep about"
                    f" {round(share)}: shard the records before parsing them, so that each worker does only its"
                    " own share of the work.",
                )
    return Check(name, True, "Every worker parsed only the records of its own shard.")


@dataclass(frozen=True)
class ObservationRule:
    """One check of the output: its name, whether the exercise's rules ask for it, and the check itself."""

    name: str
    asked: Callable[[Mapping[str, Any]], bool]
    check: Callable[[Observed], Check]
    # It judges the order of the examples, which it can only do when most of them match input ones.
    needs_matches: bool = False
    # What the first epoch alone says (a run cut short after a failing first epoch): "judges" (its
    # result stands), "fails" (a failure stands, a pass needs the later epochs) or "nothing".
    first_epoch: str = "judges"
    # What the checking run observes after the main pipeline's epochs that the check needs: the key
    # in the observation, and in words for the learner when the run did not get that far.
    needs: tuple[str, str] | None = None


OBSERVATION_RULES: tuple[ObservationRule, ...] = (
    ObservationRule("element_spec", lambda rules: True, element_spec),
    ObservationRule(
        "served_from_cache",
        lambda rules: bool(rules.get("source_files_removed_after_epoch")),
        served_from_cache,
        first_epoch="nothing",
    ),
    ObservationRule("batches_per_epoch", lambda rules: bool(rules.get("batches_per_epoch")), batches_per_epoch),
    ObservationRule("value_range", lambda rules: bool(rules.get("value_range")), value_range),
    ObservationRule(
        "every_example_once", lambda rules: bool(rules.get("every_example_once", True)), every_example_once
    ),
    ObservationRule(
        "shuffled", lambda rules: bool(rules.get("shuffled")), shuffled, needs_matches=True, first_epoch="fails"
    ),
    ObservationRule(
        "mixes_shards",
        lambda rules: bool(rules.get("min_shards_in_first_batch")),
        shards_mixed_in_first_batch,
        needs_matches=True,
    ),
    ObservationRule(
        "source_called_once_per_epoch",
        lambda rules: bool(rules.get("source_called_once_per_epoch")),
        source_called_once_per_epoch,
        first_epoch="fails",
    ),
    ObservationRule("bad_records_skipped", lambda rules: bool(rules.get("bad_records_skipped")), bad_records_skipped),
    ObservationRule(
        "normalized_with_training_statistics",
        lambda rules: bool(rules.get("splits")),
        normalized_with_training_statistics,
    ),
    ObservationRule("no_validation_in_training", lambda rules: bool(rules.get("splits")), no_validation_in_training),
    ObservationRule(
        "training_unchanged_by_validation",
        lambda rules: bool(rules.get("splits")),
        training_unchanged_by_validation,
        first_epoch="nothing",
        needs=("splits", "the pipelines built again with the validation files changed"),
    ),
    ObservationRule(
        "validation_normalized",
        lambda rules: bool(rules.get("splits")),
        validation_normalized,
        first_epoch="nothing",
        needs=("splits", "the validation datasets"),
    ),
    ObservationRule(
        "reproducible_order",
        lambda rules: bool(rules.get("reproducible")),
        reproducible_order,
        first_epoch="nothing",
        needs=("splits", "the pipeline built again"),
    ),
    ObservationRule(
        "coverage_test",
        lambda rules: bool(rules.get("coverage_test")),
        coverage_test,
        first_epoch="nothing",
        needs=("coverage_test", "your test run against the grader's pipelines"),
    ),
    *(
        ObservationRule(
            rule.__name__,
            lambda rules: bool(rules.get("sharded")),
            rule,
            first_epoch="nothing",
            needs=("sharding", "every worker's pipeline"),
        )
        for rule in (
            sharded_every_example_once,
            per_replica_batches,
            workers_shuffled,
            sharded_before_reading,
            sharded_before_parsing,
        )
    ),
    ObservationRule(
        "augmentation_varies",
        lambda rules: bool(rules.get("augmentation_varies_between_epochs")),
        augmentation_varies_between_epochs,
        first_epoch="nothing",
        needs_matches=True,
    ),
)


def evaluate_observation(
    observation: Mapping[str, Any],
    expected: ExpectedExamples,
    spec: Mapping[str, Any],
    code: str,
    *,
    first_epoch_only: bool = False,
    expected_splits: Mapping[str, ExpectedExamples] | None = None,
) -> list[Check]:
    """Every check the exercise's rules ask for, from what the checking run observed, failing ones
    included: a learner hears of every fault at once. A check that needs output the run never gave
    says so instead (not run). `first_epoch_only`: the run was cut short after a first epoch that
    already failed, and each rule tells what it can from that epoch (ObservationRule.first_epoch)."""
    rules = spec.get("rules", {})
    checks: list[Check] = []
    if rules.get("requires_from_generator_output_signature"):
        checks.append(from_generator_signature_check(code))
    asked = [rule for rule in OBSERVATION_RULES if rule.asked(rules)]
    error = observation.get("error")
    if error:
        return [*checks, *_failed_run_checks(error, asked, rules)]
    observed = Observed(observation, expected, spec, dict(expected_splits or {}), code)
    if not observed.epochs:
        return [*checks, *(check_not_run(rule.name, "the pipeline gave no epoch") for rule in asked)]
    if first_epoch_only:
        return [*checks, *(_checked_on_first_epoch(rule, observed) for rule in asked)]
    return [*checks, *(_checked(rule, observed) for rule in asked)]


def first_epoch_fails(
    observation: Mapping[str, Any],
    expected: ExpectedExamples,
    spec: Mapping[str, Any],
    code: str,
    expected_splits: Mapping[str, ExpectedExamples] | None = None,
) -> bool:
    """Whether the first epoch's output alone already fails a check (the run need not go on). Checks
    of the code itself do not count: they are told whatever the run shows, so the run goes on to
    tell what the later epochs show too."""
    rules = spec.get("rules", {})
    if any(rules.get(rule) for rule in FURTHER_RUNS):
        # Their own checks need what the run does after the main pipeline's epochs.
        return False
    output_checks = {rule.name for rule in OBSERVATION_RULES}
    return any(
        not check.passed and check.ran and check.name in output_checks
        for check in evaluate_observation(
            observation, expected, spec, code, first_epoch_only=True, expected_splits=expected_splits
        )
    )


# Rules whose checks need what the checking run does after the main pipeline's epochs (the validation
# datasets, the pipeline built again, every worker's pipeline, the learner's own test): such a run
# is never cut short after its first epoch.
FURTHER_RUNS = ("splits", "reproducible", "coverage_test", "sharded")

CUT_SHORT = "the run stopped after its first epoch, which already failed; it is checked once that epoch passes"


def _checked_on_first_epoch(rule: ObservationRule, observed: Observed) -> Check:
    if rule.first_epoch == "nothing":
        return check_not_run(rule.name, CUT_SHORT)
    check = _checked(rule, observed)
    if rule.first_epoch == "fails" and check.passed:
        return check_not_run(rule.name, CUT_SHORT)
    return check


def _checked(rule: ObservationRule, observed: Observed) -> Check:
    if rule.needs and rule.needs[0] not in observed.observation:
        return check_not_run(rule.name, f"needs {rule.needs[1]}, and the run did not get that far")
    if rule.needs_matches and not observed.mostly_matched:
        return check_not_run(rule.name, "needs output examples that match the input ones (see every_example_once)")
    return rule.check(observed)


def failed_run_is_a_check(error: Mapping[str, Any], rules: Mapping[str, Any]) -> bool:
    """Whether the checking run's error is told as a failed check (a wrong structure, a failure once
    the files are gone, an epoch stopped by a bad record) rather than as the run's error."""
    if error.get("kind") == "element_spec":
        return True
    if rules.get("source_files_removed_after_epoch") and error.get("files_removed"):
        return True
    return bool(rules.get("bad_records_skipped")) and str(error.get("phase", "")).startswith("epoch")


def _failed_run_checks(
    error: Mapping[str, Any], asked: Sequence[ObservationRule], rules: Mapping[str, Any]
) -> list[Check]:
    """The checks of a run that stopped: the one its error says failed, and the others not run."""
    removed_after = int(rules.get("source_files_removed_after_epoch", 0))
    if not failed_run_is_a_check(error, rules):
        # The run's error is the result (runtime_error); no check can be told from it.
        return []
    if error.get("kind") == "element_spec":
        failed = Check("element_spec", False, str(error["message"]))
        reason = "needs batches of the right structure and shape"
    elif removed_after and error.get("files_removed"):
        failed = Check(
            "served_from_cache",
            False,
            f"Epoch {removed_after + 1} failed after the TFRecord files were removed: later epochs must"
            " come from cache(), placed after decoding and resizing. " + _last_line(error),
        )
        reason = "needs every epoch, and the pipeline stopped once the files were gone"
    else:
        failed = Check(
            "bad_records_skipped",
            False,
            f"The pipeline stopped in {error['phase']} with an error, most likely at one of the bad records:"
            f" {_last_line(error)} One bad record must not end the epoch: skip the records whose parsing"
            " fails (ignore_errors() after the parse) and count them.",
        )
        reason = "needs an epoch that goes on past the bad records"
    # The check that fails here is asked for whenever such an error can happen.
    return [failed if rule.name == failed.name else check_not_run(rule.name, reason) for rule in asked]


def _element_spec_text(element_spec: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(f"{part['name']} {part['dtype']} {tuple(part['shape'])}" for part in element_spec)


def _last_line(error: Mapping[str, Any]) -> str:
    lines = str(error.get("message", "")).strip().splitlines()
    return lines[-1][:300] if lines else ""
