"""Offline review sync at scale: late 1,000-review batches against long histories, and 20 uploads at once.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizsite_bench python -m bench.sync \\
         [--sizes 1000,10000,100000] [--batches 5] [--concurrent 20] [--explain]
It creates (and afterwards drops) a test database, starts a private redis-server and the
production web server (quizsite/server.py), with the request rate limits lifted.

One learner per size has that many stored reviews over CARDS cards, REVIEWS_PER_DAY a day up to a day
ago, written straight into the tables (COPY) with the states scheduling.replay gives, so the stored
history is what the service would have made. Each timed batch is 1,000 reviews over 500 of the
learner's reviewed cards, each dated up to LATE_WINDOW before its card's last review: every one is
late and replays its card's tail. Then `--concurrent` batches of 1,000 reviews of the largest learner,
on POOL_CARDS shared cards, times shuffled over the last POOL_DAYS days, are sent at once; the
database must then equal a full replay of the accepted batches, and hold none of the refused ones.
Targets: p50 <= 2 s at 100k stored reviews and p50 growth 1k -> 100k <= 2x; no 5xx and every answer
within 30 s when sent at once.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import statistics
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.test_settings")

import django

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from bench.stack import (  # noqa: E402
    bench_database,
    log_tail,
    production_env,
    redis_server,
    unthrottled,
    web_describe,
    web_server,
)

CARDS = 1000
REVIEWS_PER_DAY = 100
BATCH = 1000
CARDS_PER_BATCH = 500
LATE_WINDOW = timedelta(days=3)
POOL_CARDS = 300
POOL_DAYS = 30
# Ratings in the proportions learners give them: Again, Hard, Good, Easy.
RATING_WEIGHTS = (0.1, 0.15, 0.6, 0.15)
REQUEST_TIMEOUT_SECONDS = 180
_COPY_CHUNK_ROWS = 20_000
_LOG_COLUMNS = (
    "learner_id, card_id, kind, client_review_id, rating, reviewed_at, duration_ms, source, "
    "state_before, state_after, profile_id, recorded_at"
)


@dataclass
class Learner:
    id: int
    token: str
    stored: int
    # Each reviewed card's last review: a late review of it is dated before that.
    last_review: dict[int, datetime]


@dataclass
class Answer:
    status: int
    seconds: float
    retry_after: str | None
    body: bytes
    sent: list[str] = field(default_factory=list)


def _ts(moment: datetime) -> str:
    return moment.isoformat(sep=" ")


def _p(samples: list[float], quantile: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * quantile))]


def cards_seed() -> list[int]:
    from apps.content.models import Card, Course, Deck, Lesson

    course = Course.objects.create(slug="sync-course", title="Sync course")
    lesson = Lesson.objects.create(course=course, slug="sync-lesson", title="Sync lesson", position=0)
    deck = Deck.objects.create(lesson=lesson, slug="sync-deck", title="Sync deck", position=0)
    cards = Card.objects.bulk_create(
        Card(deck=deck, slug=f"card-{i}", term=f"term {i}", definition=f"definition {i}", position=i)
        for i in range(CARDS)
    )
    return [card.pk for card in cards]


def learner_seed(*, name: str, reviews: int, card_ids: list[int], end: datetime, rng: random.Random) -> Learner:
    """A learner with `reviews` stored reviews ending at `end`, and the memory rows they leave."""
    from django.contrib.auth import get_user_model

    from apps.accounts.devices import device_token_issue
    from apps.srs.core.scheduling import Rating, ReviewEvent, replay
    from apps.srs.models import CardMemory, ReviewLog, SchedulingSettings
    from apps.srs.reviews.memory import memory_state_store
    from apps.srs.settings.config import scheduler_config_from_settings
    from apps.srs.settings.services import scheduler_profile_ensure

    user = get_user_model().objects.create_user(username=name, password=None)
    settings = SchedulingSettings(learner=user)
    config = scheduler_config_from_settings(settings)
    profile_id = scheduler_profile_ensure(config)
    step = timedelta(days=1) / REVIEWS_PER_DAY
    start = end - step * reviews
    by_card: dict[int, list[ReviewEvent]] = defaultdict(list)
    for index in range(reviews):
        at = start + step * index + timedelta(seconds=rng.randrange(int(step.total_seconds())))
        rating = Rating(rng.choices(range(1, 5), weights=RATING_WEIGHTS)[0])
        by_card[rng.choice(card_ids)].append(ReviewEvent(at, str(uuid.uuid4()), rating, config))
    stamp = _ts(datetime.now(UTC))
    memories = []

    def lines() -> Iterator[str]:
        for card_id, events in by_card.items():
            events.sort()
            states = replay(events, learner_id=user.pk, card_id=card_id)
            before = "\\N"
            for event, state in zip(events, states, strict=True):
                after = json.dumps(state.to_dict())
                yield (
                    f"{user.pk}\t{card_id}\treview\t{event.review_id}\t{int(event.rating)}\t{_ts(event.reviewed_at)}\t"
                    f"4000\tdeck\t{before}\t{after}\t{profile_id}\t{stamp}\n"
                )
                before = after
            memory = CardMemory(learner=user, card_id=card_id, first_review=events[0].reviewed_at)
            memory_state_store(memory, states[-1])
            memory.is_leech = states[-1].lapses >= settings.leech_threshold
            memories.append(memory)

    with (
        connection.cursor() as cursor,
        cursor.copy(f"COPY {ReviewLog._meta.db_table} ({_LOG_COLUMNS}) FROM STDIN") as copy,
    ):
        chunk: list[str] = []
        for line in lines():
            chunk.append(line)
            if len(chunk) >= _COPY_CHUNK_ROWS:
                copy.write("".join(chunk))
                chunk.clear()
        copy.write("".join(chunk))
    CardMemory.objects.bulk_create(memories, batch_size=2000)
    token = device_token_issue(user=user, device_name=None).key
    return Learner(
        id=user.pk,
        token=token,
        stored=reviews,
        last_review={memory.card_id: memory.last_review for memory in memories},
    )


def late_batch(learner: Learner, rng: random.Random) -> list[dict[str, Any]]:
    """BATCH reviews over CARDS_PER_BATCH reviewed cards, each older than its card's last review."""
    cards = rng.sample(sorted(learner.last_review), min(CARDS_PER_BATCH, len(learner.last_review)))
    window = LATE_WINDOW.total_seconds()
    reviews = []
    for index in range(BATCH):
        card = cards[index % len(cards)]
        at = learner.last_review[card] - timedelta(seconds=rng.uniform(60, window))
        reviews.append(_body(card, at, rng))
    rng.shuffle(reviews)
    return reviews


