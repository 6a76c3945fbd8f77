"""Grading a learner's tf.data pipeline: the host side, with no Django.

`Grader.grade` screens the code (parse, entry point, forbidden imports) and lints it, makes sure
the exercise's data exist, hands the job to a warm sandbox (a `worker.harness` process that has
already imported TensorFlow), follows its progress, and turns what comes back into the result:
verdict, checks, timing, speedups, score, lint findings and device. Warm sandboxes are used for
one submission each; a fresh one is started once a grading ends, so it imports TensorFlow while
no grading is being timed.

The timing phase holds the host's timing lock (worker.host), so gradings on one host never time
at the same time, and runs pinned to the timing CPUs; the sandbox asks for the lock when it gets
there, and the wait is not counted against the submission's wall clock.
"""

from __future__ import annotations

import ast
import contextlib
import glob
import json
import math
import os
import secrets
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from worker.baselines import BaselineStore, ReferenceBaseline, baseline_key
from worker.checks import ExpectedExamples
from worker.datagen import DataGenerationFailed, ExerciseData, exercise_data_ensure
from worker.harness import stdin_frame
from worker.host import TimingLock, timing_cpus_resolve
from worker.limits import MAX_CODE_BYTES
from worker.lint import lint_pipeline_code
from worker.sandbox import Limits, SandboxProcess, SandboxResult
from worker.stage_profile import input_bound, profile_result
from worker.timing import round_speedups, speed_points

WORKER_DIR = Path(__file__).resolve().parent
VERDICTS = ("accepted", "wrong_output", "runtime_error", "timeout", "memory_limit", "rejected")
ALWAYS_FORBIDDEN = ("threading", "_thread", "multiprocessing", "concurrent.futures", "subprocess")
TIMING_NOTE = (
    "Timed with TensorFlow's automatic map parallelization, prefetch injection, map-and-batch fusion"
    " and batch parallelization turned off, so the figures show your pipeline's own"
    " num_parallel_calls and prefetch choices."
)


@dataclass(frozen=True)
class Progress:
    """How far a grading is: its phase ("checking" or "timing"), the phase's share done (0-1), and in
    words and counts what it is doing (epoch 1 of 2, timing run 4 of 9), with the time left where
    it can be told."""

    phase: str
    value: float
    label: str = ""
    done: int | None = None
    total: int | None = None
    seconds_left: float | None = None

    @classmethod
    def from_message(cls, message: Mapping[str, Any]) -> Progress:
        def count(name: str) -> int | None:
            value = message.get(name)
            return int(value) if isinstance(value, int | float) else None

        left = message.get("seconds_left")
        return cls(
            phase=str(message.get("phase")),
            value=float(message.get("value", 0.0)),
            label=str(message.get("label") or ""),
            done=count("done"),
            total=count("total"),
            seconds_left=float(left) if isinstance(left, int | float) else None,
        )

    def detail(self) -> dict[str, Any]:
        return {"label": self.label, "done": self.done, "total": self.total, "seconds_left": self.seconds_left}


ProgressCallback = Callable[[Progress], None]
# How long the timing phase waits for the next grading's sandbox to finish importing TensorFlow
# (about 5 s on two cores; a sandbox that takes longer is left to finish during the timing).
WARM_BEFORE_TIMING_SECONDS = 60.0


class GradingFailed(RuntimeError):
    """The grader itself could not grade (a reference failed, the sandbox could not start):
    nothing the learner's code did."""


@dataclass(frozen=True)
class ExerciseJob:
    """What the grader needs to know about one exercise."""

    slug: str
    entry_point: str
    spec: Mapping[str, Any]


