"""gunicorn's threaded worker, made to hold up against clients that send slowly or send garbage.

Three changes to gunicorn's gthread worker (quizsite/gunicorn_conf.py selects this one):

- The worker's event loop reads each request, as nginx does, and hands a connection to a thread only
  once its whole request is in: the head, and a body of at most the app's body limit
  (DATA_UPLOAD_MAX_MEMORY_SIZE). A client that dribbles or stalls costs a connection slot, never a
  thread; a request that stops arriving is answered 408 and closed (REQUEST_IDLE_SECONDS,
  REQUEST_SECONDS).
- What a thread still reads from the socket (a larger body, which only the admin's uploads may
  send; a chunked body; the next of several pipelined requests) is held to the same limits.
- A request gunicorn cannot parse is answered in the API's JSON error shape, not gunicorn's HTML.
- One client address holds at most CONNECTIONS_PER_ADDRESS of a worker's connections; past that a
  new one is answered 429 and closed, so one host opening hundreds of slow connections cannot take
  every slot (worker_connections) from everyone else. The trusted proxy (forwarded_allow_ips, where
  nginx connects from) is not limited: nginx limits its own clients (limit_conn, docs/operations.md).

The event loop only decides when a request is complete, by running gunicorn's own parser over the
bytes so far; the thread then parses them again for real. A framing this loop misjudges can
therefore only change when a request is handed over, never how it is read.
"""

from __future__ import annotations

import datetime
import errno
import http
import io
import json
import os
import re
import selectors
import socket
import ssl
import threading
import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import Any

from django.core.exceptions import BadRequest
from gunicorn import util
from gunicorn.http.body import ChunkedReader, LengthReader
from gunicorn.http.errors import (
    ConfigurationProblem,
    ExpectationFailed,
    ForbiddenProxyRequest,
    InvalidResponseHeader,
    InvalidResponseHeaderName,
    LimitRequestHeaders,
    LimitRequestLine,
    NoMoreData,
    ParseException,
    UnsupportedTransferCoding,
)
from gunicorn.http.message import DEFAULT_MAX_HEADERFIELD_SIZE, MAX_HEADERS, MAX_REQUEST_LINE, Request
from gunicorn.http.unreader import IterUnreader, SocketUnreader
from gunicorn.http.wsgi import Response, default_environ
from gunicorn.workers import gthread

# Longest pause allowed between two reads of one request, and before the first byte of a new
# connection's first request. A client on a working network never pauses this long in the middle of
# a request, and nginx in front sends a request it has buffered in one go; gthread waits as long
# for a new connection's first bytes before it parks the connection.
REQUEST_IDLE_SECONDS = 5.0
# The whole request (head and body) must arrive within this long of its first byte, however steady
# the trickle: 256 KiB, the largest API body, takes 16 s at 128 kbit/s.
REQUEST_SECONDS = 30.0

# After the last response on a connection, how long and how much the worker keeps reading what the
# client still sends before closing, so that the kernel does not reset the connection under the
# response (RFC 9112 9.6). gunicorn's own values; the event loop does it, where gunicorn would block
# its event loop for up to this long on every client that does not close its end.
LINGER_SECONDS = 2.0
LINGER_BYTES = 64 * 1024

# Connections one client address may hold open on one worker at a time (environment: CONNECTIONS_PER_ADDRESS).
# A browser opens at most 6 to a host and a classroom behind one NAT a few dozen.
CONNECTIONS_PER_ADDRESS = int(os.environ.get("CONNECTIONS_PER_ADDRESS") or "64")

# Largest body the event loop buffers when Django's DATA_UPLOAD_MAX_MEMORY_SIZE is None (no limit):
# Django's own default for that setting.
UNLIMITED_BODY_BUFFER_BYTES = 2_621_440
# One read from a socket in the event loop; a buffered request is at most this much past its end.
_RECV_BYTES = 64 * 1024
# A line feed without its carriage return: gunicorn refuses the request as soon as it sees one.
_BARE_LF = re.compile(rb"(?<!\r)\n")
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class RequestTimeout(BadRequest):
    """The request's bytes stopped arriving, or took longer than REQUEST_SECONDS in all.

    A BadRequest, so that a read inside Django (a body over the buffered size) ends in Django's 400
    rather than a 500; anywhere else the worker answers 408.
    """


