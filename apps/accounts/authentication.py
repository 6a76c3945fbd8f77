"""Device-token authentication (django-rest-knox) that loads what nearly every learner request needs, in one query.

Knox's own class reads the token, then every token of its user (to delete expired ones), then saves
the new expiry: three statements on every request. Here the token, its user and the learner's
scheduling settings come in one prepared statement, expired tokens are left to beat, and the sliding
expiry is written at most once per TOKEN_REFRESH_SECONDS. Invalid tokens are counted per client
address ("bad_token_ip"): past that rate the address is answered 429 instead of 401.
"""

from __future__ import annotations

from datetime import timedelta
from hmac import compare_digest
from typing import Any

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from knox.crypto import hash_token
from knox.settings import CONSTANTS
from rest_framework import exceptions
from rest_framework.request import Request

from apps.accounts.models import DeviceToken
from apps.common.prepared import PreparedQuery
from apps.common.throttling import InvalidTokenAddressThrottle

# Compiled once: every API request runs it, and building its joins cost more than running it.
_TOKEN_WITH_LEARNER = PreparedQuery(
    lambda key: DeviceToken.objects.select_related("user", "user__scheduling_settings__profile").filter(token_key=key)[
        :4
    ],
    "token-key-placeholder",
)


class TokenAuthentication(KnoxTokenAuthentication):
    """`Authorization: Token <token>`: a device token, checked against its digest and expiry."""

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            throttle = InvalidTokenAddressThrottle()
            view: Any = (request.parser_context or {}).get("view")
            if not throttle.allow_request(request, view):
                raise exceptions.Throttled(throttle.wait()) from None
            raise

    def authenticate_credentials(self, token: bytes) -> tuple[Any, Any]:
        try:
            key = token.decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed(_("Invalid token.")) from None
        digest = hash_token(key)
        now = timezone.now()
        for device in _TOKEN_WITH_LEARNER.all(key[: CONSTANTS.TOKEN_KEY_LENGTH]):
            if not compare_digest(digest, device.digest):
                continue
            if device.expiry is not None and device.expiry <= now:
                break
            if not device.user.is_active:
                raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
            self._renew(device, now)
            return device.user, device
        # Made only when refused: building DRF's exception costs more than the rest of a valid check.
        raise exceptions.AuthenticationFailed(_("Invalid token."))

    @staticmethod
    def _renew(device: DeviceToken, now: Any) -> None:
        refresh = timedelta(seconds=settings.TOKEN_REFRESH_SECONDS)
        if device.last_used_at is not None and now - device.last_used_at < refresh:
            return
        device.last_used_at = now
        device.expiry = now + timedelta(days=settings.TOKEN_TTL_DAYS)
        DeviceToken.objects.filter(pk=device.pk).update(last_used_at=device.last_used_at, expiry=device.expiry)
