"""The admin shows every model it registers, signed-in devices and the account email outbox among them, read-only."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from apps.accounts.devices import device_token_issue
from apps.accounts.models import AccountEmail, AccountEmailKind, AccountEmailStatus, DeviceToken

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(staff_user) -> Client:
    client = Client()
    client.force_login(staff_user)
    return client


def test_every_registered_model_has_a_list_page_that_opens(staff):
    # knox's own token model is swapped out (no table); Django leaves a swapped model out of the admin.
    broken = []
    for model in admin.site._registry:
        response = staff.get(reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist"))
        if response.status_code != 200:
            broken.append((model._meta.label, response.status_code))
    assert broken == []


def test_devices_and_account_email_are_shown_and_never_made_or_edited_here(staff, learner):
    device = device_token_issue(user=learner, device_name="Pixel 8").device
    email = AccountEmail.objects.create(
        kind=AccountEmailKind.PASSWORD_RESET,
        to="ada@example.com",
        status=AccountEmailStatus.FAILED,
        attempts=5,
        last_error="SMTPRecipientsRefused: {'ada@example.com': (550, b'no such user')}",
        next_attempt_at=device.created,
    )
    listed = staff.get(reverse("admin:accounts_devicetoken_changelist")).content.decode()
    assert "Pixel 8" in listed
    page = staff.get(reverse("admin:accounts_accountemail_change", args=[email.pk])).content.decode()
    assert "no such user" in page
    assert staff.get(reverse("admin:accounts_devicetoken_add")).status_code == 403
    assert staff.get(reverse("admin:accounts_accountemail_add")).status_code == 403
    # Signing a device out from the admin is deleting it.
    staff.post(reverse("admin:accounts_devicetoken_delete", args=[device.pk]), {"post": "yes"})
    assert not DeviceToken.objects.exists()
