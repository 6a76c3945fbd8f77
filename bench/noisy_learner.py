"""One noisy learner beside others: the others' latency with and without 1,000-review uploads hammering the server.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizsite_bench python -m bench.noisy_learner \\
         [--seconds 20] [--measured 3] [--uploaders 8]
It creates (and afterwards drops) a test database, loads the shipped course, starts a private
redis-server and the production web server (quizsite/server.py), with the request
rates of learners and of reviews lifted: the measured learners are never throttled, and the noisy
one may send as many uploads as it can. That is harder than the shipped limits, under which the
noisy learner is answered 429 after 120 uploads a minute.

Each measured learner loops over what a learner does while studying: fetch the deck's study queue,
then record one review. First alone (the baseline), then while the noisy learner keeps `--uploaders`
uploads of 1,000 offline reviews each in flight, sending the next as soon as one is answered, whatever
the answer: once waiting as each refusal's Retry-After says (a heavy client within its limits),
once ignoring it (a hostile one, a flood of requests). Printed: the measured learners' p50 and p99
in each phase, their ratios to the baseline, and what the noisy learner's uploads were answered.
Target: the others' p99 within 2x of their baseline.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import threading
import time
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.test_settings")

import django

django.setup()

from bench.stack import bench_database, production_env, redis_server, web_describe, web_server  # noqa: E402

REQUEST_TIMEOUT_SECONDS = 60.0
BATCH = 1000


def _quantile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def learners_create(count: int) -> list[tuple[int, str]]:
    from django.contrib.auth import get_user_model

    from apps.accounts.devices import device_token_issue

    made = []
    for index in range(count):
        user = get_user_model().objects.create_user(username=f"bench-learner-{index}", password=None)
        made.append((user.pk, device_token_issue(user=user, device_name="Benchmark").key))
    return made


def course_load() -> tuple[str, list[int]]:
    import io

    from django.core.management import call_command

    from apps.content.models import Card, Deck

    call_command("load_decks", "decks", stdout=io.StringIO())
    deck = Deck.objects.filter(archived=False).order_by("pk").first()
    assert deck is not None, "the shipped course has no deck"
    cards = list(Card.objects.filter(deck=deck, archived=False).values_list("pk", flat=True))
    return deck.slug, cards


class Client:
    """One learner's keep-alive connection."""

    def __init__(self, port: int, token: str) -> None:
        self.port, self.token = port, token
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_SECONDS)

    def send(self, method: str, path: str, body: Any = None) -> tuple[int, float, str | None]:
        headers = {"Authorization": f"Token {self.token}", "Content-Type": "application/json"}
        payload = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        started = time.perf_counter()
        for attempt in range(2):
            try:
                self.connection.request(method, path, body=payload, headers=headers)
                response = self.connection.getresponse()
                response.read()
                if response.getheader("Connection", "").lower() == "close":
                    self.connection.close()
                return response.status, time.perf_counter() - started, response.getheader("Retry-After")
            except (OSError, http.client.HTTPException):
                self.connection.close()
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=REQUEST_TIMEOUT_SECONDS)
                if attempt:
                    return 0, time.perf_counter() - started, None
        return 0, time.perf_counter() - started, None


def studying(port: int, token: str, deck: str, cards: list[int], until: float, latencies: list[float]) -> Counter[int]:
    """Study queue, then a review, over and over until `until`; every answer's latency goes to `latencies`."""
    client = Client(port, token)
    statuses: Counter[int] = Counter()
    index = 0
    while time.monotonic() < until:
        status, seconds, _ = client.send("GET", f"/api/v1/decks/{deck}/study/?limit=15")
        statuses[status] += 1
        latencies.append(seconds)
        review = {"card": cards[index % len(cards)], "rating": 3, "client_review_id": str(uuid.uuid4())}
        index += 1
        status, seconds, _ = client.send("POST", "/api/v1/reviews/", review)
        statuses[status] += 1
        latencies.append(seconds)
    return statuses


def uploads_make(cards: list[int], count: int) -> list[bytes]:
    """Bodies of 1,000-review uploads, made before the noise starts so that making them takes no CPU from it."""
    start = datetime.now(UTC) - timedelta(days=200)
    bodies = []
    for upload in range(count):
        reviews = [
            {
                "card": cards[offset % len(cards)],
                "rating": 3,
                "client_review_id": str(uuid.uuid4()),
                "reviewed_at": (start + timedelta(minutes=upload * BATCH + offset)).isoformat(),
            }
            for offset in range(BATCH)
        ]
        bodies.append(json.dumps({"reviews": reviews}).encode())
    return bodies


