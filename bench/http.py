"""The request path under wrk: requests/s, p50 and p99, and CPU per request, against the framework's floor.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizsite_bench python -m bench.http [--seconds 10]
     [--connections 4,16] [--server granian] [--compare] [--no-proxy] [--slow-clients 8] [--scale] [--json]
It creates (and afterwards drops) a test database, loads the shipped course (decks/) and a bench course
whose first deck gives the measured learner a study queue of 50 cards (30 learning, 20 due reviews); a
few more learners, with 300 states each in that deck, post the reviews. It starts a private redis-server.

The site runs as production runs it (`--server`, by default the production server, quizsite/server.py)
behind nginx with quizsite/nginx_proxy.conf (`--no-proxy`: straight to the server), while slow clients
trickle request heads at the front all along. First a bare callable answering 11 bytes
(bench/http_bare.py), straight to the server, under the chosen model and one model of each other
server: the fastest is the machine's HTTP limit. Then the framework's floor (bench/http_floor.py: an
empty Django view behind the project's middleware, and an empty API view with its authentication and
rate limiting), then the project on the production settings, rate limits lifted: GET
/api/v1/courses/, the study queue (GET /api/v1/decks/{slug}/study/, 50 cards) and POST /api/v1/reviews/
(a new review each request, from one learner per connection in turn), each at every number of
connections. Ratios read each row against the one it stands on: the empty API view against the empty
Django view, the endpoints against the empty API view, in the same run. `--compare` first measures every
model in bench/servers.py the same way, and prints them side by side.

CPU ms/request is the user+system time of the server's workers over the requests wrk made; "all CPU" is
every process's on the machine (the server, nginx, PostgreSQL, Redis) less wrk's own. The sizing line
turns the latter into daily learners per core.

In-process figures come from the Django test client in this process (the test settings, the same
database, the same private Redis for the cache): p50 of 200 requests after 20 warm-up ones, and the
SQL each request sends. "SQL sent" counts what goes to the database but the token lookup every
request makes, a transaction's BEGIN and COMMIT included (the budget's count); the details below the
table list each statement with its time, the token lookup included and BEGIN/COMMIT apart.

Memory: each project worker's RSS once the server answers and after 10,000 requests (the runs above
topped up by mixed runs of the three endpoints in turn), and whether numpy or TensorFlow is mapped in a worker.

--scale first grows the tables to 1,000,000 card states and about 10,000,000 review logs of other
learners (10 logs per state) around the measured learner, and prints how long that took. --json ends
with every figure as one JSON object on one line.
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
    TRIVIAL_PATH,
    Server,
    bench_database,
    children,
    database_url,
    free_port,
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
from bench.servers import BARE, FLOOR, MODELS, PROJECT, App, ServerModel, SlowClients, serving  # noqa: E402
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
from quizsite.nginx import nginx_in_front  # noqa: E402

WRK_THREADS = 2
# The production configuration, chosen by `--compare` (docs/benchmarks.md has the figures).
PRODUCTION_MODEL = "granian"
CONNECTIONS = (4, 16)
# Connections that trickle a request head at the front during every measured run.
SLOW_CLIENTS = 8
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
# Usernames of the reviewing learners start here, clear of those others_seed numbers from 1; each new
# batch of them (one per server measured) this many further on.
REVIEWERS_START = 9_000_000
REVIEWERS_PER_BATCH = 10_000
WRK_TIMEOUT_MARGIN_SECONDS = 120


@dataclass(frozen=True)
class Target:
    # Requests/s at least this share of the row in AGAINST, in the same run.
    ratio: float | None = None
    in_process_ms: float | None = None
    queries: int | None = None


TARGETS = {
    "floor_api": Target(ratio=0.6),
    "courses": Target(ratio=0.7),
    "study": Target(ratio=0.25, in_process_ms=8.0, queries=4),
    "review": Target(ratio=0.4, in_process_ms=5.0, queries=5),
}
ROWS = ["floor_django", "floor_api", "courses", "study", "review"]
LABELS = {
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
    profile_id: int
    # Batches of reviewers seeded so far: each server measured gets a batch of its own.
    reviewer_batches: int = 1

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
        profile_id=profile_id,
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


def reviewers_renew(world: World, *, connections: int) -> None:
    """New reviewers, with the same kind of history as the first ones and no reviews today.

    A review costs more the more the learner has reviewed that day (load balancing reads those cards),
    so each server measured starts from reviewers as fresh as the first server's.
    """
    now = datetime.now(UTC)
    rng = random.Random(20261204 + world.reviewer_batches)
    start = REVIEWERS_START + world.reviewer_batches * REVIEWERS_PER_BATCH
    reviewers, before = others_seed(
        add=STATES_PER_LEARNER * (connections + 1), pool=world.deck_card_ids, start=start, now=now, rng=rng
    )
    logs_per_state(after_id=before, profile_id=world.profile_id, per_state=LOGS_PER_STATE)
    tables_analyze()
    world.reviewer_tokens = [token_for(learner_id) for learner_id in reviewers]
    world.learners += len(reviewers)
    world.reviewer_batches += 1


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
    p99_ms: float
    non_2xx: int
    socket_errors: int
    cpu_ms: float
    # Every process's CPU on the machine per request (the server, nginx, PostgreSQL, Redis), less wrk's.
    machine_cpu_ms: float
    output: str

    @property
    def errors(self) -> int:
        return self.non_2xx + self.socket_errors

    def as_json(self) -> dict[str, float | int]:
        return {
            "requests_per_second": round(self.rps, 1),
            "p50_ms": round(self.p50_ms, 3),
            "p99_ms": round(self.p99_ms, 3),
            "cpu_ms_per_request": round(self.cpu_ms, 3),
            "machine_cpu_ms_per_request": round(self.machine_cpu_ms, 3),
            "errors": self.errors,
        }


_UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}


def _duration_ms(number: str, unit: str) -> float:
    return float(number) * _UNIT_MS[unit]


def _percentile_ms(output: str, percent: int) -> float | None:
    found = re.search(rf"^\s+{percent}%\s+([\d.]+)(us|ms|s|m|h)\s*$", output, re.MULTILINE)
    return _duration_ms(found.group(1), found.group(2)) if found else None


def wrk_parse(output: str) -> tuple[int, float, float, float, float, int, int]:
    """Requests, seconds, requests/s, p50 and p99 ms, non-2xx/3xx answers and socket errors from wrk's report."""
    made = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m|h)", output)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    p50, p99 = _percentile_ms(output, 50), _percentile_ms(output, 99)
    if made is None or rate is None or p50 is None or p99 is None:
        raise RuntimeError(f"wrk's report could not be read:\n{output}")
    non_2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    sockets = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    return (
        int(made.group(1)),
        _duration_ms(made.group(2), made.group(3)) / 1000,
        float(rate.group(1)),
        p50,
        p99,
        int(non_2xx.group(1)) if non_2xx else 0,
        sum(int(count) for count in sockets.groups()) if sockets else 0,
    )


