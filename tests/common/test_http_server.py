"""The production web server (quizsite/server.py) behind nginx with the shipped quizsite/nginx_proxy.conf,
over raw sockets: slow clients hold nothing of the server's, and requests that cannot be read are
answered in the API's JSON error shape."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from quizsite.nginx import PROXY_CONF, nginx_binary, nginx_in_front
from quizsite.server import WORKERS_KILL_TIMEOUT_SECONDS
from tests.support.paths import REPO_ROOT
from tests.support.processes import free_port, port_open, wait_until, worker_database_url

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

LOGIN = "/api/v1/auth/login/"


def _proxy_setting(pattern: str) -> int:
    """A number from the shipped proxy settings, so the tests hold the file to what it says."""
    found = re.search(pattern, PROXY_CONF.read_text())
    assert found is not None, pattern
    return int(found.group(1))


# How long nginx waits between two reads from a client before it drops the connection.
CLIENT_TIMEOUT_SECONDS = _proxy_setting(r"client_body_timeout (\d+)s;")
CONNECTIONS_PER_ADDRESS = _proxy_setting(r"limit_conn per_address (\d+);")
# A test machine may be busy.
DEADLINE_SLACK_SECONDS = 2.5
# Answered well before a stalled client would be dropped: a request queued behind stalled ones waits that long.
UNSTALLED_SECONDS = CLIENT_TIMEOUT_SECONDS / 2


@dataclass
class Front:
    port: int  # nginx's
    pid: int  # the server's main process
    log: Path

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def children(pid: int) -> list[int]:
    """The live child processes of `pid` (the server's workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry.name))
    return sorted(found)


def _healthz_answers(port: int) -> bool:
    if not port_open(port):
        return False
    try:
        return exchange(port, get("/healthz"), timeout=5).status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def front(django_db_setup: None) -> Iterator[Front]:
    """The server as production starts it, with one worker, against the test database, behind nginx."""
    if nginx_binary() is None:
        pytest.skip("nginx is not installed (apt-get install nginx-light)")
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "quizsite.test_settings",
        "DATABASE_URL": worker_database_url(),
        "LOG_LEVEL": "WARNING",
    }
    with tempfile.NamedTemporaryFile(prefix="test-web-", suffix=".log") as log:
        command = [sys.executable, "-m", "quizsite.server", "--port", str(port), "--workers", "1"]
        process = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        running = Front(port=0, pid=process.pid, log=Path(log.name))
        try:
            try:
                wait_until(lambda: _healthz_answers(port), timeout=60, what="the server answering /healthz")
            except AssertionError as exc:
                raise AssertionError(f"{exc}; its log ends:\n{running.log_tail()}") from None
            with nginx_in_front(port=free_port(), upstream_port=port, processes="1") as proxy:
                running.port = proxy.port
                yield running
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=WORKERS_KILL_TIMEOUT_SECONDS + 5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def get(path: str, *, version: str = "1.1") -> bytes:
    return f"GET {path} HTTP/{version}\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode()


def post_head(path: str, length: int, *, content_type: str = "application/json", extra: str = "") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {length}\r\n{extra}\r\n"
    ).encode()


