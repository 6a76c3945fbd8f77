"""A token per device: listed and revoked by the learner, expiring unless used; tokens from before keep working."""

from __future__ import annotations

import importlib
import uuid
from datetime import timedelta

import pytest
from django.apps import apps
from django.db import connection
from django.utils import timezone

from apps.accounts.devices import device_token_issue, device_tokens_expire
from apps.accounts.models import DeviceToken
from tests.support.accounts import PASSWORD
from tests.support.api import client_with_token

pytestmark = pytest.mark.django_db

LOGIN = "/api/v1/auth/login/"
DEVICES = "/api/v1/auth/devices/"


def sign_in(api_client, device_name: str) -> str:
    response = api_client.post(
        LOGIN, {"email": "ada@example.com", "password": PASSWORD, "device_name": device_name}, format="json"
    )
    assert response.status_code == 200, response.json()
    return str(response.json()["token"])


def test_each_device_gets_its_own_token_and_signing_out_one_leaves_the_other(api_client, learner):
    phone, tablet = sign_in(api_client, "Phone"), sign_in(api_client, "Tablet")
    assert phone != tablet
    assert client_with_token(phone).post("/api/v1/auth/logout/").status_code == 204
    assert client_with_token(phone).get("/api/v1/me/").status_code == 401
    assert client_with_token(tablet).get("/api/v1/me/").status_code == 200


def test_the_learner_lists_their_devices_and_signs_one_out(api_client, learner, django_user_model):
    phone, tablet = sign_in(api_client, "Phone"), sign_in(api_client, "Tablet")
    other = django_user_model.objects.create_user(username="bo", email="bo@example.com", password=PASSWORD)
    device_token_issue(user=other, device_name="Bo's laptop")
    listed = client_with_token(phone).get(DEVICES)
    assert listed.status_code == 200
    devices = listed.json()
    assert sorted((device["name"], device["current"]) for device in devices) == [("Phone", True), ("Tablet", False)]
    assert set(devices[0]) == {"id", "name", "signed_in_at", "last_used_at", "expires_at", "current"}
    assert all(device["expires_at"].endswith("Z") for device in devices)
    tablet_id = next(device["id"] for device in devices if device["name"] == "Tablet")
    assert client_with_token(phone).delete(f"{DEVICES}{tablet_id}/").status_code == 204
    assert client_with_token(tablet).get("/api/v1/me/").status_code == 401
    assert client_with_token(phone).get("/api/v1/me/").status_code == 200


