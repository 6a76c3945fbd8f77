"""API token authentication that also loads what nearly every learner request needs."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from apps.common.prepared import PreparedQuery

# Compiled once: every API request runs it, and building its joins cost more than running it.
_TOKEN_WITH_LEARNER = PreparedQuery(
    lambda key: Token.objects.select_related("user", "user__scheduling_settings__profile").filter(key=key)[:2],
    "token-key-placeholder",
)


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's token authentication, with the learner's scheduling settings in the same query.

    Study and review requests read the settings anyway; joining them here saves a round trip on
    the hottest endpoints (a learner without settings simply has none cached).
    """

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        found = _TOKEN_WITH_LEARNER.all(key)
        if len(found) != 1:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        token = found[0]
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return token.user, token
