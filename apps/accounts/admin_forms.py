"""The admin's sign-in form, held to the same lockouts as the API's sign-in."""

from __future__ import annotations

from typing import Any

from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError

from apps.accounts.lockout import login_locked_for, login_succeeded
from apps.accounts.services import sign_in_failed
from apps.common.throttling import client_address


class LockoutAdminAuthenticationForm(AdminAuthenticationForm):
    """Failed admin sign-ins count towards the account's lockout, and a locked account cannot sign in here either.

    Without this the admin would be a second door on which passwords could be guessed without limit.
    """

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        if not username or not self.cleaned_data.get("password"):
            return super().clean()
        address = client_address(self.request) if self.request is not None else ""
        wait = login_locked_for(email=username, address=address)
        if wait:
            raise ValidationError(
                "Too many failed sign-ins for this account; try again in %(seconds)s seconds.",
                code="locked_out",
                params={"seconds": wait},
            )
        try:
            cleaned = super().clean()
        except ValidationError:
            sign_in_failed(username, address)
            raise
        login_succeeded(email=username, address=address)
        return cleaned