@dataclass(frozen=True)
class GraderConfig:
    data_dir: Path
    warm_processes: int = 1
    timing_rounds: int = 3
    # Timing stops before timing_rounds once this many calm rounds agree: each round's speedups
    # against both references within timing_agreement (relative spread) of one another.
    timing_min_rounds: int = 2
    timing_agreement: float = 0.02
    # Each timed run is one epoch by default: the checking run has already read the data (the page
    # cache is warm) and built the pipeline once, so a warm-up epoch changed no figure but the time.
    warmup_epochs: int = 0
    measured_epochs: int = 1
    # The references' figures are measured once per host and reused (worker.baselines): each grading
    # times the expert reference beside the submission as a calibration, and times all three again
    # when the stored figures are older than baseline_max_age_seconds or the calibration is further
    # from them than baseline_drift_limit (relative).
    baselines: bool = True
    baseline_max_age_seconds: float = 6 * 3600.0
    baseline_drift_limit: float = 0.25
    # Where they are stored (default: data_dir/baselines); every grader on a host should share it.
    baseline_dir: Path | None = None
    run_seconds: float = 60.0
    # CPUs for the timed runs: "auto", "none" or a CPU list such as "2-7" (worker.host).
    timing_cpus: str = "auto"
    # The host-wide timing lock; every grader on a host must name the same file (default: in data_dir).
    timing_lock_path: Path | None = None
    # How long a grading waits for the lock before it times without it (recorded in the result).
    timing_lock_seconds: float = 300.0
    # A round whose runs saw more than this share of their CPUs busy with other work is timed
    # again, up to timing_retries more rounds.
    max_busy_fraction: float = 0.15
    timing_retries: int = 3
    # The relative noise of a speedup on this host, below which speed points do not move (an
    # exercise's speedup_targets.tolerance overrides it); bench.grader --under-load measures it.
    speedup_tolerance: float = 0.05
    limits: Limits = field(
        default_factory=lambda: Limits(
            wall_seconds=600.0,
            cpu_seconds=600,
            memory_bytes=4 * 1024**3,
            processes=1024,
            open_files=1024,
            scratch_bytes=512 * 1024**2,
            result_bytes=32 * 1024**2,
        )
    )


@dataclass(frozen=True)
class GradingStats:
    """Where the time of the last grading went (for benchmarks and logs)."""

    total_seconds: float
    inside_runs_seconds: float
    warm_start: bool
    # time.monotonic() when the sandbox asked for the timing lock, got it and let it go (None
    # where nothing was timed).
    timing_window: tuple[float, float, float] | None = None
    # Before the timing phase: for the next sandbox's import, then for the host's timing lock.
    waiting_seconds: float = 0.0

    @property
    def overhead_seconds(self) -> float:
        return self.total_seconds - self.inside_runs_seconds - self.waiting_seconds


