"""Spaced repetition at scale: study latency, review throughput over HTTP, and SQL queries per request.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizsite_bench python -m bench.srs [--explain]
It creates (and afterwards drops) a test database, so it never touches real data. The measured learner
always has the same 300 memory states in a 500-card deck while the table grows from 10k to 1M rows
around them; --explain adds EXPLAIN ANALYZE of every study query at the largest size.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.test_settings")

import django

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_databases, teardown_databases  # noqa: E402

from bench.stack import children, free_port, web_describe, web_start, web_stop, web_wait  # noqa: E402

# Total CardMemory rows at each measurement.
SIZES = (10_000, 100_000, 1_000_000)
DECKS = 5
CARDS_PER_DECK = 500
# Each other learner has this many states, in one or two neighbouring decks, as a real learner would.
STATES_PER_LEARNER = 300
MEASURED_STATES = 300
STUDY_WARMUP = 20
STUDY_TIMED = 200
# Requests whose queries are captured and timed one by one (capturing adds overhead, so kept apart).
STUDY_CAPTURED = 20
REVIEWS_CAPTURED = 5
HTTP_CLIENTS = 4
HTTP_ROUNDS = 4
HTTP_SECONDS = 5.0
HTTP_MAX_REQUESTS = 4000
HTTP_WARMUP_REQUESTS = 40
TRIVIAL_PATH = "/api/v1/courses/"
_COPY_CHUNK_ROWS = 20_000


@dataclass
class HttpFigures:
    requests: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    bad: dict[int, int] = field(default_factory=dict)
    # CPU time of the web server's workers (Django only, not PostgreSQL) while the phase ran.
    server_cpu_seconds: float = 0.0
    error_sample: str = ""

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def server_cpu_ms(self) -> float:
        return self.server_cpu_seconds * 1000 / self.requests if self.requests else 0.0

    def add(self, other: HttpFigures) -> None:
        self.requests += other.requests
        self.seconds += other.seconds
        self.latencies += other.latencies
        self.server_cpu_seconds += other.server_cpu_seconds
        self.error_sample = self.error_sample or other.error_sample
        for status, count in other.bad.items():
            self.bad[status] = self.bad.get(status, 0) + count


@dataclass
class World:
    deck_slug: str
    deck_card_ids: list[int]
    measured_token: str
    reviewer_tokens: list[str] = field(default_factory=list)
    learners: int = 0


def _ts(moment: datetime) -> str:
    return moment.isoformat(sep=" ")


def _p(samples: list[float], quantile: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * quantile))]


def content_seed() -> tuple[list[list[int]], str]:
    """A course with DECKS decks of CARDS_PER_DECK cards; returns card ids per deck and the first deck's slug."""
    from apps.content.models import Card, Course, Deck, Lesson

    course = Course.objects.create(slug="bench-course", title="Bench course")
    lesson = Lesson.objects.create(course=course, slug="bench-lesson", title="Bench lesson", position=0)
    decks = Deck.objects.bulk_create(
        Deck(lesson=lesson, slug=f"bench-deck-{d}", title=f"Bench deck {d}", position=d) for d in range(DECKS)
    )
    by_deck: list[list[int]] = []
    for deck in decks:
        cards = Card.objects.bulk_create(
            Card(
                deck=deck,
                slug=f"card-{i}",
                term=f"term {deck.position}-{i}",
                definition=f"definition {i} " * 8,
                position=i,
            )
            for i in range(CARDS_PER_DECK)
        )
        by_deck.append([card.pk for card in cards])
    return by_deck, decks[0].slug


def learners_create(count: int, start: int) -> list[int]:
    from django.contrib.auth import get_user_model

    users = get_user_model().objects.bulk_create(
        (get_user_model()(username=f"learner-{start + i}", password="!") for i in range(count)), batch_size=2000
    )
    return [user.pk for user in users]


def token_for(user_id: int) -> str:
    from django.contrib.auth import get_user_model

    from apps.accounts.devices import device_token_issue

    return device_token_issue(user=get_user_model().objects.get(pk=user_id), device_name="Benchmark").key


_MEMORY_COLUMNS = (
    "learner_id, card_id, stage, step, stability, difficulty, due, last_review, first_review, "
    "reps, lapses, is_leech, suspended, updated_at"
)


