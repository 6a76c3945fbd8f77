"""Hostile submissions: each gets its verdict, learns nothing it should not, and the grader goes
on to grade the next submission."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import replace

import pytest

from tests.support.grading import (
    CACHE,
    EPOCHS,
    RECORDS,
    SHARDED,
    SIMULATOR,
    assert_grades_next_submission,
    grader_config_for_tests,
    pipeline_after,
    reference,
    requires_sandbox,
)
from tests.support.paths import REPO_ROOT
from worker.grader import Grader

pytestmark = [requires_sandbox, pytest.mark.grader]


def grade(grader: Grader, prelude: str) -> dict:
    return grader.grade(SIMULATOR, pipeline_after(prelude))


def test_files_outside_scratch_cannot_be_read(hostile_grader: Grader):
    secret_files = [str(REPO_ROOT / "quizsite" / "settings.py"), str(REPO_ROOT / ".env.example"), "/etc/shadow"]
    result = grade(
        hostile_grader,
        f"""
found = []
for path in {secret_files!r}:
    try:
        found.append(path + ": " + open(path).read(20))
    except OSError:
        pass
raise RuntimeError("readable: " + repr(found))
""",
    )
    assert result["verdict"] == "runtime_error"
    assert "readable: []" in result["message"]
    assert_grades_next_submission(hostile_grader)


def test_environment_holds_no_secrets_or_service_urls(hostile_grader: Grader, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/secret")
    monkeypatch.setenv("SECRET_KEY", "not-for-learners")
    code = """
import os
seen = sorted(os.environ)
for pid in os.listdir("/proc"):
    try:
        seen.append(open(f"/proc/{pid}/environ").read())
    except OSError:
        pass
raise RuntimeError(seen)
"""
    result = grade(hostile_grader, code)
    assert result["verdict"] == "runtime_error"
    seen = result["message"].split("RuntimeError: ")[1]
    assert "PATH" in seen
    for secret in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE", "5432"):
        assert secret not in seen
    assert_grades_next_submission(hostile_grader)


def test_database_and_broker_cannot_be_reached(hostile_grader: Grader):
    result = grade(
        hostile_grader,
        """
import socket
reached = []
for port in (5432, 6379, 5672):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        reached.append(port)
    except OSError:
        pass
raise RuntimeError("reached: " + repr(reached))
""",
    )
    assert "reached: []" in result["message"]
    assert_grades_next_submission(hostile_grader)


def test_writing_outside_scratch_fails_and_scratch_is_private(hostile_grader: Grader):
    marker = REPO_ROOT / "var" / "written-by-submission"
    result = grade(
        hostile_grader,
        f"""
written = []
for path in ({str(marker)!r}, "/usr/lib/written", "/inputs/written", "/grader/worker/harness.py"):
    try:
        open(path, "a").write("x")
        written.append(path)
    except OSError:
        pass
raise RuntimeError("written: " + repr(written))
""",
    )
    assert "written: []" in result["message"]
    assert not marker.exists()
    assert_grades_next_submission(hostile_grader)


def test_symlinks_in_scratch_do_not_reach_the_host(hostile_grader: Grader):
    target = REPO_ROOT / "quizsite" / "settings.py"
    result = grade(
        hostile_grader,
        f"""
import os
os.symlink({str(target)!r}, "/scratch/settings-link")
os.symlink("/", "/scratch/root-link")
try:
    text = open("/scratch/settings-link").read()
except OSError as error:
    text = "unreadable"
raise RuntimeError(text[:40] + " " + repr(sorted(os.listdir("/scratch/root-link"))))
""",
    )
    assert result["verdict"] == "runtime_error"
    # "/" inside is the sandbox's own root: the host's /boot, /home and /var are not there. Its other
    # entries depend on where the interpreter lives, which is bound read-only at its own path.
    assert "unreadable [" in result["message"]
    for sandbox_only in ("'scratch'", "'inputs'", "'grader'"):
        assert sandbox_only in result["message"]
    for host_only in ("'boot'", "'home'", "'var'"):
        assert host_only not in result["message"]
    assert_grades_next_submission(hostile_grader)


def test_fork_bomb_is_contained(hostile_grader: Grader):
    result = grade(
        hostile_grader,
        """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
