"""Account actions: registering, signing in and out, passwords, deleting an account, and demo users."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import AbstractUser, update_last_login
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.tokens import default_token_generator
from django.core import signing
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models.functions import Lower
from django.utils.encoding import force_str
from django.utils.http import urlsafe_base64_decode

from apps.accounts.devices import IssuedToken, device_token_issue, device_tokens_revoke_all
from apps.accounts.email_addresses import EmailRefused, email_canonical, email_key
from apps.accounts.lockout import login_failure_record, login_failures_clear, login_locked_for, login_succeeded
from apps.accounts.mail import REGISTRATION_SALT, account_email_queue, account_user_by_email
from apps.accounts.models import AccountEmailKind, DeviceToken, PendingRegistration
from apps.accounts.profiles import learner_profile_errors, learner_profile_update
from apps.common.errors import DomainError, RetryLater
from apps.srs.models import ReviewLog, SchedulingSettings
from apps.srs.settings.rules import scheduling_settings_errors, scheduling_settings_values
from apps.srs.settings.services import scheduling_settings_update

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


class AlreadyRegistered(DomainError):
    """A registration link used after its address got an account: only the mailbox's owner can see this."""

    code = "already_registered"


def _refuse_if_locked_out(identifier: str, address: str) -> None:
    wait = login_locked_for(email=identifier, address=address)
    if wait:
        raise LockedOut(f"Too many failed sign-ins; try again in {wait} seconds.", retry_after=wait)


def sign_in_failed(identifier: str, address: str) -> None:
    """Count a failed sign-in from this address; when it pauses the account, its owner is told by email."""
    counted = login_failure_record(email=identifier, address=address)
    if counted.account_paused:
        # Queued whatever the identifier: the worker writes to an account only, so this says nothing here.
        account_email_queue(kind=AccountEmailKind.SIGN_IN_PAUSED, to=email_key(identifier))


def _signed_in(user: Any, identifier: str, address: str, device_name: str | None) -> IssuedToken:
    login_succeeded(email=identifier, address=address)
    update_last_login(type(user), user)
    return device_token_issue(user=user, device_name=device_name)


def token_obtain(*, username: str, password: str, address: str, device_name: str | None = None) -> IssuedToken:
    """A new device token for a right username and password.

    Failures count towards the same lockouts as signing in by email: a registered learner's username
    is their email, so neither endpoint can be used to go on guessing after the other locked.
    """
    _refuse_if_locked_out(username, address)
    user = authenticate(username=username, password=password)
    if user is None or not user.is_active:
        sign_in_failed(username, address)
        raise InvalidCredentials("Unable to sign in with that username and password.")
    return _signed_in(user, username, address, device_name)


def _password_errors(password: str, user: Any) -> list[str]:
    try:
        validate_password(password, user)
    except ValidationError as invalid:
        return list(invalid.messages)
    return []


def _invalid(fields: dict[str, list[str]], *, prefix: str) -> AccountInvalid:
    return AccountInvalid(
        f"{prefix}: " + "; ".join(f"{name}: {' '.join(messages)}" for name, messages in fields.items()), fields=fields
    )


def _email_taken(email: str) -> bool:
    # Usernames of registered accounts are their emails, so an older account named like the email
    # would take the username too.
    user_model = get_user_model()
    return (
        user_model.objects.annotate(email_lower=Lower("email")).filter(email_lower=email).exists()
        or user_model.objects.annotate(username_lower=Lower("username")).filter(username_lower=email).exists()
    )


def account_register(
    *,
    email: str | None,
    password: str | None,
    display_name: str | None,
    timezone: str | None,
    refused: Mapping[str, list[str]] | None = None,
) -> PendingRegistration:
    """A sign-up waiting for its address to be confirmed; every problem with the request is reported at once.

    Nothing here depends on whether the address has an account: the same row and the same queued
    email either way. The worker then sends a confirmation link, or to an address that has an
    account, a note saying so. A value is None when the request did not give a usable one;
    `refused` says why, by field.
    """
    errors: dict[str, list[str]] = dict(refused or {})
    if email is not None:
        try:
            email = email_canonical(email)
        except EmailRefused as refusal:
            errors["email"] = [str(refusal)]
            email = None
    user = get_user_model()(username=email or "", email=email or "")
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
    with transaction.atomic():
        registration = PendingRegistration.objects.create(
            email=email, password_hash=make_password(password), display_name=display_name, timezone=timezone
        )
        account_email_queue(kind=AccountEmailKind.REGISTRATION, to=email, registration=registration)
    return registration


