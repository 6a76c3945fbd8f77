"""API token authentication that also loads what nearly every learner request needs."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's token authentication, with the learner's scheduling settings in the same query.

    Study and review requests read the settings anyway; joining them here saves a round trip on
    the hottest endpoints (a learner without settings simply has none cached).
    """

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        model: Any = self.get_model()
        try:
            token = model.objects.select_related("user", "user__scheduling_settings__profile").get(key=key)
        except model.DoesNotExist as exc:
            raise exceptions.AuthenticationFailed(_("Invalid token.")) from exc
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return token.user, token