def pool_batch(learner: Learner, pool: list[int], end: datetime, rng: random.Random) -> list[dict[str, Any]]:
    """BATCH reviews on the shared cards, times anywhere in the last POOL_DAYS days, in no order."""
    span = timedelta(days=POOL_DAYS).total_seconds()
    return [_body(rng.choice(pool), end - timedelta(seconds=rng.uniform(0, span)), rng) for _ in range(BATCH)]


def _body(card: int, at: datetime, rng: random.Random) -> dict[str, Any]:
    return {
        "card": card,
        "rating": rng.choices(range(1, 5), weights=RATING_WEIGHTS)[0],
        "client_review_id": str(uuid.uuid4()),
        "reviewed_at": at.isoformat(),
        "duration_ms": rng.randrange(1500, 9000),
    }


def post_batch(port: int, token: str, reviews: list[dict[str, Any]]) -> Answer:
    body = json.dumps({"reviews": reviews}).encode()
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_SECONDS)
    started = time.perf_counter()
    try:
        client.request("POST", "/api/v1/reviews/batch/", body=body, headers=headers)
        response = client.getresponse()
        content = response.read()
        answer = Answer(response.status, time.perf_counter() - started, response.getheader("Retry-After"), content)
    except OSError as error:
        answer = Answer(0, time.perf_counter() - started, None, repr(error).encode())
    finally:
        client.close()
    answer.sent = [review["client_review_id"] for review in reviews]
    return answer


