"""The processes a benchmark runs the site on: a throwaway database, a private Redis, the web server, a Celery worker.

Each is a context manager that starts its process, waits (with a deadline) until it answers, and stops it
on the way out, so a failed run leaves nothing behind. bench_database() needs Django set up first.
"""

from __future__ import annotations

import http.client
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import quote

REPO_ROOT = Path(__file__).resolve().parent.parent
# A signed-in read that touches the database: the server answers it only once Django is up.
TRIVIAL_PATH = "/api/v1/courses/"
# Every rate of the throttles (see REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]), so a benchmark can lift them all.
THROTTLE_SCOPES = (
    "learner",
    "reviews_learner",
    "reviews_ip",
    "review_volume_learner",
    "submissions_ip",
    "login_ip",
    "account_ip",
    "bad_token_ip",
)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on at the moment of asking."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def _wait_until(check: Callable[[], bool], *, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not happen within {seconds:.0f} s")


def log_tail(path: str, chars: int = 3000) -> str:
    with open(path, encoding="utf-8", errors="replace") as log:
        return log.read()[-chars:]


def database_url() -> str:
    """The URL of the database Django's connection uses now (the test database once bench_database() made it)."""
    from django.db import connection

    settings = connection.settings_dict
    user = quote(settings.get("USER") or "")
    password = settings.get("PASSWORD") or ""
    auth = f"{user}:{quote(password)}@" if password else (f"{user}@" if user else "")
    return f"postgres://{auth}{settings.get('HOST') or '127.0.0.1'}:{settings.get('PORT') or 5432}/{settings['NAME']}"


@contextmanager
def bench_database() -> Iterator[str]:
    """A new, migrated test database (test_<NAME> of DATABASE_URL), dropped on the way out; yields its URL.

    Servers started inside the block must be stopped before it ends: PostgreSQL drops no database in use.
    """
    from django.test.utils import setup_databases, teardown_databases

    old_config = setup_databases(verbosity=0, interactive=False)
    try:
        yield database_url()
    finally:
        teardown_databases(old_config, verbosity=0)


@contextmanager
def redis_server() -> Iterator[str]:
    """A private redis-server on a free port, nothing on disk; yields its URL.

    Broker queues, results, throttle counters and the cache of one run then meet no one else's.
    """
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    command = [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_until(lambda: _port_open(port), seconds=15, what=f"redis-server answering on port {port}")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        _stop(process, grace=10)


def production_env(*, database: str, redis: str, **overrides: str) -> dict[str, str]:
    """The environment of the production settings (DEBUG off) on the given database and Redis.

    `overrides` go last, e.g. THROTTLE_RATE_LEARNER or GRADER_TIMING_ROUNDS.
    """
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "quizsite.settings",
        "DJANGO_DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": database,
        "REDIS_URL": redis,
        "CELERY_BROKER_URL": redis,
        "CELERY_RESULT_BACKEND": redis,
        "LOG_LEVEL": "WARNING",
        **overrides,
    }


def unthrottled(rate: str = "1000000/min") -> dict[str, str]:
    """Environment overrides that take every request rate limit out of the way."""
    return {f"THROTTLE_RATE_{scope.upper()}": rate for scope in THROTTLE_SCOPES} | {"SUBMISSIONS_PER_MINUTE": "100000"}


def web_args(port: int, *, workers: int | None = None) -> list[str]:
    """The production server's arguments (quizsite/server.py), on 127.0.0.1:`port`."""
    args = ["-m", "quizsite.server", "--port", str(port)]
    if workers is not None:
        args += ["--workers", str(workers)]
    return args


def web_describe(**options: int | None) -> str:
    """How the web server is started, for a benchmark's report."""
    args = web_args(0, **options)
    port = args.index("--port")
    return " ".join(["python", *args[:port], *args[port + 2 :]])


