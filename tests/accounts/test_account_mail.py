"""Account email leaves the request through the outbox: sent by a worker to a real SMTP server, retried and recorded."""

from __future__ import annotations

import mailbox
import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import ClassVar

import pytest
from django.core import mail
from django.core.mail.backends import locmem
from django.db import connection, connections
from django.utils import timezone

from apps.accounts.mail import account_email_send, account_emails_resume
from apps.accounts.models import AccountEmail, AccountEmailStatus
from tests.support.paths import REPO_ROOT
from tests.support.processes import free_port, wait_until, worker_database_url

pytestmark = pytest.mark.django_db

RESET = "/api/v1/auth/password/reset/"


def _smtp_to(settings, port: int) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", port, 2
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False


def test_a_stalled_relay_is_never_waited_for_in_the_request(learner, api_client, settings):
    """The request does not even connect to the relay: a relay that accepts and never answers costs it nothing."""
    with socket.socket() as stalled:
        stalled.bind(("127.0.0.1", 0))
        stalled.listen(8)
        _smtp_to(settings, stalled.getsockname()[1])
        assert api_client.post(RESET, {"email": "ada@example.com"}, format="json").status_code == 202
        stalled.setblocking(False)
        with pytest.raises(BlockingIOError):
            stalled.accept()
    assert AccountEmail.objects.get().status == AccountEmailStatus.QUEUED


def test_a_refusing_relay_is_tried_again_with_its_answer_kept_then_marked_failed(learner, api_client, settings):
    _smtp_to(settings, free_port())  # nothing listens there: connection refused
    api_client.post(RESET, {"email": "ada@example.com"}, format="json")
    row = AccountEmail.objects.get()
    started = timezone.now()
    assert account_email_send(email_id=row.pk, now=started) == AccountEmailStatus.QUEUED
    row.refresh_from_db()
    assert row.attempts == 1
    assert "ConnectionRefusedError" in row.last_error
    assert row.next_attempt_at == started + timedelta(seconds=settings.ACCOUNT_EMAIL_RETRY_SECONDS)
    for attempt in range(2, settings.ACCOUNT_EMAIL_ATTEMPTS + 1):
        status = account_email_send(email_id=row.pk, now=started + timedelta(hours=attempt))
    assert status == AccountEmailStatus.FAILED
    row.refresh_from_db()
    assert (row.attempts, row.finished_at is not None) == (settings.ACCOUNT_EMAIL_ATTEMPTS, True)
    # A failed row is not sent again, whoever asks.
    assert account_email_send(email_id=row.pk) == "not_queued"


def test_an_email_is_sent_once_to_a_real_smtp_server(learner, api_client, settings, smtp_server):
    port, maildir = smtp_server
    _smtp_to(settings, port)
    api_client.post(RESET, {"email": "ada@example.com"}, format="json")
    row = AccountEmail.objects.get()
    assert account_email_send(email_id=row.pk) == AccountEmailStatus.SENT
    assert account_email_send(email_id=row.pk) == "not_queued"
    [message] = list(mailbox.Maildir(maildir, create=False))
    assert message["To"] == "ada@example.com"
    assert "/reset-password?uid=" in message.as_string()
    assert mail.outbox == []


class RelayWatchingBackend(locmem.EmailBackend):
    """Delivers to mail.outbox, noting for each send whether a transaction was open and the row was locked."""

    seen: ClassVar[list[tuple[bool, bool]]] = []

    def send_messages(self, messages):
        other = connections.create_connection("default")
        try:
            with other.cursor() as cursor:
                cursor.execute("BEGIN")
                cursor.execute(
                    f"SELECT id FROM {AccountEmail._meta.db_table} FOR UPDATE SKIP LOCKED"  # noqa: S608
                )
                unlocked = bool(cursor.fetchall())
                cursor.execute("ROLLBACK")
        finally:
            other.close()
        RelayWatchingBackend.seen.append((connection.in_atomic_block, not unlocked))
        return super().send_messages(messages)