""",
    )
    assert result["verdict"] in {"timeout", "runtime_error", "memory_limit"}
    assert_grades_next_submission(hostile_grader)


def test_memory_bomb_gets_memory_limit(hostile_grader: Grader):
    # Its own grader: a run limit long enough that a loaded machine cannot turn this into a timeout.
    grader = Grader(replace(hostile_grader.config, run_seconds=40.0, warm_processes=0))
    try:
        # Bytes that are written, not zero pages the kernel has not handed out yet.
        result = grade(grader, "hoard = []\nwhile True:\n    hoard.append(b'x' * (256 * 1024 * 1024))")
    finally:
        grader.close()
    assert result["verdict"] == "memory_limit", result
    assert_grades_next_submission(hostile_grader)


def test_infinite_loop_gets_timeout(hostile_grader: Grader):
    result = grade(hostile_grader, "while True:\n    pass")
    assert result["verdict"] == "timeout", result
    assert "time limit" in result["message"]
    assert_grades_next_submission(hostile_grader)


def test_sleeping_past_the_limit_gets_timeout(hostile_grader: Grader):
    result = grade(hostile_grader, "import time\ntime.sleep(3600)")
    assert result["verdict"] == "timeout", result
    assert_grades_next_submission(hostile_grader)


def test_huge_output_is_capped(hostile_grader: Grader):
    config = hostile_grader.config
    # Writing 200 MB takes longer than the short runs of these tests on a slow or busy host: the cap is
    # what is tested here, not the time limit.
    hostile_grader.config = replace(config, run_seconds=60.0)
    try:
        result = grade(
            hostile_grader, "import sys\nfor _ in range(20000):\n    sys.stdout.write('spam ' * 2000 + '\\n')"
        )
    finally:
        hostile_grader.config = config
    assert result["verdict"] == "accepted", result
    assert 0 < len(result["output"]) <= 4000
    assert_grades_next_submission(hostile_grader)


def test_the_grading_process_cannot_be_killed_from_inside(hostile_grader: Grader):
    # The grading process is the sandbox's PID 1, which no signal from inside reaches; the run's
    # parent is the learner's own fork server, and killing it costs only later runs.
    result = grade(
        hostile_grader, "import os, signal\nos.kill(1, signal.SIGKILL)\nos.kill(os.getppid(), signal.SIGKILL)"
    )
    assert result["verdict"] == "accepted", result
    assert_grades_next_submission(hostile_grader)


def test_a_ctypes_segfault_is_a_runtime_error(hostile_grader: Grader):
    result = grade(hostile_grader, "import ctypes\nctypes.string_at(0)")
    assert result["verdict"] == "runtime_error", result
    assert "SIGSEGV" in result["message"]
    assert_grades_next_submission(hostile_grader)


def test_a_daemon_left_behind_does_not_outlive_its_run(hostile_grader: Grader):
    # A child that would keep burning CPU (and slow every later run) is killed with its run.
    result = grade(
        hostile_grader,
        """
import os
if os.fork() == 0:
    os.setsid()
    while True:
        pass
""",
    )
    assert result["verdict"] == "accepted", result
    assert_grades_next_submission(hostile_grader)


# ----------------------------------------------------------------------------- the grader's own plumbing


def test_pid_1_the_grader_s_descriptors_and_the_kernel_are_out_of_reach(hostile_grader: Grader):
    # What the sandbox's processes hold (the grading process's stdin carries the answer) and what a
    # host root would have; every attempt is told back in the error.
    result = grade(
        hostile_grader,
        """
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
reached = {}
def attempt(name, action):
    try:
        reached[name] = repr(action())[:60]
    except Exception as error:
        pass
