"""A reminder goes through Django's SMTP backend to a real SMTP server process and is read back."""

from __future__ import annotations

import mailbox

import pytest
from django.core import mail

from apps.reminders.models import ReminderEmail, ReminderStatus
from apps.reminders.services import reminders_send
from tests.support.processes import free_port
from tests.support.reminders import local, make_learner


def test_reminder_is_delivered_over_smtp_with_both_parts_and_headers(shipped_course, settings, smtp_server):
    port, maildir = smtp_server
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    mail.outbox = []
    make_learner("ada", hour=18, due_cards=2)
    make_learner("bob", hour=18, due_cards=1)

    run = reminders_send(now=local(2026, 6, 10, 18))

    assert (run.sent, run.failed) == (2, 0)
    assert mail.outbox == []  # it really went through SMTP
    messages = {message["To"]: message for message in mailbox.Maildir(maildir, create=False)}
    assert set(messages) == {"ada@example.com", "bob@example.com"}
    ada = messages["ada@example.com"]
    assert ada["Subject"] == "2 cards due today"
    assert ada["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert ada["List-Unsubscribe"].startswith("<http")
    parts = {
        part.get_content_type(): part.get_payload(decode=True).decode()  # type: ignore[union-attr]
        for part in ada.walk()
        if not part.is_multipart()
    }
    assert set(parts) == {"text/plain", "text/html"}
    assert "You have 2 cards to review today" in parts["text/plain"]
    assert "<strong>2 cards</strong>" in parts["text/html"]


def test_an_unreachable_smtp_server_leaves_the_batch_to_the_next_run(shipped_course, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", free_port(), 2
    make_learner("ada", hour=18)
    with pytest.raises(OSError):
        reminders_send(now=local(2026, 6, 10, 18))
    assert ReminderEmail.objects.get().status == ReminderStatus.CLAIMED
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    mail.outbox = []
    run = reminders_send(now=local(2026, 6, 10, 18, 15))
    assert (run.retried, run.sent, len(mail.outbox)) == (1, 1, 1)
    assert ReminderEmail.objects.get().status == ReminderStatus.SENT
