"""HTTP cost of the API next to the machine's HTTP limit: requests/s, p50 and server CPU per request under wrk.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizsite_bench python -m bench.http [--seconds 15] [--scale]
It creates (and afterwards drops) a test database, loads the shipped course (decks/) and a bench course
whose first deck gives the measured learner a study queue of 50 cards (30 learning, 20 due reviews); a
few more learners, with 300 states each in that deck, post the reviews. It starts a private redis-server.

Each server runs, in turn, under gunicorn with 2 sync workers (not quizsite/gunicorn_conf.py, so all
have the same server model): first a bare WSGI callable answering 11 bytes (bench/http_bare.py), the
HTTP limit of the machine; then the framework's floor (bench/http_floor.py: an empty Django view behind
the project's middleware, and an empty API view with its authentication and rate limiting); then the
project (quizsite.wsgi) on the production settings, rate limits lifted. wrk (-t2, --connections,
default 4) measures GET /api/v1/courses/, the study queue (GET /api/v1/decks/{slug}/study/, 50 cards)
and POST /api/v1/reviews/ (a new review each request, from one learner per connection in turn, so
they seldom wait on one learner's review lock).
CPU ms/request is the user+system time of the gunicorn workers over the requests wrk made; the
PostgreSQL backends' CPU, and wrk's own (on the same machine), are not counted.

In-process figures come from the Django test client in this process (the test settings, the same
database, the same private Redis for the cache): p50 of 200 requests after 20 warm-up ones, and the
SQL each request sends. "SQL sent" counts what goes to the database but the token lookup every
request makes, a transaction's BEGIN and COMMIT included (the budget's count); the details below the
table list each statement with its time, the token lookup included and BEGIN/COMMIT apart.

Memory: each project worker's RSS once the server answers and after 10,000 requests (the runs above
topped up by mixed runs of the three endpoints in turn), and whether numpy or TensorFlow is mapped in a worker.

--scale first grows the tables to 1,000,000 card states and about 10,000,000 review logs of other
learners (10 logs per state) around the measured learner, and prints how long that took.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from string import Template
from typing import Any

from bench.stack import (
    REPO_ROOT,
    Server,
    bench_database,
    children,
    database_url,
    free_port,
    gunicorn_stop,
    gunicorn_wait,
    log_tail,
    production_env,
    redis_server,
    rss_kib,
    unthrottled,
)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.test_settings")
# The in-process requests run in this process's settings: without limits, 200 reviews would be throttled.
os.environ.update(unthrottled())

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

from bench.http_floor import FLOOR_API_PATH, FLOOR_DJANGO_PATH  # noqa: E402
from bench.load import course_load  # noqa: E402
from bench.srs import (  # noqa: E402
    STATES_PER_LEARNER,
    RequestQueries,
    captured_request,
    children_cpu_seconds,
    content_seed,
    measured_learner_seed,
    others_seed,
    queries_summarize,
    table_counts,
    tables_analyze,
    token_for,
)

WORKERS = 2
WRK_THREADS = 2
BARE_APP = "bench.http_bare:application"
FLOOR_APP = "bench.http_floor:floor_application()"
PROJECT_APP = "quizsite.wsgi"
COURSES_PATH = "/api/v1/courses/"
REVIEWS_PATH = "/api/v1/reviews/"
STUDY_SIZE = 50
IN_PROCESS_WARMUP = 20
IN_PROCESS_TIMED = 200
# Requests whose SQL is captured and timed one by one (capturing adds overhead, so kept apart).
IN_PROCESS_CAPTURED = 20
# Requests sent to each endpoint before its wrk run, so first-request work (URL conf, caches) is not measured.
HTTP_WARMUP = 20
# Requests served by the project's workers before their memory is read the second time.
MEMORY_REQUESTS = 10_000
# wrk has no request count, so the mixed runs are timed: the first this long (one always runs), then
# each as long as the previous one's rate needs to reach MEMORY_REQUESTS, but at most MIXED_RUN_SECONDS_MAX
# (a rate guessed wrong then overshoots little), and at most MIXED_RUNS_MAX runs in all.
MIXED_FIRST_SECONDS = 5
MIXED_RUN_SECONDS_MAX = 60
MIXED_RUNS_MAX = 12
LOGS_PER_STATE = 10
SCALE_MEMORIES = 1_000_000
# Usernames of the reviewing learners start here, clear of those others_seed numbers from 1.
REVIEWERS_START = 9_000_000
WRK_TIMEOUT_MARGIN_SECONDS = 120


@dataclass(frozen=True)
class Target:
    ratio: float | None = None
    in_process_ms: float | None = None
    queries: int | None = None


TARGETS = {
    "courses": Target(ratio=0.12),
    "study": Target(ratio=0.05, in_process_ms=8.0, queries=4),
    "review": Target(ratio=0.06, in_process_ms=5.0, queries=5),
}
LABELS = {
    "bare": "bare WSGI callable (GET /)",
    "floor_django": "empty Django view",
    "floor_api": "empty API view",
    "courses": f"GET {COURSES_PATH}",
    "study": f"GET study ({STUDY_SIZE} items)",
    "review": f"POST {REVIEWS_PATH}",
}


@dataclass
class World:
    deck_slug: str
    deck_card_ids: list[int]
    measured_token: str
    # One learner for the in-process reviews, then one per wrk connection.
    reviewer_tokens: list[str]
    learners: int

    @property
    def study_path(self) -> str:
        return f"/api/v1/decks/{self.deck_slug}/study/"


# --- Seeding -------------------------------------------------------------------------------------------


def logs_per_state(*, after_id: int, profile_id: int, per_state: int) -> None:
    """`per_state` review logs per memory row above `after_id`, three days apart, the last at its last review.

    The rows are made from rows already there, so the foreign-key triggers are skipped (replica role) and
    the insert goes in slices of memory ids: millions of queued trigger events would only cost time and memory.
    """
    from apps.srs.models import CardMemory, ReviewLog

    memories, logs = CardMemory._meta.db_table, ReviewLog._meta.db_table
    sql = f"""
        INSERT INTO {logs}
            (learner_id, card_id, kind, client_review_id, rating, reviewed_at, duration_ms, source,
             state_before, state_after, profile_id, recorded_at)
        SELECT m.learner_id, m.card_id, 'review', gen_random_uuid(), 3,
            m.last_review - (%(per_state)s - 1 - g.n) * interval '3 days', 4000, 'deck',
            CASE WHEN g.n = 0 THEN NULL ELSE s.state END, s.state, %(profile_id)s, now()
        FROM {memories} m
        CROSS JOIN LATERAL (
            SELECT jsonb_build_object('stage', m.stage, 'step', m.step, 'stability', m.stability,
                'difficulty', m.difficulty, 'due', m.due, 'last_review', m.last_review,
                'reps', m.reps, 'lapses', m.lapses)
        ) AS s(state)
        CROSS JOIN generate_series(0, %(per_state)s - 1) AS g(n)
        WHERE m.id > %(low)s AND m.id <= %(high)s
    """  # noqa: S608 - table names are ours, values are parameters
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT coalesce(max(id), 0) FROM {memories}")  # noqa: S608 - our own table name
        last_id = int(cursor.fetchone()[0])
        slice_ids = max(1, 1_000_000 // per_state)
        cursor.execute("SET session_replication_role = replica")
        try:
            for low in range(after_id, last_id, slice_ids):
                params = {"per_state": per_state, "profile_id": profile_id, "low": low, "high": low + slice_ids}
                cursor.execute(sql, params)
        finally:
            cursor.execute("RESET session_replication_role")


def world_build(*, scale: bool, connections: int) -> World:
    """The courses, the measured learner, the reviewers and, with `scale`, the other learners around them."""
    from apps.srs.models import SchedulingSettings
    from apps.srs.settings.config import scheduler_config_from_settings
    from apps.srs.settings.services import scheduler_profile_ensure

    rng = random.Random(20261204)
    now = datetime.now(UTC)
    started = time.perf_counter()
    course = course_load()
    by_deck, slug = content_seed()
    profile_id = scheduler_profile_ensure(scheduler_config_from_settings(SchedulingSettings()))
    measured_token = measured_learner_seed(card_ids=by_deck[0], profile_id=profile_id, now=now)
    reviewers, before = others_seed(
        add=STATES_PER_LEARNER * (connections + 1), pool=by_deck[0], start=REVIEWERS_START, now=now, rng=rng
    )
    logs_per_state(after_id=before, profile_id=profile_id, per_state=LOGS_PER_STATE)
    print(f"shipped course: {course}; bench course: {len(by_deck)} decks of {len(by_deck[0])} cards")
    world = World(
        deck_slug=slug,
        deck_card_ids=by_deck[0],
        measured_token=measured_token,
        reviewer_tokens=[token_for(learner_id) for learner_id in reviewers],
        learners=1 + len(reviewers),
    )
    if scale:
        memories, _ = table_counts()
        pool = [card_id for cards in by_deck for card_id in cards]
        seeding = time.perf_counter()
        others, before = others_seed(add=SCALE_MEMORIES - memories, pool=pool, start=1, now=now, rng=rng)
        copied = time.perf_counter() - seeding
        logs_per_state(after_id=before, profile_id=profile_id, per_state=LOGS_PER_STATE)
        derived = time.perf_counter() - seeding - copied
        world.learners += len(others)
        tables_analyze()
        analyzed = time.perf_counter() - seeding - copied - derived
        print(
            f"--scale seeding: card states COPY {copied:.0f} s, review logs INSERT..SELECT {derived:.0f} s, "
            f"VACUUM ANALYZE {analyzed:.0f} s; {time.perf_counter() - seeding:.0f} s in all"
        )
    else:
        tables_analyze()
    memories, logs = table_counts()
    print(
        f"tables: {memories:,} card states, {logs:,} review logs, {world.learners:,} learners "
        f"(built in {time.perf_counter() - started:.0f} s)"
    )
    return world


# --- In-process figures -----------------------------------------------------------------------------


@dataclass
class InProcess:
    p50_ms: float
    queries: RequestQueries
    # Per captured request: what it sent but the token lookup, BEGIN and COMMIT included (the budget's count).
    counted: list[int]

    @property
    def statements(self) -> int:
        return max(self.counted)

    @property
    def sql_ms(self) -> float:
        return sum(ms for ms, _ in self.queries.per_statement)


def _ok(response: Any) -> Any:
    if response.status_code not in (200, 201):
        raise RuntimeError(f"{response.status_code}: {response.content[:500]!r}")
    return response


def in_process_time(send: Callable[[], Any]) -> InProcess:
    for _ in range(IN_PROCESS_WARMUP):
        _ok(send())
    samples = []
    for _ in range(IN_PROCESS_TIMED):
        started = time.perf_counter()
        response = send()
        samples.append((time.perf_counter() - started) * 1000)
        _ok(response)
    captures = [captured_request(send) for _ in range(IN_PROCESS_CAPTURED)]
    counted = [len(c.sqls) - sum('"accounts_devicetoken"' in sql for sql in c.sqls) for c in captures]
    return InProcess(p50_ms=statistics.median(samples), queries=queries_summarize(captures), counted=counted)


def in_process_measure(world: World, redis: str) -> dict[str, InProcess]:
    """The three endpoints through the Django test client, with the cache in the private Redis."""
    from rest_framework.test import APIClient

    reader = APIClient()
    reader.credentials(HTTP_AUTHORIZATION=f"Token {world.measured_token}")
    reviewer = APIClient()
    reviewer.credentials(HTTP_AUTHORIZATION=f"Token {world.reviewer_tokens[0]}")
    cards = itertools.cycle(world.deck_card_ids)

    def review() -> Any:
        payload = {"card": next(cards), "rating": 3, "client_review_id": str(uuid.uuid4())}
        return reviewer.post(REVIEWS_PATH, payload, format="json")

    cache = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": redis,
            "KEY_PREFIX": "quizsite",
            "OPTIONS": settings.REDIS_CACHE_OPTIONS,
        }
    }
    with override_settings(CACHES=cache):
        study = _ok(reader.get(world.study_path)).json()
        if len(study["cards"]) != STUDY_SIZE:
            raise RuntimeError(f"the study queue has {len(study['cards'])} cards, not {STUDY_SIZE}: {study['counts']}")
        print(f"study queue: {len(study['cards'])} cards; counts {study['counts']}")
        return {
            "courses": in_process_time(lambda: reader.get(COURSES_PATH)),
            "study": in_process_time(lambda: reader.get(world.study_path)),
            "review": in_process_time(review),
        }


# --- HTTP figures -----------------------------------------------------------------------------------


@dataclass
class WrkRun:
    requests: int
    seconds: float
    rps: float
    p50_ms: float
    non_2xx: int
    socket_errors: int
    cpu_ms: float
    output: str

    @property
    def errors(self) -> int:
        return self.non_2xx + self.socket_errors


_UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}


def _duration_ms(number: str, unit: str) -> float:
    return float(number) * _UNIT_MS[unit]


def wrk_parse(output: str) -> tuple[int, float, float, float, int, int]:
    """Requests, seconds, requests/s, p50 ms, non-2xx/3xx answers and socket errors from wrk's report."""
    made = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m|h)", output)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    p50 = re.search(r"^\s+50%\s+([\d.]+)(us|ms|s|m|h)\s*$", output, re.MULTILINE)
    if made is None or rate is None or p50 is None:
        raise RuntimeError(f"wrk's report could not be read:\n{output}")
    non_2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    sockets = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    return (
        int(made.group(1)),
        _duration_ms(made.group(2), made.group(3)) / 1000,
        float(rate.group(1)),
        _duration_ms(p50.group(1), p50.group(2)),
        int(non_2xx.group(1)) if non_2xx else 0,
        sum(int(count) for count in sockets.groups()) if sockets else 0,
    )


