"""Account email through an outbox: the request adds a row, a worker writes and sends the message.

The request never waits for the mail relay and does the same work whatever the address: it stores
the row and hands its id to the broker after commit. The worker looks the account up, so whether an
address has an account is told only by the email that arrives (or does not). A send the relay refuses
is tried again with a growing delay, and the row keeps the relay's last answer; beat hands over again
the rows the broker never took.
"""

from __future__ import annotations

import logging
import smtplib
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core import signing
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.db.models.functions import Lower
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from apps.accounts.conf import ACCOUNT_EMAIL_SEND_TASK
from apps.accounts.models import AccountEmail, AccountEmailKind, AccountEmailStatus, PendingRegistration
from apps.common.greeting import greeting_name
from apps.common.publish import task_publish_after_commit, tasks_publish

logger = logging.getLogger(__name__)

REGISTRATION_SALT = "apps.accounts.registration"
# A broker hand-off that does not answer within this long is left to beat's resume.
_PUBLISH_TIMEOUT_SECONDS = 1.0
# Finished rows are kept this long as the record of what was sent.
_KEPT_FOR = timedelta(days=30)
# A queued row is handed over again once this long has passed without a send finishing it.
_HANDOVER_AGAIN_AFTER = timedelta(minutes=2)
# A row being sent whose outcome is not recorded by then lost its worker mid-send and is queued again (it may
# have gone out: a relay that took the message before the worker died sends it twice, never zero times).
_SEND_LEASE = timedelta(minutes=5)


def account_user_by_email(email: str) -> Any:
    """The account with this canonical email, by the unique LOWER(email) index; None when there is none."""
    return get_user_model().objects.annotate(email_lower=Lower("email")).filter(email_lower=email).first()


def account_email_queue(
    *, kind: AccountEmailKind, to: str, registration: PendingRegistration | None = None
) -> AccountEmail:
    """Add an email to the outbox; it is handed to a worker once the caller's transaction commits."""
    row = AccountEmail.objects.create(kind=kind, to=to, registration=registration, next_attempt_at=timezone.now())
    task_publish_after_commit(ACCOUNT_EMAIL_SEND_TASK, row.pk, timeout=_PUBLISH_TIMEOUT_SECONDS, what="account emails")
    return row


def registration_confirm_token(registration: PendingRegistration) -> str:
    return signing.dumps(registration.pk, salt=REGISTRATION_SALT, compress=True)


def password_reset_url(user: Any) -> str:
    """The study app's page that sets a new password; the token is signed and expires (PASSWORD_RESET_TIMEOUT).

    The token covers the password hash, so using the link once makes it stop working.
    """
    query = urlencode(
        {"uid": urlsafe_base64_encode(force_bytes(user.pk)), "token": default_token_generator.make_token(user)}
    )
    return f"{settings.FRONTEND_URL}/reset-password?{query}"


def _greeting_name(user: Any) -> str:
    profile = getattr(user, "learner_profile", None)
    return greeting_name(
        display_name=profile.display_name if profile is not None else None, username=user.get_username()
    )


def _message(template: str, context: dict[str, object], to: str, *, html: bool = False) -> EmailMultiAlternatives:
    message = EmailMultiAlternatives(
        subject=render_to_string(f"accounts/{template}_subject.txt", context).strip(),
        body=render_to_string(f"accounts/{template}.txt", context),
        to=[to],
    )
    if html:
        message.attach_alternative(render_to_string(f"accounts/{template}.html", context), "text/html")
    return message