def uploading(
    port: int, token: str, bodies: list[bytes], stop: threading.Event, answers: Counter[int], *, polite: bool
) -> None:
    """Uploads over and over; a polite client waits as long as a refusal's Retry-After says, a hostile one never."""
    client = Client(port, token)
    sent = 0
    while not stop.is_set():
        status, _, retry_after = client.send("POST", "/api/v1/reviews/batch/", bodies[sent % len(bodies)])
        sent += 1
        answers[status] += 1
        if polite and retry_after is not None:
            stop.wait(float(retry_after))


def phase(
    *,
    port: int,
    measured: list[tuple[int, str]],
    deck: str,
    cards: list[int],
    seconds: float,
    uploaders: int,
    noisy: str,
    polite: bool = True,
) -> tuple[list[float], Counter[int], Counter[int]]:
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    answers: Counter[int] = Counter()
    stop = threading.Event()
    bodies = uploads_make(cards, 40) if uploaders else []
    noise = [
        threading.Thread(target=uploading, args=(port, noisy, bodies, stop, answers), kwargs={"polite": polite})
        for _ in range(uploaders)
    ]
    for thread in noise:
        thread.start()
    if uploaders:
        time.sleep(2.0)  # the uploads are in flight before anything is measured
    until = time.monotonic() + seconds
    results: list[Counter[int]] = []

    def run(token: str) -> None:
        results.append(studying(port, token, deck, cards, until, latencies))

    threads = [threading.Thread(target=run, args=(token,)) for _, token in measured]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    for thread in noise:
        thread.join(timeout=REQUEST_TIMEOUT_SECONDS + 5)
    for counted in results:
        statuses.update(counted)
    return latencies, statuses, answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--measured", type=int, default=3)
    parser.add_argument("--uploaders", type=int, default=8)
    options = parser.parse_args()

    with bench_database() as database, redis_server() as redis:
        deck, cards = course_load()
        learners = learners_create(options.measured + 1)
        noisy, measured = learners[0][1], learners[1:]
        lifted = {f"THROTTLE_RATE_{scope}": "1000000/min" for scope in ("LEARNER", "REVIEWS_LEARNER", "REVIEWS_IP")}
        env = production_env(database=database, redis=redis, **lifted)
        with web_server(env=env, token=measured[0][1]) as server:
            print(f"server: {web_describe()}; {options.measured} measured learners, {len(cards)} cards")
            common: dict[str, Any] = {
                "port": server.port, "measured": measured, "deck": deck, "cards": cards, "seconds": options.seconds,
                "noisy": noisy,
            }  # fmt: skip
            base, base_statuses, _ = phase(**common, uploaders=0)
            polite, polite_statuses, polite_answers = phase(**common, uploaders=options.uploaders, polite=True)
            hostile, hostile_statuses, hostile_answers = phase(**common, uploaders=options.uploaders, polite=False)
    rows = [
        ("alone", base, base_statuses),
        (f"beside {options.uploaders} uploads, Retry-After kept", polite, polite_statuses),
        (f"beside {options.uploaders} uploads, Retry-After ignored", hostile, hostile_statuses),
    ]
    print(f"{'measured learners':<44} {'requests':>8} {'req/s':>7} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}  statuses")
    for name, samples, statuses in rows:
        print(
            f"{name:<44} {len(samples):>8} {len(samples) / options.seconds:>7.1f} "
            f"{statistics.median(samples) * 1000:>8.1f} {_quantile(samples, 0.99) * 1000:>8.1f} "
            f"{max(samples) * 1000:>8.1f}  {dict(sorted(statuses.items()))}"
        )
    for name, samples, answers in (("kept", polite, polite_answers), ("ignored", hostile, hostile_answers)):
        p50_ratio = statistics.median(samples) / statistics.median(base)
        p99_ratio = _quantile(samples, 0.99) / _quantile(base, 0.99)
        print(
            f"Retry-After {name}: the others' p50 {p50_ratio:.2f}x, p99 {p99_ratio:.2f}x their baseline "
            f"(target p99 <= 2x); the noisy learner's uploads were answered {dict(sorted(answers.items()))}"
        )


if __name__ == "__main__":
    main()