attempt("pid 1's stdin", lambda: os.read(os.open("/proc/1/fd/0", os.O_RDONLY | os.O_NONBLOCK), 10))
attempt("pid 1's memory", lambda: open("/proc/1/mem", "rb").read(1))
attempt("pid 1's environment", lambda: open("/proc/1/environ").read())
attempt("core_pattern", lambda: os.open("/proc/sys/kernel/core_pattern", os.O_WRONLY))
attempt("sysrq", lambda: os.open("/proc/sysrq-trigger", os.O_WRONLY))
def getfd():
    got = libc.syscall(438, os.pidfd_open(1), 0, 0)
    if got < 0:
        raise OSError(ctypes.get_errno(), "refused")
    return got
attempt("pidfd_getfd of pid 1", getfd)
def trace():
    if libc.ptrace(16, 1, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "refused")
attempt("ptrace of pid 1", trace)
raise RuntimeError("reached: " + json.dumps(reached))
""",
    )
    assert result["verdict"] == "runtime_error", result
    assert json.loads(result["message"].split("reached: ")[1].splitlines()[0]) == {}
    assert_grades_next_submission(hostile_grader)


def test_tracing_pid_1_does_not_hold_the_grader(hostile_grader: Grader):
    # Before the filter, this stopped the sandbox's PID 1 and the grading ran out of time.
    result = grade(hostile_grader, "import ctypes\nctypes.CDLL(None).ptrace(16, 1, 0, 0)")
    assert result["verdict"] == "accepted", result
    assert_grades_next_submission(hostile_grader)


def assert_timed_without(result: dict, word: str) -> None:
    """The submission was checked and timed, and `word` (what its code raises on finding what it
    should not) appears nowhere in the result."""
    assert word not in json.dumps(result)
    assert result["verdict"] == "accepted", result
    assert result["timing"] is not None


@pytest.fixture(scope="module")
def timing_grader() -> Iterator[Grader]:
    """One timed round of naive, expert and submission, in a sandbox of its own per grading."""
    grader = Grader(grader_config_for_tests(timing_rounds=1, timing_min_rounds=1, warm_processes=0))
    yield grader
    grader.close()


def test_no_learner_run_holds_the_expected_answer_or_the_references(timing_grader: Grader):
    # The timed runs come after the grading process has read the answer; a run forked from it would
    # find the references and the expected examples among its own objects.
    comment = next(line.strip() for line in reference(SIMULATOR, "expert").splitlines() if line.strip().startswith("#"))
    result = grade(
        timing_grader,
        f"""
import gc, sys
needle = {comment[::-1]!r}[::-1]
found = set()
for held in gc.get_objects():
    if type(held).__name__ == "ExpectedExamples":
        found.add("the expected examples")
    elif isinstance(held, dict):
        if "references" in held:
            found.add("the answer")
        if any(isinstance(value, str) and needle in value for value in held.values()):
            found.add("a reference's source")
frame = sys._getframe()
while frame is not None:
    if "references" in frame.f_locals or "given" in frame.f_locals:
        found.add("the answer on the stack")
    frame = frame.f_back
if found:
    raise RuntimeError("LEAKED " + repr(sorted(found)))
""",
    )
    assert_timed_without(result, "LEAKED")


def test_each_timed_run_starts_with_an_empty_scratch_directory(timing_grader: Grader):
    # A cache file filled by the checking run and read back by the timed runs made a pipeline with
    # no parallelism look faster than the expert reference.
    result = grade(
        timing_grader,
        """
import os, tempfile
marker = os.path.join(tempfile.gettempdir(), "left-by-an-earlier-run")
if os.path.exists(marker):
    raise RuntimeError("STALE: " + open(marker).read())
with open(marker, "w") as left:
    left.write(str(os.getpid()))
""",
    )
    assert_timed_without(result, "STALE")


def test_the_grading_process_is_pid_1_and_learner_runs_are_not_its_children(hostile_grader: Grader):
    result = grade(
        hostile_grader,
        """