def web_start(
    port: int, log: IO[bytes], *, env: Mapping[str, str] | None = None, workers: int | None = None
) -> subprocess.Popen[bytes]:
    """Start the production web server; without `env`, on the test settings and the current database."""
    if env is None:
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "DJANGO_SETTINGS_MODULE": "quizsite.test_settings",
            "LOG_LEVEL": "WARNING",
        }
    command = [sys.executable, *web_args(port, workers=workers)]
    return subprocess.Popen(command, cwd=REPO_ROOT, env=dict(env), stdout=log, stderr=subprocess.STDOUT)


def web_wait(process: subprocess.Popen[bytes], port: int, token: str, log_path: str, path: str = TRIVIAL_PATH) -> None:
    """Wait (up to 60 s) until the server answers `path` with 200 for the token's learner."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            probe = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            probe.request("GET", path, headers={"Authorization": f"Token {token}"})
            status = probe.getresponse().status
            probe.close()
            if status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the web server did not answer on port {port}; its log ends:\n{log_tail(log_path)}")


def web_stop(process: subprocess.Popen[bytes]) -> None:
    _stop(process, grace=40)


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    port: int
    log_path: str


@contextmanager
def web_server(*, env: Mapping[str, str], token: str, workers: int | None = None) -> Iterator[Server]:
    """The production web server on a free port, answering a signed-in request before the block starts."""
    port = free_port()
    with tempfile.NamedTemporaryFile(prefix="bench-web-", suffix=".log") as log:
        process = web_start(port, log, env=env, workers=workers)
        try:
            web_wait(process, port, token, log.name)
            yield Server(process=process, port=port, log_path=log.name)
        finally:
            web_stop(process)


@dataclass
class Worker:
    process: subprocess.Popen[bytes]
    log_path: str


@contextmanager
def celery_worker(
    *, env: Mapping[str, str], queues: str = "default,gpu", concurrency: int = 1, ready_seconds: float = 180
) -> Iterator[Worker]:
    """A Celery worker (prefork) on `queues`, yielded once it reports itself ready.

    Its pool processes may still be starting their warm grading sandboxes then; a benchmark that
    must not measure that start waits for a first grading instead.
    """
    command = [
        sys.executable, "-m", "celery", "-A", "quizsite", "worker",
        "--queues", queues, "--pool", "prefork", "--concurrency", str(concurrency),
        "--hostname", f"bench-{uuid.uuid4().hex[:8]}@%h",
        "--without-mingle", "--without-gossip", "--loglevel", "INFO",
    ]  # fmt: skip
    with tempfile.NamedTemporaryFile(prefix="bench-celery-", suffix=".log") as log:
        # Its own process group, so pool processes and sandboxes left by a killed worker can be ended too.
        process = subprocess.Popen(
            command, cwd=REPO_ROOT, env=dict(env), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:

            def ready() -> bool:
                if process.poll() is not None:
                    raise RuntimeError(f"the Celery worker exited; its log ends:\n{log_tail(log.name)}")
                return " ready." in log_tail(log.name, 20_000)

            _wait_until(ready, seconds=ready_seconds, what="the Celery worker reporting ready")
            yield Worker(process=process, log_path=log.name)
        finally:
            # SIGTERM waits for a running grading; past the grace period a cold stop, then the group.
            _stop(process, grace=30, then=signal.SIGQUIT)
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)


def _stop(process: subprocess.Popen[bytes], *, grace: float, then: signal.Signals | None = None) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=grace)
        return
    except subprocess.TimeoutExpired:
        pass
    if then is not None:
        process.send_signal(then)
        try:
            process.wait(timeout=15)
            return
        except subprocess.TimeoutExpired:
            pass
    process.kill()
    process.wait(timeout=10)


def children(pid: int) -> list[int]:
    """Ids of the live child processes of `pid`, from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat_file:
                stat = stat_file.read()
        except OSError:
            continue
        # Fields after the command name (which may hold spaces or parentheses): state, then ppid.
        if int(stat[stat.rindex(")") + 2 :].split()[1]) == pid:
            found.append(int(entry))
    return sorted(found)


def rss_kib(pid: int) -> int | None:
    """Resident set size of a process (VmRSS), or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None
