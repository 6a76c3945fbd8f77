"""The grading process inside the sandbox: imports TensorFlow once, then grades one submission
by forking a fresh child for every run of learner or reference code.

Protocol. The host starts this module in a sandbox ahead of time; it imports TensorFlow (no op
runs in this process, so forks stay usable) and writes `{"event": "ready"}` to the result pipe.
The host then writes two messages to stdin, each its length in bytes on a line, then its JSON
(`stdin_frame`):

1. the job: code, entry point, spec (without references), manifest and plan;
2. the answer: expected example signatures and the reference solutions.

Both are read to the byte, never ahead (a buffered read of the job would hold the start of the
answer in memory that a learner's run inherits). Before the answer is read, this process forks the
learner's fork server (`LearnerForks`): every run of the learner's code is forked from it, so no
process running learner code has ever held the expected answer or the references, whose runs are
forked from this process. This process is the sandbox's PID 1 (no signal from inside reaches it),
is not dumpable, and the seccomp filter refuses ptrace and the like, so nothing inside reads it.
The checking child sends its first epoch's output as soon as that epoch ends; where it already
fails a check, the run is cut short there (wrong output is told in about half the time). This
process never runs learner code itself; it stamps the child's marks with its own clock (see
worker.timing), kills the child at its deadline, then every process left in the sandbox, and
empties the scratch directory, so each run starts with nothing an earlier run left. Progress lines
and then one result line go to the result pipe.

Timing. Before the timed runs, a plan with `timing_gate` sends `{"event": "timing_request"}` and
waits for the host's one-line answer on the control pipe ($SANDBOX_CONTROL_FD): the host answers
once it holds the host's timing lock (or gave up waiting for it), and `{"event": "timing_done"}`
lets it go. Timed runs are pinned to the plan's `timing_cpus`, checking runs to `checking_cpus`.
Each timed run's host load is measured (worker.timing.RunLoad); a round with a run over
`max_busy_fraction` is timed again, up to `timing_retries` more rounds.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import json
import os
import re
import resource
import select
import shutil
import signal
import socket
import statistics
import sys
import time
import traceback
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from worker.timing import RunLoad

# Taken before any learner code exists: patching `time` in a child cannot reach these.
_perf_counter = time.perf_counter
_monotonic = time.monotonic
_sleep = time.sleep
_write = os.write

RESULT_FD_VARIABLE = "SANDBOX_RESULT_FD"
CONTROL_FD_VARIABLE = "SANDBOX_CONTROL_FD"
INPUTS_DIR = Path("/inputs")
SCRATCH = Path("/scratch")
SUBMISSION_FILE = "submission.py"
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
MARKS = frozenset("cibse")
# The observation of a checking run is large (signatures of every example); marks are one byte.
CHANNEL_LIMIT = 64 * 1024**2
# Checking runs yield the CPU to timed runs (another grading's, on a host where they share cores):
# their speed is not measured, and at nice 5 they still get a quarter of a contended CPU.
CHECKING_NICE = 5
# How often, at most, the harness says how far a run has gone (besides at each epoch's end).
PROGRESS_EVERY_SECONDS = 0.5
# Hears a run's batches and epochs so far.
MarksCallback = Callable[[int, int], None]


def _prctl(option: int, value: int) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


class Channel:
    """Newline-delimited messages to the host over the result pipe."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def send(self, message: Mapping[str, Any]) -> None:
        payload = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        view = memoryview(payload)
        while view:
            view = view[_write(self.fd, view) :]


class RunOutcome:
    def __init__(self) -> None:
        self.marks: list[tuple[str, float]] = []
        self.messages: list[dict[str, Any]] = []
        self.timed_out = False
        self.exit_code: int | None = None
        self.signal: int | None = None
        self.garbled = False
        # The CPUs the run's threads were allowed at its last epoch's end (read from /proc).
        self.cpus_seen: set[int] = set()
        # Killed after a first epoch that already failed (Grading.fork_run's cut_short_when).
        self.cut_short = False
        # CPU time of a run reaped by another process (the learner's fork server), which
        # RUSAGE_CHILDREN here does not see.
        self.cpu_seconds_elsewhere = 0.0
        # A timed run's steps, and the batches the grading process saw (None for a checking run).
        self.steps: Steps | None = None
        # The run's pid and the write end of its step pipe, and the bytes it had read at each of its
        # I/O marks, read by the grading process.
        self.pid: int | None = None
        self.step_write: int | None = None
        self.io_marks: list[int | None] = []

    def message(self, kind: str) -> dict[str, Any] | None:
        return next((message for message in self.messages if message.get("type") == kind), None)


class Steps:
    """The accelerator's step of a timed run, run on the grading process's clock. The run marks a
    batch (`b`), shows it (its examples' signatures), and waits on its step pipe; the step ends
    `seconds` after the mark and not before the batch was shown, and only then is the run told to
    go on and the step's end (`s`) stamped. A batch marked while a step runs, a step's end written
    by the run, or a mark without its batch is a forgery (`fault`); the batches seen, by epoch,
    are matched to the expected examples once the run is over."""

    def __init__(self, seconds: float, step_write: int) -> None:
        self.seconds = seconds
        self.step_write = step_write
        self.until: float | None = None
        self.shown = True
        self.fault: str | None = None
        self.epochs: list[tuple[list[Any], list[Any]]] = []

    def epoch_started(self) -> None:
        self.epochs.append(([], []))

    def batch_arrived(self, stamp: float) -> None:
        if self.until is not None or not self.epochs:
            self.fault = self.fault or "a batch was marked while the step of the one before was running"
            return
        self.until = stamp + self.seconds
        self.shown = False

    def batch_shown(self, message: Mapping[str, Any]) -> None:
        from worker.checks import decode_array

        if self.shown or not self.epochs:
            self.fault = self.fault or "a batch was shown without its mark"
            return
        try:
            signatures, labels = decode_array(message["signatures"]), decode_array(message["labels"])
        except (KeyError, TypeError, ValueError):
            self.fault = self.fault or "a batch could not be read"
            return
        self.epochs[-1][0].append(signatures)
        self.epochs[-1][1].append(labels)
        self.shown = True

    def seconds_to_release(self, now: float) -> float:
        if self.until is None or not self.shown:
            return 1.0
        return max(self.until - now, 0.0)

    def release(self, now: float, outcome: RunOutcome) -> None:
        if self.until is None or not self.shown or now < self.until:
            return
        with contextlib.suppress(OSError):
            os.write(self.step_write, b"s")
        outcome.marks.append(("s", now))
        self.until = None


def main() -> None:
    channel = Channel(int(os.environ[RESULT_FD_VARIABLE]))
    # Children (learner code) may not read this process's memory or inherit its orphans' escape.
    _prctl(PR_SET_DUMPABLE, 0)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    # As PID 1 only signals with a handler reach this process from inside: Python's SIGINT one goes.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import numpy  # noqa: F401 - warm import
    import tensorflow  # noqa: F401 - the slow import, done before the job arrives

    channel.send({"event": "ready"})
    job = read_message(0)
    Grading(job, channel).run()
    # The result is sent: skip TensorFlow's slow interpreter teardown.
    os._exit(0)


