"""The pipeline grader: overhead per submission, timing stability, whether speedups come out in
the right order, and throughput of one worker.

Run: python -m bench.grader [--quick] [--only a,b,c,d,r,t] [--runs N] [--loaded]
     python -m bench.grader --under-load [--runs N] [--submission expert|prefetch]
No database is needed: it grades the shipped exercises (decks/) through the same Grader and
sandbox the Celery workers use, with the production timing plan (3 rounds) unless --quick.

(a) median overhead per submission (grading wall time minus the time spent inside runs of code),
    warm (a TensorFlow-imported sandbox ready) and cold (sandbox started for the submission);
    targets: warm <= 0.5 s and <= 1/10 of cold.
(b) coefficient of variation of the steady-state throughput over 10 gradings of one submission;
    target <= 5 %.
(c) whether the performance guide's cases come out in order in 10 of 10 runs: naive < prefetch <
    parallel map + prefetch; scalar map before batch < vectorized map after batch.
(d) submissions graded per minute by one worker with concurrency 2.

(r) every exercise's naive and expert references graded as submissions (--runs times each): the
    verdict, the speedup against the naive reference and the speed points; the naive reference
    near none, the expert all of them.
(t) time to a full result (checks, timing, score, advice) in a warm grader: each shipped exercise's
    expert pipeline graded --runs times (the sandbox warmed for the next while it is graded, as a
    worker does), p50 and p95; and the image exercise with uint8 pixels (wrong output).
    Targets: correct p50 <= 8 s, p95 <= 15 s; wrong output <= 2 s. `--only t --loaded` does the same
    beside the load generator of --under-load. The request, the broker and the client's polling
    come on top (well under a second on a warm worker).

--under-load grades one submission of the image exercise N times (10) on the host as it is, then
N times while a load generator runs: another Grader in another process grading the exercises'
references without pause, and a process doing request-like bursts of CPU work. It prints, for
each, the speedups' coefficient of variation and the N scores; targets: CV <= 5 % and the same
score every time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from worker.grader import ExerciseJob, Grader, GraderConfig, course_file_exercises, gpu_devices

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = REPO_ROOT / "var" / "grader-data"


EXERCISES = course_file_exercises(REPO_ROOT / "decks" / "tensorflow-ai-phd.yaml")
IMAGES = EXERCISES["tfrecord-image-pipeline"]
SHARDS = EXERCISES["many-file-interleave"]
SIMULATOR = EXERCISES["generator-simulator-source"]

IMAGE_PIPELINE = """
import tensorflow as tf

FEATURES = {
    "image": tf.io.FixedLenFeature([], tf.string),
    "label": tf.io.FixedLenFeature([], tf.int64),
}


def parse(record):
    parsed = tf.io.parse_single_example(record, FEATURES)
    image = tf.io.decode_jpeg(parsed["image"], channels=3)
    image = tf.cast(tf.ensure_shape(image, [224, 224, 3]), tf.float32) / 255.0
    return image, tf.cast(parsed["label"], tf.int32)


def build_pipeline(files):
    records = tf.data.TFRecordDataset(files).shuffle(1024)
    examples = records.map(parse<PARALLEL>)
    return examples.batch(32, drop_remainder=True)<PREFETCH>