class Grader:
    def __init__(self, config: GraderConfig) -> None:
        self.config = config
        self._warm: deque[SandboxProcess] = deque()
        self._lock = threading.Lock()
        self._grading = threading.Lock()
        self.last_stats: GradingStats | None = None
        # How long the last timed grading of each exercise took, by slug: before the timing phase can
        # tell its own time left, a grading is said to take about as long.
        self._last_seconds: dict[str, float] = {}

    # -------------------------------------------------------------- warm sandboxes

    def start_sandbox(self) -> SandboxProcess:
        binds = {str(WORKER_DIR): "/grader/worker", str(self._inputs_root()): "/inputs"}
        env = {"PYTHONPATH": "/grader", "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONUNBUFFERED": "1"}
        limits = self.config.limits
        if limits.cpus is None:
            # The grading's CPU quota: as many CPUs as its timed runs get (all but the first on a host
            # of 4 or more), so that a process bomb leaves the rest of the host its cores.
            timed, _ = self.timing_cpus()
            limits = replace(limits, cpus=float(len(timed) if timed else len(os.sched_getaffinity(0))))
        return SandboxProcess.start(
            [sys.executable, "-m", "worker.harness"],
            limits=limits,
            binds=binds,
            env=env,
            devices=gpu_devices(),
            control=True,
            as_pid_1=True,
        )

    def _inputs_root(self) -> Path:
        inputs = self.config.data_dir / "inputs"
        inputs.mkdir(parents=True, exist_ok=True)
        return inputs

    def warm_up(self) -> None:
        """Start warm sandboxes up to the configured number (each imports TensorFlow on its own)."""
        with self._lock:
            self._warm = deque(sandbox for sandbox in self._warm if sandbox.alive())
            while len(self._warm) < self.config.warm_processes:
                self._warm.append(self.start_sandbox())

    def wait_until_warm(self, timeout: float = 120.0) -> bool:
        with self._lock:
            waiting = list(self._warm)
        return all(sandbox.wait_ready(timeout) for sandbox in waiting)

    def _take_sandbox(self) -> tuple[SandboxProcess, bool]:
        """A sandbox for one grading, and whether it had already imported TensorFlow."""
        with self._lock:
            while self._warm:
                sandbox = self._warm.popleft()
                if sandbox.alive():
                    return sandbox, sandbox.wait_ready(0)
                sandbox.kill()
        return self.start_sandbox(), False

    def close(self) -> None:
        with self._lock:
            while self._warm:
                self._warm.popleft().kill()

    # -------------------------------------------------------------- grading

    def prepare(self, exercise: ExerciseJob) -> ExerciseData:
        try:
            return exercise_data_ensure(self.config.data_dir, exercise.slug, exercise.spec)
        except (DataGenerationFailed, KeyError, ValueError) as error:
            raise GradingFailed(f"the data of exercise {exercise.slug} could not be made: {error}") from error

    def grade(self, exercise: ExerciseJob, code: str, on_progress: ProgressCallback | None = None) -> dict[str, Any]:
        # One grading at a time per grader: a refresh of the references' figures waits for it, and it
        # waits for a refresh under way (seconds; see references_refresh).
        with self._grading:
            return self._grade(exercise, code, on_progress)

    def references_refresh(self, exercises: Iterable[ExerciseJob], older_than_seconds: float) -> list[str]:
        """In a quiet moment, time the references of each exercise whose stored figures are missing or
        older than the limit (grading the expert reference, all three pipelines timed), so that
        gradings find fresh figures and do not time the references themselves. Stops as soon as a
        grading is under way on this grader; returns the slugs whose figures it stored."""
        measured: list[str] = []
        for exercise in exercises:
            if not self.config.baselines or not self._grading.acquire(blocking=False):
                break
            try:
                data = self.prepare(exercise)
                key = self._baseline_key(exercise, data)
                if self.baselines().get(exercise.slug, key, older_than_seconds) is None:
                    self._grade(exercise, exercise.spec["references"]["expert"], measure_references=True)
                    # A measurement the host disturbed is not stored: it is tried again next time.
                    if self.baselines().get(exercise.slug, key, older_than_seconds) is not None:
                        measured.append(exercise.slug)
            finally:
                self._grading.release()
        return measured

    def _grade(
        self,
        exercise: ExerciseJob,
        code: str,
        on_progress: ProgressCallback | None = None,
        *,
        measure_references: bool = False,
    ) -> dict[str, Any]:
        told = on_progress or (lambda progress: None)
        began = time.perf_counter()
        typical = self._last_seconds.get(exercise.slug)

        def report(progress: Progress) -> None:
            if progress.seconds_left is None and typical is not None:
                progress = replace(progress, seconds_left=round(max(typical - (time.perf_counter() - began), 1.0), 1))
            told(progress)

        rules = exercise.spec.get("rules", {})
        source_is_files = str(exercise.spec["data"]["generator"]).startswith("tfrecord")
        forbidden = [*ALWAYS_FORBIDDEN, *rules.get("forbidden_imports", [])]
        lint = [
            finding.as_dict()
            for finding in lint_pipeline_code(code, source_is_files=source_is_files, forbidden_imports=forbidden)
        ]
        rejection = screen(code, exercise.entry_point, forbidden)
        if rejection is not None:
            return _result("rejected", rejection, exercise, lint=lint)
        data = self.prepare(exercise)
        key = self._baseline_key(exercise, data) if self.config.baselines else None
        baseline = None
        if key is not None and not measure_references:
            baseline = self.baselines().get(exercise.slug, key, self.config.baseline_max_age_seconds)
        started = time.perf_counter()
        sandbox, warm = self._take_sandbox()
        window: dict[str, float] = {}
        try:
            outcome, messages = self._run_job(
                sandbox, exercise, code, data, report, window, baseline, measure_references
            )
            finished = time.perf_counter()
        finally:
            # The next grading's sandbox imports TensorFlow once this one is done: beside the checking
            # run it would take half of its two cores' time. A grading that comes sooner takes it as
            # it is, and its timing phase waits for any import on this grader to end (open_timing_phase).
            self.warm_up()
        final: dict[str, Any] = next(
            (message for message in reversed(messages) if message.get("event") == "result"), {}
        )
        self.last_stats = GradingStats(
            total_seconds=finished - started,
            inside_runs_seconds=float(final.get("inside_runs_seconds", 0.0)),
            warm_start=warm,
            timing_window=(window["requested"], window["started"], window["ended"]) if "ended" in window else None,
            waiting_seconds=window.get("started", 0.0) - window.get("asked", 0.0),
        )
        result = interpret(outcome, messages, exercise, lint, tolerance=self.config.speedup_tolerance)
        if result["timing"] is not None and result["speedup"] is not None:
            if key is not None:
                self._baseline_keep(exercise.slug, key, result)
            self._last_seconds[exercise.slug] = time.perf_counter() - began
        return result

    # -------------------------------------------------------------- the references' stored figures

    def baselines(self) -> BaselineStore:
        return BaselineStore(self.config.baseline_dir or self.config.data_dir / "baselines")

    def _baseline_key(self, exercise: ExerciseJob, data: ExerciseData) -> str:
        timing_cpus, _ = self.timing_cpus()
        parts = {
            "slug": exercise.slug,
            "spec": exercise.spec,
            "data": data.key,
            "epochs": [self.config.warmup_epochs, self.config.measured_epochs],
            "timing_cpus": timing_cpus,
            "cpus": sorted(os.sched_getaffinity(0)),
            "devices": gpu_devices(),
            "python": sys.executable,
        }
        return baseline_key(parts, WORKER_DIR)

    def _baseline_keep(self, slug: str, key: str, result: Mapping[str, Any]) -> None:
        """Store the references' figures of a grading that timed them (not one that reused them)."""
        timing, speedup = result["timing"], result["speedup"]
        host = timing["host"]
        if host.get("disturbed") or host.get("references", {}).get("timed") != "this grading":
            return
        expert = float(timing["expert"]["epoch_seconds"])
        ratio = float(speedup["expert_vs_naive"])
        baseline = ReferenceBaseline(
            naive_seconds=expert * ratio,
            expert_seconds=expert,
            expert_vs_naive=ratio,
            figures={"naive": timing["naive"], "expert": timing["expert"]},
            measured_at=time.time(),
            rounds=int(speedup["rounds"]),
        )
        self.baselines().put(slug, key, baseline)

    def timing_cpus(self) -> tuple[list[int] | None, list[int] | None]:
        """The CPUs of timed runs and of checking runs (None: not pinned)."""
        available = os.sched_getaffinity(0)
        try:
            timed = timing_cpus_resolve(self.config.timing_cpus, available)
        except ValueError as error:
            raise GradingFailed(f"the grader's timing CPUs are misconfigured: {error}") from error
        if not timed:
            return None, None
        # Checking runs (this grading's and its neighbours') keep off the timed CPUs.
        return sorted(timed), sorted(set(available) - timed) or None

    def timing_lock(self) -> TimingLock:
        return TimingLock(self.config.timing_lock_path or self.config.data_dir / "timing.lock")

    def _run_job(
        self,
        sandbox: SandboxProcess,
        exercise: ExerciseJob,
        code: str,
        data: ExerciseData,
        report: ProgressCallback,
        window: dict[str, float],
        baseline: ReferenceBaseline | None,
        measure_references: bool,
    ) -> tuple[SandboxResult, list[dict[str, Any]]]:
        spec = {name: value for name, value in exercise.spec.items() if name != "references"}
        # An exercise may say which epochs its speed is measured on (its first, uncached one, say).
        epochs = exercise.spec.get("timing", {})
        warmup = int(epochs.get("warmup_epochs", self.config.warmup_epochs))
        measured = int(epochs.get("measured_epochs", self.config.measured_epochs))
        timing_cpus, checking_cpus = self.timing_cpus()
        plan = {
            "timing_rounds": self.config.timing_rounds,
            "warmup_epochs": warmup,
            "epochs_per_run": warmup + measured,
            "run_seconds": self.config.run_seconds,
            "timing_gate": True,
            "timing_cpus": timing_cpus,
            "checking_cpus": checking_cpus,
            "timing_retries": self.config.timing_retries,
            "timing_min_rounds": self.config.timing_min_rounds,
            "timing_agreement": self.config.timing_agreement,
            "max_busy_fraction": self.config.max_busy_fraction,
        }
        job = {
            "code": code,
            "entry_point": exercise.entry_point,
            "spec": spec,
            "manifest": data.manifest(),
            "data_key": data.key,
            "plan": plan,
        }
        with np.load(data.answers / "expected.npz") as arrays:
            expected = ExpectedExamples.from_arrays(dict(arrays))
        answer: dict[str, Any] = {"expected": expected.encode(), "references": exercise.spec["references"]}
        if exercise.spec.get("rules", {}).get("coverage_test"):
            # The grader's pipelines a learner's test is run against come from a seed no learner run holds.
            answer["coverage_seed"] = secrets.randbelow(2**31)
        for split in data.manifest().get("splits", {}):
            with np.load(data.answers / f"expected-{split}.npz") as arrays:
                answer.setdefault("expected_splits", {})[split] = ExpectedExamples.from_arrays(dict(arrays)).encode()
        if baseline is not None:
            answer["baseline"] = {**baseline.as_dict(), "drift_limit": self.config.baseline_drift_limit}
        elif measure_references:
            answer["references_why"] = "the stored figures were refreshed between gradings"
        messages: list[dict[str, Any]] = []
        lock = self.timing_lock()

        def open_timing_phase() -> None:
            # Runs inside the sandbox's supervision, which is safe to hold up here: the sandbox is
            # waiting for this answer, and no learner code is left running in it between runs.
            window["asked"] = time.monotonic()
            self.wait_until_warm(WARM_BEFORE_TIMING_SECONDS)
            window["requested"] = time.monotonic()
            waiting = Progress("timing", 0.0, label="Waiting for the timing CPUs: another grading is being timed")
            exclusive = lock.acquire(self.config.timing_lock_seconds, on_wait=lambda: report(waiting))
            window["started"] = time.monotonic()
            waited = window["started"] - window["requested"]
            sandbox.exclude_from_clock(window["started"] - window["asked"])
            answer = {"exclusive": exclusive, "lock_wait_seconds": round(waited, 3)}
            sandbox.send_control((json.dumps(answer) + "\n").encode())

        def on_line(line: bytes) -> None:
            with contextlib.suppress(ValueError):
                message = json.loads(line)
                if isinstance(message, dict):
                    messages.append(message)
                    event = message.get("event")
                    if event == "progress":
                        report(Progress.from_message(message))
                    elif event == "timing_request" and "requested" not in window:
                        open_timing_phase()
                    elif event == "timing_done" and "started" in window and "ended" not in window:
                        lock.release()
                        window["ended"] = time.monotonic()

        stdin = stdin_frame(job) + stdin_frame(answer)
        try:
            outcome = sandbox.finish(stdin, on_line)
        finally:
            lock.release()
        if "started" in window and "ended" not in window:
            window["ended"] = time.monotonic()
        return outcome, messages