class _RequestClock:
    """The time limits of one request's reads, started by its first byte."""

    def __init__(self) -> None:
        self.started: float | None = None
        # After the response: gunicorn discards an unread body under its own deadline.
        self.draining = False

    def start(self, now: float) -> None:
        if self.started is None:
            self.started = now

    def reset(self) -> None:
        self.started = None
        self.draining = False

    def next_wait(self) -> float:
        """How long the next read may wait; RequestTimeout when the request's time is up."""
        now = time.monotonic()
        if self.started is None:
            self.started = now
        left = self.started + REQUEST_SECONDS - now
        if left <= 0:
            raise RequestTimeout(f"The request was not received within {REQUEST_SECONDS:g} s.")
        return min(REQUEST_IDLE_SECONDS, left)


class _TimedSocket:
    """The socket as gunicorn's request parser reads it: every recv waits at most what the clock allows.

    Writes go to the socket itself, untouched: responses are buffered by the proxy in front.
    """

    def __init__(self, sock: Any, clock: _RequestClock) -> None:
        self.sock = sock
        self.clock = clock

    def recv(self, size: int) -> bytes:
        if self.clock.draining:
            data: bytes = self.sock.recv(size)
            return data
        wait = self.clock.next_wait()
        prior = self.sock.gettimeout()
        self.sock.settimeout(wait)
        try:
            data = self.sock.recv(size)
        except TimeoutError:
            raise RequestTimeout(
                f"The request stopped arriving: nothing for {REQUEST_IDLE_SECONDS:g} s, "
                f"or more than {REQUEST_SECONDS:g} s in all."
            ) from None
        finally:
            self.sock.settimeout(prior)
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


class _IncomingRequest:
    """The bytes of one request as the event loop receives them, and whether it is complete yet."""

    def __init__(self, worker: BufferingThreadWorker, client: Any) -> None:
        self.worker = worker
        self.client = client
        self.data = bytearray()
        self.scanned = 0
        self.line_checked = False
        # Offset just past the body, once the head is parsed.
        self.end: int | None = None
        self.wants_continue = False

    def _dry_parse(self, data: bytes) -> Request | Exception | None:
        """gunicorn's own reading of `data`: a request, the error it would answer, or None for "more to come"."""
        try:
            return Request(self.worker.cfg, IterUnreader([data]), self.client)
        except (NoMoreData, StopIteration):
            return None
        except Exception as exc:  # the thread meets it again, and answers it
            return exc

    def complete(self) -> bool:
        """Whether to hand the connection to a thread: the request is in, or gunicorn may judge it as it is."""
        data = self.data
        if self.end is not None:
            return len(data) >= self.end
        since, self.scanned = self.scanned, len(data)
        head_end = data.find(b"\r\n\r\n", max(0, since - 3))
        if head_end >= 0:
            # Parsing the head also finds any bare line feed in it; the body may hold any bytes.
            return self._head_complete(head_end)
        if _BARE_LF.search(data, max(0, since - 1)) or len(data) > self.worker.max_head_bytes:
            return True
        if not self.line_checked:
            # A request line gunicorn refuses is answered at once, not after the timeout. Index 0
            # is skipped: gunicorn ignores one empty line before the request line.
            if data.find(b"\r\n", max(1, since - 1)) >= 0:
                self.line_checked = True
                return isinstance(self._dry_parse(bytes(data)), Exception)
            return len(data) > self.worker.max_line_bytes
        return False

    def _head_complete(self, head_end: int) -> bool:
        head = bytes(self.data[: head_end + 4])
        length = _plain_body_length(head)
        if length is None:
            request = self._dry_parse(head)
            if not isinstance(request, Request):
                return True
            reader = request.body.reader
            if not isinstance(reader, LengthReader):
                return True  # chunked: no length to wait for; the thread reads it
            length = reader.length
            self.wants_continue = bool(request._expected_100_continue)
        if length > self.worker.body_buffer_bytes:
            return True  # larger than any body the app takes: the thread reads what the app wants of it
        self.end = head_end + 4 + length
        self.wants_continue = self.wants_continue and len(self.data) < self.end
        return len(self.data) >= self.end