@pytest.mark.django_db(transaction=True)
def test_the_relay_is_spoken_to_with_no_transaction_open_and_no_row_locked(learner, api_client, settings):
    settings.EMAIL_BACKEND = f"{__name__}.RelayWatchingBackend"
    RelayWatchingBackend.seen.clear()
    api_client.post(RESET, {"email": "ada@example.com"}, format="json")
    row = AccountEmail.objects.get()
    assert account_email_send(email_id=row.pk) == AccountEmailStatus.SENT
    assert RelayWatchingBackend.seen == [(False, False)]
    assert len(mail.outbox) == 1


def test_an_email_whose_worker_stopped_mid_send_is_queued_again_then_sent(learner, api_client):
    api_client.post(RESET, {"email": "ada@example.com"}, format="json")
    row = AccountEmail.objects.get()
    now = timezone.now()
    # As a worker leaves it when it dies while the relay has the message.
    AccountEmail.objects.filter(pk=row.pk).update(
        status=AccountEmailStatus.SENDING, attempts=1, next_attempt_at=now + timedelta(minutes=5)
    )
    assert account_email_send(email_id=row.pk) == "not_queued"  # claimed by the other send, still in time
    assert account_emails_resume(now=now)["lost_mid_send"] == 0
    assert account_emails_resume(now=now + timedelta(minutes=6))["lost_mid_send"] == 1
    row.refresh_from_db()
    assert row.status == AccountEmailStatus.QUEUED
    assert "stopped" in row.last_error
    assert account_email_send(email_id=row.pk) == AccountEmailStatus.SENT
    row.refresh_from_db()
    assert (row.attempts, row.last_error, len(mail.outbox)) == (2, "", 1)


def test_beat_hands_over_what_is_due_and_forgets_what_is_long_finished(learner, api_client):
    api_client.post(RESET, {"email": "ada@example.com"}, format="json")
    row = AccountEmail.objects.get()
    now = timezone.now()
    old = AccountEmail.objects.create(
        kind=row.kind,
        to="old@example.com",
        status=AccountEmailStatus.SENT,
        next_attempt_at=now - timedelta(days=40),
        finished_at=now - timedelta(days=40),
    )
    # Just queued: the broker has it, so it is not handed over again yet.
    assert account_emails_resume(now=now)["forgotten"] == 1
    assert not AccountEmail.objects.filter(pk=old.pk).exists()
    row.refresh_from_db()
    assert row.next_attempt_at <= now
    later = now + timedelta(minutes=5)
    account_emails_resume(now=later)
    row.refresh_from_db()
    assert row.next_attempt_at > later  # handed over, and not again for a while


@pytest.fixture
def mail_worker(smtp_server, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """A Celery worker on the default queue, on the test database, sending through the SMTP server."""
    port, maildir = smtp_server
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "quizsite.settings",
        "SECRET_KEY": "test-suite-only-key-not-secret",
        "DATABASE_URL": worker_database_url(),
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(port),
    }
    log = tmp_path / "worker.log"
    with log.open("wb") as output:
        command = [sys.executable, "-m", "celery", "-A", "quizsite", "worker", "--queues", "default"]
        command += ["--pool", "solo", "--hostname", f"mail-{uuid.uuid4().hex[:8]}@%h"]
        command += ["--without-mingle", "--without-gossip"]
        process = subprocess.Popen(
            command,
            cwd=REPO_ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            yield process, maildir
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_reset_asked_for_over_the_api_arrives_through_a_real_worker(learner, api_client, mail_worker, settings):
    _, maildir = mail_worker
    assert api_client.post(RESET, {"email": "ADA@example.com"}, format="json").status_code == 202

    def arrived() -> bool:
        return bool(list(mailbox.Maildir(maildir, create=False)))

    wait_until(arrived, timeout=90, what="the reset email in the SMTP server's mailbox")
    [message] = list(mailbox.Maildir(maildir, create=False))
    assert message["To"] == "ada@example.com"
    wait_until(
        lambda: AccountEmail.objects.filter(status=AccountEmailStatus.SENT).exists(), timeout=10, what="the row sent"
    )