class Grading:
    def __init__(self, job: dict[str, Any], channel: Channel) -> None:
        self.job = job
        self.channel = channel
        self.spec: dict[str, Any] = job["spec"]
        self.plan: dict[str, Any] = job["plan"]
        self.run_seconds = float(self.plan["run_seconds"])
        # Wall time spent inside runs (fork to reap): the rest of a grading is the grader's overhead.
        self.inside_runs = 0.0
        control = os.environ.get(CONTROL_FD_VARIABLE)
        self.control_fd = int(control) if control else None
        self.timing_progress = 0.0
        # The share of the timing phase's progress the rounds being timed fill (offset, width): all of
        # it, or what is left after a calibration found the host changed.
        self.timing_span = (0.0, 1.0)
        # When the harness last told the host how a run is going (progress within runs, at most every
        # PROGRESS_EVERY_SECONDS).
        self.last_progress = 0.0
        self.learner_forks: LearnerForks | None = None
        # Once the checking run is over: the expected examples, and how many its first epoch gave.
        self.expected: Any = None
        self.checked_examples: int | None = None

    def run(self) -> None:
        from worker.checks import ExpectedExamples

        epochs = int(self.spec.get("rules", {}).get("epochs_checked", 2))
        self.progress(
            "checking", 0.0, label="Checking your pipeline's output: epoch 1 of " + str(epochs), done=0, total=epochs
        )

        def running(batches: int, epochs_done: int) -> None:
            self.progress(
                "checking",
                0.8 * min(epochs_done / epochs, 1.0),
                label=f"Checking your pipeline's output: epoch {min(epochs_done + 1, epochs)} of {epochs}",
                done=epochs_done,
                total=epochs,
            )

        answers: list[tuple[dict[str, Any], ExpectedExamples, dict[str, ExpectedExamples]]] = []
        # Before the answer is read: learner runs are forked from a process that never held it.
        self.learner_forks = LearnerForks.start(self)

        def answer() -> tuple[dict[str, Any], ExpectedExamples, dict[str, ExpectedExamples]]:
            # Read once the checking child has been forked, which therefore never holds it.
            if not answers:
                given = read_message(0)
                splits = {
                    name: ExpectedExamples.decode(value) for name, value in given.get("expected_splits", {}).items()
                }
                answers.append((given, ExpectedExamples.decode(given["expected"]), splits))
            return answers[0]

        def first_epoch_fails(message: dict[str, Any]) -> bool:
            from worker.observation_rules import first_epoch_fails

            _, expected, splits = answer()
            return first_epoch_fails(message, expected, self.spec, self.job["code"], splits)

        check = self.fork_run(
            {"role": "check", "code": self.job["code"]},
            learner=True,
            cpus=self.plan.get("checking_cpus"),
            on_marks=running,
            cut_short_when=first_epoch_fails,
        )
        given, expected, expected_splits = answer()
        self.expected = expected
        self.checked_examples = _first_epoch_examples(check)
        self.coverage_cases(check, given.get("coverage_seed"))
        result: dict[str, Any] = {"event": "result", "timing": None, "timing_error": None}
        result.update(self.check_result(check, expected, expected_splits))
        checks = result["checks"]
        self.progress(
            "checking",
            1.0,
            label=f"Checking the output: {sum(check['passed'] for check in checks)} of {len(checks)} checks passed",
            done=len(checks),
            total=len(checks),
        )
        if result["run_error"] is None and all(check["passed"] for check in result["checks"]):
            rounds = int(self.plan["timing_rounds"])
            if rounds > 0:
                result.update(
                    self.timing(given["references"], rounds, given.get("baseline"), given.get("references_why"))
                )
        result["inside_runs_seconds"] = round(self.inside_runs, 4)
        self.channel.send(result)

    def coverage_cases(self, check: RunOutcome, secret_seed: int | None) -> None:
        """The learner's own test against each of the grader's pipelines, each in a run of its own, its
        verdict that run's report; written into the checking run's observation (whatever the checking
        run put there is dropped). The pipelines come from a seed the learner's runs never hold."""
        from worker.coverage_cases import coverage_cases

        coverage = self.spec.get("rules", {}).get("coverage_test")
        observation = check.message("observation")
        if observation is None:
            return
        observation.pop("coverage_test", None)
        if not coverage or observation.get("error"):
            return
        seed = int(coverage["seed"]) if secret_seed is None else int(secret_seed)
        cases = coverage_cases(int(coverage["records"]), int(coverage["batch"]), seed)
        results = []
        for number, case in enumerate(cases):
            self.progress(
                "checking",
                0.8 + 0.2 * number / len(cases),
                label=f"Running your {coverage['function']} on the grader's pipelines: {number + 1} of {len(cases)}",
                done=number,
                total=len(cases),
            )
            setup = {"role": "coverage", "code": self.job["code"], "case_epochs": [ids.tolist() for ids in case.epochs]}
            outcome = self.fork_run(setup, learner=True, cpus=self.plan.get("checking_cpus"))
            report = outcome.message("coverage")
            if report is not None and "error" in report:
                observation["coverage_test"] = {"error": str(report["error"])[:300]}
                return
            failure = run_error(outcome, f"your {coverage['function']}")
            if report is None or failure is not None:
                said = (failure or {}).get("message") or "it ended without saying whether the pipeline passed"
                results.append({**case.as_dict(), "passed": False, "said": str(said)[:300]})
                continue
            results.append(
                {**case.as_dict(), "passed": report.get("passed") is True, "said": str(report.get("said", ""))[:300]}
            )
        observation["coverage_test"] = {"cases": results}

    def progress(
        self,
        phase: str,
        value: float,
        *,
        label: str = "",
        done: int | None = None,
        total: int | None = None,
        seconds_left: float | None = None,
    ) -> None:
        """Tell the host how far the phase is (`value`, 0-1), in words and counts, with the time left
        when it can be told."""
        self.last_progress = _monotonic()
        message = {"event": "progress", "phase": phase, "value": round(value, 3), "label": label}
        message.update(done=done, total=total)
        message["seconds_left"] = None if seconds_left is None else round(max(seconds_left, 0.0), 1)
        self.channel.send(message)

    def check_result(self, check: RunOutcome, expected: Any, expected_splits: Mapping[str, Any]) -> dict[str, Any]:
        from worker.checks import ExpectedExamples
        from worker.observation_rules import evaluate_observation, failed_run_is_a_check

        assert isinstance(expected, ExpectedExamples)  # noqa: S101
        observation = check.message("first_epoch" if check.cut_short else "observation")
        device = observation.get("device") if observation else None
        # A run cut short was killed on purpose: that is not the learner's error.
        error = None if check.cut_short else run_error(check, "the checking run")
        if observation is None and error is None:
            error = {"kind": "runtime_error", "message": "The checking run ended without reporting its output."}
        checks = []
        if observation is not None:
            _fill_bytes_read(observation, check.io_marks)
            evaluated = evaluate_observation(
                observation,
                expected,
                self.spec,
                self.job["code"],
                first_epoch_only=check.cut_short,
                expected_splits=expected_splits,
            )
            checks = [item.as_dict() for item in evaluated]
            reported = observation.get("error")
            if reported and error is None and not failed_run_is_a_check(reported, self.spec.get("rules", {})):
                error = reported
        profile = observation.get("profile") if observation else None
        return {"run_error": error, "checks": checks, "device": device or "CPU", "profile": profile}

    def timing(
        self,
        references: Mapping[str, str],
        rounds: int,
        baseline: Mapping[str, Any] | None = None,
        why: str | None = None,
    ) -> dict[str, Any]:
        cpus = self.plan.get("timing_cpus") or None
        host = self.timing_gate()
        restore = os.sched_getaffinity(0)
        try:
            if cpus:
                # The stamping process runs on the timed CPUs too, so its clock reads are not
                # delayed by whatever the rest of the host runs elsewhere.
                os.sched_setaffinity(0, cpus)
            return self.timed_with_baseline(references, rounds, cpus, host, baseline, why or "none stored")
        finally:
            if cpus:
                os.sched_setaffinity(0, restore)
            self.channel.send({"event": "timing_done"})

    def timing_gate(self) -> dict[str, Any]:
        """Wait for the host's go: it holds the host's timing lock, or waited its limit for it."""
        if not self.plan.get("timing_gate") or self.control_fd is None:
            return {"exclusive": False, "lock_wait_seconds": 0.0}
        self.channel.send({"event": "timing_request"})
        answer: Any = None
        with contextlib.suppress(ValueError):
            answer = json.loads(_read_line(self.control_fd))
        if not isinstance(answer, dict):
            answer = {}
        return {
            "exclusive": bool(answer.get("exclusive", False)),
            "lock_wait_seconds": float(answer.get("lock_wait_seconds", 0.0)),
        }

    def timed_with_baseline(
        self,
        references: Mapping[str, str],
        rounds: int,
        cpus: list[int] | None,
        host: dict[str, Any],
        baseline: Mapping[str, Any] | None,
        why: str,
    ) -> dict[str, Any]:
        """With the host's stored figures of the references, time the submission beside the expert
        reference only, as a calibration (see worker.baselines); where there are none, or the
        calibration is further from them than the plan's drift limit, time all three."""
        if baseline is None:
            return self.timed_rounds(references, rounds, cpus, host, {"timed": "this grading", "why": why})
        calibrated = self.timed_rounds(references, rounds, cpus, host, {"timed": "stored"}, baseline)
        if "timing" in calibrated:
            drift = float(calibrated["timing"]["host"]["references"]["drift"])
            if abs(drift) <= float(baseline["drift_limit"]):
                return calibrated
        elif "drifted" in calibrated:
            drift = float(calibrated["drifted"])
        else:
            return calibrated
        why = f"the expert reference ran {abs(drift):.0%} {'slower' if drift > 0 else 'faster'} than stored"
        # The progress goes on from where the calibration left it.
        self.timing_span = (self.timing_progress, 1.0 - self.timing_progress)
        return self.timed_rounds(references, rounds, cpus, host, {"timed": "this grading", "why": why})

    def timed_rounds(
        self,
        references: Mapping[str, str],
        rounds: int,
        cpus: list[int] | None,
        host: dict[str, Any],
        source: dict[str, Any],
        baseline: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        from worker.timing import (
            MarksInvalid,
            RunTiming,
            measured_seconds,
            pipeline_timing,
            rounds_agree,
            rounds_to_use,
            run_timing,
        )

        codes = {"naive": references["naive"], "expert": references["expert"], "submission": self.job["code"]}
        # With stored figures, the naive reference is not run: each round's naive time is its stored
        # time scaled by the round's expert run against the expert's stored time.
        order = ["expert", "submission"] if baseline is not None else list(codes)
        warmup = int(self.plan["warmup_epochs"])
        retries = max(int(self.plan.get("timing_retries", 0)), 0)
        limit = float(self.plan.get("max_busy_fraction", 1.0))
        planned = rounds * len(order)
        names = {"naive": "the naive reference", "expert": "the expert reference", "submission": "your pipeline"}
        if baseline is not None:
            names["expert"] = "the expert reference (calibration)"
        batches_per_run = int(self.spec.get("rules", {}).get("batches_per_epoch", 0)) * int(self.plan["epochs_per_run"])
        run_seconds: list[float] = []
        records: list[dict[str, Any]] = []
        timings: list[dict[str, RunTiming]] = []
        clean = 0
        # Fewer rounds once the calm ones agree: their speedups would not move with more.
        enough = rounds
        minimum = max(int(self.plan.get("timing_min_rounds", rounds)), 1)
        agreement = float(self.plan.get("timing_agreement", 0.0))
        while clean < enough and len(records) < rounds + retries:
            # Alternate which pipeline goes first, so drift on the machine, and whatever a run
            # leaves behind for the next, falls on all of them.
            first = len(records) % len(order)
            rotated = order[first:] + order[:first]
            record: dict[str, Any] = {"order": rotated, "epoch_seconds": {}, "load": {}}
            timed: dict[str, RunTiming] = {}
            for position, name in enumerate(rotated):
                runs_done = clean * len(order) + position
                round_label = f"Timing round {min(clean + 1, rounds)} of {rounds}: {names[name]}"
                if len(records) >= rounds:
                    round_label = f"Timing again (a round was disturbed by other work): {names[name]}"

                def left(fraction: float, runs_done: int = runs_done) -> float | None:
                    if not run_seconds:
                        return None
                    return (planned - runs_done - fraction) * sum(run_seconds) / len(run_seconds)

                def timing_run(
                    batches: int, epochs_done: int, runs_done: int = runs_done, label: str = round_label
                ) -> None:
                    fraction = min(batches / batches_per_run, 1.0) if batches_per_run else 0.0
                    self.report_timing((runs_done + fraction) / planned, label, runs_done, planned, left(fraction))

                self.report_timing(runs_done / planned, round_label, runs_done, planned, left(0.0))
                started = _perf_counter()
                outcome, load = self.timed_run(codes[name], name == "submission", cpus, on_marks=timing_run)
                run_seconds.append(_perf_counter() - started)
                who = "your pipeline" if name == "submission" else f"the {name} reference"
                error = run_error(outcome, f"the timed run of the {name} pipeline")
                if error is None and cpus and not outcome.cpus_seen <= set(cpus):
                    error = {"message": "it changed the CPUs it runs on; timed runs stay on the CPUs they are given"}
                if error is None and name == "submission":
                    problem = self.timed_output_problem(outcome)
                    error = None if problem is None else {"message": problem}
                try:
                    if error is not None:
                        raise MarksInvalid(error["message"])
                    timed[name] = run_timing(outcome.marks)
                    record["epoch_seconds"][name] = round(measured_seconds(timed[name], warmup), 6)
                except MarksInvalid as invalid:
                    return {"timing_error": {"pipeline": name, "message": f"Timing {who} failed: {invalid}"}}
                record["load"][name] = {**load.as_dict(), "cpus": sorted(outcome.cpus_seen)}
            record["busy_fraction"] = max(load["busy_fraction"] for load in record["load"].values())
            record["disturbed"] = record["busy_fraction"] > limit
            if baseline is not None:
                scale = record["epoch_seconds"]["expert"] / float(baseline["expert_seconds"])
                record["epoch_seconds"]["naive"] = round(float(baseline["naive_seconds"]) * scale, 6)
                if not records and not record["disturbed"] and abs(scale - 1.0) > float(baseline["drift_limit"]):
                    # A calm first round already far from the stored figures: time all three now.
                    return {"drifted": round(scale - 1.0, 4)}
            clean += not record["disturbed"]
            records.append(record)
            timings.append(timed)
            calm = [record["epoch_seconds"] for record in records if not record["disturbed"]]
            if minimum <= clean < enough and rounds_agree(calm, agreement):
                enough = clean
        used = rounds_to_use([record["busy_fraction"] for record in records], limit, enough)
        figures: dict[str, Any] = {
            name: pipeline_timing([timings[index][name] for index in used], warmup).as_dict() for name in order
        }
        references_used = dict(source)
        if baseline is not None:
            naive = statistics.median(records[index]["epoch_seconds"]["naive"] for index in used)
            stored = dict(baseline["figures"]["naive"])
            stored_seconds = float(stored["epoch_seconds"])
            figures["naive"] = {
                **stored,
                "epoch_seconds": round(naive, 4),
                "batches_per_second": round(float(stored["batches_per_second"]) * stored_seconds / naive, 2),
            }
            references_used.update(
                drift=round(figures["expert"]["epoch_seconds"] / float(baseline["expert_seconds"]) - 1.0, 4),
                measured_at=baseline.get("measured_at"),
                expert_vs_naive=baseline.get("expert_vs_naive"),
            )
        for index, record in enumerate(records):
            record["used"] = index in used
        measured_cpus = cpus or sorted(os.sched_getaffinity(0))
        figures["host"] = {
            **host,
            "timing_cpus": cpus,
            "cpus": len(measured_cpus),
            "max_busy_fraction": limit,
            "rounds_timed": len(records),
            "rounds_planned": rounds,
            "stopped_early": enough < rounds,
            "retimed": len(records) - enough,
            "disturbed": any(records[index]["disturbed"] for index in used),
            "busy_fraction": max(records[index]["busy_fraction"] for index in used),
            "loadavg": _loadavg(),
            "references": references_used,
            "rounds": records,
        }
        return {"timing": figures}

    def timed_output_problem(self, outcome: RunOutcome) -> str | None:
        """Why the timed run's batches are not the checked pipeline's, or None: the grading process
        saw every batch it stamped, each epoch's examples must match input ones, none twice, as many
        as the checking run's first epoch gave."""
        from worker.checks import match_epoch, per_value_tolerance

        steps = outcome.steps
        if steps is None:
            return None
        if steps.fault is not None:
            return f"the timing marks were not the grader's ({steps.fault})."
        for number, (signatures, labels) in enumerate(steps.epochs, start=1):
            count = sum(len(part) for part in labels)
            if self.checked_examples is not None and count != self.checked_examples:
                return (
                    f"its timed epoch {number} gave {count} examples, where the checked epoch gave"
                    f" {self.checked_examples}: a timed run must give what the checking run gave."
                )
            if not count or self.expected is None:
                continue
            import numpy as np

            match = match_epoch(
                np.concatenate(signatures),
                np.concatenate(labels).astype(np.int64),
                self.expected,
                per_value_tolerance(self.spec.get("rules", {})),
            )
            matched = match.indices[match.indices >= 0]
            unmatched, repeated = count - len(matched), len(matched) - len(np.unique(matched))
            if unmatched or repeated:
                return (
                    f"its timed epoch {number} held {unmatched} examples that match no input example and"
                    f" {repeated} repeated ones: a timed run must give what the checking run gave."
                )
        return None

    def report_timing(self, value: float, label: str, done: int, total: int, seconds_left: float | None) -> None:
        # A round timed again does not take the progress back.
        offset, width = self.timing_span
        self.timing_progress = max(self.timing_progress, offset + width * value)
        self.progress("timing", self.timing_progress, label=label, done=done, total=total, seconds_left=seconds_left)

    def timed_run(
        self, code: str, learner: bool, cpus: list[int] | None, on_marks: MarksCallback | None = None
    ) -> tuple[RunOutcome, RunLoad]:
        """One timed run and the load on its CPUs meanwhile: busy time of the CPUs from /proc/stat
        (host-wide, even inside the sandbox) less this process's and the run's own."""
        from worker.timing import cpu_times, run_load

        measured = cpus or sorted(os.sched_getaffinity(0))
        before = cpu_times(_read_text("/proc/stat"), measured)
        own_before = _own_cpu_seconds()
        started = _perf_counter()
        setup = {"role": "time", "code": code}
        outcome = self.fork_run(setup, learner=learner, quiet=True, cpus=cpus, on_marks=on_marks)
        wall = _perf_counter() - started
        after = cpu_times(_read_text("/proc/stat"), measured)
        own = _own_cpu_seconds() - own_before + outcome.cpu_seconds_elsewhere
        return outcome, run_load(before, after, own, wall, len(measured))

    def fork_run(
        self,
        setup: dict[str, Any],
        *,
        learner: bool,
        quiet: bool = False,
        cpus: list[int] | None = None,
        on_marks: MarksCallback | None = None,
        cut_short_when: Callable[[dict[str, Any]], bool] | None = None,
    ) -> RunOutcome:
        """One run in a fresh child: a learner's forked by the learner's fork server, a reference's
        by this process. Afterwards nothing of it is left: no process, no file in scratch."""
        read_end, write_end = os.pipe()
        step_read, step_write = os.pipe()
        forked_at = _perf_counter()
        outcome = RunOutcome()
        outcome.step_write = step_write
        if setup["role"] == "time":
            outcome.steps = Steps(float(self.spec.get("accelerator_step_ms", 0)) / 1000.0, step_write)
        keep = {self.learner_forks.pid} if self.learner_forks is not None else set()
        if learner:
            assert self.learner_forks is not None  # noqa: S101
            spawned = self.learner_forks.spawn(setup, write_end, step_read, quiet, cpus)
            os.close(write_end)
            os.close(step_read)
            if spawned is None:
                os.close(read_end)
                os.close(step_write)
                outcome.exit_code = 70
                outcome.messages.append({"type": "error", "message": _FORKS_GONE})
                return outcome
            pid = spawned

            def reap() -> int | None:
                assert self.learner_forks is not None  # noqa: S101
                status, cpu_seconds = self.learner_forks.reap(spawned)
                outcome.cpu_seconds_elsewhere = cpu_seconds
                return status

        else:
            pid = os.fork()
            if pid == 0:  # pragma: no cover - runs in the child
                close = [read_end, step_write, self.channel.fd, self.control_fd]
                self.run_in_child(setup, write_end, step_read, quiet, cpus, close)
            os.close(write_end)
            os.close(step_read)

            def reap() -> int | None:
                return os.waitpid(pid, 0)[1]

        outcome.pid = pid
        self.collect(pid, read_end, outcome, reap, on_marks, cut_short_when)
        os.close(step_write)
        self.inside_runs += _perf_counter() - forked_at
        _sweep_other_processes(keep)
        _scratch_empty()
        return outcome

    def run_in_child(
        self,
        setup: dict[str, Any],
        write_end: int,
        step_read: int,
        quiet: bool,
        cpus: list[int] | None,
        close: list[int | None],
    ) -> NoReturn:
        """The body of a forked run; never returns."""
        exit_code = 70
        try:
            for fd in close:
                if fd is not None:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            if cpus:
                # Before TensorFlow makes its thread pools: they, and AUTOTUNE, size themselves
                # from the CPUs the process may use, the same for every pipeline timed.
                os.sched_setaffinity(0, cpus)
            if setup["role"] == "check":
                os.nice(CHECKING_NICE)
                # So that the grading process may read its I/O counters (/proc/<pid>/io); it holds
                # nothing another process of the learner's may not see.
                _prctl(PR_SET_DUMPABLE, 1)
            _detach_stdio(quiet)
            run_child({**setup, **self.child_context()}, write_end, step_read)
            exit_code = 0
        except BaseException:  # nothing may escape a forked child
            traceback.print_exc()
        finally:
            os._exit(exit_code)

    def child_context(self) -> dict[str, Any]:
        return {
            "entry_point": self.job["entry_point"],
            "spec": self.spec,
            "manifest": self.job["manifest"],
            "data_key": self.job["data_key"],
            "plan": self.plan,
        }

    def collect(
        self,
        pid: int,
        read_end: int,
        outcome: RunOutcome,
        reap: Callable[[], int | None],
        on_marks: MarksCallback | None = None,
        cut_short_when: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:
        """Read the child's marks and messages until it exits (a process it left behind may hold
        the pipe open: the sweep takes care of that one) or its time is up. `on_marks` hears the
        batches and epochs so far every PROGRESS_EVERY_SECONDS and at each epoch's end; where
        `cut_short_when` says a first-epoch message is enough, the child is killed there."""
        deadline = _monotonic() + self.run_seconds
        pending = bytearray()
        received = 0
        epochs_left = int(self.plan["epochs_per_run"])
        batches = epochs_done = 0
        exited = os.pidfd_open(pid)
        child_gone = False
        steps = outcome.steps
        while True:
            remaining = deadline - _monotonic()
            if remaining <= 0:
                outcome.timed_out = True
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                break
            wait = min(remaining, 1.0)
            if steps is not None:
                steps.release(_perf_counter(), outcome)
                wait = min(wait, steps.seconds_to_release(_perf_counter()))
            readable, _, _ = select.select([read_end, exited], [], [], 0 if child_gone else wait)
            if read_end not in readable:
                if child_gone:
                    break  # exited, and everything it wrote has been read
                child_gone = exited in readable
                continue
            chunk = os.read(read_end, 1 << 20)
            stamp = _perf_counter()
            if not chunk:
                break
            received += len(chunk)
            if received > CHANNEL_LIMIT:
                outcome.garbled = True
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                break
            pending += chunk
            *lines, rest = pending.split(b"\n")
            pending = bytearray(rest)
            marks_before = len(outcome.marks)
            messages_before = len(outcome.messages)
            for line in lines:
                self.take_line(bytes(line), stamp, outcome)
            if steps is not None:
                steps.release(_perf_counter(), outcome)
            first = [message for message in outcome.messages[messages_before:] if message.get("type") == "first_epoch"]
            if first and cut_short_when is not None and cut_short_when(first[0]):
                outcome.cut_short = True
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                break
            new_marks = [mark for mark, _ in outcome.marks[marks_before:]]
            ended = new_marks.count("e")
            epochs_left -= ended
            batches += new_marks.count("b")
            epochs_done += ended
            if on_marks is not None and (ended or _monotonic() - self.last_progress >= PROGRESS_EVERY_SECONDS):
                on_marks(batches, epochs_done)
            if ended and epochs_left <= 0 and not outcome.cpus_seen:
                # After the last epoch, where reading /proc delays no stamp that counts.
                outcome.cpus_seen = _allowed_cpus(pid)
        os.close(read_end)
        os.close(exited)
        status = reap()
        if status is None:
            outcome.exit_code = 70
        elif os.WIFSIGNALED(status):
            outcome.signal = os.WTERMSIG(status)
        else:
            outcome.exit_code = os.WEXITSTATUS(status)

    @staticmethod
    def take_line(line: bytes, stamp: float, outcome: RunOutcome) -> None:
        text = line.decode(errors="replace")
        steps = outcome.steps
        if len(text) == 1 and text in MARKS:
            if steps is not None:
                if text == "s":
                    # In a timed run only the grading process ends a step.
                    steps.fault = steps.fault or "the run wrote a step's end itself"
                    return
                if text == "b":
                    steps.batch_arrived(stamp)
                elif text == "i":
                    steps.epoch_started()
            outcome.marks.append((text, stamp))
            return
        try:
            message = json.loads(text)
        except ValueError:
            outcome.garbled = True
            return
        if not isinstance(message, dict):
            outcome.garbled = True
        elif steps is not None and message.get("type") == "batch":
            steps.batch_shown(message)
        elif message.get("type") == "io_mark" and outcome.pid is not None and outcome.step_write is not None:
            outcome.io_marks.append(_bytes_read(outcome.pid))
            with contextlib.suppress(OSError):
                os.write(outcome.step_write, b"m")
        else:
            outcome.messages.append(message)


def _first_epoch_examples(check: RunOutcome) -> int | None:
    """How many examples the checking run's first epoch gave (None where it reported none)."""
    observation = check.message("observation") or check.message("first_epoch")
    epochs = observation.get("epochs") if observation else None
    if not epochs:
        return None
    shape = epochs[0].get("labels", {}).get("shape")
    return int(shape[0]) if shape else None


def run_error(outcome: RunOutcome, what: str) -> dict[str, Any] | None:
    """How a run failed, in the learner's terms; None when it ended normally."""
    reported = outcome.message("error")
    if reported is not None:
        return {"kind": "runtime_error", "message": str(reported.get("message", ""))[:4000]}
    if outcome.timed_out:
        return {"kind": "timeout", "message": f"{what.capitalize()} was stopped: it ran past its time limit."}
    if outcome.signal is not None:
        name = signal.Signals(outcome.signal).name if outcome.signal in signal.Signals else str(outcome.signal)
        return {
            "kind": "killed",
            "signal": outcome.signal,
            "message": f"{what.capitalize()} was killed by {name} (a crash, or the memory limit).",
        }
    if outcome.exit_code not in (0, None):
        return {"kind": "runtime_error", "message": f"{what.capitalize()} exited with status {outcome.exit_code}."}
    if outcome.garbled:
        return {"kind": "runtime_error", "message": f"{what.capitalize()} wrote unreadable output to the grader."}
    return None


def stdin_frame(message: Mapping[str, Any]) -> bytes:
    """A message for the harness's stdin: its length on a line, then its JSON."""
    payload = json.dumps(message).encode()
    return f"{len(payload)}\n".encode() + payload


def read_message(fd: int) -> Any:
    """One `stdin_frame` message, read to the byte: nothing after it is taken from the pipe."""
    length = int(_read_line(fd) or b"0")
    received = bytearray()
    while len(received) < length:
        chunk = os.read(fd, length - len(received))
        if not chunk:
            raise EOFError("the host closed stdin inside a message")
        received += chunk
    return json.loads(received)


def _read_text(path: str) -> str:
    with open(path) as file:
        return file.read()


def _read_line(fd: int) -> bytes:
    """One line from a pipe (without its newline); what came before the end if the writer closed it."""
    received = bytearray()
    while not received.endswith(b"\n"):
        chunk = os.read(fd, 1)
        if not chunk:
            break
        received += chunk
    return bytes(received).rstrip(b"\n")


def _loadavg() -> list[float]:
    with contextlib.suppress(OSError, ValueError):
        return [float(value) for value in _read_text("/proc/loadavg").split()[:3]]
    return []


def _own_cpu_seconds() -> float:
    """CPU time of this process and of its children reaped so far (a timed run, once reaped)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def _allowed_cpus(pid: int) -> set[int]:
    """The CPUs any thread of the process may run on (a thread can change its own)."""
    from worker.host import cpu_list_parse

    allowed: set[int] = set()
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, ValueError):
                for line in _read_text(f"/proc/{pid}/task/{task}/status").splitlines():
                    if line.startswith("Cpus_allowed_list:"):
                        allowed |= cpu_list_parse(line.partition(":")[2].strip())
    return allowed


def _detach_stdio(quiet: bool) -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    if quiet:
        # Timed runs of the learner's code happen after the references were read: their output
        # is not shown, so nothing read from this process's memory can be printed back.
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
    os.close(devnull)


def _sweep_other_processes(keep: set[int]) -> None:
    """Kill whatever a run left behind (daemons, forks), and reap it; only this process and `keep`
    (the learner's fork server) stay."""
    stay = {1, os.getpid(), *keep}
    for _ in range(50):
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        others = [int(entry) for entry in os.listdir("/proc") if entry.isdigit() and int(entry) not in stay]
        if not others:
            return
        for pid in others:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        _sleep(0.01)


def _scratch_empty() -> None:
    """Remove everything a run left in scratch (a cache file, a marker), so the next run starts clean."""
    with contextlib.suppress(OSError):
        for entry in list(SCRATCH.iterdir()):
            if entry.is_dir() and not entry.is_symlink():
                # A directory the run made unreadable is made readable again first.
                for root, directories, _ in os.walk(entry):
                    for name in directories:
                        with contextlib.suppress(OSError):
                            os.chmod(os.path.join(root, name), 0o700)
                with contextlib.suppress(OSError):
                    os.chmod(entry, 0o700)
                shutil.rmtree(entry, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    entry.unlink()


_FORKS_GONE = "The run could not start: the process that starts your runs was killed (by your code?)."


class LearnerForks:
    """The learner's fork server: a child of the grading process forked before it reads the answer,
    which forks each run of the learner's code on request, so none of them inherits the expected
    answer or the references. It speaks over a socket pair: a request (the run's setup, with the
    write end of the run's pipe passed along) is answered with the run's pid; a reap request with
    its wait status and CPU time once it has ended."""

    def __init__(self, pid: int, connection: socket.socket) -> None:
        self.pid = pid
        self.connection = connection

    @classmethod
    def start(cls, grading: Grading) -> LearnerForks:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the fork server
            exit_code = 70
            try:
                ours.close()
                _serve_learner_forks(grading, theirs)
                exit_code = 0
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(exit_code)
        theirs.close()
        return cls(pid, ours)

    def spawn(
        self, setup: dict[str, Any], write_end: int, step_read: int, quiet: bool, cpus: list[int] | None
    ) -> int | None:
        request = json.dumps({"setup": setup, "quiet": quiet, "cpus": cpus}).encode()
        try:
            socket.send_fds(self.connection, [request], [write_end, step_read])
            return int(json.loads(self.connection.recv(4096))["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def reap(self, pid: int) -> tuple[int | None, float]:
        """The run's wait status (None where the fork server has gone) and its CPU seconds."""
        try:
            self.connection.send(json.dumps({"reap": pid}).encode())
            reply = json.loads(self.connection.recv(4096))
            return int(reply["status"]), float(reply["cpu_seconds"])
        except (OSError, ValueError, KeyError, TypeError):
            # The fork server was killed: its child came to this process, the sandbox's reaper.
            with contextlib.suppress(ChildProcessError):
                reaped, status = os.waitpid(pid, 0)
                if reaped == pid:
                    return status, 0.0
            return None, 0.0


def _serve_learner_forks(grading: Grading, connection: socket.socket) -> None:  # pragma: no cover - fork server
    for fd in (grading.channel.fd, grading.control_fd):
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
    # The sandbox's stdin still holds the answer the grading process has not read yet.
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.close(devnull)
    while True:
        message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 2)
        if not message or len(fds) != 2:
            return
        request = json.loads(message)
        pid = os.fork()
        if pid == 0:
            quiet, cpus = bool(request["quiet"]), request["cpus"]
            grading.run_in_child(request["setup"], fds[0], fds[1], quiet, cpus, [connection.fileno()])
        for fd in fds:
            os.close(fd)
        connection.send(json.dumps({"pid": pid}).encode())
        reap = connection.recv(4096)
        if not reap:
            return
        _, status, usage = os.wait4(pid, 0)
        connection.send(json.dumps({"status": status, "cpu_seconds": usage.ru_utime + usage.ru_stime}).encode())


# ----------------------------------------------------------------------------- in the child


def run_child(setup: dict[str, Any], channel_fd: int, step_fd: int) -> None:
    import numpy as np
    import tensorflow as tf

    wait_for_step = os.read

    def send(message: Mapping[str, Any]) -> None:
        payload = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        view = memoryview(payload)
        while view:
            view = view[_write(channel_fd, view) :]

    def mark(letter: bytes) -> None:
        _write(channel_fd, letter + b"\n")

    def io_mark() -> None:
        # The grading process reads this process's I/O counters, then lets it go on.
        send({"type": "io_mark"})
        wait_for_step(step_fd, 1)

    spec, plan, role = setup["spec"], setup["plan"], setup["role"]
    rules = spec.get("rules", {})
    element_spec: list[dict[str, Any]] = spec["element_spec"]
    device = _device_name(tf)
    run_dir = SCRATCH / f"run-{os.getpid()}"
    arguments, source_calls, files_to_remove = _pipeline_arguments(setup, run_dir, np)
    splits = setup["manifest"].get("splits")
    isinstance_ = isinstance
    dataset_type = tf.data.Dataset
    options = tf.data.Options()
    # TensorFlow would otherwise parallelize maps and add prefetching on its own (a map fused with
    # its batch also runs ahead in the background), hiding the difference the exercise is about:
    # the figures measure the learner's own choices.
    options.experimental_optimization.map_parallelization = False
    options.experimental_optimization.inject_prefetch = False
    options.experimental_optimization.map_and_batch_fusion = False
    options.experimental_optimization.parallel_batch = False
    signatures_of = _signature_function()
    check_structure = StructureChecker(element_spec, rules)
    from worker.checks import encode_array

    def encode_arrays(**arrays: Any) -> dict[str, Any]:
        return {name: encode_array(np.asarray(array)) for name, array in arrays.items()}

    sharded = rules.get("sharded")
    parsed = None
    if sharded:
        first_workers = int(sharded["configs"][0][1])
        arguments = (arguments[0], tf.distribute.InputContext(first_workers, 0, first_workers))
        if role == "check":
            parsed = _count_parses(tf)

    module = types.ModuleType("submission")
    module.__file__ = SUBMISSION_FILE
    sys.modules["submission"] = module
    phase = "loading your code"
    observation: dict[str, Any] = {"type": "observation", "device": device, "epochs": []}
    try:
        exec(compile(setup["code"], SUBMISSION_FILE, "exec"), module.__dict__)  # noqa: S102 - sandboxed
        if role == "coverage":
            coverage = rules["coverage_test"]
            send(_coverage_case(module.__dict__.get(coverage["function"]), coverage, setup["case_epochs"], tf, np))
            return
        entry = module.__dict__.get(setup["entry_point"])
        if not callable(entry):
            raise LookupError(f"your code must define a function named {setup['entry_point']}")
        phase = f"calling {setup['entry_point']}"
        mark(b"c")
        dataset = entry(*arguments)
        skipped = validation = None
        if rules.get("bad_records_skipped"):
            dataset, skipped = _dataset_and_counter(dataset, setup["entry_point"])
        if splits:
            dataset, validation = _training_and_validation(dataset, setup["entry_point"], dataset_type)
        if not isinstance_(dataset, dataset_type):
            raise TypeError(f"{setup['entry_point']} returned {type(dataset).__name__}, expected a tf.data.Dataset")
        dataset = dataset.with_options(options)
        epochs = int(rules.get("epochs_checked", 2)) if role == "check" else int(plan["epochs_per_run"])
        # Well past one pass an epoch is endless: said at once, not as a run out of time or memory.
        batches_per_epoch = int(rules.get("batches_per_epoch", 0))
        endless_after = 2 * batches_per_epoch + 8 if batches_per_epoch else 0
        remove_after = int(rules.get("source_files_removed_after_epoch", 0))
        if skipped is not None and role == "check":
            # Before any record is read, a count of the records skipped is 0.
            observation["skipped_before"] = _counter_reading(skipped, np).get("skipped")
        for epoch in range(1, epochs + 1):
            phase = f"epoch {epoch}"
            labels: list[Any] = []
            signatures: list[Any] = []
            epoch_values: list[Any] = []
            low, high = float("inf"), float("-inf")
            batches = 0
            profiling = role == "check" and epoch == 1 and _profiler_start(tf, run_dir)
            mark(b"i")
            for batch in dataset:
                mark(b"b")
                batches += 1
                if endless_after and batches > endless_after:
                    raise EndlessEpoch(
                        f"epoch {epoch} has given {batches - 1} batches, past the {batches_per_epoch} one pass"
                        " holds: the dataset never ends (a repeat() with no count?); an epoch is one pass"
                    )
                values, label_values = check_structure(batch, batches)
                if role == "check":
                    if splits:
                        epoch_values.append(values)
                    signatures.append(signatures_of(values))
                    labels.append(label_values)
                    low, high = min(low, float(values.min())), max(high, float(values.max()))
                    mark(b"s")
                    continue
                # A timed batch is shown to the grading process, which runs the accelerator's step on
                # its own clock and says when it is over: the marks it stamps are of batches it has seen.
                send({"type": "batch", **encode_arrays(signatures=signatures_of(values), labels=label_values)})
                wait_for_step(step_fd, 1)
            mark(b"e")
            if role == "check":
                observation["epochs"].append(_epoch_observation(np, batches, signatures, labels, low, high))
                if splits:
                    observation["epochs"][-1].update(_feature_moments(np, epoch_values))
                if skipped is not None:
                    # Read twice with nothing read between: a count of the calls, not of the records
                    # skipped, changes.
                    observation["epochs"][-1].update(_counter_reading(skipped, np))
                    again = _counter_reading(skipped, np).get("skipped")
                    observation["epochs"][-1]["skipped_again"] = again
                if epoch == 1 and epochs > 1:
                    from worker.checks import encode_observation_arrays

                    # Before the trace is written (a fifth of a second): a failing first epoch ends
                    # the run here, and its result needs no profile.
                    first = {**observation, "type": "first_epoch", "source_calls": list(source_calls)}
                    first["spec_problems"] = list(check_structure.problems.values())
                    send(encode_observation_arrays(first))
            if profiling:
                observation["profile"] = _profiler_stop(tf, run_dir, batches)
            if epoch == remove_after:
                for path in files_to_remove:
                    path.unlink()
        if validation is not None and role == "check":

            def read(dataset: Any, what: str) -> dict[str, Any]:
                nonlocal phase
                phase = f"reading {what}"
                return _observed_epoch(dataset.with_options(options), check_structure, signatures_of, np)

            observation["splits"] = {"validation": read(validation, "the validation dataset")}
            phase = f"calling {setup['entry_point']} again, with the validation files changed"
            again = entry(arguments[0], _split_files(setup, "validation_changed"))
            train_again, validation_again = _training_and_validation(again, setup["entry_point"], dataset_type)
            observation["splits"]["train_after_change"] = read(
                train_again, "the training dataset built with the validation files changed"
            )
            observation["splits"]["validation_after_change"] = read(validation_again, "the changed validation dataset")
        reproducible = rules.get("reproducible")
        if reproducible and role == "check":
            observation["splits"] = {}
            for name, seed, epochs_read in (
                ("same_seed", arguments[1], 2),
                ("other_seed", reproducible["other_seed"], 1),
            ):
                phase = f"calling {setup['entry_point']} again with seed {seed}"
                again = entry(arguments[0], seed)
                if not isinstance_(again, dataset_type):
                    raise TypeError(
                        f"{setup['entry_point']} returned {type(again).__name__}, expected a tf.data.Dataset"
                    )
                again = again.with_options(options)
                for epoch in range(1, epochs_read + 1):
                    phase = f"reading epoch {epoch} of the pipeline built with seed {seed}"
                    observation["splits"][f"{name}_epoch_{epoch}"] = _observed_epoch(
                        again, check_structure, signatures_of, np
                    )
        if sharded and role == "check":
            observation["sharding"] = []
            for file_count, workers in sharded["configs"]:
                files = _sharding_files(setup, int(file_count))
                config: dict[str, Any] = {"files": len(files), "workers": int(workers), "runs": []}
                config["per_replica"] = int(sharded["global_batch"]) // int(workers)
                config["file_bytes"] = sum(os.path.getsize(path) for path in files)
                for worker in range(int(workers)):
                    phase = f"reading worker {worker} of {workers}, over {len(files)} files"
                    context = tf.distribute.InputContext(int(workers), worker, int(workers))
                    config["runs"].append(_worker_run(entry(files, context), worker, parsed, tf, np, options, io_mark))
                observation["sharding"].append(config)
        observation["source_calls"] = source_calls
        observation["spec_problems"] = list(check_structure.problems.values())
    except BaseException as error:  # the learner's error is the result
        observation["error"] = {
            "kind": "element_spec" if isinstance(error, ElementSpecError) else "runtime_error",
            "phase": phase,
            "message": _learner_traceback(error, phase),
            "files_removed": bool(files_to_remove) and not all(path.exists() for path in files_to_remove),
        }
        observation["source_calls"] = source_calls
    if role == "check":
        from worker.checks import encode_observation_arrays

        send(encode_observation_arrays(observation))
    elif "error" in observation:
        send({"type": "error", "message": observation["error"]["message"]})
    shutil.rmtree(run_dir, ignore_errors=True)


def _profiler_start(tf: Any, run_dir: Path) -> bool:
    """Trace the checking run's first epoch (worker.stage_profile); without a trace the grading goes on."""
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        tf.profiler.experimental.start(str(run_dir / "profile"))
    except Exception:  # the profile is extra feedback, never a reason to fail
        return False
    return True


def _profiler_stop(tf: Any, run_dir: Path, batches: int) -> dict[str, Any] | None:
    from worker.stage_profile import iterator_events, stage_profile

    try:
        tf.profiler.experimental.stop()
        traces = sorted((run_dir / "profile").rglob("*.xplane.pb"))
        return stage_profile(iterator_events(traces[-1]), batches) if traces else None
    except Exception:  # as above
        return None


def _device_name(tf: Any) -> str:
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return "CPU"
    details = tf.config.experimental.get_device_details(gpus[0])
    return str(details.get("device_name", "GPU"))


def _pipeline_arguments(setup: dict[str, Any], run_dir: Path, np: Any) -> tuple[tuple[Any, ...], list[int], list[Path]]:
    """What the learner's function is called with (the training and the validation files, for an
    exercise over splits), the simulator's call counts, and the files the run removes after an
    epoch (a private copy, so that later runs still find theirs)."""
    argument, calls, removable = _pipeline_argument(setup, run_dir, np)
    if setup["manifest"].get("splits"):
        return (argument, _split_files(setup, "validation")), calls, removable
    reproducible = setup["spec"].get("rules", {}).get("reproducible")
    if reproducible:
        return (argument, int(reproducible["seed"])), calls, removable
    return (argument,), calls, removable


def _coverage_case(
    check: Any, coverage: Mapping[str, Any], epochs: list[list[int]], tf: Any, np: Any
) -> dict[str, Any]:
    """The learner's epoch-coverage test run against one of the grader's pipelines, in a run of its
    own that knows nothing of which one it is (worker.coverage_cases, with a seed only the grading
    process holds): whether it returned (passed the pipeline) or raised, and what it said."""
    name = coverage["function"]
    if not callable(check):
        return {
            "type": "coverage",
            "error": f"define {name}(dataset, expected_ids): it is the second part of the exercise",
        }
    batch, width = int(coverage["batch"]), int(coverage["feature_dim"])
    signature = (
        tf.TensorSpec(shape=(None, width), dtype=tf.float32),
        tf.TensorSpec(shape=(None,), dtype=tf.int32),
    )
    served = [0]

    def batches() -> Any:
        ids = np.asarray(epochs[min(served[0], len(epochs) - 1)], dtype=np.int32)
        served[0] += 1
        for start in range(0, len(ids), batch):
            chunk = ids[start : start + batch]
            yield np.zeros((len(chunk), width), dtype=np.float32), chunk

    dataset = tf.data.Dataset.from_generator(batches, output_signature=signature)
    try:
        check(dataset, list(range(int(coverage["records"]))))
    except Exception as error:  # the learner's check failing the pipeline is what it is for
        said = str(error).strip().splitlines()
        return {"type": "coverage", "passed": False, "said": f"{type(error).__name__}: {said[0] if said else ''}"[:300]}
    return {"type": "coverage", "passed": True, "said": ""}


def _count_parses(tf: Any) -> Any:
    """Count every record the learner's code parses: tf.io.parse_single_example and parse_example,
    and tf.data.experimental.parse_example_dataset, add the records they were given to a counter
    when they run (in the graph, not when traced)."""
    counter = tf.Variable(0, dtype=tf.int64, trainable=False)

    def counted_records(serialized: Any) -> Any:
        with tf.control_dependencies([counter.assign_add(tf.cast(tf.size(serialized), tf.int64))]):
            return tf.identity(serialized)

    for name in ("parse_single_example", "parse_example"):
        original = getattr(tf.io, name)

        def counted(serialized: Any, *args: Any, original: Any = original, **kwargs: Any) -> Any:
            return original(counted_records(serialized), *args, **kwargs)

        setattr(tf.io, name, counted)
    parse_dataset = tf.data.experimental.parse_example_dataset

    def counted_dataset(*args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        transformation = parse_dataset(*args, **kwargs)
        return lambda dataset: transformation(dataset.map(counted_records))

    tf.data.experimental.parse_example_dataset = counted_dataset
    return counter


def _worker_run(
    dataset: Any, worker: int, parsed: Any, tf: Any, np: Any, options: Any, io_mark: Callable[[], None]
) -> dict[str, Any]:
    """One worker's epoch: the ids it gave in order, its batch sizes and the records it parsed. What
    it read the grading process measures itself, at the two marks around the epoch."""
    if not isinstance(dataset, tf.data.Dataset):
        raise TypeError(f"worker {worker}: the pipeline is {type(dataset).__name__}, expected a tf.data.Dataset")
    parsed_before = int(parsed.numpy())
    io_mark()
    ids: list[int] = []
    sizes: set[int] = set()
    for batch in dataset.with_options(options):
        labels = np.asarray(tf.nest.flatten(batch)[-1])
        sizes.add(int(labels.shape[0]) if labels.ndim else 0)
        ids.extend(int(value) for value in labels.reshape(-1))
    io_mark()
    return {
        "worker": worker,
        "ids": ids,
        "batch_sizes": sorted(sizes),
        "parsed": int(parsed.numpy()) - parsed_before,
    }


def _bytes_read(pid: int) -> int | None:
    """Bytes a process has read through read system calls (page cache included), if told."""
    try:
        for line in _read_text(f"/proc/{pid}/io").splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def _fill_bytes_read(observation: dict[str, Any], marks: list[int | None]) -> None:
    """Each worker's bytes read, from the grading process's own readings at its two marks; -1 for
    every worker where the run did not mark where each began and ended (the check then fails), None
    where this host does not tell (the check is not run)."""
    runs = [run for config in observation.get("sharding", []) for run in config["runs"]]
    for index, run in enumerate(runs):
        if len(marks) != 2 * len(runs):
            run["bytes_read"] = -1
            continue
        before, after = marks[2 * index], marks[2 * index + 1]
        run["bytes_read"] = None if before is None or after is None else after - before


def _sharding_files(setup: dict[str, Any], count: int) -> list[str]:
    """The exercise's files, or the same records in fewer, larger files."""
    manifest = setup["manifest"]
    names = manifest["files"] if len(manifest["files"]) == count else manifest["merged_files"]
    return [str(INPUTS_DIR / setup["data_key"] / name) for name in names]


def _split_files(setup: dict[str, Any], split: str) -> list[str]:
    return [str(INPUTS_DIR / setup["data_key"] / name) for name in setup["manifest"]["splits"][split]["files"]]


def _training_and_validation(returned: Any, entry_point: str, dataset_type: type) -> tuple[Any, Any]:
    """The (training, validation) pair of datasets of an exercise over splits."""
    if (
        not isinstance(returned, tuple)
        or len(returned) != 2
        or not all(isinstance(part, dataset_type) for part in returned)
    ):
        raise TypeError(
            f"{entry_point} returned {type(returned).__name__}, expected a pair of tf.data.Dataset:"
            " (training, validation)"
        )
    return returned[0], returned[1]


def _observed_epoch(dataset: Any, check_structure: Any, signatures_of: Any, np: Any) -> dict[str, Any]:
    """One epoch of a further dataset (validation), observed as the checking run observes its epochs."""
    labels: list[Any] = []
    signatures: list[Any] = []
    values_seen: list[Any] = []
    low, high = float("inf"), float("-inf")
    batches = 0
    for batch in dataset:
        batches += 1
        values, label_values = check_structure(batch, batches)
        signatures.append(signatures_of(values))
        labels.append(label_values)
        values_seen.append(values)
        low, high = min(low, float(values.min())), max(high, float(values.max()))
    return {**_epoch_observation(np, batches, signatures, labels, low, high), **_feature_moments(np, values_seen)}


def _feature_moments(np: Any, values: list[Any]) -> dict[str, Any]:
    """Each feature's mean and population standard deviation over an epoch's examples."""
    if not values:
        return {}
    features = np.concatenate(values).astype(np.float64)
    features = features.reshape(len(features), -1)
    return {"feature_mean": features.mean(axis=0).tolist(), "feature_std": features.std(axis=0).tolist()}


def _pipeline_argument(setup: dict[str, Any], run_dir: Path, np: Any) -> tuple[Any, list[int], list[Path]]:
    spec, manifest = setup["spec"], setup["manifest"]
    data_dir = INPUTS_DIR / setup["data_key"]
    data = spec["data"]
    rules = spec.get("rules", {})
    generator = data["generator"]
    calls: list[int] = []
    if generator == "python_simulator":
        observations = np.load(data_dir / "observations.npy")
        labels = np.load(data_dir / "labels.npy")
        cost = float(data.get("per_sample_cost_ms", 0)) / 1000.0
        epoch_calls = [0]

        def make_source() -> Any:
            epoch_calls[0] += 1
            calls.append(1)
            for observation, label in zip(observations, labels, strict=True):
                until = _perf_counter() + cost
                while _perf_counter() < until:  # the simulator's own CPU work
                    pass
                yield observation, int(label)

        return make_source, calls, []
    files = [data_dir / name for name in manifest["files"]]
    removable: list[Path] = []
    if rules.get("source_files_removed_after_epoch"):
        run_dir.mkdir(parents=True, exist_ok=True)
        copies = []
        for path in files:
            copy = run_dir / path.name
            shutil.copyfile(path, copy)
            copies.append(copy)
        files = removable = copies
    if data.get("argument") == "glob":
        pattern = data.get("file_name_pattern", "")
        wildcard = pattern.split("{")[0] + "*" + pattern.split("}")[-1] if "{" in pattern else "*"
        matched = sorted(glob.glob(str(files[0].parent / wildcard)))
        if len(matched) != len(files):
            raise RuntimeError("the shard files are not where the pattern says")
        return str(files[0].parent / wildcard), calls, removable
    return [str(path) for path in files], calls, removable


def _signature_function() -> Callable[[Any], Any]:
    from worker.checks import batch_signatures

    return batch_signatures


class StructureChecker:
    """Checks each batch against the element spec and gives (values, labels) as NumPy arrays.

    A wrong dtype that converts is noted once per component (`problems`) and the values converted, so
    the run goes on and the checks after it still see the output; a wrong structure or shape stops the
    run (ElementSpecError), as nothing after it could be matched."""

    def __init__(self, element_spec: list[dict[str, Any]], rules: Mapping[str, Any]) -> None:
        self.element_spec = element_spec
        self.names = [part["name"] for part in element_spec]
        self.scaled = rules.get("value_range") == [0.0, 1.0]
        self.rules = rules
        self.problems: dict[str, str] = {}

    def __call__(self, batch: Any, number: int) -> tuple[Any, Any]:
        names = self.names
        if not isinstance(batch, tuple | list) or len(batch) != len(names):
            kind = type(batch).__name__
            raise ElementSpecError(
                f"batch {number}: elements must be ({', '.join(names)}) pairs, got {kind}"
                + (f" of length {len(batch)}" if isinstance(batch, tuple | list) else "")
            )
        arrays = []
        for wanted, component in zip(self.element_spec, batch, strict=True):
            name = wanted["name"]
            array = component.numpy() if hasattr(component, "numpy") else component
            dtype = getattr(array, "dtype", type(array))
            if str(dtype) != wanted["dtype"]:
                hint = " scaled to [0, 1]" if self.scaled and name == names[0] else ""
                problem = f"batch {number}: {name} are {dtype}, expected {wanted['dtype']}{hint}"
                try:
                    array = array.astype(wanted["dtype"])
                except (AttributeError, TypeError, ValueError):
                    raise ElementSpecError(problem) from None
                self.problems.setdefault(name, problem)
            shape = list(getattr(array, "shape", ()))
            if shape != list(wanted["shape"]):
                hint = ""
                global_batch = (self.rules.get("sharded") or {}).get("global_batch")
                if shape[1:] == list(wanted["shape"])[1:] and shape[:1] != list(wanted["shape"])[:1]:
                    if global_batch is not None and shape[0] == int(global_batch):
                        hint = (
                            " (the global batch on every worker: each worker batches"
                            " input_context.get_per_replica_batch_size(global_batch) examples)"
                        )
                    elif isinstance(wanted["shape"][0], int) and shape[0] < wanted["shape"][0]:
                        hint = " (a smaller last batch? use batch(..., drop_remainder=True))"
                raise ElementSpecError(
                    f"batch {number}: {name} have shape {tuple(shape)}, expected {tuple(wanted['shape'])}{hint}"
                )
            arrays.append(array)
        return arrays[0], arrays[1]


class ElementSpecError(Exception):
    """The output's structure, dtype or shape is not the expected one."""


class EndlessEpoch(Exception):
    """An epoch went on well past one pass over the data."""


def _epoch_observation(
    np: Any, batches: int, signatures: list[Any], labels: list[Any], low: float, high: float
) -> dict[str, Any]:
    return {
        "batches": batches,
        "signatures": np.concatenate(signatures) if signatures else np.zeros((0, 1), dtype=np.float32),
        "labels": np.concatenate(labels).astype(np.int64) if labels else np.zeros(0, dtype=np.int64),
        "first_batch_size": len(labels[0]) if labels else 0,
        "min": low,
        "max": high,
    }


def _dataset_and_counter(returned: Any, entry_point: str) -> tuple[Any, Any]:
    """The (dataset, skipped) pair of an exercise over records that do not parse."""
    if not isinstance(returned, tuple) or len(returned) != 2:
        raise TypeError(
            f"{entry_point} returned {type(returned).__name__}, expected a pair (dataset, skipped): skipped a"
            " function with no arguments, or a tf.Variable, giving how many records were skipped"
        )
    return returned[0], returned[1]


def _counter_reading(counter: Any, np: Any) -> dict[str, Any]:
    """What the learner's counter of skipped records says now, or why it could not be read."""
    try:
        value = counter.numpy() if hasattr(counter, "numpy") else counter()
        number = np.asarray(value)
        if number.shape != () or not np.issubdtype(number.dtype, np.number):
            return {"skipped_error": f"it gave {type(value).__name__} {str(value)[:60]}, not a number"}
        return {"skipped": int(number)}
    except Exception as error:  # the learner's counter is read, never trusted
        return {"skipped_error": f"reading it raised {type(error).__name__}: {str(error)[:200]}"}


# What TensorFlow wraps around an op's own error message: the function and node names, the op, and
# the chain of dataset iterators; the learner reads the message itself.
_TENSORFLOW_NOISE = re.compile(
    r"\{\{function_node [^}]*\}\}\s*"
    r"|Error in user-defined function passed to \S+ transformation with iterator: \S+: "
    r"|\[\[\{\{node [^}]*\}\}\]\]\s*"
    r"|\[Op:\w+\]( name: \S*)?"
)


def _learner_traceback(error: BaseException, phase: str) -> str:
    """The error as the learner should read it: their own frames and the exception, briefly."""
    if isinstance(error, ElementSpecError | EndlessEpoch):
        return str(error)
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == SUBMISSION_FILE]
    where = "".join(f"  line {frame.lineno}, in {frame.name}: {frame.line}\n" for frame in frames[-3:])
    text = [line for line in _TENSORFLOW_NOISE.sub("", str(error)).strip().splitlines() if line.strip()]
    summary = f"{type(error).__name__}: {text[0] if text else ''}"
    if len(text) > 1:
        summary += " " + " ".join(line.strip() for line in text[1:4])
    return (f"While {phase}:\n{where}{summary}")[:4000]


if __name__ == "__main__":
    main()