def _plain_body_length(head: bytes) -> int | None:
    """The body's length when the head states it the one plain way: at most one Content-Length, of
    digits, and no Transfer-Encoding or Expect. None for anything else, which gunicorn's parser reads.

    Most requests take this path, which costs a fraction of a parse. Where the head is otherwise
    malformed, the thread refuses it once the body is in (or the request times out).
    """
    length = None
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        name = name.lower()
        if name == b"content-length":
            value = value.strip(b" \t")
            if length is not None or not value.isdigit():
                return None
            length = int(value)
        elif name in (b"transfer-encoding", b"expect"):
            return None
    return length or 0


class _Connection(gthread.TConn):
    def __init__(self, cfg: Any, sock: socket.socket, client: Any, server: Any) -> None:
        super().__init__(cfg, sock, client, server)
        self.clock = _RequestClock()
        self.incoming: _IncomingRequest | None = None
        self.waiting_since = time.monotonic()
        self.last_byte_at = self.waiting_since
        self.continue_sent = False
        # Set by the worker: closes a socket gracefully without blocking its event loop.
        self.close_lingering: Callable[[socket.socket], None] | None = None
        # Set by the worker: told once when the connection closes, to count its address's connections.
        self.on_closed: Callable[[], None] | None = None

    def close(self, graceful: bool = False) -> None:
        if self.on_closed is not None:
            released, self.on_closed = self.on_closed, None
            released()
        if graceful and self.close_lingering is not None:
            self.close_lingering(self.sock)
        else:
            super().close(graceful)

    def init(self) -> None:
        super().init()
        unreader = getattr(self.parser, "unreader", None)
        if isinstance(unreader, SocketUnreader) and not isinstance(unreader.sock, _TimedSocket):
            unreader.sock = _TimedSocket(unreader.sock, self.clock)

    def read_deadline(self) -> float:
        if self.incoming is None or not self.incoming.data or self.clock.started is None:
            return self.waiting_since + REQUEST_IDLE_SECONDS
        return min(self.last_byte_at + REQUEST_IDLE_SECONDS, self.clock.started + REQUEST_SECONDS)


# gunicorn's parse errors, most specific first: the status and error code each is answered with.
_ERRORS: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], int, str], ...] = (
    # A header the application produced is the application's fault.
    ((InvalidResponseHeader, InvalidResponseHeaderName, ConfigurationProblem), 500, "server_error"),
    (RequestTimeout, 408, "request_timeout"),
    (LimitRequestLine, 414, "uri_too_long"),
    (LimitRequestHeaders, 431, "headers_too_large"),
    (UnsupportedTransferCoding, 501, "not_implemented"),
    (ExpectationFailed, 417, "expectation_failed"),
    ((ForbiddenProxyRequest, ssl.SSLError), 403, "permission_denied"),
    # Request line, method, version, header, Content-Length, chunk, PROXY line, scheme headers.
    (ParseException, 400, "bad_request"),
)
_SERVER_ERROR_MESSAGE = "Something went wrong on our side; it has been logged."
# Enough of gunicorn's description to find the fault, not an echo of a whole oversized header.
_MESSAGE_CHARS = 200


def _peer(client: Any) -> str:
    """The client's address for the log: an (address, port) pair, or a UNIX socket's empty name."""
    return str(client[0]) if isinstance(client, tuple) else str(client)


def _timeout_message() -> str:
    return (
        f"The request did not arrive in time: each part must follow within {REQUEST_IDLE_SECONDS:g} s "
        f"and the whole request within {REQUEST_SECONDS:g} s."
    )