import os
parent = open(f"/proc/{os.getppid()}/status").read().split("PPid:")[1].split()[0]
init = open("/proc/1/cmdline", "rb").read().replace(bytes(1), b" ").decode()
raise RuntimeError(f"parent {os.getppid()} grandparent {parent} init {init}")
""",
    )
    said = result["message"].split("RuntimeError: ")[1].splitlines()[0].split()
    # No bubblewrap reaper holds the sandbox's descriptors: PID 1 is the grading process, and the
    # run's parent is the learner's fork server, its child.
    assert said[5:] == [sys.executable, "-m", "worker.harness"], said
    assert int(said[1]) != 1 and int(said[3]) == 1, said


def test_timing_marks_written_by_the_learner_are_not_taken(timing_grader: Grader):
    # The timed run finds its own channel to the grading process and writes a fast epoch's marks
    # without making a batch; before, that was graded 28 times the naive reference's speed.
    result = grade(
        timing_grader,
        """
import os, sys
frame = sys._getframe()
while frame is not None and "channel_fd" not in frame.f_locals:
    frame = frame.f_back
if frame is not None and frame.f_locals["setup"]["role"] == "time":
    os.write(frame.f_locals["channel_fd"], b"c\\ni\\n" + b"b\\ns\\n" * 40 + b"e\\n")
    os._exit(0)
""",
    )
    assert result["speedup"] is None, result["speedup"]
    assert result["verdict"] == "runtime_error", result
    assert result["message"].startswith("Timing your pipeline failed: the timing marks were not the grader's")


# ----------------------------------------------------------------------------- messages that name the fault


def test_an_endless_dataset_is_named_not_a_time_limit(checking_grader: Grader):
    code = reference(SIMULATOR, "expert").replace(
        "return batches.prefetch(tf.data.AUTOTUNE)", "return batches.repeat().prefetch(tf.data.AUTOTUNE)"
    )
    result = checking_grader.grade(SIMULATOR, code)
    assert result["verdict"] == "runtime_error", result
    assert "the dataset never ends (a repeat() with no count?); an epoch is one pass" in result["message"]


def test_the_global_batch_on_every_worker_is_named(checking_grader: Grader):
    code = reference(SHARDED, "expert").replace(
        "input_context.get_per_replica_batch_size(GLOBAL_BATCH_SIZE)", "GLOBAL_BATCH_SIZE"
    )
    result = checking_grader.grade(SHARDED, code)
    assert result["verdict"] != "accepted", result
    text = json.dumps(result)
    assert "the global batch on every worker" in text
    assert "a smaller last batch" not in text


def test_a_fixed_stateless_seed_is_named_not_the_cache(checking_grader: Grader):
    code = reference(CACHE, "expert").replace(
        "tf.image.random_flip_left_right(image)", "tf.image.stateless_random_flip_left_right(image, seed=(1, 2))"
    )
    result = checking_grader.grade(CACHE, code)
    assert result["verdict"] == "wrong_output", result
    message = next(check["message"] for check in result["checks"] if check["name"] == "augmentation_varies")
    assert "with a fixed seed draws the same for each example every epoch" in message
    assert "must come after cache()" not in message


# ----------------------------------------------------------------------------- checks the learner's code cannot forge


def test_a_worker_s_reading_is_measured_outside_its_process(checking_grader: Grader):
    # Every worker of the naive pipeline reads every file; the run rewrites the grader's own record
    # of what each worker read and parsed, as a learner patching the harness would.
    forged = (
        reference(SHARDED, "naive")
        + """
import sys

_harness = sys.modules["__main__"]
_measured = _harness._worker_run


def _forged(*args, **kwargs):
    run = _measured(*args, **kwargs)
    run.update(bytes_read=0, parsed=0)
    return run


_harness._worker_run = _forged
"""
    )
    result = checking_grader.grade(SHARDED, forged)
    assert result["verdict"] == "wrong_output", result
    failed = {check["name"] for check in result["checks"] if not check["passed"] and check["ran"]}
    assert "sharded_before_reading" in failed, result["checks"]


PARSED_BY_DATASET = """
import tensorflow as tf

AUTOTUNE = tf.data.AUTOTUNE
SCHEMA = {
    "features": tf.io.FixedLenFeature([64], tf.float32),
    "id": tf.io.FixedLenFeature([], tf.int64),
}