def in_process_batch(learner: Learner, reviews: list[dict[str, Any]], *, explain: bool) -> tuple[int, str]:
    """One late batch through the service in this process: its SQL statements, and the slowest ones."""
    from django.contrib.auth import get_user_model

    from apps.srs.reviews.services import ReviewInput, reviews_submit

    user = get_user_model().objects.get(pk=learner.id)
    inputs = [
        ReviewInput(
            card_id=review["card"],
            rating=review["rating"],
            client_review_id=uuid.UUID(review["client_review_id"]),
            reviewed_at=datetime.fromisoformat(review["reviewed_at"]),
            duration_ms=review["duration_ms"],
        )
        for review in reviews
    ]
    timed: list[tuple[float, str]] = []

    def timer(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            timed.append(((time.perf_counter() - started) * 1000, " ".join(sql.split())[:90]))

    with connection.execute_wrapper(timer), CaptureQueriesContext(connection) as captured:
        reviews_submit(learner=user, reviews=inputs, now=datetime.now(UTC))
    statements = [q["sql"] for q in captured.captured_queries]
    detail = "; ".join(f"{ms:.0f} ms {sql[:48]}" for ms, sql in sorted(timed, reverse=True)[:4])
    if explain:
        tail_sql = next(sql for sql in statements if "LATERAL" in sql)
        rewrite_sql = next(sql for sql in statements if "jsonb_to_recordset" in sql)
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {tail_sql}")
            plan = [row[0] for row in cursor.fetchall()]
            cursor.execute(f"EXPLAIN {rewrite_sql}")
            rewrite_plan = [row[0] for row in cursor.fetchall()]
        print("  EXPLAIN ANALYZE of the tails query (first 30 lines):")
        print("\n".join("    " + line for line in plan[:30]))
        print("  EXPLAIN of the states rewrite:")
        print("\n".join("    " + line for line in rewrite_plan))
    return len(statements), detail


def database_replays(learner_id: int, card_ids: set[int] | None = None) -> tuple[int, list[str]]:
    """Compare every (or the given) card's memory and standing reviews with a full replay; returns reviews, faults."""
    from apps.srs.core.scheduling import Rating, ReviewEvent, replay
    from apps.srs.models import CardMemory, ReviewKind, ReviewLog, SchedulerProfile
    from apps.srs.reviews.memory import memory_state_of
    from apps.srs.settings.config import scheduler_config_from_json

    configs = {
        pk: scheduler_config_from_json(config) for pk, config in SchedulerProfile.objects.values_list("pk", "config")
    }
    logs = ReviewLog.objects.filter(learner_id=learner_id, kind=ReviewKind.REVIEW, undone_by__isnull=True)
    memories = CardMemory.objects.filter(learner_id=learner_id)
    if card_ids is not None:
        logs, memories = logs.filter(card_id__in=card_ids), memories.filter(card_id__in=card_ids)
    by_card: dict[int, list[Any]] = defaultdict(list)
    for row in logs.values_list(
        "card_id", "reviewed_at", "client_review_id", "rating", "profile_id", "state_before", "state_after"
    ).iterator(chunk_size=10_000):
        by_card[row[0]].append(row)
    memory_of = {memory.card_id: memory_state_of(memory) for memory in memories}
    faults: list[str] = []
    for card_id in sorted(set(by_card) | set(memory_of)):
        rows = sorted(by_card.get(card_id, []), key=lambda row: (row[1], str(row[2])))
        events = [ReviewEvent(row[1], str(row[2]), Rating(row[3]), configs[row[4]]) for row in rows]
        states = replay(events, learner_id=learner_id, card_id=card_id)
        if (states[-1] if states else None) != memory_of.get(card_id):
            faults.append(f"card {card_id}: memory differs from the replay of its {len(rows)} reviews")
        before: dict[str, Any] | None = None
        for row, state in zip(rows, states, strict=True):
            after = state.to_dict()
            if (row[5], row[6]) != (before, after):
                faults.append(f"card {card_id}: review {row[2]} stores states other than the replay's")
                break
            before = after
    return sum(len(rows) for rows in by_card.values()), faults


def present(learner_id: int, client_ids: list[str]) -> int:
    from apps.srs.models import ReviewLog

    return ReviewLog.objects.filter(learner_id=learner_id, client_review_id__in=client_ids).count()


def duplicates(learner_id: int) -> int:
    from apps.srs.models import ReviewLog

    logs = ReviewLog.objects.filter(learner_id=learner_id, kind="review")
    return logs.count() - logs.values("client_review_id").distinct().count()


def vacuum() -> None:
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")


def concurrent_run(*, port: int, learner: Learner, batches: list[list[dict[str, Any]]]) -> list[Answer]:
    answers: list[Answer | None] = [None] * len(batches)
    barrier = threading.Barrier(len(batches))

    def send(index: int) -> None:
        barrier.wait(timeout=60)
        answers[index] = post_batch(port, learner.token, batches[index])

    threads = [threading.Thread(target=send, args=(index,)) for index in range(len(batches))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=REQUEST_TIMEOUT_SECONDS + 60)
    assert all(answer is not None for answer in answers), "a client thread never finished"
    return [answer for answer in answers if answer is not None]


def arguments_parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="stored reviews per measured learner")
    parser.add_argument("--batches", type=int, default=5, help="timed late batches per size")
    parser.add_argument("--concurrent", type=int, default=20, help="batches sent at once at the end")
    parser.add_argument("--workers", type=int, help="web server processes (default: quizsite/server.py's)")
    parser.add_argument("--explain", action="store_true", help="EXPLAIN ANALYZE the tails query at the largest size")
    return parser.parse_args()


