"""The production web server: granian serving quizsite.wsgi, behind nginx (docs/operations.md).

Run: `python -m quizsite.server [--address A] [--port P] [--workers N]`. The flags win over the
environment (WEB_ADDRESS, WEB_PORT, WEB_CONCURRENCY), which wins over the defaults below.

Chosen by `python -m bench.http --compare` (docs/benchmarks.md): on this workload granian's WSGI
server with two single-threaded processes per CPU served every row at least as fast as gunicorn's
sync workers, and the framework's floor twice as fast, for less CPU per request. One process per CPU
left reviews and the course list waiting at four connections (a process idles while its request
waits on PostgreSQL, and nginx's kept-alive connections need not spread evenly over few processes);
two threads per process did about as well as two processes but share one GIL; Django under
uvicorn's ASGI was three to eight times slower.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import Any

APPLICATION = "quizsite.wsgi:application"
# Only the proxy on this host reaches the server. Django trusts X-Forwarded-Proto from any peer
# (SECURE_PROXY_SSL_HEADER), and the throttles X-Forwarded-For with NUM_PROXIES set: a client that
# could reach the server directly could claim https or any address. Where nginx runs on another host,
# bind a private address that only it can reach.
DEFAULT_ADDRESS = "127.0.0.1"
DEFAULT_PORT = 8000
# Requests run on one Python thread per process, so they never queue for a GIL; a second process per
# CPU (PROCESSES_PER_CPU) fills the time a request waits on PostgreSQL or Redis. nginx holds slow
# clients, so no thread ever waits on one.
BLOCKING_THREADS = 1
PROCESSES_PER_CPU = 2
# Connections, parsing and keep-alive run in Rust, outside the GIL; one runtime thread keeps up
# with the Python thread (the bare callable served 47,000 requests/s per two processes here).
RUNTIME_THREADS = 1
# A client (nginx) that opens a connection must send its whole head within this, as nginx's own
# client_header_timeout asks of the clients in front of it.
HEADER_READ_TIMEOUT_MS = 10_000
# On a restart or deploy (SIGTERM, SIGHUP), a worker finishes the requests it has for this long.
WORKERS_KILL_TIMEOUT_SECONDS = 30


def cpus() -> int:
    """CPUs this process may run on (its affinity, which a container's cpuset narrows)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS has no affinity
        return os.cpu_count() or 1


def default_workers() -> int:
    return max(2, PROCESSES_PER_CPU * cpus())


@dataclass(frozen=True)
class ServerSettings:
    address: str
    port: int
    # PROCESSES_PER_CPU per CPU, at least two, so that a worker being replaced after a crash does not
    # leave the host unable to answer. Each keeps one PostgreSQL connection.
    workers: int
    # The benchmarks serve their own applications with these same settings.
    application: str = APPLICATION
    factory: bool = False


def settings_from(argv: list[str] | None = None, environ: dict[str, str] | None = None) -> ServerSettings:
    environ = dict(os.environ) if environ is None else environ
    parser = argparse.ArgumentParser(prog="python -m quizsite.server", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--address", default=environ.get("WEB_ADDRESS") or DEFAULT_ADDRESS)
    parser.add_argument("--port", type=int, default=int(environ.get("WEB_PORT") or DEFAULT_PORT))
    parser.add_argument("--workers", type=int, default=int(environ.get("WEB_CONCURRENCY") or default_workers()))
    parser.add_argument("--application", default=APPLICATION, help=argparse.SUPPRESS)
    parser.add_argument("--factory", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    return ServerSettings(
        address=args.address, port=args.port, workers=args.workers, application=args.application, factory=args.factory
    )


def server_for(settings: ServerSettings) -> Any:
    """granian's server with this project's settings, not yet serving."""
    from granian.constants import HTTPModes, Interfaces
    from granian.http import HTTP1Settings
    from granian.log import LogLevels
    from granian.server import Server

    return Server(
        settings.application,
        factory=settings.factory,
        address=settings.address,
        port=settings.port,
        interface=Interfaces.WSGI,
        workers=settings.workers,
        blocking_threads=BLOCKING_THREADS,
        runtime_threads=RUNTIME_THREADS,
        # nginx speaks HTTP/1.1 to its upstreams; nothing here uses WebSockets.
        http=HTTPModes.http1,
        websockets=False,
        http1_settings=HTTP1Settings(header_read_timeout=HEADER_READ_TIMEOUT_MS, keep_alive=True),
        log_level=LogLevels(os.environ.get("LOG_LEVEL", "INFO").lower()),
        respawn_failed_workers=True,
        workers_kill_timeout=WORKERS_KILL_TIMEOUT_SECONDS,
    )


def main(argv: list[str] | None = None) -> None:
    server_for(settings_from(argv)).serve()


if __name__ == "__main__":
    main()
