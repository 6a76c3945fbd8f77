"""Account actions: registering, signing in and out, passwords, deleting an account, and demo users."""

from __future__ import annotations

import logging
import secrets
import smtplib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import AbstractUser, update_last_login
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, transaction
from django.db.models.functions import Lower
from django.template.loader import render_to_string
from django.utils.encoding import force_bytes, force_str
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode
from rest_framework.authtoken.models import Token

from apps.accounts.lockout import (
    login_failure_record,
    login_failures_clear,
    login_failures_reset,
    login_locked_for,
    normalize_email,
)
from apps.accounts.profiles import learner_profile_errors, learner_profile_update
from apps.common.errors import DomainError, RetryLater
from apps.srs.learner_settings import scheduling_settings_errors, scheduling_settings_update, scheduling_settings_values
from apps.srs.models import ReviewLog, SchedulingSettings

logger = logging.getLogger(__name__)

# The same words for an unknown email and a wrong password, so the answer says nothing about who has an account.
_BAD_CREDENTIALS = "Unable to sign in with that email and password."


class InvalidCredentials(DomainError):
    status_code = 400
    code = "invalid_credentials"


class LockedOut(RetryLater):
    code = "locked_out"


class AccountInvalid(DomainError):
    code = "invalid"


class InvalidResetToken(DomainError):
    code = "invalid_token"


def _refuse_if_locked_out(identifier: str) -> None:
    wait = login_locked_for(email=identifier)
    if wait:
        raise LockedOut(f"Too many failed sign-ins; try again in {wait} seconds.", retry_after=wait)


def token_obtain(*, username: str, password: str) -> Token:
    """The user's API token, created on first use; the same one until it is revoked.

    Failures count towards the same lockout as signing in by email: a registered learner's
    username is their email, so neither endpoint can be used to go on guessing after the other locked.
    """
    _refuse_if_locked_out(username)
    user = authenticate(username=username, password=password)
    if user is None or not user.is_active:
        login_failure_record(email=username)
        raise InvalidCredentials("Unable to sign in with that username and password.")
    login_failures_reset(email=username)
    token, _ = Token.objects.get_or_create(user=user)
    return token


def _by_email(email: str) -> Any:
    """The account with this (normalized) email, by the unique LOWER(email) index; None when there is none."""
    return get_user_model().objects.annotate(email_lower=Lower("email")).filter(email_lower=email).first()


def _email_taken(email: str) -> bool:
    # Usernames of registered accounts are their emails, so an older account named like the email
    # would take the username too.
    user_model = get_user_model()
    return (
        user_model.objects.annotate(email_lower=Lower("email")).filter(email_lower=email).exists()
        or user_model.objects.annotate(username_lower=Lower("username")).filter(username_lower=email).exists()
    )


def _password_errors(password: str, user: Any) -> list[str]:
    try:
        validate_password(password, user)
    except ValidationError as invalid:
        return list(invalid.messages)
    return []