def wrk_run(
    server: Server, path: str, *, token: str, seconds: float, connections: int, script: Path | None = None
) -> WrkRun:
    """One wrk run against the server, with the CPU its workers spent meanwhile."""
    command = [
        "wrk", f"-t{min(WRK_THREADS, connections)}", f"-c{connections}", f"-d{math.ceil(seconds)}s", "--latency",
        "-H", f"Authorization: Token {token}",
    ]  # fmt: skip
    if script is not None:
        command += ["-s", str(script)]
    command.append(f"http://127.0.0.1:{server.port}{path}")
    cpu_before = children_cpu_seconds(server.process.pid)
    finished = subprocess.run(
        command, capture_output=True, text=True, timeout=seconds + WRK_TIMEOUT_MARGIN_SECONDS, check=False
    )
    cpu = children_cpu_seconds(server.process.pid) - cpu_before
    output = finished.stdout + finished.stderr
    if finished.returncode != 0:
        raise RuntimeError(f"wrk exited with {finished.returncode}:\n{output}")
    requests, took, rps, p50_ms, non_2xx, socket_errors = wrk_parse(output)
    return WrkRun(
        requests=requests,
        seconds=took,
        rps=rps,
        p50_ms=p50_ms,
        non_2xx=non_2xx,
        socket_errors=socket_errors,
        cpu_ms=cpu * 1000 / requests if requests else float("nan"),
        output=output,
    )


