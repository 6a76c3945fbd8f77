"""Throttle checks against Redis: time per check, and the Redis work each request costs.

Run: python -m bench.throttle
It starts a private redis-server, so the command counts (INFO commandstats) are the benchmark's alone,
and uses the configured default cache and rates (REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]). No database:
the checks run a view's check_throttles directly, as DRF does before every view.

Three kinds of request:
- write: POST to a view of scope "reviews" (rates reviews_learner and reviews_ip), as a review is;
- read: GET counted by the general rate "learner";
- busy read: 1,000 GETs in a row by one learner, whose counted history then holds up to 1,000 requests.
Writes and reads are spread over 20 learners at 20 addresses, 50 each, so none is refused.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from bench.stack import redis_server

CHECKS = 1_000
ROUNDS = 5
LEARNERS = 20
WARMUP = 100


@dataclass
class Counts:
    clients: int = 0
    round_trips: int = 0


@contextmanager
def counted() -> Iterator[Counts]:
    """Counts redis.Redis objects made and commands sent (a pipeline or script is one send) while open."""
    import redis
    from redis.connection import AbstractConnection

    counts = Counts()
    original_init = redis.Redis.__init__
    original_send = AbstractConnection.send_packed_command

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        counts.clients += 1
        original_init(self, *args, **kwargs)

    def send(self: Any, *args: Any, **kwargs: Any) -> None:
        counts.round_trips += 1
        original_send(self, *args, **kwargs)

    redis.Redis.__init__ = init  # type: ignore[method-assign]
    AbstractConnection.send_packed_command = send  # type: ignore[method-assign]
    try:
        yield counts
    finally:
        redis.Redis.__init__ = original_init  # type: ignore[method-assign]
        AbstractConnection.send_packed_command = original_send  # type: ignore[method-assign]


def server_commands(client: Any) -> dict[str, int]:
    stats: dict[str, Any] = client.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


def requests(method: str, first_learner: int, learners: int, per_learner: int) -> list[Any]:
    from django.contrib.auth import get_user_model
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory

    factory = APIRequestFactory()
    made = []
    for _ in range(per_learner):
        for offset in range(learners):
            learner = first_learner + offset
            request = Request(factory.generic(method, "/bench/", REMOTE_ADDR=f"10.{learner // 250}.{learner % 250}.1"))
            request.user = get_user_model()(pk=learner, username=f"bench-{learner}")  # never saved
            made.append(request)
    return made


def measure(name: str, check: Callable[[Any], None], batches: list[list[Any]], redis_client: Any) -> None:
    """Times each batch (ROUNDS of CHECKS requests) and counts the Redis work of the first."""
    per_check: list[float] = []
    for round_index, batch in enumerate(batches):
        before = server_commands(redis_client)
        with counted() as counts:
            started = time.perf_counter()
            for request in batch:
                check(request)
            elapsed = time.perf_counter() - started
        after = server_commands(redis_client)
        per_check.append(elapsed / len(batch) * 1e6)
        if round_index == 0:
            commands = {
                command: after[command] - before.get(command, 0)
                for command in after
                if command != "info" and after[command] != before.get(command, 0)
            }
            total = sum(commands.values())
            spread = ", ".join(f"{command} {calls / len(batch):g}" for command, calls in sorted(commands.items()))
            print(
                f"{name}: redis.Redis made {counts.clients / len(batch):g}/request, "
                f"round trips {counts.round_trips / len(batch):g}/request, "
                f"server commands {total / len(batch):g}/request ({spread})"
            )
    print(
        f"{name}: {statistics.median(per_check):.1f} µs per check (median of {len(per_check)} rounds of "
        f"{len(batches[0])}; min {min(per_check):.1f}, max {max(per_check):.1f})"
    )


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.test_settings")
    with redis_server() as url:
        os.environ["REDIS_URL"] = url
        import django

        django.setup()
        from django.conf import settings
        from django.core.cache import DEFAULT_CACHE_ALIAS, caches
        from rest_framework.views import APIView

        from apps.common.throttling import ScopedAddressRateThrottle, ScopedLearnerRateThrottle

        class WriteView(APIView):
            throttle_scope = "reviews"
            throttle_classes = [ScopedLearnerRateThrottle, ScopedAddressRateThrottle]

        class ReadView(APIView):
            pass

        write_view, read_view = WriteView(), ReadView()
        cache: Any = caches[DEFAULT_CACHE_ALIAS]
        print(f"cache: {settings.CACHES['default']['BACKEND']} at {url}; python {sys.version.split()[0]}")
        print(f"rates: {settings.REST_FRAMEWORK['DEFAULT_THROTTLE_RATES']}")
        redis_client = cache._cache.get_client(write=True)

        def refused(view: APIView) -> Callable[[Any], None]:
            def check(request: Any) -> None:
                view.check_throttles(request)  # raises Throttled: no request here may be refused

            return check

        per_learner = CHECKS // LEARNERS
        warm = requests("POST", 1_000_000, 1, WARMUP)
        for request in warm:
            refused(write_view)(request)
            refused(read_view)(request)

        def spread(method: str, start: int) -> list[list[Any]]:
            return [
                requests(method, start + round_index * LEARNERS, LEARNERS, per_learner) for round_index in range(ROUNDS)
            ]

        measure("write (2 throttles)", refused(write_view), spread("POST", 1_000), redis_client)
        measure("read (1 throttle)", refused(read_view), spread("GET", 2_000), redis_client)
        busy = [requests("GET", 3_000 + round_index, 1, CHECKS) for round_index in range(ROUNDS)]
        measure("busy read (history 0..1,000)", refused(read_view), busy, redis_client)


if __name__ == "__main__":
    main()
