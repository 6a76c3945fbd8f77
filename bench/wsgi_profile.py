"""Where a request's CPU goes inside the project's WSGI application, endpoint by endpoint.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizsite_bench python -m bench.wsgi_profile [--requests 2000]
     [--endpoint study] [--sort tottime] [--lines 40]
It builds bench.http's world (a test database, dropped afterwards, and a private redis-server), then, in a
child process on the production settings (DEBUG off, rate limits lifted), calls quizsite.wsgi.application
directly with a WSGI environ, as a WSGI server's worker would, for each endpoint: warm-up requests first,
then `--requests` timed ones, the CPU time per request printed, then the same under cProfile, whose top
lines it prints. No HTTP server is involved, so the figures are the application's own share of what
bench.http measures through the server.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import itertools
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench.http_floor import FLOOR_API_PATH, FLOOR_DJANGO_PATH, FLOOR_DRF_PATH

WARMUP = 50
ENDPOINTS = ("floor_django", "floor_drf", "floor_api", "courses", "study", "review")
# Served by bench.http_floor's application, which has the project's URLs behind the two empty views.
FLOOR_PATHS = {"floor_django": FLOOR_DJANGO_PATH, "floor_drf": FLOOR_DRF_PATH, "floor_api": FLOOR_API_PATH}


def _environ(method: str, path: str, token: str, body: bytes = b"") -> dict[str, Any]:
    return {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1",
        "HTTP_AUTHORIZATION": f"Token {token}",
        "CONTENT_TYPE": "application/json" if body else "",
        "CONTENT_LENGTH": str(len(body)) if body else "",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }


def _environs(endpoint: str, world: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if endpoint in FLOOR_PATHS:
        while True:
            yield _environ("GET", FLOOR_PATHS[endpoint], world["measured_token"])
    if endpoint == "courses":
        while True:
            yield _environ("GET", "/api/v1/courses/", world["measured_token"])
    if endpoint == "study":
        while True:
            yield _environ("GET", world["study_path"], world["measured_token"])
    tokens = itertools.cycle(world["reviewer_tokens"])
    cards = itertools.cycle(world["deck_card_ids"])
    while True:
        payload = {"card": next(cards), "rating": 3, "client_review_id": str(uuid.uuid4())}
        yield _environ("POST", "/api/v1/reviews/", next(tokens), json.dumps(payload).encode())


def _call(application: Callable[..., Any], environ: dict[str, Any]) -> None:
    statuses: list[str] = []
    body = application(environ, lambda status, headers, exc_info=None: statuses.append(status))
    b"".join(body)
    body.close()
    if not statuses[0].startswith(("200", "201")):
        raise RuntimeError(f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']}: {statuses[0]}")


def child(world_path: str, endpoints: list[str], requests: int, sort: str, lines: int) -> None:
    """Runs in the production settings: times, then profiles, each endpoint."""
    from bench.http_floor import floor_application

    # The floor's application serves the project's URLs too, so every endpoint runs in the same process.
    application = floor_application()
    world = json.loads(Path(world_path).read_text(encoding="utf-8"))
    for endpoint in endpoints:
        environs = _environs(endpoint, world)
        for _ in range(WARMUP):
            _call(application, next(environs))
        prepared = [next(environs) for _ in range(requests)]
        cpu, wall = time.process_time(), time.perf_counter()
        for environ in prepared:
            _call(application, environ)
        cpu_ms = (time.process_time() - cpu) * 1000 / requests
        wall_ms = (time.perf_counter() - wall) * 1000 / requests
        print(f"\n=== {endpoint}: {cpu_ms:.3f} ms CPU, {wall_ms:.3f} ms wall per request ({requests} requests)")
        prepared = [next(environs) for _ in range(requests)]
        profile = cProfile.Profile()
        profile.enable()
        for environ in prepared:
            _call(application, environ)
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(sort).print_stats(lines)
        print(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--endpoint", choices=ENDPOINTS, action="append")
    parser.add_argument("--sort", default="tottime", help="pstats sort key (tottime, cumulative, ...)")
    parser.add_argument("--lines", type=int, default=40)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    endpoints = args.endpoint or list(ENDPOINTS)
    if args.child:
        child(args.child, endpoints, args.requests, args.sort, args.lines)
        return

    from bench.stack import unthrottled

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.test_settings")
    os.environ.update(unthrottled())
    import django

    django.setup()
    from bench.http import world_build
    from bench.stack import bench_database, database_url, production_env, redis_server

    with bench_database(), redis_server() as redis, tempfile.TemporaryDirectory(prefix="wsgi-profile-") as tmp:
        world = world_build(scale=False, connections=4)
        world_path = Path(tmp) / "world.json"
        data = {
            "measured_token": world.measured_token,
            "reviewer_tokens": world.reviewer_tokens[1:],
            "deck_card_ids": world.deck_card_ids,
            "study_path": world.study_path,
        }
        world_path.write_text(json.dumps(data), encoding="utf-8")
        env = production_env(database=database_url(), redis=redis, **unthrottled())
        command = [sys.executable, "-m", "bench.wsgi_profile", "--child", str(world_path)]
        command += [f"--requests={args.requests}", f"--sort={args.sort}", f"--lines={args.lines}"]
        command += [f"--endpoint={endpoint}" for endpoint in endpoints]
        subprocess.run(command, env=env, check=True)


if __name__ == "__main__":
    main()
