"""Account housekeeping run by beat: sign-in failure rows whose window and lockout are over are deleted."""

from __future__ import annotations

from celery import shared_task

from apps.accounts.lockout import login_lockouts_expire


@shared_task(name="apps.accounts.tasks.login_lockouts_expire")
def login_lockouts_expire_task() -> int:
    return login_lockouts_expire()