def course_file_exercises(path: Path) -> dict[str, ExerciseJob]:
    """The pipeline exercises of a course file, by slug (for tools that grade without a database)."""
    document = yaml.safe_load(path.read_text())
    return {
        exercise["slug"]: ExerciseJob(exercise["slug"], exercise["entry_point"], exercise["spec"])
        for lesson in document["lessons"]
        for exercise in lesson.get("exercises", [])
    }


def screen(code: str, entry_point: str, forbidden: list[str]) -> str | None:
    """Why the code is not run at all, or None: the checks that need no execution."""
    if len(code.encode()) > MAX_CODE_BYTES:
        return f"The code is over {MAX_CODE_BYTES // 1024} KiB."
    try:
        tree = ast.parse(code, filename="submission.py")
    except SyntaxError as error:
        return f"Syntax error on line {error.lineno}: {error.msg}."
    if not any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == entry_point for node in tree.body
    ):
        return f"Define a top-level function named {entry_point}."
    imported = {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    for node in ast.walk(tree):
        reason = _forbidden_reach(node, forbidden, imported)
        if reason is not None:
            return f"line {getattr(node, 'lineno', 0)}: {reason}"
    return None


# Modules whose only use in a pipeline would be importing by a computed name, around the rule above.
DYNAMIC_IMPORTERS = ("importlib", "imp", "builtins", "runpy", "pkgutil")
DYNAMIC_IMPORT_NAMES = ("__import__", "__builtins__")
THREADS_HINT = (
    "let tf.data run work in parallel (num_parallel_calls, interleave, prefetch) instead of managing threads."
)


def _forbidden_reach(node: ast.AST, forbidden: list[str], imported: set[str]) -> str | None:
    """Why one node of the code is refused before it runs: a forbidden module imported, or reached
    another way (importlib, __import__, its name as a string, getattr with a computed name on a
    module); None for anything else."""

    def is_forbidden(name: str) -> bool:
        return any(name == module or name.startswith(module + ".") for module in forbidden)

    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module:
        names = [node.module]
    for name in names:
        if is_forbidden(name):
            return f"importing {name} is not allowed here; {THREADS_HINT}"
        if name.split(".")[0] in DYNAMIC_IMPORTERS:
            return f"importing {name} is not allowed here: import what you use by name."
    if isinstance(node, ast.Name) and node.id in DYNAMIC_IMPORT_NAMES:
        return f"{node.id} is not allowed here: import what you use by name."
    if isinstance(node, ast.Attribute) and node.attr in DYNAMIC_IMPORT_NAMES:
        return f"{node.attr} is not allowed here: import what you use by name."
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and is_forbidden(node.value.strip()):
        return f"naming {node.value.strip()} is not allowed here (it is not imported either); {THREADS_HINT}"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "setattr", "delattr")
        and len(node.args) >= 2
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id in imported
        and not isinstance(node.args[1], ast.Constant)
    ):
        return f"{node.func.id} with a computed name on the module {node.args[0].id} is not allowed here."
    return None