def memories_copy(lines: Iterator[str]) -> int:
    """COPY tab-separated CardMemory rows in chunks; returns the largest id before them."""
    from apps.srs.models import CardMemory

    table = CardMemory._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT coalesce(max(id), 0) FROM {table}")  # noqa: S608 - our own table name
        before = int(cursor.fetchone()[0])
        with cursor.copy(f"COPY {table} ({_MEMORY_COLUMNS}) FROM STDIN") as copy:
            chunk: list[str] = []
            for line in lines:
                chunk.append(line)
                if len(chunk) >= _COPY_CHUNK_ROWS:
                    copy.write("".join(chunk))
                    chunk.clear()
            if chunk:
                copy.write("".join(chunk))
    return before


def logs_derive(*, after_id: int, profile_id: int) -> None:
    """One review log per memory row above `after_id`: its first review, with the state it left."""
    from apps.srs.models import CardMemory, ReviewLog

    sql = f"""
        INSERT INTO {ReviewLog._meta.db_table}
            (learner_id, card_id, kind, client_review_id, rating, reviewed_at, duration_ms, source,
             state_before, state_after, profile_id, recorded_at)
        SELECT m.learner_id, m.card_id, 'review', gen_random_uuid(), 3, m.first_review, 4000, 'deck',
            NULL,
            jsonb_build_object('stage', m.stage, 'step', m.step, 'stability', m.stability,
                'difficulty', m.difficulty, 'due', m.due, 'last_review', m.last_review,
                'reps', m.reps, 'lapses', m.lapses),
            %s, now()
        FROM {CardMemory._meta.db_table} m WHERE m.id > %s
    """  # noqa: S608 - table names are ours, values are parameters
    with connection.cursor() as cursor:
        cursor.execute(sql, [profile_id, after_id])


def _memory_line(
    learner_id: int,
    card_id: int,
    stage: int,
    step: int | None,
    due: str,
    last: str,
    reps: int,
    now: str,
    first: str | None = None,
) -> str:
    step_text = "\\N" if step is None else str(step)
    return (
        f"{learner_id}\t{card_id}\t{int(stage)}\t{step_text}\t5.5\t5.0\t{due}\t{last}\t{first or last}\t"
        f"{reps}\t0\tf\tf\t{now}\n"
    )


def measured_learner_seed(*, card_ids: list[int], profile_id: int, now: datetime) -> str:
    """The learner whose study queue is timed: 300 states in a 500-card deck, a few reviews done today."""
    from apps.srs.core.scheduling import MemoryStage, MemoryState
    from apps.srs.models import ReviewLog, SchedulingSettings
    from apps.srs.settings.config import learner_day_bounds

    (learner_id,) = learners_create(1, start=0)
    stamp, first = _ts(now), _ts(now - timedelta(days=30))
    lines: list[str] = []
    for i, card_id in enumerate(card_ids[:MEASURED_STATES]):
        if i < 30:  # 30 learning or relearning cards due now
            stage, step = (MemoryStage.RELEARNING if i % 3 == 0 else MemoryStage.LEARNING), i % 2
            due, last = now - timedelta(minutes=i + 1), now - timedelta(minutes=i + 11)
        elif i < 40:  # 10 learning cards due in two hours: not counted anywhere yet
            stage, step = MemoryStage.LEARNING, 1
            due, last = now + timedelta(hours=2), now - timedelta(hours=1)
        else:  # 80 overdue reviews, 180 reviews due in days to weeks
            stage, step = MemoryStage.REVIEW, None
            due = now - timedelta(days=1 + i % 10) if i < 120 else now + timedelta(days=3 + i % 60)
            last = due - timedelta(days=6)
        lines.append(_memory_line(learner_id, card_id, stage, step, _ts(due), _ts(last), 3, stamp, first))
    memories_copy(iter(lines))
    logs_derive(after_id=0, profile_id=profile_id)
    day_start, _ = learner_day_bounds(SchedulingSettings(), now=now)
    today = day_start + (now - day_start) / 2
    # As the scheduler stores them: the state before a review today (due today), and the one it left.
    state_before = MemoryState(
        stage=MemoryStage.REVIEW, step=None, stability=5.5, difficulty=5.0,
        due=today - timedelta(hours=1), last_review=today - timedelta(days=6), reps=3,
    ).to_dict()  # fmt: skip
    state_after = MemoryState(
        stage=MemoryStage.REVIEW, step=None, stability=5.5, difficulty=5.0,
        due=today + timedelta(days=6), last_review=today, reps=4,
    ).to_dict()  # fmt: skip
    ReviewLog.objects.bulk_create(
        ReviewLog(
            learner_id=learner_id,
            card_id=card_id,
            client_review_id=uuid.uuid4(),
            rating=3,
            reviewed_at=today,
            state_before=None if n < 5 else state_before,
            state_after=state_after,
            profile_id=profile_id,
        )
        for n, card_id in enumerate(card_ids[120:135])
    )
    return token_for(learner_id)