def main() -> None:
    args = arguments_parse()
    sizes = [int(size) for size in args.sizes.split(",")]
    rng = random.Random(20261130)
    run_started = time.perf_counter()
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
    with bench_database() as database:
        print(f"database {database.rsplit('/', 1)[-1]}; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.1f}")
        card_ids = cards_seed()
        learners = []
        for size in sizes:
            started = time.perf_counter()
            learners.append(learner_seed(name=f"learner-{size}", reviews=size, card_ids=card_ids, end=end, rng=rng))
            print(
                f"learner with {size:,} reviews over {len(learners[-1].last_review):,} of {CARDS:,} cards, "
                f"{REVIEWS_PER_DAY} a day up to {end:%Y-%m-%d}: seeded (replay + COPY) in "
                f"{time.perf_counter() - started:.1f} s"
            )
        vacuum()
        with redis_server() as redis:
            env = production_env(database=database, redis=redis, **unthrottled())
            with web_server(env=env, token=learners[0].token, workers=args.workers) as server:
                print(f"web: {web_describe(workers=args.workers)}; Redis: private\n")
                figures = late_batches_measure(port=server.port, learners=learners, batches=args.batches, rng=rng)
                in_process_report(learners=learners, rng=rng, explain=args.explain)
                concurrent_ok = concurrent_measure(
                    port=server.port, learner=learners[-1], count=args.concurrent, end=end, rng=rng
                )
                if not concurrent_ok:
                    print(f"web server log ends:\n{log_tail(server.log_path)}")
        summary_print(sizes=sizes, figures=figures)
    print(f"total run time {time.perf_counter() - run_started:.0f} s")


def late_batches_measure(
    *, port: int, learners: list[Learner], batches: int, rng: random.Random
) -> dict[int, list[float]]:
    # Every worker thread opens its database connection on its first request: not part of a batch's cost.
    for _ in range(8):
        warm = post_batch(port, learners[0].token, late_batch(learners[0], rng)[:20])
        assert warm.status == 200, warm.body[:300]
    figures: dict[int, list[float]] = {learner.stored: [] for learner in learners}
    print(f"== late batches: {BATCH:,} reviews over {CARDS_PER_BATCH} cards, each up to {LATE_WINDOW.days} days "
          f"before its card's last review; {batches} per size, one at a time over HTTP, the sizes taking "
          "turns so that a busy spell on the machine falls on all of them")  # fmt: skip
    for _ in range(batches):
        for learner in learners:
            answer = post_batch(port, learner.token, late_batch(learner, rng))
            if answer.status != 200:
                raise RuntimeError(f"a late batch got {answer.status}: {answer.body[:500]!r}")
            results = json.loads(answer.body)["results"]
            assert all(result["replayed"] for result in results), "every review of a late batch must replay"
            figures[learner.stored].append(answer.seconds)
    for learner in learners:
        samples = figures[learner.stored]
        print(
            f"  {learner.stored:>7,} stored: p50 {statistics.median(samples):.2f} s, p99 {_p(samples, 0.99):.2f} s "
            f"({', '.join(f'{s:.2f}' for s in samples)})"
        )
    print(f"  load average after: {os.getloadavg()[0]:.1f}")
    return figures