def password_reset_message(user: Any) -> EmailMultiAlternatives:
    context = {
        "name": _greeting_name(user),
        "reset_url": password_reset_url(user),
        "valid_minutes": max(1, settings.PASSWORD_RESET_TIMEOUT // 60),
        "site_url": settings.SITE_URL,
    }
    return _message("password_reset", context, user.email, html=True)


def _message_for(row: AccountEmail) -> EmailMultiAlternatives | None:
    """The message this row stands for, written now; None when there is nothing to send."""
    user = account_user_by_email(row.to)
    forgot_url = f"{settings.FRONTEND_URL}/forgot-password"
    if row.kind == AccountEmailKind.PASSWORD_RESET:
        if user is None or not user.is_active or not user.has_usable_password():
            return None
        return password_reset_message(user)
    if row.kind == AccountEmailKind.REGISTRATION:
        if user is not None:
            context: dict[str, object] = {"sign_in_url": f"{settings.FRONTEND_URL}/signin", "forgot_url": forgot_url}
            return _message("registration_existing", context, row.to)
        registration = row.registration
        if registration is None:
            return None
        query = urlencode({"token": registration_confirm_token(registration)})
        context = {
            "name": registration.display_name,
            "confirm_url": f"{settings.FRONTEND_URL}/confirm-email?{query}",
            "valid_hours": max(1, settings.REGISTRATION_CONFIRM_TIMEOUT // 3600),
        }
        return _message("registration", context, row.to)
    if row.kind == AccountEmailKind.SIGN_IN_PAUSED:
        if user is None or not user.is_active:
            return None
        context = {
            "name": _greeting_name(user),
            "minutes": max(1, settings.LOGIN_LOCKOUT_WINDOW_SECONDS // 60),
            "forgot_url": forgot_url,
        }
        return _message("sign_in_paused", context, row.to)
    raise ValueError(f"No message for account email kind {row.kind!r}")


def account_email_send(*, email_id: int, now: datetime | None = None) -> str:
    """Write and send one queued email; returns the row's status afterwards.

    The row is claimed (marked being sent, one attempt more) in a short transaction, so two workers
    handed the same id send it once; the relay is spoken to after that commits, holding no lock and no
    transaction open while it answers. A refused send goes back to the queue for a later try, with the
    relay's answer kept, until its tries run out.
    """
    at = now or timezone.now()
    with transaction.atomic():
        row = (
            AccountEmail.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("registration")
            .filter(pk=email_id, status=AccountEmailStatus.QUEUED)
            .first()
        )
        if row is None:
            return "not_queued"
        message = _message_for(row)
        row.attempts += 1
        if message is None:
            row.status, row.finished_at = AccountEmailStatus.NOT_SENT, at
            row.save(update_fields=["status", "finished_at", "attempts"])
            return row.status
        row.status, row.next_attempt_at = AccountEmailStatus.SENDING, at + _SEND_LEASE
        row.save(update_fields=["status", "attempts", "next_attempt_at"])
    try:
        message.send()
    except (smtplib.SMTPException, OSError, UnicodeError) as refused:
        row.last_error = f"{type(refused).__name__}: {refused}"[:2000]
        if row.attempts >= settings.ACCOUNT_EMAIL_ATTEMPTS:
            row.status, row.finished_at = AccountEmailStatus.FAILED, at
            logger.error("Account email %s (%s) failed after %d tries: %s", row.pk, row.kind, row.attempts, refused)
        else:
            delay = settings.ACCOUNT_EMAIL_RETRY_SECONDS * 2 ** (row.attempts - 1)
            row.status, row.next_attempt_at = AccountEmailStatus.QUEUED, at + timedelta(seconds=delay)
            logger.warning("Account email %s (%s) refused, tried again in %d s: %s", row.pk, row.kind, delay, refused)
    else:
        row.status, row.finished_at, row.last_error = AccountEmailStatus.SENT, at, ""
    # Recorded only while this send's claim stands: a row the resume round queued again in the meantime
    # belongs to its next send.
    AccountEmail.objects.filter(pk=row.pk, status=AccountEmailStatus.SENDING, attempts=row.attempts).update(
        status=row.status, finished_at=row.finished_at, last_error=row.last_error, next_attempt_at=row.next_attempt_at
    )
    return row.status


def account_emails_due(*, now: datetime | None = None) -> list[int]:
    """Queued emails whose next try has come and that no send has touched for a while, oldest first."""
    at = now or timezone.now()
    return list(
        AccountEmail.objects.filter(status=AccountEmailStatus.QUEUED, next_attempt_at__lte=at)
        .exclude(attempts=0, created_at__gt=at - _HANDOVER_AGAIN_AFTER)
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:500]
    )


def account_emails_resume(*, now: datetime | None = None) -> dict[str, int]:
    """Beat's round: queue again what a worker lost mid-send, hand over again the queued emails that are due,
    and forget what is long finished."""
    at = now or timezone.now()
    lost = AccountEmail.objects.filter(status=AccountEmailStatus.SENDING, next_attempt_at__lte=at).update(
        status=AccountEmailStatus.QUEUED, last_error="The worker sending it stopped before the relay answered."
    )
    due = account_emails_due(now=at)
    # Moved on first, so a broker that takes them but whose worker is slow is not handed them every minute.
    AccountEmail.objects.filter(pk__in=due).update(next_attempt_at=at + _HANDOVER_AGAIN_AFTER)
    handed = tasks_publish(ACCOUNT_EMAIL_SEND_TASK, due, timeout=_PUBLISH_TIMEOUT_SECONDS, what="account emails")
    forgotten, _ = (
        AccountEmail.objects.exclude(status=AccountEmailStatus.QUEUED).filter(finished_at__lt=at - _KEPT_FOR).delete()
    )
    expired, _ = PendingRegistration.objects.filter(
        created_at__lt=at - timedelta(seconds=settings.REGISTRATION_CONFIRM_TIMEOUT)
    ).delete()
    return {"handed_over": handed, "lost_mid_send": lost, "forgotten": forgotten, "registrations_expired": expired}
