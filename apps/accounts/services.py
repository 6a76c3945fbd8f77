"""Account actions: issuing API tokens and setting up demo users."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.models import AbstractUser
from django.db import transaction
from rest_framework.authtoken.models import Token

from apps.common.errors import DomainError


class InvalidCredentials(DomainError):
    status_code = 400
    code = "invalid_credentials"


def token_obtain(*, username: str, password: str) -> Token:
    """The user's API token, created on first use; the same one until it is revoked."""
    user = authenticate(username=username, password=password)
    if user is None or not user.is_active:
        raise InvalidCredentials("Unable to sign in with that username and password.")
    token, _ = Token.objects.get_or_create(user=user)
    return token


@dataclass(frozen=True)
class DemoAccount:
    username: str
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
        password = secrets.token_urlsafe(12)
        user.set_password(password)
        user.is_staff = is_staff
        user.is_superuser = is_staff
        user.save()
        token, _ = Token.objects.get_or_create(user=user)
        accounts.append(DemoAccount(username, password, is_staff, token.key))
    return accounts
