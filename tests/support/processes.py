"""Server processes that fault tests start, stop and kill themselves, on ports nobody else uses."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

import pytest
from django.db import connection


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on at the moment of asking."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until(check, *, timeout: float, interval: float = 0.05, what: str = "the condition") -> None:
    """Poll `check` until it returns true; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(interval)
    raise AssertionError(f"{what} did not happen within {timeout} s")


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


class RedisServer:
    """A private redis-server: nothing on disk, bound to 127.0.0.1 on its own port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        if self.process is not None and self.process.poll() is None:
            return
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server is not installed")
        self.process = subprocess.Popen(
            [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(lambda: port_open(self.port), timeout=10, what=f"redis-server on port {self.port} starting")

    def stop(self) -> None:
        """Stop it at once, as a crash would: clients see refused connections from now on."""
        if self.process is None:
            return
        self.process.kill()
        self.process.wait(timeout=10)
        self.process = None


@contextmanager
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def worker_database_url() -> str:
    """The test database as a URL, for the worker processes a test starts."""
    settings = connection.settings_dict
    host = quote(settings["HOST"], safe="")  # a Unix socket's folder (the embedded server) is a host too
    port = f":{settings['PORT']}" if settings["PORT"] else ""
    return f"postgres://{settings['USER']}@{host}{port}/{settings['NAME']}"