def wrk_run(
    target: Front, path: str, *, token: str, seconds: float, connections: int, script: Path | None = None
) -> WrkRun:
    """One wrk run against the front (the proxy, or the server), with the CPU the server spent meanwhile."""
    command = [
        "wrk", f"-t{min(WRK_THREADS, connections)}", f"-c{connections}", f"-d{math.ceil(seconds)}s", "--latency",
        "-H", f"Authorization: Token {token}",
    ]  # fmt: skip
    if script is not None:
        command += ["-s", str(script)]
    command.append(f"http://127.0.0.1:{target.port}{path}")
    cpu_before, machine_before, wrk_before = (
        children_cpu_seconds(target.server.process.pid),
        machine_cpu(),
        own_children(),
    )
    finished = subprocess.run(
        command, capture_output=True, text=True, timeout=seconds + WRK_TIMEOUT_MARGIN_SECONDS, check=False
    )
    cpu = children_cpu_seconds(target.server.process.pid) - cpu_before
    machine = machine_cpu() - machine_before - (own_children() - wrk_before)
    output = finished.stdout + finished.stderr
    if finished.returncode != 0:
        raise RuntimeError(f"wrk exited with {finished.returncode}:\n{output}")
    requests, took, rps, p50_ms, p99_ms, non_2xx, socket_errors = wrk_parse(output)
    return WrkRun(
        requests=requests,
        seconds=took,
        rps=rps,
        p50_ms=p50_ms,
        p99_ms=p99_ms,
        non_2xx=non_2xx,
        socket_errors=socket_errors,
        cpu_ms=cpu * 1000 / requests if requests else float("nan"),
        machine_cpu_ms=machine * 1000 / requests if requests else float("nan"),
        output=output,
    )