class InvalidRegistrationLink(DomainError):
    code = "invalid_token"


@dataclass(frozen=True)
class Registered:
    user: Any
    token: IssuedToken


def registration_confirm(*, token: str, device_name: str | None = None) -> Registered:
    """The account a registration link stands for, created and signed in; the link works once.

    Only whoever reads the address's mail has the link, so saying that the address got an account in
    the meantime tells nobody else anything.
    """
    invalid = InvalidRegistrationLink("This sign-up link is invalid, used or expired; sign up again.")
    try:
        registration_id = signing.loads(token, salt=REGISTRATION_SALT, max_age=settings.REGISTRATION_CONFIRM_TIMEOUT)
    except signing.BadSignature:
        raise invalid from None
    if not isinstance(registration_id, int):
        raise invalid
    try:
        with transaction.atomic():
            registration = PendingRegistration.objects.select_for_update().filter(pk=registration_id).first()
            if registration is None:
                raise invalid
            email = registration.email
            if _email_taken(email):
                PendingRegistration.objects.filter(email=email).delete()
                raise AlreadyRegistered("This address already has an account: sign in, or reset its password.")
            user = get_user_model()(username=email, email=email, password=registration.password_hash)
            user.save()
            learner_profile_update(learner=user, changes={"display_name": registration.display_name})
            scheduling_settings_update(learner=user, changes={"timezone": registration.timezone})
            PendingRegistration.objects.filter(email=email).delete()
            issued = device_token_issue(user=user, device_name=device_name)
    except IntegrityError:
        # Two confirmations of one address at once: the unique index lets only one through.
        raise AlreadyRegistered("This address already has an account: sign in, or reset its password.") from None
    return Registered(user=user, token=issued)


def login(*, email: str, password: str, address: str, device_name: str | None = None) -> IssuedToken:
    """A new device token for a right email and password, unless this address is locked out of the email.

    An unknown email costs the same password hashing and counts towards a lockout like a known
    one, so neither the answer, its timing nor a lockout tells whether the account exists.
    """
    key = email_key(email)
    _refuse_if_locked_out(key, address)
    user = account_user_by_email(key) if key else None
    if user is None:
        make_password(password)
        signed_in = None
    else:
        signed_in = authenticate(username=user.get_username(), password=password)
    if signed_in is None:
        sign_in_failed(key, address)
        raise InvalidCredentials(_BAD_CREDENTIALS)
    return _signed_in(signed_in, key, address, device_name)


def password_change(
    *, user: Any, current_password: str, new_password: str, device: DeviceToken | None = None
) -> IssuedToken:
    """Set a new password: every device is signed out, and the one making the change gets a new token.

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
        device_tokens_revoke_all(user=user)
        return device_token_issue(user=user, device_name=device.device_name if device is not None else None)


def password_reset_request(*, email: str) -> None:
    """Queue a reset email for this address; the worker sends a link only if an active account has it.

    The request does the same work for every address, so neither the answer nor its timing tells.
    """
    account_email_queue(kind=AccountEmailKind.PASSWORD_RESET, to=email_key(email))


def _user_from_uid(uid: str) -> Any:
    try:
        pk = force_str(urlsafe_base64_decode(uid))
        return get_user_model().objects.filter(pk=int(pk), is_active=True).first()
    except (ValueError, TypeError, OverflowError):
        return None


def password_reset_confirm(
    *, uid: str, token: str, new_password: str, address: str, device_name: str | None = None
) -> IssuedToken:
    """Set the password from a reset link: every device is signed out, this one gets a token, lockouts lift."""
    user = _user_from_uid(uid)
    if user is None or not default_token_generator.check_token(user, token):
        raise InvalidResetToken("This password reset link is invalid or has expired; ask for a new one.")
    if errors := _password_errors(new_password, user):
        raise _invalid({"new_password": errors}, prefix="The password was not changed")
    with transaction.atomic():
        user.set_password(new_password)
        user.save(update_fields=["password"])
        device_tokens_revoke_all(user=user)
        issued = device_token_issue(user=user, device_name=device_name)
    if user.email:
        # Whoever reads the account's mailbox owns it: an attacker's failed guesses no longer lock it.
        login_failures_clear(email=user.email, address=address)
    return issued


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
        issued = device_token_issue(user=user, device_name="Development demo")
        accounts.append(DemoAccount(username, user.email, password, is_staff, issued.key))
    return accounts
