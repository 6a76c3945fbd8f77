"""Fixtures every part of the suite may ask for: users and their clients, loaded content, mail, throttles."""

from __future__ import annotations

import fnmatch
import mailbox
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from apps.accounts.devices import device_token_issue
from apps.content.models import Card
from tests.support.content_copy import shipped_course_write
from tests.support.grading import SANDBOX_MISSING
from tests.support.paths import REPO_ROOT
from tests.support.processes import free_port, worker_database_url
from tests.support.reviews import DECK

SMTP_STARTUP_TIMEOUT_S = 20


@pytest.fixture
def learner(db):
    return get_user_model().objects.create_user(
        username="ada", password="correct horse battery", email="ada@example.com"
    )


@pytest.fixture
def staff_user(db):
    return get_user_model().objects.create_user(
        username="grace", password="another long passphrase", is_staff=True, is_superuser=True
    )


@pytest.fixture
def staff_client(staff_user) -> Client:
    """A browser session signed in as staff, for the admin."""
    client = Client()
    client.force_login(staff_user)
    return client


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def learner_client(learner) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {device_token_issue(user=learner, device_name=None).key}")
    return client


@pytest.fixture
def deliver_account_emails(db) -> Callable[[], list[str]]:
    """Sends every queued account email as the worker does; returns the statuses, in the order queued.

    Account email leaves the request through an outbox; the tests' broker has no worker to send it."""
    from apps.accounts.mail import account_email_send
    from apps.accounts.models import AccountEmail, AccountEmailStatus

    def deliver() -> list[str]:
        queued = AccountEmail.objects.filter(status=AccountEmailStatus.QUEUED).order_by("pk")
        return [account_email_send(email_id=email_id) for email_id in list(queued.values_list("pk", flat=True))]

    return deliver


@pytest.fixture
def smtp_server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """aiosmtpd in its own process, delivering into a Maildir."""
    port = free_port()
    maildir = tmp_path / "maildir"
    mailbox.Maildir(maildir, create=True)
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "aiosmtpd",
            "-n",
            "-l",
            f"127.0.0.1:{port}",
            "-c",
            "aiosmtpd.handlers.Mailbox",
            str(maildir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + SMTP_STARTUP_TIMEOUT_S
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail(f"SMTP server did not start: {server.stderr.read().decode() if server.stderr else ''}")
            time.sleep(0.1)
    try:
        yield port, maildir
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture
def shipped_course(db) -> None:
    """The course that ships in decks/: loaded through the real command by the first test of a process
    that asks for it, then copied row for row (tests/support/content_copy.py)."""
    shipped_course_write()


@pytest.fixture
def deck_cards(shipped_course) -> list[Card]:
    """The shipped memory deck's cards, in order."""
    return list(Card.objects.filter(deck__slug=DECK, archived=False).order_by("position"))


@pytest.fixture(autouse=True)
def throttles_start_afresh() -> None:
    """Request rates are counted in the cache, which outlives a test: each test starts with none counted."""
    from apps.common.throttling import throttle_history_clear

    throttle_history_clear()


@pytest.fixture
def grading_worker(shipped_course, tmp_path: Path) -> Iterator[subprocess.Popen]:
    """A real Celery worker on the grading queue, with a warm grader, on the test database."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "quizsite.test_settings",
        "DATABASE_URL": worker_database_url(),
        "GRADER_WARM_ON_START": "true",
    }
    process = subprocess.Popen(
        [
            sys.executable, "-m", "celery", "-A", "quizsite", "worker",
            "--queues", "gpu", "--pool", "prefork", "--concurrency", "1",
            "--hostname", f"grader-test-{uuid.uuid4().hex[:8]}@%h",
            "--without-mingle", "--without-gossip", "--loglevel", "INFO",
        ],
        cwd=REPO_ROOT,
        env=env,
        # A file, not a pipe: a pipe nobody reads fills up with the worker's log and stops it.
        stdout=(tmp_path / "grading-worker.log").open("wb"),
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    yield process
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# What puts a test in the slow lane (`make test-fast` leaves it out): it grades in a real sandbox or with
# TensorFlow, drives a browser, or starts the project's own worker, server or nginx.
SLOW_MARKS = frozenset({"integration", "grader"})
SLOW_FIXTURES = frozenset(
    {"chromium", "live_server", "grading_worker", "checking_grader", "hostile_grader", "timing_grader", "mail_worker"}
)
# Modules whose every test is slow: they grade, drive a browser, start the project's own processes or
# fuzz the whole API. `make test-fast` does not even import them (their imports alone cost seconds).
SLOW_MODULES = (
    "tests/web/test_browser*.py",
    "tests/exercises/test_bad_records.py",
    "tests/exercises/test_celery_grading.py",
    "tests/exercises/test_grade_file.py",
    "tests/exercises/test_grading.py",
    "tests/exercises/test_grading_service.py",
    "tests/exercises/test_hostile.py",
    "tests/exercises/test_leakage.py",
    "tests/exercises/test_sharded_input.py",
    "tests/worker/test_sandbox.py",
    "tests/worker/test_timing_isolation.py",
    "tests/common/test_celery_worker.py",
    "tests/common/test_dev_script.py",
    "tests/common/test_http_server.py",
    "tests/api/test_fuzz.py",
)
FAST_LANE = "not slow"


def in_slow_module(path: str) -> bool:
    return any(fnmatch.fnmatch(path, pattern) for pattern in SLOW_MODULES)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The fast lane leaves the slow modules uncollected; any other selection collects them as usual."""
    if config.option.markexpr != FAST_LANE or collection_path.suffix != ".py":
        return None
    return True if in_slow_module(collection_path.relative_to(REPO_ROOT).as_posix()) else None


def is_slow(item: pytest.Item) -> bool:
    marks = list(item.iter_markers())
    return (
        any(mark.name in SLOW_MARKS for mark in marks)
        or any(mark.name == "skipif" and mark.kwargs.get("reason") == SANDBOX_MISSING for mark in marks)
        or bool(SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())))
        or in_slow_module(item.nodeid.split("::")[0])
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow lane's mark, and one node id per schemathesis operation test.

    schemathesis names each operation's test apart (`test_x[GET /api/v1/...]`), but with pytest 9 they all
    keep the function's node id (it sets the attribute older pytest read the id from); pytest-xdist schedules
    tests by node id, so it would run the first operation's test alone."""
    for item in items:
        if "[" in item.name and item.parent is not None and not item.nodeid.endswith("]"):
            item._id = item.parent.id.child(item.name)
        if is_slow(item):
            item.add_marker(pytest.mark.slow)
        if item.nodeid.startswith("tests/worker/test_sandbox.py") or "hostile_grader" in getattr(
            item, "fixturenames", ()
        ):
            item.add_marker(pytest.mark.privileges)