def build_pipeline(files, input_context):
    workers, worker = input_context.num_input_pipelines, input_context.input_pipeline_id
    if len(files) >= workers:
        records = tf.data.Dataset.from_tensor_slices(files).shard(workers, worker).interleave(tf.data.TFRecordDataset)
        parsed = records.batch(64).apply(tf.data.experimental.parse_example_dataset(SCHEMA)).unbatch()
    else:
        # Every record of every file parsed, then the worker's share kept: the cost sharding saves.
        everything = tf.data.TFRecordDataset(files).batch(64)
        parsed = everything.apply(tf.data.experimental.parse_example_dataset(SCHEMA)).unbatch().shard(workers, worker)
    examples = parsed.map(lambda example: (example["features"], tf.cast(example["id"], tf.int32)))
    batch_size = input_context.get_per_replica_batch_size(64)
    return examples.shuffle(1024).batch(batch_size, drop_remainder=True).prefetch(AUTOTUNE)
"""


def test_records_parsed_by_parse_example_dataset_are_counted(checking_grader: Grader):
    result = checking_grader.grade(SHARDED, PARSED_BY_DATASET)
    parsing = next(check for check in result["checks"] if check["name"] == "sharded_before_parsing")
    assert parsing["ran"] and not parsing["passed"], parsing
    assert parsing["message"].startswith("With 4 workers over 2 files, worker 0 parsed 8192 records")


def test_a_test_that_checks_nothing_cannot_claim_the_grader_s_verdicts(checking_grader: Grader):
    # check_epoch passes everything; the module then replaces the grader's own code that runs it,
    # with verdicts for every pipeline, computed from the seed in the exercise's spec.
    forged = (
        reference(EPOCHS, "expert").split("def check_epoch")[0]
        + """
import sys

_harness = sys.modules["__main__"]


def check_epoch(dataset, expected_ids):
    return None


def _every_pipeline_told_apart(check, coverage, *rest):
    from worker.coverage_cases import coverage_cases

    cases = coverage_cases(int(coverage["records"]), int(coverage["batch"]), int(coverage["seed"]))
    return {"cases": [{**case.as_dict(), "passed": not case.broken, "said": ""} for case in cases]}


def _this_pipeline_passes(*args):
    return {"type": "coverage", "passed": True, "said": ""}


_harness._coverage_test = _every_pipeline_told_apart
_harness._coverage_case = _this_pipeline_passes
"""
    )
    result = checking_grader.grade(EPOCHS, forged)
    coverage = next(check for check in result["checks"] if check["name"] == "coverage_test")
    assert not coverage["passed"] and coverage["ran"], coverage
    assert coverage["credit"] < 0.5, coverage
    assert result["verdict"] == "wrong_output", result


def test_a_skipped_count_that_counts_its_own_calls_fails(checking_grader: Grader):
    # Sixteen bad records an epoch: a counter that says 16 more at each call, counting nothing.
    expert = reference(RECORDS, "expert")
    counter = expert.rsplit("return batches.prefetch(AUTOTUNE), ", 1)[1].strip()
    calls = "calls = [0]\n\n    def skipped():\n        calls[0] += 1\n        return 16 * calls[0]\n\n    "
    forged = expert.replace(
        f"return batches.prefetch(AUTOTUNE), {counter}", calls + "return batches.prefetch(AUTOTUNE), skipped"
    )
    assert forged != expert
    result = checking_grader.grade(RECORDS, forged)
    skipped = next(check for check in result["checks"] if check["name"] == "bad_records_skipped")
    assert not skipped["passed"], skipped
    assert skipped["message"].startswith("skipped gave 16 before the pipeline had read any record")


@pytest.mark.parametrize(
    "reach",
    [
        "import importlib\nimportlib.import_module('threading')",
        "__import__('thread' + 'ing')",
        "import sys\nsys.modules['threading']",
        "import os\ngetattr(os, 'for' + 'k')()",
    ],
    ids=["importlib", "__import__", "its name", "getattr on a module"],
)
def test_a_forbidden_module_reached_another_way_costs_what_importing_it_would(hostile_grader: Grader, reach: str):
    # Importing threading is refused before the code runs; so is reaching it, or anything, by a computed name.
    result = grade(hostile_grader, reach)
    assert result["verdict"] == "rejected", result
    assert result["score"]["total"] == 0
    assert "is not allowed here" in result["message"]