def _token_rotate(user: Any) -> Token:
    """Revoke the user's token and issue another: every device signed in with the old one is signed out."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


def _invalid(fields: dict[str, list[str]], *, prefix: str) -> AccountInvalid:
    return AccountInvalid(
        f"{prefix}: " + "; ".join(f"{name}: {' '.join(messages)}" for name, messages in fields.items()), fields=fields
    )


@dataclass(frozen=True)
class Registered:
    user: Any
    token: Token


def account_register(
    *,
    email: str | None,
    password: str | None,
    display_name: str | None,
    timezone: str | None,
    refused: Mapping[str, list[str]] | None = None,
) -> Registered:
    """A new learner account, signed in; every problem with the request is reported at once.

    A value is None when the request did not give a usable one; `refused` says why, by field, and
    is reported together with what is found wrong with the values that were given.
    """
    errors: dict[str, list[str]] = dict(refused or {})
    email = normalize_email(email) if email is not None else None
    user = get_user_model()(username=email or "", email=email or "")
    if email is not None and _email_taken(email):
        errors["email"] = ["An account with this email already exists."]
    if password is not None and (password_errors := _password_errors(password, user)):
        errors["password"] = password_errors
    if display_name is not None:
        display_name = display_name.strip()
        if not display_name:
            errors["display_name"] = ["Choose a display name."]
        else:
            errors |= learner_profile_errors({"display_name": display_name, "show_on_leaderboards": False})
    if timezone is not None:
        # The settings service owns what a valid time zone is; asking it keeps the two endpoints in step.
        defaults = scheduling_settings_values(SchedulingSettings())
        if zone_errors := scheduling_settings_errors(defaults | {"timezone": timezone}).get("timezone"):
            errors["timezone"] = zone_errors
    given = {"email": email, "password": password, "display_name": display_name, "timezone": timezone}
    for name, value in given.items():
        if value is None and name not in errors:
            errors[name] = ["This field is required."]
    if errors or email is None or password is None or display_name is None or timezone is None:
        raise _invalid(errors, prefix="The account was not created")
    try:
        with transaction.atomic():
            user.set_password(password)
            user.save()
            learner_profile_update(learner=user, changes={"display_name": display_name})
            scheduling_settings_update(learner=user, changes={"timezone": timezone})
            token = Token.objects.create(user=user)
    except IntegrityError:
        # Two registrations of one email at once: the unique index lets only one through.
        if _email_taken(email):
            raise _invalid(
                {"email": ["An account with this email already exists."]}, prefix="The account was not created"
            ) from None
        raise
    return Registered(user=user, token=token)


def login(*, email: str, password: str) -> Token:
    """The account's API token for a right email and password, unless the account is locked out.

    An unknown email costs the same password hashing and counts towards a lockout like a known
    one, so neither the answer, its timing nor a lockout tells whether the account exists.
    """
    email = normalize_email(email)
    _refuse_if_locked_out(email)
    user = _by_email(email) if email else None
    if user is None:
        make_password(password)
        signed_in = None
    else:
        signed_in = authenticate(username=user.get_username(), password=password)
    if signed_in is None:
        login_failure_record(email=email)
        raise InvalidCredentials(_BAD_CREDENTIALS)
    login_failures_reset(email=email)
    update_last_login(type(signed_in), signed_in)
    token, _ = Token.objects.get_or_create(user=signed_in)
    return token


def token_revoke(*, token: Token) -> None:
    """Sign out the devices using this token; the next request with it is a 401."""
    Token.objects.filter(pk=token.pk).delete()


def password_change(*, user: Any, current_password: str, new_password: str) -> Token:
    """Set a new password and a new token: the device making the change stays signed in, no other.

    A wrong current password and a new one that breaks a rule are reported together.
    """
    errors: dict[str, list[str]] = {}
    if not user.check_password(current_password):
        errors["current_password"] = ["The current password is wrong."]
    if new_password_errors := _password_errors(new_password, user):
        errors["new_password"] = new_password_errors
    if errors:
        raise _invalid(errors, prefix="The password was not changed")
    with transaction.atomic():
        user.set_password(new_password)
        user.save(update_fields=["password"])
        return _token_rotate(user)


def password_reset_url(user: Any) -> str:
    """The study app's page that sets a new password; the token is signed and expires (PASSWORD_RESET_TIMEOUT).

    The token covers the password hash, so using the link once makes it stop working.
    """
    query = urlencode(
        {"uid": urlsafe_base64_encode(force_bytes(user.pk)), "token": default_token_generator.make_token(user)}
    )
    return f"{settings.FRONTEND_URL}/reset-password?{query}"


def password_reset_message(user: Any) -> EmailMultiAlternatives:
    context = {
        "name": getattr(user, "first_name", "") or user.get_username(),
        "reset_url": password_reset_url(user),
        "valid_minutes": max(1, settings.PASSWORD_RESET_TIMEOUT // 60),
        "site_url": settings.SITE_URL,
    }
    message = EmailMultiAlternatives(
        subject=render_to_string("accounts/password_reset_subject.txt", context).strip(),
        body=render_to_string("accounts/password_reset.txt", context),
        to=[user.email],
    )
    message.attach_alternative(render_to_string("accounts/password_reset.html", context), "text/html")
    return message


def password_reset_request(*, email: str) -> None:
    """Email a reset link when an active account has this email; silently nothing otherwise.

    A mail server that fails is logged, not reported: the answer must be the same either way.
    """
    user = _by_email(normalize_email(email))
    if user is None or not user.is_active or not user.has_usable_password():
        return
    try:
        password_reset_message(user).send()
    except (smtplib.SMTPException, OSError):
        logger.exception("The password reset email to account %s could not be sent", user.pk)


def _user_from_uid(uid: str) -> Any:
    try:
        pk = force_str(urlsafe_base64_decode(uid))
        return get_user_model().objects.filter(pk=int(pk), is_active=True).first()
    except (ValueError, TypeError, OverflowError):
        return None


def password_reset_confirm(*, uid: str, token: str, new_password: str) -> Token:
    """Set the password from a reset link; the account gets a new token, and a lockout is lifted."""
    user = _user_from_uid(uid)
    if user is None or not default_token_generator.check_token(user, token):
        raise InvalidResetToken("This password reset link is invalid or has expired; ask for a new one.")
    if errors := _password_errors(new_password, user):
        raise _invalid({"new_password": errors}, prefix="The password was not changed")
    with transaction.atomic():
        user.set_password(new_password)
        user.save(update_fields=["password"])
        api_token = _token_rotate(user)
    if user.email:
        # Whoever reads the account's mailbox owns it: an attacker's failed guesses no longer lock it.
        login_failures_clear(email=user.email)
    return api_token


def _review_logs_delete(user: Any) -> None:
    """Delete the learner's review log, undos before the reviews they undo.

    `undo_of` protects a review from being deleted under its undo, so a plain cascade from the
    user would refuse; each pass deletes the entries nothing points at any more.
    """
    logs = ReviewLog.objects.filter(learner=user)
    while logs.filter(undone_by__isnull=True).delete()[0]:
        pass


def account_delete(*, user: Any, password: str) -> None:
    """Delete the account and everything stored about it, after checking the password; all or nothing."""
    if not user.check_password(password):
        raise _invalid({"password": ["The password is wrong."]}, prefix="Nothing was deleted")
    with transaction.atomic():
        _review_logs_delete(user)
        user.delete()
    if user.email:
        login_failures_clear(email=user.email)


@dataclass(frozen=True)
class DemoAccount:
    username: str
    email: str
    password: str
    is_staff: bool
    token: str


@transaction.atomic
def demo_accounts_reset() -> list[DemoAccount]:
    """Create (or reset) the development learner and staff user with fresh random passwords."""
    user_model = get_user_model()
    accounts: list[DemoAccount] = []
    for username, is_staff in (("learner", False), ("staff", True)):
        user: AbstractUser
        user, _ = user_model.objects.get_or_create(username=username, defaults={"email": f"{username}@example.com"})
        # The web app signs in by email: an older demo account without one gets it.
        user.email = user.email or f"{username}@example.com"
        password = secrets.token_urlsafe(12)
        user.set_password(password)
        user.is_staff = is_staff
        user.is_superuser = is_staff
        user.save()
        token, _ = Token.objects.get_or_create(user=user)
        accounts.append(DemoAccount(username, user.email, password, is_staff, token.key))
    return accounts
