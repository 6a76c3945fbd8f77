"""Account jobs: sending account email from the outbox, and beat's housekeeping of lockouts and expired tokens."""

from __future__ import annotations

from celery import shared_task

from apps.accounts.conf import ACCOUNT_EMAIL_SEND_TASK
from apps.accounts.devices import device_tokens_expire
from apps.accounts.lockout import login_lockouts_expire
from apps.accounts.mail import account_email_send, account_emails_resume


@shared_task(name="apps.accounts.tasks.login_lockouts_expire")
def login_lockouts_expire_task() -> dict[str, int]:
    return {"lockouts": login_lockouts_expire(), "tokens": device_tokens_expire()}


@shared_task(name=ACCOUNT_EMAIL_SEND_TASK, ignore_result=True, acks_late=True)
def account_email_send_task(email_id: int) -> str:
    return account_email_send(email_id=email_id)


@shared_task(name="apps.accounts.tasks.account_emails_resume", ignore_result=True)
def account_emails_resume_task() -> dict[str, int]:
    return account_emails_resume()