def interpret(
    outcome: SandboxResult,
    messages: list[dict[str, Any]],
    exercise: ExerciseJob,
    lint: list[dict[str, Any]],
    *,
    tolerance: float = 0.0,
) -> dict[str, Any]:
    final = next((message for message in reversed(messages) if message.get("event") == "result"), None)
    if outcome.outcome == "memory_limit":
        return _result(
            "memory_limit", f"The submission used more memory than allowed ({outcome.detail}).", exercise, lint=lint
        )
    if outcome.outcome == "timeout":
        return _result("timeout", f"The grading ran out of time ({outcome.detail}).", exercise, lint=lint)
    if final is None:
        if not any(message.get("event") == "ready" for message in messages) and outcome.exit_code != 0:
            raise GradingFailed(f"the grading sandbox failed to start: {outcome.stderr[-2000:]}")
        return _result(
            "runtime_error",
            "The grading process stopped before reporting a result: the submission killed or broke it.",
            exercise,
            lint=lint,
        )
    device = str(final.get("device") or "CPU")
    checks = list(final.get("checks") or [])
    output = outcome.stdout[-4000:]
    run_error = final.get("run_error")
    if run_error is not None:
        verdict = "timeout" if run_error.get("kind") == "timeout" else "runtime_error"
        return _result(
            verdict, str(run_error.get("message")), exercise, checks=checks, lint=lint, device=device, output=output
        )
    failed = [check for check in checks if not check["passed"] and check.get("ran", True)]
    if failed:
        # Checks that can be partly met keep their share of the correctness points when they are all
        # that failed; speed is never timed for a wrong output.
        credit = 0.0
        if all(check.get("credit") is not None for check in failed):
            credit = math.prod(float(check["credit"]) for check in failed)
        return _result(
            "wrong_output",
            _failures_message(failed),
            exercise,
            checks=checks,
            lint=lint,
            device=device,
            output=output,
            profile=profile_result(final.get("profile"), None),
            score=_score(exercise, correct=False, speedup=None, credit=credit),
        )
    timing_error = final.get("timing_error")
    if timing_error is not None:
        if timing_error.get("pipeline") != "submission":
            raise GradingFailed(str(timing_error.get("message")))
        return _result(
            "runtime_error", str(timing_error.get("message")), exercise, checks=checks, lint=lint, device=device
        )
    timing = final.get("timing")
    bound = input_bound(float(timing["submission"]["input_wait_fraction"])) if timing else None
    profile = profile_result(final.get("profile"), bound)
    speedup = None
    if timing:
        speedup = _speedup(timing)
        speedup["tolerance"] = float(
            exercise.spec.get("scoring", {}).get("speedup_targets", {}).get("tolerance", tolerance)
        )
        timing = {**timing, "rewrites_off": True, "note": TIMING_NOTE}
    message = "All checks passed."
    if speedup:
        message += f" Your pipeline is {speedup['vs_naive']:.2f}x the naive reference's speed"
        message += f" and {speedup['vs_expert']:.2f}x the expert reference's."
    return _result(
        "accepted",
        message,
        exercise,
        checks=checks,
        timing=timing,
        speedup=speedup,
        score=_score(exercise, correct=True, speedup=speedup),
        lint=lint,
        device=device,
        output=output,
        profile=profile,
    )


