"""The web servers and worker models bench/http.py compares, each started the same way on a free port.

A model names a server (gunicorn, granian, uvicorn), its interface (WSGI or ASGI) and how many processes
and threads it runs; an app names what it serves, as each server spells a target. Every model is
started with its arguments only (no config file but the one a model names), so the table shows the
model, not a file's other settings.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from bench.stack import REPO_ROOT, Server, free_port, web_stop, web_wait
from quizsite.server import cpus, default_workers


@dataclass(frozen=True)
class App:
    """What a server serves: a WSGI target, its ASGI twin, and whether both are factories to call."""

    wsgi: str
    asgi: str
    factory: bool = False


BARE = App(wsgi="bench.http_bare:application", asgi="bench.http_bare:asgi_application")
FLOOR = App(wsgi="bench.http_floor:floor_application", asgi="bench.http_floor:floor_asgi_application", factory=True)
PROJECT = App(wsgi="quizsite.wsgi:application", asgi="quizsite.asgi:application")


@dataclass(frozen=True)
class ServerModel:
    key: str
    server: str  # gunicorn, granian or uvicorn
    processes: int
    threads: int
    # gunicorn's worker class.
    worker_class: str = "sync"
    # Started as production starts it (python -m quizsite.server), with its settings.
    production: bool = False

    @property
    def label(self) -> str:
        if self.server == "gunicorn":
            return f"gunicorn {self.worker_class}, {self.processes} x {self.threads}"
        if self.server == "granian":
            production = " (quizsite.server)" if self.production else ""
            return f"granian WSGI, {self.processes} x {self.threads}{production}"
        return f"uvicorn ASGI, {self.processes} processes"

    def command(self, app: App, port: int) -> list[str]:
        bind = ["127.0.0.1", str(port)]
        if self.server == "gunicorn":
            target = app.wsgi + ("()" if app.factory else "")
            threads = ["--threads", str(self.threads)] if self.worker_class == "gthread" else []
            return [
                sys.executable, "-m", "gunicorn", target, "--worker-class", self.worker_class, *threads,
                "--workers", str(self.processes), "--bind", ":".join(bind), "--log-level", "warning",
            ]  # fmt: skip
        if self.production:
            return [
                sys.executable, "-m", "quizsite.server", "--application", app.wsgi,
                *(["--factory"] if app.factory else []),
                "--address", bind[0], "--port", bind[1], "--workers", str(self.processes),
            ]  # fmt: skip
        if self.server == "granian":
            return [
                sys.executable, "-m", "granian", "--interface", "wsgi", "--workers", str(self.processes),
                "--blocking-threads", str(self.threads), "--runtime-threads", "1", "--no-ws",
                "--host", bind[0], "--port", bind[1], "--log-level", "warning", "--no-access-log",
                *(["--factory"] if app.factory else []), app.wsgi,
            ]  # fmt: skip
        return [
            sys.executable, "-m", "uvicorn", "--workers", str(self.processes), "--host", bind[0], "--port", bind[1],
            "--log-level", "warning", "--no-access-log", "--lifespan", "off",
            *(["--factory"] if app.factory else []), app.asgi,
        ]  # fmt: skip


MODELS = {
    model.key: model
    for model in (
        # The production server as quizsite/server.py starts it, with its default processes.
        ServerModel("granian", "granian", processes=default_workers(), threads=1, production=True),
        ServerModel("granian-1", "granian", processes=cpus(), threads=1),
        ServerModel("granian-2t", "granian", processes=cpus(), threads=2),
        ServerModel("gunicorn-sync", "gunicorn", processes=cpus(), threads=1),
        ServerModel("gunicorn-sync-2", "gunicorn", processes=2 * cpus(), threads=1),
        ServerModel("gunicorn-gthread", "gunicorn", processes=cpus(), threads=4, worker_class="gthread"),
        ServerModel("uvicorn", "uvicorn", processes=cpus(), threads=1),
    )
}


@contextmanager
def serving(model: ServerModel, app: App, *, env: Mapping[str, str], token: str, ready_path: str) -> Iterator[Server]:
    """`model` serving `app` on a free port, answering `ready_path` before the block starts."""
    port = free_port()
    with tempfile.NamedTemporaryFile(prefix=f"bench-{model.key}-", suffix=".log") as log:
        process = subprocess.Popen(
            model.command(app, port), cwd=REPO_ROOT, env=dict(env), stdout=log, stderr=subprocess.STDOUT
        )
        try:
            web_wait(process, port, token, log.name, path=ready_path)
            yield Server(process=process, port=port, log_path=log.name)
        finally:
            web_stop(process)


# A slow client sends a request head a few bytes at a time, this long apart, as slowloris does.
SLOW_CLIENT_BYTE_SECONDS = 1.0


class SlowClients:
    """`count` connections that each trickle a request head, forever, reconnecting when the server closes one.

    Started beside a measured run: a server that gives each of them a worker or a thread serves the
    measured clients with what is left.
    """

    def __init__(self, port: int, count: int) -> None:
        self.port = port
        self.count = count
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.reconnects = 0

    def _trickle(self) -> None:
        head = b"POST /api/v1/auth/login/ HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n"
        while not self._stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
                    for byte in head * 1000:
                        sock.sendall(bytes([byte]))
                        if self._stop.wait(SLOW_CLIENT_BYTE_SECONDS):
                            return
            except OSError:
                self.reconnects += 1
                self._stop.wait(0.1)

    def __enter__(self) -> SlowClients:
        for _ in range(self.count):
            thread = threading.Thread(target=self._trickle, daemon=True)
            thread.start()
            self._threads.append(thread)
        # Let every one of them reach the server before the measured run starts.
        time.sleep(1.0)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=10)