def machine_cpu() -> float:
    """Seconds of CPU every process on the machine has used since boot (/proc/stat: all but idle and iowait)."""
    with open("/proc/stat", encoding="ascii") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def own_children() -> float:
    """CPU seconds of this process's finished children (the wrk runs)."""
    times = os.times()
    return times.children_user + times.children_system


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


class Scripts:
    """wrk scripts in a directory of their own, each with a new run number, so review ids never repeat."""

    def __init__(self, directory: str, world: World) -> None:
        self.directory = directory
        self.world = world
        self.runs = 0

    def script(self, *, kinds: list[str], connections: int) -> Path:
        self.runs += 1
        threads = min(WRK_THREADS, connections)
        reviewers = self.world.reviewer_tokens[1:]
        text = _LUA.substitute(
            kinds=", ".join(f'"{kind}"' for kind in kinds),
            cards=", ".join(str(card_id) for card_id in self.world.deck_card_ids),
            reviewer_tokens=", ".join(f'"{token}"' for token in reviewers),
            per_thread=max(1, len(reviewers) // threads),
            run=self.runs,
            study_path=self.world.study_path,
            reader_token=self.world.measured_token,
            reviews_path=REVIEWS_PATH,
            courses_path=COURSES_PATH,
        )
        path = Path(self.directory) / f"run-{self.runs}.lua"
        path.write_text(text, encoding="utf-8")
        return path


@dataclass
class Front:
    """Where wrk sends its requests (nginx's port when proxied), and the server whose CPU is counted."""

    server: Server
    port: int


@contextmanager
def fronted(
    model: ServerModel, app: App, *, env: Mapping[str, str], token: str, proxy: bool, ready_path: str
) -> Iterator[Front]:
    with serving(model, app, env=env, token=token, ready_path=ready_path) as server:
        if not proxy:
            yield Front(server=server, port=server.port)
            return
        with nginx_in_front(port=free_port(), upstream_port=server.port) as front:
            yield Front(server=server, port=front.port)


def http_warm(port: int, world: World) -> None:
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
            client = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
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
class Options:
    seconds: float
    connections: list[int]
    proxy: bool
    slow_clients: int


@dataclass
class Http:
    model: ServerModel
    # Keyed by row name and connections.
    runs: dict[tuple[str, int], WrkRun]
    mixed: list[WrkRun] = field(default_factory=list)
    memory: Memory | None = None
    log_tails: dict[str, str] = field(default_factory=dict)
    slow_reconnects: int = 0


def bare_measure(models: list[ServerModel], options: Options) -> dict[str, dict[int, WrkRun]]:
    """The bare callable under each model, straight to the server: what each server alone can do here."""
    found: dict[str, dict[int, WrkRun]] = {}
    for model in models:
        with serving(model, BARE, env=dict(os.environ), token="-", ready_path="/") as server:
            target = Front(server=server, port=server.port)
            found[model.key] = {
                n: wrk_run(target, "/", token="-", seconds=options.seconds, connections=n) for n in options.connections
            }
    return found


def http_measure(world: World, model: ServerModel, *, redis: str, options: Options, memory: bool) -> Http:
    """wrk against the floor, then the project, under `model` (behind nginx with `proxy`), with slow clients
    trickling requests at the front all along; with `memory`, the mixed top-up runs and the workers' memory."""
    figures = Http(model=model, runs={})
    env = production_env(database=database_url(), redis=redis, **unthrottled())
    token = world.measured_token
    with tempfile.TemporaryDirectory(prefix="bench-http-") as directory:
        scripts = Scripts(directory, world)
        with fronted(model, FLOOR, env=env, token=token, proxy=options.proxy, ready_path=TRIVIAL_PATH) as floor:
            with SlowClients(floor.port, options.slow_clients) as slow:
                for n in options.connections:
                    for name, path in (("floor_django", FLOOR_DJANGO_PATH), ("floor_api", FLOOR_API_PATH)):
                        figures.runs[name, n] = wrk_run(
                            floor, path, token=token, seconds=options.seconds, connections=n
                        )
            figures.slow_reconnects += slow.reconnects
            figures.log_tails["floor"] = log_tail(floor.server.log_path)
        with fronted(model, PROJECT, env=env, token=token, proxy=options.proxy, ready_path=TRIVIAL_PATH) as project:
            workers = children(project.server.process.pid)
            used = Memory(start_kib={pid: rss_kib(pid) for pid in workers})
            http_warm(project.port, world)
            used.served = 1 + HTTP_WARMUP * 3

            def measure(path: str, connections: int, script: Path | None = None, **kw: float) -> WrkRun:
                seconds = kw.get("seconds", options.seconds)
                return wrk_run(project, path, token=token, seconds=seconds, connections=connections, script=script)

            with SlowClients(project.port, options.slow_clients) as slow:
                for n in options.connections:
                    figures.runs["courses", n] = measure(COURSES_PATH, n)
                    figures.runs["study", n] = measure(world.study_path, n)
                    figures.runs["review", n] = measure(
                        REVIEWS_PATH, n, scripts.script(kinds=["review"], connections=n)
                    )
            figures.slow_reconnects += slow.reconnects
            used.served += sum(run.requests for (name, _), run in figures.runs.items() if not name.startswith("floor"))
            if memory:
                figures.memory = memory_top_up(figures, project, used, scripts, measure, options.connections[0])
            figures.log_tails["project"] = log_tail(project.server.log_path)
    return figures


def memory_top_up(
    figures: Http,
    project: Front,
    used: Memory,
    scripts: Scripts,
    measure: Callable[..., WrkRun],
    connections: int,
) -> Memory:
    """Mixed runs until the workers have served MEMORY_REQUESTS, then what they hold and have loaded."""
    workers = list(used.start_kib)
    mixed = figures.mixed
    while used.served < MEMORY_REQUESTS or not mixed:
        if len(mixed) == MIXED_RUNS_MAX:
            print(f"!!! only {used.served} requests served after {MIXED_RUNS_MAX} mixed runs")
            break
        mixed_seconds = (
            min(MIXED_RUN_SECONDS_MAX, max(1.0, (MEMORY_REQUESTS - used.served) / max(mixed[-1].rps, 1.0)))
            if mixed
            else MIXED_FIRST_SECONDS
        )
        script = scripts.script(kinds=["courses", "study", "review"], connections=connections)
        mixed.append(measure(COURSES_PATH, connections, script, seconds=mixed_seconds))
        used.served += mixed[-1].requests
    used.after_kib = {pid: rss_kib(pid) for pid in workers}
    now = children(project.server.process.pid)
    if set(now) != set(workers):
        print(f"!!! the server replaced workers during the run: {workers} -> {now}")
    used.numpy = any(_mapped(pid, "/numpy/") for pid in workers)
    used.tensorflow = any(_mapped(pid, "/tensorflow/") for pid in workers)
    return used


# --- Report -----------------------------------------------------------------------------------------


def _verdict(met: bool) -> str:
    return "met" if met else "NOT MET"


# Each row's figures are read against the row named here, in the same run.
AGAINST = {"floor_api": "floor_django", "courses": "floor_api", "study": "floor_api", "review": "floor_api"}
# p99 at most this many times p50, at the largest number of connections.
P99_OVER_P50 = 4.0


def _ratio(http: Http, name: str, connections: int) -> float | None:
    against = AGAINST.get(name)
    if against is None:
        return None
    base = http.runs[against, connections].rps
    return http.runs[name, connections].rps / base if base else float("nan")


def table_print(http: Http, bare: dict[str, dict[int, WrkRun]], in_process: dict[str, InProcess]) -> None:
    header = (
        "row",
        "conns",
        "requests/s",
        "ratio",
        "target",
        "p50",
        "p99 (/p50)",
        "CPU ms/request",
        "all CPU ms",
        "in-process p50",
        "SQL sent (SQL ms)",
    )
    rows = [header]
    top = max(n for _, n in http.runs)
    for connections in sorted({n for _, n in http.runs}):
        fastest_key = max(bare, key=lambda key: bare[key][connections].rps)
        bare_rows = [(http.model.key, f"bare callable, {http.model.label}")]
        if fastest_key == http.model.key:
            bare_rows[0] = (fastest_key, bare_rows[0][1] + " (the fastest)")
        else:
            bare_rows.append((fastest_key, f"bare callable, fastest: {MODELS[fastest_key].label}"))
        for key, label in bare_rows:
            run = bare[key][connections]
            figures = (f"{run.p50_ms:.2f} ms", f"{run.p99_ms:.2f} ms", f"{run.cpu_ms:.3f}", f"{run.machine_cpu_ms:.3f}")
            rows.append((label, str(connections), f"{run.rps:.0f}", "-", "-", *figures, "-", "-"))
        for name in ROWS:
            run = http.runs[name, connections]
            target = TARGETS.get(name, Target())
            ratio = _ratio(http, name, connections)
            rate = f"{run.rps:.0f}" + (f" ({run.errors} ERRORS)" if run.errors else "")
            target_text = "-"
            if target.ratio is not None and ratio is not None:
                target_text = f">= {target.ratio:.2f} of {AGAINST[name]}: {_verdict(ratio >= target.ratio)}"
            spread = run.p99_ms / run.p50_ms if run.p50_ms else float("nan")
            p99_text = f"{run.p99_ms:.2f} ms ({spread:.1f}x"
            if connections == top:
                p99_text += f" <= {P99_OVER_P50:.0f}: {_verdict(spread <= P99_OVER_P50)}"
            p99_text += ")"
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
                    str(connections),
                    rate,
                    "-" if ratio is None else f"{ratio:.3f}",
                    target_text,
                    f"{run.p50_ms:.2f} ms",
                    p99_text,
                    f"{run.cpu_ms:.3f}",
                    f"{run.machine_cpu_ms:.3f}",
                    local_text,
                    sql_text,
                )
            )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for index, row in enumerate(rows):
        print("| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) + " |")
        if index == 0:
            print("|" + "|".join("-" * (width + 2) for width in widths) + "|")


def comparison_print(results: list[Http], bare: dict[str, dict[int, WrkRun]]) -> None:
    """One line per model: requests/s of each row at each number of connections (CPU ms/request after it)."""
    connections = sorted({n for _, n in results[0].runs})
    header = ["model", *[f"bare c{n}" for n in connections]]
    header += [f"{name} c{n}" for name in ROWS for n in connections]
    lines = [header]
    for result in results:
        line = [result.model.label] + [f"{bare[result.model.key][n].rps:.0f}" for n in connections]
        for name in ROWS:
            for n in connections:
                run = result.runs[name, n]
                line.append(f"{run.rps:.0f} ({run.cpu_ms:.2f})" + ("!" if run.errors else ""))
        lines.append(line)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for index, line in enumerate(lines):
        print("| " + " | ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)) + " |")
        if index == 0:
            print("|" + "|".join("-" * (width + 2) for width in widths) + "|")


# A daily learner as the sizing counts one: two study queues, a hundred reviews and five course lists.
# The busiest hour holds a fifth of a day's requests, and cores are sized to be at most 60 % busy then.
DAY_OF_A_LEARNER = {"study": 2, "review": 100, "courses": 5}
PEAK_HOUR_SHARE = 0.2
PEAK_BUSY = 0.6


def sizing(http: Http) -> dict[str, float]:
    """CPU a daily learner costs the whole machine (server, nginx, PostgreSQL, Redis), and learners per core."""
    top = max(n for _, n in http.runs)
    per_learner_ms = sum(count * http.runs[name, top].machine_cpu_ms for name, count in DAY_OF_A_LEARNER.items())
    per_core = PEAK_BUSY * 3_600_000 / (PEAK_HOUR_SHARE * per_learner_ms) if per_learner_ms else float("nan")
    return {
        "cpu_seconds_per_daily_learner": round(per_learner_ms / 1000, 3),
        "daily_learners_per_core": round(per_core),
    }


def sizing_print(http: Http) -> None:
    figures = sizing(http)
    day = ", ".join(f"{count} {name}" for name, count in DAY_OF_A_LEARNER.items())
    print(
        f"sizing: a daily learner ({day}) costs {figures['cpu_seconds_per_daily_learner']:.2f} s of CPU on the "
        f"machine (server, nginx, PostgreSQL, Redis; at the most connections measured); with {PEAK_HOUR_SHARE:.0%} "
        f"of a day in its busiest hour and cores at most {PEAK_BUSY:.0%} busy then, one core serves about "
        f"{figures['daily_learners_per_core']:,} daily learners"
    )


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
    print(f"slow clients: reconnected {http.slow_reconnects} times (dropped by the front for stalling)")
    memory = http.memory
    if memory is None:
        return
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
    failed = {f"{name} c{n}": run for (name, n), run in http.runs.items() if run.errors}
    failed |= {f"mixed run {n}": run for n, run in enumerate(http.mixed, start=1) if run.errors}
    for name, run in failed.items():
        print(
            f"!!! {http.model.label}, {name}: {run.non_2xx} non-2xx/3xx answers and {run.socket_errors} socket "
            f"errors in {run.requests} requests: its figures are NOT VALID\n{run.output}"
        )
    if failed:
        for server, tail in http.log_tails.items():
            print(f"!!! server ({server}) log ends:\n{tail}")
    return bool(failed)


def figures_json(http: Http, bare: dict[str, dict[int, WrkRun]], options: Options) -> dict[str, Any]:
    """The run's figures as one object, for comparing runs."""
    rows: list[dict[str, Any]] = []
    for (name, connections), run in sorted(http.runs.items(), key=lambda item: (item[0][1], ROWS.index(item[0][0]))):
        ratio = _ratio(http, name, connections)
        target = TARGETS.get(name, Target()).ratio
        rows.append(
            {"row": name, "connections": connections, **run.as_json()}
            | ({"ratio": round(ratio, 4), "against": AGAINST[name]} if ratio is not None else {})
            | ({"target": target, "met": ratio is not None and ratio >= target} if target is not None else {})
        )
    fastest = {
        str(n): {"server": MODELS[key].label, **bare[key][n].as_json()}
        for n in options.connections
        for key in [max(bare, key=lambda key: bare[key][n].rps)]
    }
    return {
        "server": http.model.label,
        "model": http.model.key,
        "proxy": "nginx" if options.proxy else None,
        "slow_clients": options.slow_clients,
        "seconds": options.seconds,
        "bare": {str(n): bare[http.model.key][n].as_json() for n in options.connections},
        "fastest_bare": fastest,
        "rows": rows,
        "sizing": sizing(http),
    }


def _connections(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each wrk run")
    parser.add_argument(
        "--connections", type=_connections, default=list(CONNECTIONS), help="wrk's connections (-c), e.g. 4,16"
    )
    parser.add_argument("--server", choices=sorted(MODELS), default=PRODUCTION_MODEL, help="the model measured")
    parser.add_argument("--compare", action="store_true", help="measure every model, then the table of the chosen one")
    parser.add_argument("--no-proxy", dest="proxy", action="store_false", help="send to the server, not through nginx")
    parser.add_argument("--slow-clients", type=int, default=SLOW_CLIENTS, help="connections trickling at the front")
    parser.add_argument("--scale", action="store_true", help="grow to 1M card states and 10M review logs first")
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON object on one line")
    args = parser.parse_args()
    options = Options(
        seconds=args.seconds, connections=args.connections, proxy=args.proxy, slow_clients=args.slow_clients
    )
    chosen = MODELS[args.server]
    started = time.perf_counter()
    print(
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; {chosen.label}"
        f"{' behind nginx (quizsite/nginx_proxy.conf)' if options.proxy else ''}; {options.slow_clients} slow "
        f"clients alongside; wrk -t{WRK_THREADS} -c{'/'.join(map(str, options.connections))} "
        f"-d{math.ceil(options.seconds)}s"
    )
    # The bare callable under the chosen model and under the first model of each other server.
    bare_models = {chosen.server: chosen}
    for model in MODELS.values():
        bare_models.setdefault(model.server, model)
    bare = bare_measure(list(bare_models.values()), options)
    with bench_database():
        world = world_build(scale=args.scale, connections=max(options.connections))
        with redis_server() as redis:
            in_process = in_process_measure(world, redis)
            compared: list[Http] = []
            if args.compare:
                for model in MODELS.values():
                    if model.key not in bare:
                        bare |= bare_measure([model], options)
                    if model.key != chosen.key:
                        reviewers_renew(world, connections=max(options.connections))
                        compared.append(http_measure(world, model, redis=redis, options=options, memory=False))
                reviewers_renew(world, connections=max(options.connections))
            http = http_measure(world, chosen, redis=redis, options=options, memory=True)
        print()
        if compared:
            print("every model: requests/s (CPU ms/request); ! marks a run with errors")
            comparison_print([*compared, http], bare)
            print()
        table_print(http, bare, in_process)
        print()
        details_print(http, in_process)
        sizing_print(http)
        invalid = [errors_print(result) for result in [*compared, http]]
        if any(invalid):
            print("!!! SOME ANSWERS WERE NOT 2xx: the rows marked ERRORS do not measure the endpoint")
        print(
            f"load average at the end: {os.getloadavg()[0]:.1f}; total run time {time.perf_counter() - started:.0f} s"
        )
        if args.json:
            print(json.dumps(figures_json(http, bare, options), separators=(",", ":")))


if __name__ == "__main__":
    main()