# Requests in turn of the kinds listed; each review is a new one (its id: thread, run, counter), from the
# thread's own reviewers in turn.
_LUA = Template("""
local kinds = {$kinds}
local cards = {$cards}
local reviewer_tokens = {$reviewer_tokens}
local per_thread = $per_thread
local run = $run
local study_path = "$study_path"
local reader = "Token $reader_token"
local next_thread = 0

function setup(thread)
  next_thread = next_thread + 1
  thread:set("thread_id", next_thread)
end

local sent = 0
local reviews = 0

function request()
  sent = sent + 1
  local kind = kinds[(sent - 1) % #kinds + 1]
  if kind == "review" then
    reviews = reviews + 1
    local card = cards[(thread_id * 7919 + reviews) % #cards + 1]
    local token = reviewer_tokens[((thread_id - 1) * per_thread + reviews % per_thread) % #reviewer_tokens + 1]
    local body = string.format(
      '{"card": %d, "rating": 3, "client_review_id": "%08x-%04x-4000-8000-%012x"}', card, thread_id, run, reviews)
    local headers = {["Authorization"] = "Token " .. token, ["Content-Type"] = "application/json"}
    return wrk.format("POST", "$reviews_path", headers, body)
  end
  local path = kind == "study" and study_path or "$courses_path"
  return wrk.format("GET", path, {["Authorization"] = reader})
end
""")