def in_process_report(*, learners: list[Learner], rng: random.Random, explain: bool) -> None:
    print("== the same batch in this process, through the service: SQL statements and the slowest ones")
    for learner in learners:
        count, detail = in_process_batch(learner, late_batch(learner, rng), explain=explain and learner is learners[-1])
        print(f"  {learner.stored:>7,} stored: {count} statements; slowest: {detail}")


def concurrent_measure(*, port: int, learner: Learner, count: int, end: datetime, rng: random.Random) -> bool:
    pool = rng.sample(sorted(learner.last_review), min(POOL_CARDS, len(learner.last_review)))
    batches = [pool_batch(learner, pool, end, rng) for _ in range(count)]
    print(
        f"\n== {count} batches of {BATCH:,} at once for the {learner.stored:,}-review learner: {len(pool)} shared "
        f"cards, times shuffled over the last {POOL_DAYS} days"
    )
    started = time.perf_counter()
    answers = concurrent_run(port=port, learner=learner, batches=batches)
    wall = time.perf_counter() - started
    statuses: dict[int, int] = defaultdict(int)
    for answer in answers:
        statuses[answer.status] += 1
    codes = sorted({json.loads(a.body)["error"]["code"] for a in answers if a.status == 409})
    retry_after = sorted({a.retry_after for a in answers if a.status == 409 and a.retry_after})
    slowest = max(answer.seconds for answer in answers)
    print(
        f"  statuses {dict(sorted(statuses.items()))} (409 codes {codes}, Retry-After {retry_after}); "
        f"answer times p50 {statistics.median(a.seconds for a in answers):.1f} s, max {slowest:.1f} s; "
        f"all in {wall:.1f} s"
    )
    accepted = [a for a in answers if a.status == 200]
    refused = [a for a in answers if a.status == 409]
    missing = sum(len(a.sent) - present(learner.id, a.sent) for a in accepted)
    leaked = sum(present(learner.id, a.sent) for a in refused)
    reviews, faults = database_replays(learner.id)
    doubled = duplicates(learner.id)
    print(
        f"  database: accepted reviews missing {missing}, refused reviews present {leaked}, duplicate client ids "
        f"{doubled}; full replay of all {reviews:,} standing reviews: {len(faults)} faults"
        + (f" e.g. {faults[:3]}" if faults else "")
    )
    retried = [post_batch(port, learner.token, batches[answers.index(a)]) for a in refused]
    if retried:
        touched = {review["card"] for batch in batches for review in batch}
        _, after_faults = database_replays(learner.id, touched)
        print(
            f"  the {len(refused)} refused batches sent again one by one: statuses "
            f"{sorted(a.status for a in retried)}; then {len(after_faults)} faults on the shared cards"
        )
    server_errors = sum(n for status, n in statuses.items() if status >= 500 or status == 0)
    ok = not (server_errors or missing or leaked or doubled or faults) and set(statuses) <= {200, 409}
    print(
        f"  5xx or no answer: {server_errors} (target 0); slowest answer {slowest:.1f} s (target <= 30 s): "
        + ("met" if ok and slowest <= 30 else "MISSED")
    )
    return ok


def summary_print(*, sizes: list[int], figures: dict[int, list[float]]) -> None:
    print("\n== summary: a late batch of 1,000 reviews ==")
    print(f"{'stored reviews':>15} {'p50':>8} {'p99':>8}")
    for size in sizes:
        print(f"{size:>15,} {statistics.median(figures[size]):>7.2f}s {_p(figures[size], 0.99):>7.2f}s")
    first, last = statistics.median(figures[sizes[0]]), statistics.median(figures[sizes[-1]])
    growth = last / first
    print(
        f"p50 at {sizes[-1]:,}: {last:.2f} s (target <= 2 s: {'met' if last <= 2 else 'MISSED'}); "
        f"growth {sizes[0]:,} -> {sizes[-1]:,}: {growth:.2f}x (target <= 2x: {'met' if growth <= 2 else 'MISSED'})"
    )


if __name__ == "__main__":
    main()
