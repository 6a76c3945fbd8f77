"""Names the accounts app shares between the code that queues account email and the worker that sends it."""

from __future__ import annotations

# Account email is published by this name (apps.common.publish); the tasks module registers the task under it.
ACCOUNT_EMAIL_SEND_TASK = "apps.accounts.tasks.account_email_send"