def others_seed(*, add: int, pool: list[int], start: int, now: datetime, rng: random.Random) -> tuple[list[int], int]:
    """`add` more memory rows, STATES_PER_LEARNER per new learner; returns the learners and the id before them."""
    per = [STATES_PER_LEARNER] * (add // STATES_PER_LEARNER) + (
        [add % STATES_PER_LEARNER] if add % STATES_PER_LEARNER else []
    )
    learner_ids = learners_create(len(per), start=start)
    stamp = _ts(now)
    review_due = [_ts(now + timedelta(hours=h)) for h in range(-30 * 24, 60 * 24 + 1)]
    learning_due = [_ts(now + timedelta(minutes=m)) for m in range(-60, 61)]
    past = [_ts(now - timedelta(hours=h)) for h in range(1, 90 * 24)]

    def lines() -> Iterator[str]:
        for learner_id, count in zip(learner_ids, per, strict=True):
            offset = rng.randrange(len(pool))
            for j in range(count):
                card_id = pool[(offset + j) % len(pool)]
                if rng.random() < 0.1:
                    yield _memory_line(learner_id, card_id, 1, 0, rng.choice(learning_due), rng.choice(past), 1, stamp)
                else:
                    yield _memory_line(learner_id, card_id, 2, None, rng.choice(review_due), rng.choice(past), 3, stamp)

    return learner_ids, memories_copy(lines())


def tables_analyze() -> None:
    """VACUUM (ANALYZE) the whole test database, content tables included.

    Without it the planner estimates content_card at a few rows per deck; VACUUM also refreshes the
    visibility maps and keeps autovacuum from starting mid-measurement.
    """
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")


def table_counts() -> tuple[int, int]:
    from apps.srs.models import CardMemory, ReviewLog

    return CardMemory.objects.count(), ReviewLog.objects.count()


_TRANSACTION_CONTROL = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE SAVEPOINT")


@dataclass
class Captured:
    """What one request sent: every entry CaptureQueriesContext saw, and each statement's own time."""

    sqls: list[str]
    statement_ms: list[tuple[str, float]]

    @property
    def control(self) -> list[str]:
        return [sql.split()[0].upper() for sql in self.sqls if sql.lstrip().upper().startswith(_TRANSACTION_CONTROL)]

    @property
    def statements(self) -> list[str]:
        return [sql for sql in self.sqls if not sql.lstrip().upper().startswith(_TRANSACTION_CONTROL)]