def _classify(exc: BaseException) -> tuple[int, str]:
    for kinds, status, code in _ERRORS:
        if isinstance(exc, kinds):
            return status, code
    return 500, "server_error"


def error_response_bytes(status: int, code: str, message: str, *, retry_after: int | None = None) -> bytes:
    """A whole HTTP/1.1 response carrying the API's error body; the connection closes after it."""
    # Imported here: Django is set up only once the worker has loaded the app.
    from apps.common.errors import error_body

    body = json.dumps(error_body(code, message)).encode()
    head = (
        f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        + (f"Retry-After: {retry_after}\r\n" if retry_after is not None else "")
        + f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


def _refuse_codings_not_decoded(req: Any) -> None:
    """501 for a request body in a transfer coding besides chunked ("gzip, chunked"), as RFC 9112 6.1 advises.

    gunicorn reads the chunks and hands the app what is inside them still compressed: a JSON body
    would be refused as malformed, or a file stored compressed. A coding that does not end in chunked
    leaves the body's length unknown, which gunicorn answers 400 (RFC 9112 6.3), before this runs.
    """
    for name, value in req.headers:
        if name == "TRANSFER-ENCODING":
            codings = {coding.strip(" \t").lower() for coding in value.split(",")} - {"chunked"}
            if codings:
                raise UnsupportedTransferCoding(value)


class BufferingThreadWorker(gthread.ThreadWorker):
    """gthread, with requests read by the event loop and gunicorn's errors in the API's error shape."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cfg = self.cfg
        # Reading in the event loop needs the bytes as they come off the wire: not under TLS, and not
        # where a peer may open with an HTTP/2 preface or a PROXY line (the thread reads those itself).
        self.buffering = not cfg.is_ssl and cfg.http2_cleartext == "off" and cfg.proxy_protocol == "off"
        line = cfg.limit_request_line if 0 < cfg.limit_request_line <= MAX_REQUEST_LINE else MAX_REQUEST_LINE
        fields = cfg.limit_request_fields if 0 < cfg.limit_request_fields <= MAX_HEADERS else MAX_HEADERS
        field_size = cfg.limit_request_field_size if cfg.limit_request_field_size > 0 else DEFAULT_MAX_HEADERFIELD_SIZE
        # gunicorn refuses a head past these sizes; there is no point in buffering more of one.
        self.max_line_bytes = line + 4
        self.max_head_bytes = 2 + line + 2 + fields * (field_size + 2) + 4
        self.body_buffer_bytes = UNLIMITED_BODY_BUFFER_BYTES
        self.reading: set[_Connection] = set()
        # Sockets being closed gracefully: when to give up on each, and how much it has sent since.
        self.lingering: dict[socket.socket, list[float]] = {}
        # Open connections per client address; closes may happen on the request threads.
        self.per_address: Counter[str] = Counter()
        self.per_address_lock = threading.Lock()
        allowed = cfg.forwarded_allow_ips
        self.unlimited_addresses = {"*"} if allowed == "*" else {str(address) for address in allowed or ()}

    def load_wsgi(self) -> None:
        super().load_wsgi()
        from django.conf import settings

        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None:
            self.body_buffer_bytes = int(limit)

    # --- the event loop (main thread) ---------------------------------------------------------------

    def accept(self, listener: socket.socket) -> None:
        try:
            client_sock, client_addr = listener.accept()
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        address = _peer(client_addr)
        if not self._address_admitted(address):
            self.log.warning("Refused a connection from ip=%s: it holds %d already.", address, CONNECTIONS_PER_ADDRESS)
            client_sock.setblocking(False)
            self._answer_and_close(
                client_sock,
                error_response_bytes(
                    429,
                    "too_many_connections",
                    f"This address has {CONNECTIONS_PER_ADDRESS} connections open already; close some first.",
                    retry_after=1,
                ),
            )
            return
        self.nr_conns += 1
        conn = _Connection(self.cfg, client_sock, client_addr, listener.getsockname())
        conn.close_lingering = self._close_lingering
        if address not in self.unlimited_addresses and "*" not in self.unlimited_addresses:
            conn.on_closed = partial(self._address_released, address)
        if self.buffering:
            self._read_request(conn)
        else:
            self.enqueue_req(conn)

    def _address_admitted(self, address: str) -> bool:
        """Counts one more connection of this address; False (counting nothing) when it has its share."""
        if address in self.unlimited_addresses or "*" in self.unlimited_addresses or not address:
            return True
        with self.per_address_lock:
            if self.per_address[address] >= CONNECTIONS_PER_ADDRESS:
                return False
            self.per_address[address] += 1
            return True

    def _address_released(self, address: str) -> None:
        with self.per_address_lock:
            self.per_address[address] -= 1
            if self.per_address[address] <= 0:
                del self.per_address[address]

    def on_client_socket_readable(self, conn: Any, client: socket.socket) -> None:
        """A kept-alive connection's next request begins: read it here too."""
        if not (self.buffering and isinstance(conn, _Connection)):
            super().on_client_socket_readable(conn, client)
            return
        self.poller.unregister(client)
        self.keepalived_conns.remove(conn)
        self._read_request(conn)
        self._on_request_bytes(conn, client)

    def _read_request(self, conn: _Connection) -> None:
        conn.sock.setblocking(False)
        conn.incoming = _IncomingRequest(self, conn.client)
        conn.waiting_since = time.monotonic()
        conn.continue_sent = False
        self.reading.add(conn)
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_request_bytes, conn))

    def _on_request_bytes(self, conn: _Connection, client: socket.socket) -> None:
        incoming = conn.incoming
        if incoming is None:
            return
        try:
            data = conn.sock.recv(_RECV_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(conn)
            return
        if not data:
            # The client went away, with or without part of a request: nobody to answer.
            self._drop(conn)
            return
        now = time.monotonic()
        conn.clock.start(now)
        conn.last_byte_at = now
        incoming.data += data
        if incoming.complete():
            self._stop_reading(conn)
            self.enqueue_req(conn)
        elif incoming.wants_continue and not conn.continue_sent:
            # The client waits for this before sending its body (RFC 9110 10.1.1).
            try:
                sent = conn.sock.send(_CONTINUE)
            except OSError:
                sent = 0
            if sent != len(_CONTINUE):
                self._stop_reading(conn)
                self.enqueue_req(conn)
                return
            conn.continue_sent = True

    def _stop_reading(self, conn: _Connection) -> None:
        self.reading.discard(conn)
        self.poller.unregister(conn.sock)

    def _drop(self, conn: _Connection) -> None:
        self._stop_reading(conn)
        self.nr_conns -= 1
        conn.close()

    def murder_pending(self) -> None:
        """Also close connections whose request did not arrive in time (408 if any of it came), and
        lingering sockets whose time is up."""
        super().murder_pending()
        now = time.monotonic()
        for conn in [conn for conn in self.reading if conn.read_deadline() <= now]:
            started = conn.incoming is not None and bool(conn.incoming.data)
            self._stop_reading(conn)
            self.nr_conns -= 1
            if started:
                # Closed through its socket, after the answer: its address's place is given back now.
                if conn.on_closed is not None:
                    released, conn.on_closed = conn.on_closed, None
                    released()
                self.log.info("Request from ip=%s timed out before it was complete.", _peer(conn.client))
                self._answer_and_close(conn.sock, error_response_bytes(408, "request_timeout", _timeout_message()))
            else:
                conn.close()
        for sock in [sock for sock, (deadline, _) in self.lingering.items() if deadline <= now]:
            self._end_linger(sock)

    def _answer_and_close(self, sock: socket.socket, response: bytes) -> None:
        """Send a short answer without blocking, then close: the event loop never waits on a client."""
        try:
            sock.setblocking(False)
            sock.send(response)
        except OSError:
            util.close(sock)
            return
        self._close_lingering(sock)

    def _close_lingering(self, sock: socket.socket) -> None:
        try:
            sock.setblocking(False)
            sock.shutdown(socket.SHUT_WR)
            self.poller.register(sock, selectors.EVENT_READ, self._on_linger_bytes)
        except (OSError, ValueError, KeyError):
            util.close(sock)
            return
        self.lingering[sock] = [time.monotonic() + LINGER_SECONDS, 0]

    def _on_linger_bytes(self, sock: socket.socket) -> None:
        try:
            data = sock.recv(_RECV_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        entry = self.lingering[sock]
        entry[1] += len(data)
        if not data or entry[1] >= LINGER_BYTES:
            self._end_linger(sock)

    def _end_linger(self, sock: socket.socket) -> None:
        del self.lingering[sock]
        self.poller.unregister(sock)
        util.close(sock)

    # --- the threads ----------------------------------------------------------------------------------

    def handle(self, conn: Any) -> Any:
        if isinstance(conn, _Connection) and conn.incoming is not None:
            data = bytes(conn.incoming.data)
            conn.incoming = None
            conn.init()
            conn.parser.unreader.unread(data)
        try:
            return super().handle(conn)
        finally:
            if isinstance(conn, _Connection):
                conn.clock.reset()
                conn.continue_sent = False

    def handle_request(self, req: Any, conn: Any) -> bool:
        _refuse_codings_not_decoded(req)
        if isinstance(conn, _Connection):
            if conn.continue_sent:
                req._expected_100_continue = False
            self._take_body(req, conn)
        try:
            keepalive: bool = super().handle_request(req, conn)
            return keepalive
        finally:
            if isinstance(conn, _Connection):
                # gunicorn now discards what the app left unread, under its own deadline.
                conn.clock.draining = True

    def _take_body(self, req: Any, conn: _Connection) -> None:
        """Read a body of up to the buffered size before the app runs, so a stall is answered 408 here.

        A body sent with Content-Length is usually in memory already (the event loop waited for
        it); a chunked one is read here, and one past the limit is cut at limit + 1 bytes, which the
        app refuses (413) without reading on.
        """
        reader = req.body.reader
        limit = self.body_buffer_bytes
        if isinstance(reader, LengthReader):
            length = reader.length
            if length == 0 or length > limit:
                return
            self._send_continue(req, conn)
            data = req.body.read(length)
            if len(data) < length:
                raise NoMoreData(data)
        elif isinstance(reader, ChunkedReader):
            self._send_continue(req, conn)
            data = req.body.read(limit + 1)
            if len(data) > limit:
                req.force_close()
        else:
            return
        req.body = io.BytesIO(data)

    @staticmethod
    def _send_continue(req: Any, conn: _Connection) -> None:
        if req._expected_100_continue:
            util.write(conn.sock, _CONTINUE)
            req._expected_100_continue = False

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        """gunicorn's answer to a request it could not read or serve, in the API's error shape."""
        addr = addr or ("", -1)
        if req is None and isinstance(getattr(exc, "req", None), Request):
            req = exc.req  # type: ignore[attr-defined]  # a header error keeps its request, for the access log
        status, code = _classify(exc)
        if status == 500:
            self.log.exception("Error handling request %s", getattr(req, "uri", None) or "(no URI read)")
            message = _SERVER_ERROR_MESSAGE
        elif isinstance(exc, RequestTimeout):
            self.log.info("Request from ip=%s timed out before it was complete.", addr[0])
            message = _timeout_message()
        else:
            self.log.warning("Invalid request from ip=%s: %s", addr[0], exc)
            message = f"The request could not be read: {exc}"[:_MESSAGE_CHARS]
        payload = error_response_bytes(status, code, message)
        try:
            util.write_nonblock(client, payload)
        except Exception:  # the client may be gone: there is no one left to tell
            self.log.debug("Failed to send error message.")
        if req is not None:
            environ = default_environ(req, client, self.cfg)
            environ["REMOTE_ADDR"] = addr[0]
            environ["REMOTE_PORT"] = str(addr[1])
            resp = Response(req, client, self.cfg)
            resp.status = f"{status} {http.HTTPStatus(status).phrase}"
            resp.response_length = len(payload)
            self.log.access(resp, req, environ, datetime.timedelta(0))