def _failures_message(failed: list[dict[str, Any]]) -> str:
    if len(failed) == 1:
        return str(failed[0]["message"])
    return f"{len(failed)} checks failed. First: {failed[0]['message']}"


def _score(
    exercise: ExerciseJob, *, correct: bool, speedup: Mapping[str, float] | None, credit: float = 0.0
) -> dict[str, Any]:
    """Points: all of correctness for a correct submission, else `credit` of them (checks partly met),
    and speed points for a timed one."""
    scoring = exercise.spec.get("scoring", {})
    correctness_points = float(scoring.get("correctness", 60))
    speed_max = float(scoring.get("speed", 40))
    correctness = correctness_points if correct else correctness_points * credit
    speed = 0.0
    if speedup is not None and (correct or not scoring.get("speed_requires_correctness", True)):
        speed = speed_points(
            speedup["vs_naive"],
            speedup["expert_vs_naive"],
            scoring.get("speedup_targets", {}),
            speed_max,
            vs_expert=speedup.get("vs_expert"),
            tolerance=speedup.get("tolerance", 0.0),
        )
    return {
        "total": round(correctness + speed, 1),
        "max": correctness_points + speed_max,
        "correctness": round(correctness, 1),
        "correctness_max": correctness_points,
        "speed": round(speed, 1),
        "speed_max": speed_max,
        "speed_timed": speedup is not None,
    }


