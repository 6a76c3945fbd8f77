"""gunicorn's production settings: `gunicorn -c quizsite/gunicorn_conf.py`, behind nginx (docs/operations.md).

Command-line flags given after `-c` win over this file (`--bind`, `--workers`).
"""

from __future__ import annotations

import os


def _cpus() -> int:
    """CPUs this process may run on (its affinity, which a container's cpuset narrows)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS has no affinity
        return os.cpu_count() or 1


wsgi_app = "quizsite.wsgi:application"

# Only the proxy on this host reaches the server. Django trusts X-Forwarded-Proto from any peer
# (SECURE_PROXY_SSL_HEADER), and the throttles X-Forwarded-For with NUM_PROXIES set: a client that
# could reach gunicorn directly could claim https or any address. Where nginx runs on another host,
# bind a private address (`--bind 10.0.0.5:8000`) that only it can reach.
bind = ["127.0.0.1:8000"]

# gthread, reading requests in its event loop (quizsite/gunicorn_workers.py). Of the three:
# - sync serves one request per process and reads it on that process: three clients that send a
#   body slowly took all of its workers for a minute. It is safe only if nothing but a buffering
#   proxy ever connects, and idle keep-alive connections cost a process each.
# - gevent would take slow clients in stride, but it monkey-patches the standard library under
#   Django, psycopg and redis-py; a CPU-bound request (a batch of 1,000 reviews replays FSRS
#   histories) stalls every other request of its process, and each greenlet opens its own
#   PostgreSQL connection, so connections grow with concurrent clients, not with threads.
# - gthread keeps idle and incoming connections in an event loop and runs complete requests on a
#   fixed pool of threads: database waits overlap, the number of database connections is bounded,
#   and the worker below keeps slow clients off the threads altogether.
worker_class = "quizsite.gunicorn_workers.BufferingThreadWorker"

# One process per CPU (WEB_CONCURRENCY overrides, as gunicorn's own default reads it). Under the GIL a
# process uses about one CPU whatever its threads do; at least two, so that a worker being replaced
# after a crash or a timeout does not leave the host unable to answer.
workers = int(os.environ.get("WEB_CONCURRENCY") or max(2, _cpus()))

# Threads only ever hold a complete request, so they are sized for the work, not for slow clients:
# a request spends part of its time waiting on PostgreSQL or Redis, and four threads overlap those
# waits without the GIL making them queue. Each thread keeps its own database connection
# (DATABASE_CONN_MAX_AGE): workers x threads connections per host, which PostgreSQL's
# max_connections (100 by default) must cover for every host together.
threads = 4

# Connections one worker holds, idle or being read, before it stops accepting. A connection being
# read buffers at most its head (limits below, about 260 KiB) plus a body up to
# DATA_UPLOAD_MAX_MEMORY_SIZE (256 KiB): 200 of them bound a worker's buffers to about 100 MiB. nginx
# keeps a few dozen kept-alive connections per worker process; direct clients beyond that wait in
# the listen backlog.
worker_connections = 200

# Seconds a worker's main loop may go without checking in before the master kills and replaces it.
# With gthread that loop never runs a request, so this catches a wedged process, not a slow request:
# requests are bounded by the proxy's proxy_read_timeout (60 s), and the database's own timeouts.
timeout = 30

# On a restart or deploy (SIGHUP, SIGTERM), a worker finishes the requests it has for this long.
# Requests last well under a second, and 30 s also covers one that is still arriving (REQUEST_SECONDS).
graceful_timeout = 30

# Seconds an idle kept-alive connection stays open. Longer than nginx's upstream keepalive_timeout
# (60 s): whichever side closes an idle connection first must be the proxy, or it may send a request
# on a connection gunicorn is closing and answer the client 502. A new connection must start its
# request within REQUEST_IDLE_SECONDS (5 s) regardless.
keepalive = 75

# The longest request line (method, path with query, version). The API's longest paths with every
# filter are under 300 bytes; gunicorn's default leaves ample room and answers 414 above it.
limit_request_line = 4094
# Headers per request. Browsers send about 20 and nginx adds four; 32 leaves room while bounding
# how much of a head the event loop buffers (answered 431 above it).
limit_request_fields = 32
# Bytes of one header line. The session and CSRF cookies and a token take well under 1 KiB; 8190
# matches nginx's 8k header buffers, so whatever nginx passes on, gunicorn accepts (431 above).
limit_request_field_size = 8190

# gunicorn has no body limit: Django's DATA_UPLOAD_MAX_MEMORY_SIZE (256 KiB) refuses a larger API body
# with 413 on its Content-Length alone, and the worker buffers bodies up to that size before the
# app runs. nginx's client_max_body_size matches it for /api/.

# gunicorn 25+ opens a control socket at one fixed path per user ($XDG_RUNTIME_DIR or ~/.gunicorn):
# two servers on one host (a deploy's old and new, the test suite) would fight over it, and signals
# already do all it offers here.
control_socket_disable = True