def lua_script(directory: str, world: World, *, kinds: list[str], run: int, connections: int) -> Path:
    """A wrk script in `directory` sending `kinds` in turn; run numbers keep review ids unique across runs."""
    threads = min(WRK_THREADS, connections)
    reviewers = world.reviewer_tokens[1:]
    text = _LUA.substitute(
        kinds=", ".join(f'"{kind}"' for kind in kinds),
        cards=", ".join(str(card_id) for card_id in world.deck_card_ids),
        reviewer_tokens=", ".join(f'"{token}"' for token in reviewers),
        per_thread=max(1, len(reviewers) // threads),
        run=run,
        study_path=world.study_path,
        reader_token=world.measured_token,
        reviews_path=REVIEWS_PATH,
        courses_path=COURSES_PATH,
    )
    path = Path(directory) / f"run-{run}.lua"
    path.write_text(text, encoding="utf-8")
    return path


@contextmanager
def sync_gunicorn(app: str, *, env: Mapping[str, str], token: str) -> Iterator[Server]:
    """gunicorn with WORKERS sync workers serving `app` on a free port, answering before the block starts."""
    port = free_port()
    command = [
        sys.executable, "-m", "gunicorn", app, "--worker-class", "sync", "--workers", str(WORKERS),
        "--bind", f"127.0.0.1:{port}", "--log-level", "warning",
    ]  # fmt: skip
    with tempfile.NamedTemporaryFile(prefix="bench-gunicorn-", suffix=".log") as log:
        process = subprocess.Popen(command, cwd=REPO_ROOT, env=dict(env), stdout=log, stderr=subprocess.STDOUT)
        try:
            gunicorn_wait(process, port, token, log.name)
            yield Server(process=process, port=port, log_path=log.name)
        finally:
            gunicorn_stop(process)


def http_warm(server: Server, world: World) -> None:
    """A few requests of each endpoint, so each worker has served each kind before the clock starts."""
    reader = {"Authorization": f"Token {world.measured_token}"}
    for n in range(HTTP_WARMUP):
        review = {"card": world.deck_card_ids[n], "rating": 3, "client_review_id": str(uuid.uuid4())}
        reviewer = {"Authorization": f"Token {world.reviewer_tokens[1]}", "Content-Type": "application/json"}
        for method, path, headers, body in (
            ("GET", COURSES_PATH, reader, None),
            ("GET", world.study_path, reader, None),
            ("POST", REVIEWS_PATH, reviewer, json.dumps(review)),
        ):
            client = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            client.request(method, path, body=body, headers=headers)
            answer = client.getresponse()
            content = answer.read()
            client.close()
            if answer.status >= 300:
                raise RuntimeError(f"warm-up {method} {path} -> {answer.status}: {content[:300]!r}")


def _mapped(pid: int, fragment: str) -> bool:
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as maps:
            return any(fragment in line for line in maps)
    except OSError:
        return False


@dataclass
class Memory:
    start_kib: dict[int, int | None] = field(default_factory=dict)
    after_kib: dict[int, int | None] = field(default_factory=dict)
    served: int = 0
    numpy: bool = False
    tensorflow: bool = False


@dataclass
class Http:
    runs: dict[str, WrkRun]
    mixed: list[WrkRun]
    memory: Memory
    log_tails: dict[str, str]


def http_measure(world: World, *, redis: str, seconds: float, connections: int) -> Http:
    """wrk against the bare callable, then against the project: each endpoint, then the mixed top-up runs."""
    runs: dict[str, WrkRun] = {}
    log_tails: dict[str, str] = {}
    memory = Memory()
    mixed: list[WrkRun] = []
    with tempfile.TemporaryDirectory(prefix="bench-http-") as scripts:
        with sync_gunicorn(BARE_APP, env=dict(os.environ), token=world.measured_token) as bare:
            runs["bare"] = wrk_run(bare, "/", token=world.measured_token, seconds=seconds, connections=connections)
            log_tails["bare"] = log_tail(bare.log_path)
        env = production_env(database=database_url(), redis=redis, **unthrottled())
        with sync_gunicorn(FLOOR_APP, env=env, token=world.measured_token) as floor:
            for name, path in (("floor_django", FLOOR_DJANGO_PATH), ("floor_api", FLOOR_API_PATH)):
                runs[name] = wrk_run(floor, path, token=world.measured_token, seconds=seconds, connections=connections)
            log_tails["floor"] = log_tail(floor.log_path)
        with sync_gunicorn(PROJECT_APP, env=env, token=world.measured_token) as project:
            workers = children(project.process.pid)
            memory.start_kib = {pid: rss_kib(pid) for pid in workers}
            http_warm(project, world)
            memory.served = 1 + HTTP_WARMUP * 3

            def measure(path: str, script: Path | None = None, *, seconds: float = seconds) -> WrkRun:
                return wrk_run(
                    project, path, token=world.measured_token, seconds=seconds, connections=connections, script=script
                )

            runs["courses"] = measure(COURSES_PATH)
            runs["study"] = measure(world.study_path)
            runs["review"] = measure(
                REVIEWS_PATH, lua_script(scripts, world, kinds=["review"], run=1, connections=connections)
            )
            memory.served += sum(runs[name].requests for name in ("courses", "study", "review"))
            while memory.served < MEMORY_REQUESTS or not mixed:
                if len(mixed) == MIXED_RUNS_MAX:
                    print(f"!!! only {memory.served} requests served after {MIXED_RUNS_MAX} mixed runs")
                    break
                mixed_seconds = (
                    min(MIXED_RUN_SECONDS_MAX, max(1.0, (MEMORY_REQUESTS - memory.served) / max(mixed[-1].rps, 1.0)))
                    if mixed
                    else MIXED_FIRST_SECONDS
                )
                script = lua_script(
                    scripts, world, kinds=["courses", "study", "review"], run=2 + len(mixed), connections=connections
                )
                mixed.append(measure(COURSES_PATH, script, seconds=mixed_seconds))
                memory.served += mixed[-1].requests
            memory.after_kib = {pid: rss_kib(pid) for pid in workers}
            if set(children(project.process.pid)) != set(workers):
                print(f"!!! gunicorn replaced workers during the run: {workers} -> {children(project.process.pid)}")
            memory.numpy = any(_mapped(pid, "/numpy/") for pid in workers)
            memory.tensorflow = any(_mapped(pid, "/tensorflow/") for pid in workers)
            log_tails["project"] = log_tail(project.log_path)
    return Http(runs=runs, mixed=mixed, memory=memory, log_tails=log_tails)


# --- Report -----------------------------------------------------------------------------------------


def _verdict(met: bool) -> str:
    return "met" if met else "NOT MET"


def table_print(http: Http, in_process: dict[str, InProcess]) -> None:
    limit = http.runs["bare"].rps
    header = (
        "endpoint",
        "requests/s",
        "ratio to limit",
        "target",
        "p50",
        "CPU ms/request",
        "in-process p50",
        "SQL sent (SQL ms)",
    )
    rows = [header]
    for name, run in http.runs.items():
        target = TARGETS.get(name, Target())
        ratio = run.rps / limit if limit else float("nan")
        rate = f"{run.rps:.0f}" + (f" ({run.errors} ERRORS)" if run.errors else "")
        target_text = f">= {target.ratio:.2f}: {_verdict(ratio >= target.ratio)}" if target.ratio else "-"
        local = in_process.get(name)
        local_text = sql_text = "-"
        if local is not None:
            local_text = f"{local.p50_ms:.1f} ms"
            if target.in_process_ms is not None:
                local_text += f" (<= {target.in_process_ms:.0f}: {_verdict(local.p50_ms <= target.in_process_ms)})"
            sql_text = f"{_spread(local.counted)}"
            if target.queries is not None:
                sql_text += f" (<= {target.queries}: {_verdict(local.statements <= target.queries)})"
            sql_text += f" ({local.sql_ms:.1f} ms)"
        rows.append(
            (
                LABELS[name],
                rate,
                f"{ratio:.3f}",
                target_text,
                f"{run.p50_ms:.2f} ms",
                f"{run.cpu_ms:.2f}",
                local_text,
                sql_text,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for index, row in enumerate(rows):
        print("| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) + " |")
        if index == 0:
            print("|" + "|".join("-" * (width + 2) for width in widths) + "|")


def _spread(values: list[int]) -> str:
    return "/".join(str(n) for n in sorted(set(values)))


def details_print(http: Http, in_process: dict[str, InProcess]) -> None:
    for name, local in in_process.items():
        control = f" + {'/'.join(local.queries.control)}" if local.queries.control else ""
        print(f"  in-process {LABELS[name]}: {_spread(local.queries.statements)} statements{control}:")
        for median_ms, sql in local.queries.per_statement:
            flat = " ".join(sql.split())
            print(f"    {median_ms:6.2f} ms  {flat[:110] + ('…' if len(flat) > 110 else '')}")
    for mixed in http.mixed:
        print(
            f"mixed run (courses, study, review in turn): {mixed.requests} requests in {mixed.seconds:.0f} s, "
            f"{mixed.rps:.0f}/s, p50 {mixed.p50_ms:.2f} ms, CPU {mixed.cpu_ms:.2f} ms/request"
            + (f", {mixed.errors} ERRORS" if mixed.errors else "")
        )
    memory = http.memory
    print(f"memory of the project's workers (after {memory.served:,} requests served):")
    for pid, start in memory.start_kib.items():
        after = memory.after_kib.get(pid)
        print(f"  worker {pid}: start {_mib(start)} MiB, after {_mib(after)} MiB")
    print(f"numpy loaded: {'yes' if memory.numpy else 'no'}")
    print(f"tensorflow loaded: {'yes' if memory.tensorflow else 'no'}")


def _mib(kib: int | None) -> str:
    return "gone" if kib is None else f"{kib / 1024:.1f}"


def errors_print(http: Http) -> bool:
    """Shout about every non-2xx answer or socket error; returns whether there were any."""
    failed = {name: run for name, run in http.runs.items() if run.errors}
    failed |= {f"mixed run {n}": run for n, run in enumerate(http.mixed, start=1) if run.errors}
    for name, run in failed.items():
        print(
            f"!!! {name}: {run.non_2xx} non-2xx/3xx answers and {run.socket_errors} socket errors in "
            f"{run.requests} requests: its figures are NOT VALID\n{run.output}"
        )
    if failed:
        for server, tail in http.log_tails.items():
            print(f"!!! gunicorn ({server}) log ends:\n{tail}")
    return bool(failed)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="length of each wrk run")
    parser.add_argument("--connections", type=int, default=4, help="wrk's connections (-c)")
    parser.add_argument("--scale", action="store_true", help="grow to 1M card states and 10M review logs first")
    args = parser.parse_args()
    started = time.perf_counter()
    print(
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; gunicorn --worker-class sync --workers {WORKERS}; "
        f"wrk -t{min(WRK_THREADS, args.connections)} -c{args.connections} -d{math.ceil(args.seconds)}s"
    )
    with bench_database():
        world = world_build(scale=args.scale, connections=args.connections)
        with redis_server() as redis:
            in_process = in_process_measure(world, redis)
            http = http_measure(world, redis=redis, seconds=args.seconds, connections=args.connections)
        print()
        table_print(http, in_process)
        print()
        details_print(http, in_process)
        if errors_print(http):
            print("!!! SOME ANSWERS WERE NOT 2xx: the rows marked ERRORS do not measure the endpoint")
        print(
            f"load average at the end: {os.getloadavg()[0]:.1f}; total run time {time.perf_counter() - started:.0f} s"
        )


if __name__ == "__main__":
    main()