def read_answers(sock: socket.socket) -> list[Answer]:
    """The responses on a connection, read until the server closes it."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    answers = []
    while data:
        head, _, data = data.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
        if headers.get("transfer-encoding") == "chunked":
            body, data = dechunk(data)
        else:
            length = int(headers.get("content-length", len(data)))
            body, data = data[:length], data[length:]
        answers.append(Answer(status=int(status_line.split()[1]), headers=headers, body=body))
    return answers


def dechunk(data: bytes) -> tuple[bytes, bytes]:
    """A chunked body, and what follows it."""
    body = b""
    while True:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            return body, data.partition(b"\r\n")[2]
        body, data = body + data[:size], data[size + 2 :]


def read_answer(sock: socket.socket) -> Answer:
    [answer] = read_answers(sock)
    return answer


def exchange(port: int, request: bytes, *, timeout: float = 10.0) -> Answer:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        return read_answer(sock)


def assert_error_shape(answer: Answer, status: int, code: str) -> None:
    assert answer.status == status, answer
    assert answer.headers["content-type"] == "application/json", answer
    body = answer.json()
    assert set(body) == {"error"}, body
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"], body
    assert body["error"]["fields"] == {}, body


def stalled_after(port: int, request: bytes) -> tuple[socket.socket, float]:
    sock = socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT_SECONDS + 10)
    sock.sendall(request)
    return sock, time.monotonic()


def test_slow_clients_hold_nothing_and_are_dropped(front: Front) -> None:
    # More stalled requests than the server has threads: each announces 100 bytes and sends 2.
    stalled = [stalled_after(front.port, post_head(LOGIN, 100) + b'{"') for _ in range(6)]
    # One that stops in the middle of its head.
    stalled.append(stalled_after(front.port, b"GET /healthz HTTP/1.1\r\nHost: loc"))
    try:
        started = time.monotonic()
        answer = exchange(front.port, get("/healthz"), timeout=5)
        assert time.monotonic() - started < UNSTALLED_SECONDS, front.log_tail()
        assert answer.status == 200, answer

        for sock, sent_at in stalled:
            assert read_answers(sock) == []  # nginx closes a stalled connection without an answer
            waited = time.monotonic() - sent_at
            assert CLIENT_TIMEOUT_SECONDS - 0.5 <= waited <= CLIENT_TIMEOUT_SECONDS + DEADLINE_SLACK_SECONDS, waited
    finally:
        for sock, _ in stalled:
            sock.close()


def test_clients_that_keep_their_end_open_do_not_stall_the_server(front: Front) -> None:
    lingering = [socket.create_connection(("127.0.0.1", front.port), timeout=5) for _ in range(3)]
    try:
        for sock in lingering:
            sock.sendall(get("/healthz", version="1.0"))
        for sock in lingering:
            assert sock.recv(12).endswith(b" 200")
        started = time.monotonic()
        assert exchange(front.port, get("/healthz"), timeout=5).status == 200
        assert time.monotonic() - started < UNSTALLED_SECONDS
    finally:
        for sock in lingering:
            sock.close()


def test_a_request_that_arrives_in_pieces_or_awaits_100_continue_is_served(front: Front) -> None:
    body = b'{"email": "nobody@example.com"}'
    with socket.create_connection(("127.0.0.1", front.port), timeout=10) as sock:
        sock.sendall(post_head(LOGIN, len(body))[:30])
        time.sleep(0.3)
        sock.sendall(post_head(LOGIN, len(body))[30:] + body[:5])
        time.sleep(0.3)
        sock.sendall(body[5:])
        # The login refuses it for the missing password: the view read the whole body.
        answer = read_answer(sock)
    assert answer.status == 400 and "password" in answer.json()["error"]["fields"], answer

    with socket.create_connection(("127.0.0.1", front.port), timeout=10) as sock:
        sock.sendall(post_head(LOGIN, len(body), extra="Expect: 100-continue\r\n"))
        assert sock.recv(64) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body)
        answer = read_answer(sock)
    assert answer.status == 400 and "password" in answer.json()["error"]["fields"], answer


def test_a_chunked_body_reaches_the_application_whole(front: Front) -> None:
    body = b'{"email": "nobody@example.com"}'
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:7], body[7:])) + b"0\r\n\r\n"
    head = post_head(LOGIN, 0).replace(b"Content-Length: 0", b"Transfer-Encoding: chunked")
    answer = exchange(front.port, head + chunked)
    assert answer.status == 400 and "password" in answer.json()["error"]["fields"], answer


@pytest.mark.parametrize(
    ("request_bytes", "status", "code"),
    [
        pytest.param(b"GARBAGE\r\n\r\n", 400, "bad_request", id="bad request line"),
        pytest.param(b"GET /healthz HTTP/7.0\r\nHost: localhost\r\n\r\n", 400, "bad_request", id="HTTP version"),
        pytest.param(
            b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n",
            431,
            "headers_too_large",
            id="oversized header",
        ),
        pytest.param(
            b"GET /healthz HTTP/1.1\r\n" + b"".join(b"X-H%d: %s\r\n" % (n, b"a" * 7000) for n in range(5)) + b"\r\n",
            431,
            "headers_too_large",
            id="headers larger than the buffers in all",
        ),
        pytest.param(b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n", 414, "uri_too_long", id="request line too long"),
        pytest.param(
            b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nBad Header: x\r\n\r\n", 400, "bad_request", id="bad header"
        ),
        pytest.param(
            post_head(LOGIN, 0).replace(b": 0", b": abc") + b"{}", 400, "bad_request", id="bad Content-Length"
        ),
        pytest.param(
            post_head(LOGIN, 2, extra="Content-Length: 3\r\n") + b"{} ", 400, "bad_request", id="two Content-Lengths"
        ),
        pytest.param(
            b"POST /api/v1/auth/login/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
            400,
            "bad_request",
            id="chunked garbage",
        ),
        pytest.param(
            b"POST /api/v1/auth/login/ HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: foo, chunked\r\n\r\n",
            501,
            "not_implemented",
            id="unsupported transfer coding",
        ),
        pytest.param(
            b"POST /api/v1/auth/login/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
            501,
            "not_implemented",
            id="a coding nothing here decodes, before chunked",
        ),
        pytest.param(
            b"POST /api/v1/auth/login/ HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\n{}",
            501,
            "not_implemented",
            id="a coding without chunked",
        ),
        pytest.param(
            post_head(LOGIN, settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1), 413, "too_large", id="body over the limit"
        ),
    ],
)
def test_requests_the_proxy_cannot_read_are_answered_in_the_error_shape(
    front: Front, request_bytes: bytes, status: int, code: str
) -> None:
    assert_error_shape(exchange(front.port, request_bytes), status, code)


def _nested(opening: bytes, closing: bytes, depth: int) -> bytes:
    return opening * depth + b"1" + closing * depth


@pytest.mark.parametrize(
    ("body", "content_type", "status", "code"),
    [
        pytest.param(
            b"[" * 100_000 + b"]" * 100_000, "application/json", 400, "malformed_json", id="arrays 100,000 deep"
        ),
        # As deep as objects go under the body limit (6 bytes a level): refused for its depth.
        pytest.param(
            _nested(b'{"a":', b"}", 40_000), "application/json", 400, "malformed_json", id="objects 40,000 deep"
        ),
        # Objects 100,000 deep are larger than the body limit: refused for their size, unread.
        pytest.param(_nested(b'{"a":', b"}", 100_000), "application/json", 413, "too_large", id="objects 100,000 deep"),
        # The API parses JSON only; Django's form parser, which the admin uses, does not nest.
        pytest.param(
            b"a" + b"[a]" * 50_000 + b"=1",
            "application/x-www-form-urlencoded",
            415,
            "unsupported_media_type",
            id="form",
        ),
    ],
)
def test_deeply_nested_bodies_are_refused_in_the_error_shape(
    front: Front, body: bytes, content_type: str, status: int, code: str
) -> None:
    request = post_head(LOGIN, len(body), content_type=content_type) + body
    if len(body) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
        # Refused on its Content-Length alone: nginx answers without reading the rest, and a client
        # still sending it would have its connection reset.
        request = request[: 64 * 1024]
    assert_error_shape(exchange(front.port, request), status, code)


def test_trace_refused_by_the_proxy_is_a_405_in_the_error_shape_naming_options(front: Front) -> None:
    answer = exchange(front.port, b"TRACE /api/v1/courses/ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    assert_error_shape(answer, 405, "method_not_allowed")
    assert answer.headers["allow"] == "OPTIONS"
    # OPTIONS, which it names, reaches the application and says what the resource takes.
    options = exchange(front.port, b"OPTIONS /api/v1/courses/ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    assert "GET" in options.headers["allow"], options


def test_one_address_holding_its_share_of_connections_cannot_take_the_rest(front: Front) -> None:
    """Requests from one address beyond its share are refused at once; another address is served."""
    held = []
    try:
        for _ in range(CONNECTIONS_PER_ADDRESS):
            # Each has sent its head, so nginx counts it, and then holds back its body.
            held.append(stalled_after(front.port, post_head(LOGIN, 100) + b'{"')[0])
        time.sleep(0.3)
        answer = exchange(front.port, get("/healthz"), timeout=5)
        assert_error_shape(answer, 429, "too_many_connections")
        assert answer.headers["retry-after"] == "1"
        # Another client address (all of 127.0.0.0/8 is this host) is not held back.
        with socket.create_connection(("127.0.0.1", front.port), timeout=5, source_address=("127.0.0.2", 0)) as other:
            started = time.monotonic()
            other.sendall(get("/healthz"))
            assert read_answer(other).status == 200
            assert time.monotonic() - started < UNSTALLED_SECONDS
        # A connection that closes gives its place back.
        held.pop().close()
        time.sleep(0.3)
        assert exchange(front.port, get("/healthz"), timeout=5).status == 200
    finally:
        for sock in held:
            sock.close()


def test_a_worker_that_dies_is_started_again(front: Front) -> None:
    # Last in this module: it takes the server's one worker away for a few seconds.
    [worker] = children(front.pid)
    os.kill(worker, signal.SIGKILL)
    wait_until(lambda: children(front.pid) not in ([], [worker]), timeout=30, what="a new worker process")
    wait_until(lambda: _healthz_answers(front.port), timeout=30, what="the new worker answering through nginx")