def _speedup(timing: Mapping[str, Any]) -> dict[str, Any]:
    """Speedups from the rounds the figures were taken from, each round's own ratios (see
    worker.timing.round_speedups); a result without rounds (timed before rounds were recorded)
    falls back to the ratios of the median epoch times."""
    rounds = [record["epoch_seconds"] for record in timing.get("host", {}).get("rounds", []) if record.get("used")]
    if rounds:
        ratios = round_speedups(rounds)
    else:
        submission, naive, expert = (timing[name]["epoch_seconds"] for name in ("submission", "naive", "expert"))
        ratios = {"vs_naive": naive / submission, "vs_expert": expert / submission, "expert_vs_naive": naive / expert}
        ratios["spread"] = 0.0
    return {**{name: round(value, 3) for name, value in ratios.items()}, "rounds": max(len(rounds), 1)}


def _result(verdict: str, message: str, exercise: ExerciseJob, **parts: Any) -> dict[str, Any]:
    result: dict[str, Any] = {
        "verdict": verdict,
        "message": message,
        "checks": [],
        "timing": None,
        "speedup": None,
        "score": _score(exercise, correct=False, speedup=None),
        "lint": [],
        "device": "CPU",
        "output": "",
    }
    # A result without a profile leaves the key out (the schema's profile is an object when present).
    result.update({name: value for name, value in parts.items() if not (name == "profile" and value is None)})
    return result


def gpu_devices() -> list[str]:
    """NVIDIA device nodes to expose inside the sandbox (none on a machine without a GPU)."""
    return sorted(glob.glob("/dev/nvidia*"))


def config_with(config: GraderConfig, **changes: Any) -> GraderConfig:
    return replace(config, **changes)