"""
# The performance guide's first cases, on the image exercise.


def image_pipeline(parallel: str, prefetch: str) -> str:
    return IMAGE_PIPELINE.replace("<PARALLEL>", parallel).replace("<PREFETCH>", prefetch)


GUIDE_NAIVE = image_pipeline("", "")
GUIDE_PREFETCH = image_pipeline("", ".prefetch(tf.data.AUTOTUNE)")
GUIDE_PARALLEL = image_pipeline(", num_parallel_calls=tf.data.AUTOTUNE", ".prefetch(tf.data.AUTOTUNE)")


def config(quick: bool, **changes: Any) -> GraderConfig:
    base = GraderConfig(data_dir=DATA_DIR, timing_rounds=1 if quick else 3)
    return replace(base, **changes)


def with_references(exercise: ExerciseJob, naive: str, expert: str) -> ExerciseJob:
    spec = {**exercise.spec, "references": {"naive": naive, "expert": expert}}
    return ExerciseJob(exercise.slug, exercise.entry_point, spec)


def accepted(result: dict[str, Any]) -> dict[str, Any]:
    if result["verdict"] != "accepted":
        raise SystemExit(f"expected an accepted grading, got {result['verdict']}: {result['message']}")
    return result


def bench_overhead(quick: bool, repeats: int) -> None:
    code = SIMULATOR.spec["references"]["expert"]
    warm_grader = Grader(config(quick, warm_processes=1))
    warm: list[float] = []
    try:
        for _ in range(repeats):
            warm_grader.warm_up()
            warm_grader.wait_until_warm()
            accepted(warm_grader.grade(SIMULATOR, code))
            stats = warm_grader.last_stats
            assert stats is not None and stats.warm_start
            warm.append(stats.overhead_seconds)
    finally:
        warm_grader.close()
    cold: list[float] = []
    cold_grader = Grader(config(quick, warm_processes=0))
    for _ in range(max(3, repeats // 2)):
        accepted(cold_grader.grade(SIMULATOR, code))
        stats = cold_grader.last_stats
        assert stats is not None and not stats.warm_start
        cold.append(stats.overhead_seconds)
    warm_median, cold_median = statistics.median(warm), statistics.median(cold)
    print("(a) overhead per submission (grading wall time minus time inside runs)")
    print(f"    warm: median {warm_median:.3f} s over {len(warm)}  (each: {', '.join(f'{v:.3f}' for v in warm)})")
    print(f"    cold: median {cold_median:.3f} s over {len(cold)}  (each: {', '.join(f'{v:.3f}' for v in cold)})")
    print(
        f"    warm / cold = {warm_median / cold_median:.3f}; target warm <= 0.5 s: "
        f"{'met' if warm_median <= 0.5 else 'NOT met'}; <= 1/10 of cold: "
        f"{'met' if warm_median <= cold_median / 10 else 'NOT met'}"
    )


def bench_stability(quick: bool, repeats: int) -> None:
    grader = Grader(config(quick, warm_processes=1))
    rates: list[float] = []
    try:
        for _ in range(repeats):
            result = accepted(grader.grade(IMAGES, IMAGES.spec["references"]["expert"]))
            rates.append(result["timing"]["submission"]["batches_per_second"])
    finally:
        grader.close()
    mean = statistics.mean(rates)
    variation = statistics.stdev(rates) / mean if len(rates) > 1 else 0.0
    print(f"(b) steady-state throughput of the expert image pipeline over {len(rates)} gradings")
    print(f"    batches/s: {', '.join(f'{rate:.1f}' for rate in rates)}")
    print(f"    mean {mean:.2f}, coefficient of variation {variation:.1%} (target <= 5%)")


def bench_ordering(quick: bool, repeats: int) -> None:
    grader = Grader(config(quick, warm_processes=1))
    prefetch_case = with_references(IMAGES, GUIDE_NAIVE, GUIDE_PARALLEL)
    vectorize_case = with_references(SHARDS, SHARDS.spec["references"]["naive"], SHARDS.spec["references"]["expert"])
    in_order = {"naive < prefetch < parallel map + prefetch": 0, "scalar map < vectorized map": 0}
    try:
        for run in range(repeats):
            timing = accepted(grader.grade(prefetch_case, GUIDE_PREFETCH))["timing"]
            naive, prefetch, parallel = (timing[name]["epoch_seconds"] for name in ("naive", "submission", "expert"))
            first = naive > prefetch > parallel
            in_order["naive < prefetch < parallel map + prefetch"] += first
            timing = accepted(grader.grade(vectorize_case, SHARDS.spec["references"]["expert"]))["timing"]
            scalar, vectorized = timing["naive"]["epoch_seconds"], timing["expert"]["epoch_seconds"]
            second = scalar > vectorized
            in_order["scalar map < vectorized map"] += second
            print(
                f"    run {run + 1}: epoch s naive {naive:.3f} prefetch {prefetch:.3f} parallel {parallel:.3f}"
                f" ({'ok' if first else 'OUT OF ORDER'}); scalar {scalar:.3f} vectorized {vectorized:.3f}"
                f" ({'ok' if second else 'OUT OF ORDER'})"
            )
    finally:
        grader.close()
    print("(c) speedups in the performance guide's order")
    for case, count in in_order.items():
        print(f"    {case}: {count} of {repeats} runs")


def bench_throughput(quick: bool, seconds: float) -> None:
    mix = [(exercise, exercise.spec["references"]["expert"]) for exercise in EXERCISES.values()]
    graders = [Grader(config(quick, warm_processes=1)) for _ in range(2)]
    for grader in graders:
        grader.warm_up()
    for grader in graders:
        grader.wait_until_warm()
    done: list[str] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def worker_loop(grader: Grader, offset: int) -> None:
        index = offset
        while time.monotonic() < deadline:
            exercise, code = mix[index % len(mix)]
            accepted(grader.grade(exercise, code))
            with lock:
                done.append(exercise.slug)
            index += 1

    started = time.monotonic()
    try:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(worker_loop, graders, [0, 2]))
    finally:
        for grader in graders:
            grader.close()
    elapsed = time.monotonic() - started
    print(f"(d) one worker, concurrency 2, the four expert references in turn, {len(mix)} exercises")
    print(f"    {len(done)} submissions in {elapsed:.0f} s = {len(done) / elapsed * 60:.1f} per minute")


def run_load_grader() -> None:
    """Grades the exercises' references, one after another, until stopped (a neighbour's worker)."""
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
    grader = Grader(config(False, warm_processes=1))
    mix = [
        (exercise, exercise.spec["references"][which])
        for exercise in EXERCISES.values()
        for which in ("naive", "expert")
    ]
    try:
        for index in range(10**9):
            exercise, code = mix[index % len(mix)]
            grader.grade(exercise, code)
    finally:
        grader.close()


def run_load_requests() -> None:
    """Bursts of CPU work at random, as a web process serving requests does (about half a core)."""
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
    payload = {"cards": [{"id": number, "front": "x" * 200, "interval": number * 1.5} for number in range(500)]}
    while True:
        until = time.perf_counter() + random.uniform(0.02, 0.3)
        while time.perf_counter() < until:
            json.loads(json.dumps(payload))
        time.sleep(random.uniform(0.0, 0.3))


def start_load() -> list[subprocess.Popen[bytes]]:
    return [
        subprocess.Popen([sys.executable, "-m", "bench.grader", flag], cwd=REPO_ROOT, stdout=subprocess.DEVNULL)
        for flag in ("--load-grader", "--load-requests")
    ]


def stop_load(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def references_prime(grader: Grader, exercises: list[ExerciseJob]) -> None:
    """What a grading worker does between gradings: time the references whose stored figures are
    missing or halfway to their age limit."""
    started = time.monotonic()
    measured = grader.references_refresh(exercises, grader.config.baseline_max_age_seconds / 2)
    print(
        f"    references timed before the gradings (as a worker does between them): {', '.join(measured) or 'none'}"
        f" ({time.monotonic() - started:.0f} s)"
    )


def grade_repeatedly(grader: Grader, exercise: ExerciseJob, code: str, runs: int, label: str) -> list[dict[str, Any]]:
    results = []
    for run in range(runs):
        started = time.monotonic()
        result = accepted(grader.grade(exercise, code))
        host = result["timing"]["host"]
        speedup = result["speedup"]
        print(
            f"    {label} {run + 1}: vs naive {speedup['vs_naive']:.3f} vs expert {speedup['vs_expert']:.3f}"
            f" (expert {speedup['expert_vs_naive']:.3f}x naive) score {result['score']['total']:g};"
            f" rounds timed {host['rounds_timed']}, disturbed {host['disturbed']}, busy {host['busy_fraction']:.2f},"
            f" lock wait {host['lock_wait_seconds']:.1f} s, load average {host['loadavg'][0]:.1f};"
            f" references {host['references']['timed']};"
            f" {time.monotonic() - started:.0f} s"
        )
        sys.stdout.flush()
        results.append(result)
    return results


def variation(values: list[float]) -> float:
    return statistics.stdev(values) / statistics.mean(values) if len(values) > 1 else 0.0


def summarize(label: str, results: list[dict[str, Any]]) -> None:
    speedups = {name: [result["speedup"][name] for result in results] for name in ("vs_naive", "vs_expert")}
    scores = [result["score"]["total"] for result in results]
    retimed = sum(result["timing"]["host"]["retimed"] for result in results)
    disturbed = sum(result["timing"]["host"]["disturbed"] for result in results)
    print(f"    {label}: {len(results)} gradings")
    for name, values in speedups.items():
        print(
            f"      speedup {name}: CV {variation(values):.1%} (target <= 5%),"
            f" min {min(values):.3f} max {max(values):.3f}"
        )
    print(
        f"      scores: {', '.join(f'{score:g}' for score in scores)}"
        f" ({'identical' if len(set(scores)) == 1 else 'NOT identical'});"
        f" rounds timed again {retimed}, gradings left disturbed {disturbed}"
    )


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]


def bench_time_to_result(runs: int, loaded: bool) -> None:
    grader = Grader(config(False, warm_processes=1))
    load = start_load() if loaded else []
    print(f"(t) time to a full result, warm grader, {'under load' if loaded else 'idle host'}, {runs} runs each")
    correct: list[float] = []
    shipped = list(EXERCISES.values())
    try:
        references_prime(grader, shipped)
        if loaded:
            time.sleep(10)  # the neighbour's sandbox imports TensorFlow and starts grading
        for exercise in shipped:
            times = []
            rounds = []
            for _ in range(runs):
                grader.wait_until_warm()
                started = time.monotonic()
                host = accepted(grader.grade(exercise, exercise.spec["references"]["expert"]))["timing"]["host"]
                times.append(time.monotonic() - started)
                here = "" if host["references"]["timed"] == "stored" else "+"
                rounds.append(f"{host['rounds_timed']}{'*' if host['stopped_early'] else ''}{here}")
            correct += times
            print(
                f"    {exercise.slug}: p50 {percentile(times, 0.5):.1f} s, p95 {percentile(times, 0.95):.1f} s"
                f"  (each: {', '.join(f'{value:.1f}' for value in times)}; rounds timed {', '.join(rounds)},"
                " * stopped early, + references timed in the grading)"
            )
            sys.stdout.flush()
        unscaled = "tf.cast(tf.ensure_shape(image, [224, 224, 3]), tf.float32) / 255.0"
        wrong = image_pipeline("", "").replace(unscaled, "tf.ensure_shape(image, [224, 224, 3])")
        assert wrong != image_pipeline("", "")
        wrong_times = []
        for _ in range(runs):
            grader.wait_until_warm()
            started = time.monotonic()
            result = grader.grade(IMAGES, wrong)
            wrong_times.append(time.monotonic() - started)
            if result["verdict"] != "wrong_output":
                raise SystemExit(f"expected wrong output, got {result['verdict']}: {result['message']}")
    finally:
        stop_load(load)
        grader.close()
    p50, p95 = percentile(correct, 0.5), percentile(correct, 0.95)
    print(
        f"    all correct pipelines: p50 {p50:.1f} s (target <= 8: {'met' if p50 <= 8 else 'NOT met'}),"
        f" p95 {p95:.1f} s (target <= 15: {'met' if p95 <= 15 else 'NOT met'})"
    )
    worst = max(wrong_times)
    print(
        f"    wrong output (uint8 pixels): p50 {percentile(wrong_times, 0.5):.1f} s, worst {worst:.1f} s"
        f" (target <= 2: {'met' if worst <= 2 else 'NOT met'})"
    )


def bench_references(runs: int) -> None:
    """Each exercise's naive and expert references graded as a learner's code: the verdict, the
    speedup against the naive reference and the speed points, --runs times each."""
    grader = Grader(config(False, warm_processes=1))
    print(f"(r) every exercise's references graded as submissions, {runs} times each")
    try:
        references_prime(grader, list(EXERCISES.values()))
        for exercise in EXERCISES.values():
            for which in ("naive", "expert"):
                results = []
                for _ in range(runs):
                    grader.wait_until_warm()
                    results.append(grader.grade(exercise, exercise.spec["references"][which]))
                verdicts = sorted({result["verdict"] for result in results})
                speedups = [result["speedup"]["vs_naive"] for result in results if result["speedup"]]
                points = [result["score"]["speed"] for result in results]
                print(
                    f"    {exercise.slug} {which}: {', '.join(verdicts)}; vs naive"
                    f" {', '.join(f'{value:.2f}' for value in speedups) or 'not timed'}; speed points"
                    f" {', '.join(f'{value:g}' for value in points)} of {results[0]['score']['speed_max']:g}"
                )
                sys.stdout.flush()
    finally:
        grader.close()


def bench_under_load(runs: int, submission: str) -> None:
    code = IMAGES.spec["references"]["expert"] if submission == "expert" else GUIDE_PREFETCH
    grader = Grader(config(False, warm_processes=1))
    print(f"(e) the image exercise's {submission} pipeline graded {runs} times, idle host, then under load")
    print(f"    {os.cpu_count()} CPUs; timing CPUs: {grader.timing_cpus()[0] or 'not pinned'}")
    try:
        references_prime(grader, [IMAGES])
        idle = grade_repeatedly(grader, IMAGES, code, runs, "idle")
        load = start_load()
        try:
            time.sleep(10)  # the neighbour's sandbox imports TensorFlow and starts grading
            loaded = grade_repeatedly(grader, IMAGES, code, runs, "loaded")
        finally:
            stop_load(load)
    finally:
        grader.close()
    summarize("idle host", idle)
    summarize("under load", loaded)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="One timing round per grading, fewer repeats.")
    parser.add_argument("--only", default="a,b,c,d", help="Which parts to run, e.g. a,c.")
    parser.add_argument("--under-load", action="store_true", help="Score stability on an idle and a busy host.")
    parser.add_argument("--runs", type=int, default=10, help="Gradings per condition with --under-load or t.")
    parser.add_argument("--loaded", action="store_true", help="Part t beside the load generator.")
    parser.add_argument("--submission", choices=("expert", "prefetch"), default="expert")
    parser.add_argument("--load-grader", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--load-requests", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.load_grader:
        return run_load_grader()
    if options.load_requests:
        return run_load_requests()
    if options.under_load:
        started = time.monotonic()
        bench_under_load(options.runs, options.submission)
        print(f"    ({time.monotonic() - started:.0f} s)")
        return None
    parts = set(options.only.split(","))
    repeats = 3 if options.quick else 10
    print(f"device: {'GPU ' + ', '.join(gpu_devices()) if gpu_devices() else 'CPU only'}")
    plan = config(options.quick)
    print(
        f"timing plan: up to {plan.timing_rounds} rounds, {plan.warmup_epochs} warm-up"
        f" + {plan.measured_epochs} measured epoch per run"
    )
    benches: dict[str, Callable[[], None]] = {
        "a": lambda: bench_overhead(options.quick, 3 if options.quick else 5),
        "b": lambda: bench_stability(options.quick, repeats),
        "c": lambda: bench_ordering(options.quick, repeats),
        "d": lambda: bench_throughput(options.quick, 60.0 if options.quick else 180.0),
        "t": lambda: bench_time_to_result(options.runs, options.loaded),
        "r": lambda: bench_references(options.runs),
    }
    for name, bench in benches.items():
        if name in parts:
            started = time.monotonic()
            bench()
            print(f"    ({time.monotonic() - started:.0f} s)")
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