def test_another_learners_device_is_not_found(api_client, learner, django_user_model):
    phone = sign_in(api_client, "Phone")
    other = django_user_model.objects.create_user(username="bo", email="bo@example.com", password=PASSWORD)
    theirs = device_token_issue(user=other, device_name="Bo's laptop")
    response = client_with_token(phone).delete(f"{DEVICES}{theirs.device.public_id}/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert client_with_token(phone).delete(f"{DEVICES}{uuid.uuid4()}/").status_code == 404
    assert client_with_token(theirs.key).get("/api/v1/me/").status_code == 200


def test_signing_out_everywhere_ends_every_device(api_client, learner):
    phone, tablet = sign_in(api_client, "Phone"), sign_in(api_client, "Tablet")
    assert client_with_token(phone).post("/api/v1/auth/logout/everywhere/").status_code == 204
    assert client_with_token(phone).get("/api/v1/me/").status_code == 401
    assert client_with_token(tablet).get("/api/v1/me/").status_code == 401
    assert not DeviceToken.objects.exists()


def test_a_token_expires_unless_used_and_use_moves_its_expiry_on(learner, settings):
    issued = device_token_issue(user=learner, device_name="Phone")
    now = timezone.now()
    # Last used longer ago than the refresh interval: this use moves the expiry on.
    DeviceToken.objects.filter(pk=issued.device.pk).update(
        last_used_at=now - timedelta(seconds=settings.TOKEN_REFRESH_SECONDS + 5), expiry=now + timedelta(days=1)
    )
    assert client_with_token(issued.key).get("/api/v1/me/").status_code == 200
    renewed = DeviceToken.objects.get(pk=issued.device.pk)
    assert renewed.expiry > now + timedelta(days=settings.TOKEN_TTL_DAYS - 1)
    DeviceToken.objects.filter(pk=issued.device.pk).update(expiry=now - timedelta(seconds=1))
    response = client_with_token(issued.key).get("/api/v1/me/")
    assert response.status_code == 401
    assert device_tokens_expire() == 1


def test_past_the_limit_the_device_used_least_recently_is_signed_out(learner, settings):
    settings.TOKENS_PER_ACCOUNT = 2
    oldest = device_token_issue(user=learner, device_name="Old phone")
    DeviceToken.objects.filter(pk=oldest.device.pk).update(last_used_at=timezone.now() - timedelta(days=9))
    kept = device_token_issue(user=learner, device_name="Tablet")
    newest = device_token_issue(user=learner, device_name="Laptop")
    assert set(DeviceToken.objects.values_list("device_name", flat=True)) == {"Tablet", "Laptop"}
    assert client_with_token(oldest.key).get("/api/v1/me/").status_code == 401
    assert client_with_token(kept.key).get("/api/v1/me/").status_code == 200
    assert client_with_token(newest.key).get("/api/v1/me/").status_code == 200


def test_only_a_digest_of_the_token_is_stored(learner):
    issued = device_token_issue(user=learner, device_name="Phone")
    row = DeviceToken.objects.values().get()
    assert issued.key not in str(row)


@pytest.mark.parametrize("token", ["\u00e9" * 10, "x" * 500, "0" * 64])
def test_odd_tokens_are_a_401(api_client, token):
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {token}".encode().decode("latin-1"))
    response = api_client.get("/api/v1/me/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


def test_invalid_tokens_are_counted_per_address(api_client, learner, settings):
    current = settings.REST_FRAMEWORK
    settings.REST_FRAMEWORK = {
        **current,
        "DEFAULT_THROTTLE_RATES": {**current["DEFAULT_THROTTLE_RATES"], "bad_token_ip": "3/min"},
    }
    api_client.credentials(HTTP_AUTHORIZATION="Token " + "f" * 64)
    statuses = [api_client.get("/api/v1/me/").status_code for _ in range(5)]
    assert statuses == [401, 401, 401, 429, 429]
    refused = api_client.get("/api/v1/me/")
    assert refused.json()["error"]["code"] == "throttled"
    assert int(refused["Retry-After"]) > 0
    # Another address is not held back, and a valid token from this one still works.
    assert api_client.get("/api/v1/me/", REMOTE_ADDR="203.0.113.9").status_code == 401
    valid = device_token_issue(user=learner, device_name="Phone")
    assert client_with_token(valid.key).get("/api/v1/me/").status_code == 200


def test_tokens_from_before_devices_keep_working_after_the_migration(learner):
    """The migration's copy, run against a table of account tokens as it stood before."""
    migration = importlib.import_module("apps.accounts.migrations.0005_device_tokens_from_account_tokens")
    old_key = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE authtoken_token "
            "(key varchar(40) PRIMARY KEY, user_id integer NOT NULL, created timestamp with time zone NOT NULL)"
        )
        cursor.execute(
            "INSERT INTO authtoken_token (key, user_id, created) VALUES (%s, %s, %s)",
            [old_key, learner.pk, timezone.now()],
        )
    with connection.schema_editor() as editor:
        migration.copy_account_tokens(apps, editor)
    assert "authtoken_token" not in connection.introspection.table_names()
    assert client_with_token(old_key).get("/api/v1/me/").status_code == 200
    [device] = DeviceToken.objects.filter(user=learner)
    assert device.device_name == migration.DEVICE_NAME
    assert old_key not in str(DeviceToken.objects.values().get())