def captured_request(send: Callable[[], Any]) -> Captured:
    """Send one request, capturing its SQL; an execute wrapper times statements (BEGIN/COMMIT bypass it)."""
    timed: list[tuple[str, float]] = []

    def timer(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            timed.append((sql, (time.perf_counter() - started) * 1000))

    with connection.execute_wrapper(timer), CaptureQueriesContext(connection) as captured:
        response = send()
    assert response.status_code in (200, 201), response.content
    return Captured(sqls=[query["sql"] for query in captured.captured_queries], statement_ms=timed)


@dataclass
class RequestQueries:
    totals: list[int]
    statements: list[int]
    control: list[str]
    # Median time and SQL of each statement, from the requests with the most common shape.
    per_statement: list[tuple[float, str]]
    sqls: list[str]


def queries_summarize(captures: list[Captured]) -> RequestQueries:
    shape = statistics.mode(len(c.statement_ms) for c in captures)
    same = [c for c in captures if len(c.statement_ms) == shape]
    per_statement = [
        (statistics.median(c.statement_ms[i][1] for c in same), same[0].statement_ms[i][0]) for i in range(shape)
    ]
    return RequestQueries(
        totals=[len(c.sqls) for c in captures],
        statements=[len(c.statements) for c in captures],
        control=sorted({word for c in captures for word in c.control}),
        per_statement=per_statement,
        sqls=same[0].statements,
    )


def study_measure(*, world: World, size: int, rng: random.Random, explain: bool) -> StudyFigures:
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {world.measured_token}")
    path = f"/api/v1/decks/{world.deck_slug}/study/"
    first = client.get(path)
    assert first.status_code == 200, first.content
    body = first.json()
    counts = {**body["counts"], "cards": len(body["cards"])}
    for _ in range(STUDY_WARMUP):
        client.get(path)
    samples = []
    cpu_started = time.process_time()
    for _ in range(STUDY_TIMED):
        started = time.perf_counter()
        response = client.get(path)
        samples.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200
    cpu_ms = (time.process_time() - cpu_started) * 1000 / STUDY_TIMED
    study = queries_summarize([captured_request(lambda: client.get(path)) for _ in range(STUDY_CAPTURED)])
    if explain:
        with connection.cursor() as cursor:
            for sql in study.sqls:
                cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")
                print("\n".join(row[0] for row in cursor.fetchall()) + "\n")

    reviewer = APIClient()
    reviewer.credentials(HTTP_AUTHORIZATION=f"Token {world.reviewer_tokens[0]}")

    def review() -> Any:
        payload = {"card": rng.choice(world.deck_card_ids), "rating": 3, "client_review_id": str(uuid.uuid4())}
        return reviewer.post("/api/v1/reviews/", payload, format="json")

    reviews = queries_summarize([captured_request(review) for _ in range(REVIEWS_CAPTURED)])
    return StudyFigures(
        size=size,
        p50_ms=statistics.median(samples),
        p99_ms=_p(samples, 0.99),
        cpu_ms=cpu_ms,
        load=os.getloadavg()[0],
        study=study,
        review=reviews,
        counts=counts,
    )


@dataclass
class StudyFigures:
    size: int
    p50_ms: float
    p99_ms: float
    # CPU time of this (the Django) process per request: less disturbed by other work on the machine.
    cpu_ms: float
    load: float
    study: RequestQueries
    review: RequestQueries
    counts: dict[str, int]


RequestFor = Callable[[random.Random], tuple[str, str, bytes | None]]


def http_phase(*, port: int, tokens: list[str], request_for: RequestFor, seconds: float, limit: int) -> HttpFigures:
    """Requests from one keep-alive client per token, all at once, until `seconds` pass or `limit` are made.

    Only 2xx answers count as requests (and latencies); others are tallied by status, with one body kept.
    """
    per_client = max(1, limit // len(tokens))
    deadline = time.perf_counter() + seconds
    results: list[list[tuple[int, float]]] = [[] for _ in tokens]
    samples: list[str] = []

    def run(index: int) -> None:
        rng = random.Random(index)
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {"Authorization": f"Token {tokens[index]}", "Content-Type": "application/json"}
        try:
            while len(results[index]) < per_client and time.perf_counter() < deadline:
                method, path, body = request_for(rng)
                started = time.perf_counter()
                client.request(method, path, body=body, headers=headers)
                response = client.getresponse()
                content = response.read()
                results[index].append((response.status, (time.perf_counter() - started) * 1000))
                if response.status >= 300 and not samples:
                    samples.append(f"{method} {path} -> {response.status}: {content[:300]!r}")
        finally:
            client.close()

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(tokens)) as pool:
        list(pool.map(run, range(len(tokens))))
    figures = HttpFigures(seconds=time.perf_counter() - started, error_sample=samples[0] if samples else "")
    for status, latency in (result for client_results in results for result in client_results):
        if status < 300:
            figures.requests += 1
            figures.latencies.append(latency)
        else:
            figures.bad[status] = figures.bad.get(status, 0) + 1
    return figures


def children_cpu_seconds(parent: int) -> float:
    """User plus system CPU time of the live children of `parent` (the web server's workers), from /proc."""
    total = 0
    for pid in children(parent):
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat_file:
                stat = stat_file.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # from field 3 (state) on: utime and stime are 12 and 13
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def throughput_measure(world: World) -> tuple[HttpFigures, HttpFigures]:
    def trivial(rng: random.Random) -> tuple[str, str, bytes | None]:
        return "GET", TRIVIAL_PATH, None

    def review(rng: random.Random) -> tuple[str, str, bytes | None]:
        body = {"card": rng.choice(world.deck_card_ids), "rating": 3, "client_review_id": str(uuid.uuid4())}
        return "POST", "/api/v1/reviews/", json.dumps(body).encode()

    port = free_port()
    totals = {"trivial": HttpFigures(), "review": HttpFigures()}
    with tempfile.NamedTemporaryFile(prefix="bench-web-", suffix=".log") as log:
        process = web_start(port, log)
        try:
            web_wait(process, port, world.reviewer_tokens[0], log.name)
            tokens = world.reviewer_tokens
            for request_for in (trivial, review):
                http_phase(port=port, tokens=tokens, request_for=request_for, seconds=5, limit=HTTP_WARMUP_REQUESTS)
            # Alternating short rounds, so a busy spell on the machine hits both endpoints alike.
            for _ in range(HTTP_ROUNDS):
                for name, request_for in (("trivial", trivial), ("review", review)):
                    cpu_before = children_cpu_seconds(process.pid)
                    phase = http_phase(
                        port=port, tokens=tokens, request_for=request_for, seconds=HTTP_SECONDS, limit=HTTP_MAX_REQUESTS
                    )
                    phase.server_cpu_seconds = children_cpu_seconds(process.pid) - cpu_before
                    print(
                        f"  {name:>7}: {phase.requests:>5} requests in {phase.seconds:.1f} s = {phase.rps:4.0f}/s, "
                        f"p50 {_p(phase.latencies, 0.5):5.1f} ms, server CPU {phase.server_cpu_ms:4.1f} ms/request; "
                        f"load {os.getloadavg()[0]:.1f}" + (f"; NON-2xx {phase.bad}" if phase.bad else "")
                    )
                    totals[name].add(phase)
            if any(figures.bad for figures in totals.values()):
                log.flush()
                with open(log.name, encoding="utf-8", errors="replace") as log_text:
                    tail = log_text.read()[-3000:]
                samples = "; ".join(figures.error_sample for figures in totals.values() if figures.error_sample)
                print(f"  NON-2xx ANSWERS, e.g. {samples}\n  server log ends:\n{tail}")
        finally:
            web_stop(process)
    return totals["trivial"], totals["review"]


def _short(sql: str, width: int = 96) -> str:
    flat = " ".join(sql.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _spread(values: list[int]) -> str:
    return "/".join(str(n) for n in sorted(set(values)))


def _queries_print(label: str, queries: RequestQueries) -> None:
    control = f" + {'/'.join(queries.control)}" if queries.control else ""
    sql_ms = sum(ms for ms, _ in queries.per_statement)
    print(
        f"  {label}: {_spread(queries.totals)} captured = {_spread(queries.statements)} statements{control}; "
        f"statements' median time {sql_ms:.1f} ms in all"
    )
    for index, (median_ms, sql) in enumerate(queries.per_statement, start=1):
        print(f"    {index} {median_ms:6.2f} ms  {_short(sql)}")


def trivial_queries(token: str) -> int:
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return len(captured_request(lambda: client.get(TRIVIAL_PATH)).sqls)


def main(explain: bool) -> None:
    from apps.srs.models import SchedulingSettings
    from apps.srs.settings.config import scheduler_config_from_settings
    from apps.srs.settings.services import scheduler_profile_ensure

    run_started = time.perf_counter()
    rng = random.Random(20261129)
    now = datetime.now(UTC)
    print(f"database: {connection.vendor} {connection.settings_dict['NAME']}; {os.cpu_count()} CPUs")
    by_deck, slug = content_seed()
    pool = [card_id for cards in by_deck for card_id in cards]
    profile_id = scheduler_profile_ensure(scheduler_config_from_settings(SchedulingSettings()))
    world = World(
        deck_slug=slug,
        deck_card_ids=by_deck[0],
        measured_token=measured_learner_seed(card_ids=by_deck[0], profile_id=profile_id, now=now),
        learners=1,
    )
    print(
        f"content: {DECKS} decks x {CARDS_PER_DECK} cards; measured learner: {MEASURED_STATES} states in "
        f"{slug}, 15 reviews today; other learners: {STATES_PER_LEARNER} states each, 1 review log per state"
    )
    results: list[StudyFigures] = []
    stored = MEASURED_STATES
    for size in SIZES:
        started = time.perf_counter()
        made, before = others_seed(add=size - stored, pool=pool, start=world.learners, now=now, rng=rng)
        copied = time.perf_counter() - started
        logs_derive(after_id=before, profile_id=profile_id)
        derived = time.perf_counter() - started - copied
        if not world.reviewer_tokens:
            world.reviewer_tokens = [token_for(learner_id) for learner_id in made[:HTTP_CLIENTS]]
        world.learners += len(made)
        tables_analyze()
        analyzed = time.perf_counter() - started - copied - derived
        memories, logs = table_counts()
        stored = memories
        print(
            f"\n== {memories:,} card states / {logs:,} review logs / {world.learners:,} learners "
            f"(seeded: COPY {copied:.1f} s, logs INSERT..SELECT {derived:.1f} s, VACUUM ANALYZE {analyzed:.1f} s)"
        )
        figures = study_measure(world=world, size=memories, rng=rng, explain=explain and size == SIZES[-1])
        results.append(figures)
        print(
            f"  study: p50 {figures.p50_ms:.1f} ms, p99 {figures.p99_ms:.1f} ms, Django CPU {figures.cpu_ms:.1f} ms "
            f"({STUDY_TIMED} timed after {STUDY_WARMUP} warm-up; load {figures.load:.1f}); response {figures.counts}"
        )
        _queries_print("queries per study GET", figures.study)
        _queries_print("queries per review POST", figures.review)

    trivial_count = trivial_queries(world.reviewer_tokens[0])
    print(
        f"\n== review throughput over HTTP at {stored:,} card states: {web_describe()}, "
        f"{HTTP_CLIENTS} client threads with one learner token each, {HTTP_ROUNDS} rounds of {HTTP_SECONDS:.0f} s"
    )
    trivial, review = throughput_measure(world)

    first, last = results[0], results[-1]
    print("\n== summary ==")
    print(f"{'card states':>12} {'study p50':>10} {'study p99':>10} {'CPU/study':>10} {'q/study':>8} {'q/review':>9}")
    for figures in results:
        print(
            f"{figures.size:>12,} {figures.p50_ms:>8.1f}ms {figures.p99_ms:>8.1f}ms {figures.cpu_ms:>8.1f}ms "
            f"{_spread(figures.study.totals):>8} {_spread(figures.review.totals):>9}"
        )
    ratio = last.p50_ms / first.p50_ms
    verdict = "met" if ratio <= 1.5 else "MISSED"
    print(
        f"study p50 {last.size:,} / {first.size:,}: {ratio:.2f}x (target <= 1.5: {verdict}); "
        f"Django CPU per study request {last.cpu_ms / first.cpu_ms:.2f}x"
    )
    control = sorted({word for f in results for word in f.study.control + f.review.control})
    worst = max(max(f.study.totals + f.review.totals) for f in results)
    worst_statements = max(max(f.study.statements + f.review.statements) for f in results)
    # The target counts SQL queries; BEGIN/COMMIT are transaction control and are shown apart.
    print(
        f"SQL queries per request (token lookup included): max {worst_statements} "
        f"(target <= 8: {'met' if worst_statements <= 8 else 'MISSED'}); with transaction control "
        f"({'/'.join(control) or 'none'}) max {worst}. A learner's first review ever also stores their settings "
        "row; no SAVEPOINT here: the bench runs in autocommit."
    )
    print(
        f"HTTP trivial endpoint = GET {TRIVIAL_PATH} ({trivial_count} queries incl. token): {trivial.rps:.0f} req/s, "
        f"p50 {_p(trivial.latencies, 0.5):.1f} ms, server CPU {trivial.server_cpu_ms:.1f} ms/request; "
        f"review POST: {review.rps:.0f} req/s, p50 {_p(review.latencies, 0.5):.1f} ms, "
        f"server CPU {review.server_cpu_ms:.1f} ms/request; non-2xx: {trivial.bad or 0} / {review.bad or 0}"
    )
    http_ratio = review.rps / trivial.rps if trivial.rps else 0.0
    verdict = "met" if http_ratio >= 0.5 else "MISSED"
    if trivial.bad or review.bad:
        verdict = "INVALID: some answers were not 2xx, see above"
    print(f"review_rps / trivial_rps (2xx answers only): {http_ratio:.2f} (target >= 0.5: {verdict})")
    print(f"total run time {time.perf_counter() - run_started:.0f} s")


if __name__ == "__main__":
    old_config = setup_databases(verbosity=0, interactive=False)
    try:
        main(explain="--explain" in sys.argv[1:])
    finally:
        teardown_databases(old_config, verbosity=0)
