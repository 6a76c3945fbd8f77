"""Signing in with an email, the lockouts after failures (which cannot keep an owner out), and signing out."""

from __future__ import annotations

import hashlib
import threading
import time

import pytest
from django.db import connection

from apps.accounts.api import LoginView
from apps.accounts.lockout import login_failure_record, login_locked_for, login_lockouts_expire
from apps.accounts.models import AccountEmail, DeviceToken, LoginLockout
from apps.common.throttling import ScopedAddressRateThrottle
from tests.support.accounts import PASSWORD, login
from tests.support.api import client_with_token

pytestmark = pytest.mark.django_db

EMAIL = "ada@example.com"
# The test client's own address, and others from the documentation ranges (RFC 5737): REMOTE_ADDR only.
HERE = "127.0.0.1"
ELSEWHERE = "203.0.113.7"


def fail(api_client, times: int, email: str = EMAIL, address: str = HERE) -> None:
    for _ in range(times):
        response = api_client.post(
            "/api/v1/auth/login/", {"email": email, "password": "not the password"}, format="json", REMOTE_ADDR=address
        )
        assert response.status_code == 400, response.json()
        assert response.json()["error"]["code"] == "invalid_credentials"


def assert_locked_out(response) -> int:
    assert response.status_code == 429
    assert set(response.json()) == {"error"}
    error = response.json()["error"]
    assert error["code"] == "locked_out"
    assert error["fields"] == {}
    retry_after = int(response["Retry-After"])
    assert 0 < retry_after <= 900
    return retry_after


def test_login_with_the_email_in_any_case_gives_a_working_token(api_client, learner):
    response = login(api_client, "  ADA@example.COM ")
    assert response.status_code == 200, response.json()
    token = response.json()["token"]
    assert list(response.json()) == ["token", "expiry", "device_id"]
    assert DeviceToken.objects.get(user=learner).public_id.hex == response.json()["device_id"].replace("-", "")
    assert client_with_token(token).get("/api/v1/me/").json()["username"] == "ada"
    learner.refresh_from_db()
    assert learner.last_login is not None


def test_unknown_email_and_wrong_password_get_the_same_answer(api_client, learner):
    wrong = login(api_client, EMAIL, "not the password")
    unknown = login(api_client, "nobody@example.com", "not the password")
    assert wrong.status_code == unknown.status_code == 400
    assert wrong.json() == unknown.json()
    assert wrong.json()["error"]["message"] == "Unable to sign in with that email and password."


def test_inactive_accounts_cannot_sign_in(api_client, learner):
    learner.is_active = False
    learner.save()
    assert login(api_client, EMAIL).status_code == 400


def test_an_address_is_locked_out_of_the_account_after_five_failures_even_for_the_right_password(
    api_client, learner, settings
):
    assert settings.LOGIN_LOCKOUT_FAILURES == 5
    assert settings.LOGIN_LOCKOUT_WINDOW_SECONDS == 900
    fail(api_client, 5)
    assert_locked_out(login(api_client, EMAIL))
    # In another case too: it is the same account.
    assert_locked_out(login(api_client, "Ada@Example.com", "not the password"))
    assert not DeviceToken.objects.exists()


def test_an_attacker_locking_the_account_from_one_address_does_not_lock_its_owner_out(api_client, learner):
    fail(api_client, 5, address=ELSEWHERE)
    assert_locked_out(
        api_client.post(
            "/api/v1/auth/login/", {"email": EMAIL, "password": PASSWORD}, format="json", REMOTE_ADDR=ELSEWHERE
        )
    )
    assert login(api_client, EMAIL).status_code == 200


def test_many_addresses_guessing_pause_the_account_for_new_addresses_only_and_tell_its_owner(
    api_client, learner, settings, mailoutbox, deliver_account_emails
):
    settings.LOGIN_LOCKOUT_ACCOUNT_FAILURES = 12
    # The owner has signed in from here before.
    assert login(api_client, EMAIL).status_code == 200
    for attacker in range(3):
        fail(api_client, 4, address=f"198.51.100.{attacker + 1}")
    new_place = api_client.post(
        "/api/v1/auth/login/", {"email": EMAIL, "password": PASSWORD}, format="json", REMOTE_ADDR="192.0.2.44"
    )
    assert_locked_out(new_place)
    assert login(api_client, EMAIL).status_code == 200
    assert deliver_account_emails() == ["sent"]
    [notice] = mailoutbox
    assert notice.to == [EMAIL]
    assert "paused" in notice.subject
    assert "/forgot-password" in notice.body


def test_a_pause_of_an_unknown_email_sends_nothing(api_client, settings, deliver_account_emails):
    settings.LOGIN_LOCKOUT_ACCOUNT_FAILURES = 4
    for attacker in range(2):
        fail(api_client, 2, email="nobody@example.com", address=f"198.51.100.{attacker + 1}")
    assert list(AccountEmail.objects.values_list("kind", flat=True)) == ["sign_in_paused"]
    assert deliver_account_emails() == ["not_sent"]


def test_the_lockout_is_per_account(api_client, learner, django_user_model):
    django_user_model.objects.create_user(username="bo", email="bo@example.com", password=PASSWORD)
    fail(api_client, 5)
    assert login(api_client, "bo@example.com").status_code == 200


def test_unknown_emails_lock_out_like_known_ones(api_client):
    fail(api_client, 5, email="nobody@example.com")
    assert_locked_out(login(api_client, "nobody@example.com"))


def test_a_successful_login_resets_the_count(api_client, learner):
    fail(api_client, 4)
    assert login(api_client, EMAIL).status_code == 200
    fail(api_client, 4)
    assert login(api_client, EMAIL).status_code == 200
    fail(api_client, 5)
    assert_locked_out(login(api_client, EMAIL))


def test_the_lockout_ends_when_the_window_passes(api_client, learner, settings):
    settings.LOGIN_LOCKOUT_FAILURES = 2
    settings.LOGIN_LOCKOUT_WINDOW_SECONDS = 1
    fail(api_client, 2)
    assert login(api_client, EMAIL).status_code == 429
    time.sleep(1.2)
    assert login(api_client, EMAIL).status_code == 200


def test_retry_after_counts_down_from_the_window(learner, settings):
    settings.LOGIN_LOCKOUT_FAILURES = 1
    started = 1_000_000.0
    assert login_failure_record(email=EMAIL, address=HERE, now=started).locked_for == 900
    assert login_locked_for(email=EMAIL, address=HERE, now=started + 100) == 800
    assert login_locked_for(email=EMAIL, address=HERE, now=started + 899.5) == 1
    assert login_locked_for(email=EMAIL, address=HERE, now=started + 900) == 0
    assert login_locked_for(email=EMAIL, address=ELSEWHERE, now=started + 100) == 0


@pytest.mark.django_db(transaction=True)
def test_failures_at_the_same_moment_are_all_counted(settings):
    settings.LOGIN_LOCKOUT_FAILURES = 16
    barrier = threading.Barrier(15)
    errors: list[BaseException] = []

    def record() -> None:
        try:
            connection.ensure_connection()  # connect first, so the race is in the counting itself
            barrier.wait(timeout=30)
            login_failure_record(email=EMAIL, address=HERE)
        except BaseException as error:  # reported by the assertion below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=record) for _ in range(15)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads), "a thread is stuck: deadlock?"
    assert not errors, errors
    assert login_locked_for(email=EMAIL, address=HERE) == 0
    # The sixteenth failure is the one that locks: none of the fifteen was lost.
    assert login_failure_record(email=EMAIL, address=HERE).locked_for == 900
    assert login_locked_for(email=EMAIL, address=HERE) > 0


def test_login_is_throttled_per_address_by_the_login_scope(api_client, learner, settings):
    assert LoginView.throttle_scope == "login"
    assert LoginView.throttle_classes == [ScopedAddressRateThrottle]
    current = settings.REST_FRAMEWORK
    settings.REST_FRAMEWORK = {
        **current,
        "DEFAULT_THROTTLE_RATES": {**current["DEFAULT_THROTTLE_RATES"], "login_ip": "3/min"},
    }
    for _ in range(3):
        assert login(api_client, EMAIL).status_code == 200
    response = login(api_client, EMAIL)
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "throttled"
    assert int(response["Retry-After"]) > 0


def test_the_username_token_endpoint_still_works(api_client, learner):
    response = api_client.post("/api/v1/auth/token/", {"username": "ada", "password": PASSWORD}, format="json")
    assert response.status_code == 200


def test_logout_revokes_the_token(api_client, learner):
    token = login(api_client, EMAIL).json()["token"]
    client = client_with_token(token)
    assert client.get("/api/v1/me/").status_code == 200
    assert client.post("/api/v1/auth/logout/").status_code == 204
    assert not DeviceToken.objects.exists()
    response = client.get("/api/v1/me/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"
    again = login(api_client, EMAIL).json()["token"]
    assert again != token
    assert client_with_token(again).get("/api/v1/me/").status_code == 200


def test_logout_needs_a_sign_in(api_client):
    assert api_client.post("/api/v1/auth/logout/").status_code == 401


def test_the_username_endpoint_shares_the_lockout(api_client, django_user_model):
    django_user_model.objects.create_user(username="cy@example.com", email="cy@example.com", password=PASSWORD)
    fail(api_client, 5, email="cy@example.com")
    response = api_client.post(
        "/api/v1/auth/token/", {"username": "cy@example.com", "password": PASSWORD}, format="json"
    )
    assert_locked_out(response)


def test_guessing_through_the_username_endpoint_locks_it_too(api_client, learner):
    for _ in range(5):
        response = api_client.post("/api/v1/auth/token/", {"username": "ada", "password": "nope"}, format="json")
        assert response.status_code == 400
    response = api_client.post("/api/v1/auth/token/", {"username": "ada", "password": PASSWORD}, format="json")
    assert_locked_out(response)


def test_the_table_holds_neither_the_email_nor_its_plain_hash(api_client, learner):
    fail(api_client, 2)
    fail(api_client, 1, email="nobody@example.com")
    rows = list(LoginLockout.objects.values_list("email_digest", flat=True))
    # Each email counted from this address and from everywhere.
    assert len(rows) == 4
    for email in (EMAIL, "nobody@example.com"):
        assert hashlib.sha256(email.encode()).hexdigest() not in rows
        assert not [row for row in rows if email in row]


def test_rows_are_deleted_once_their_window_or_lockout_is_over(settings):
    settings.LOGIN_LOCKOUT_FAILURES = 2
    started = 1_000_000.0
    settings.LOGIN_LOCKOUT_ACCOUNT_FAILURES = 100
    login_failure_record(email="counting@example.com", address=HERE, now=started)
    login_failure_record(email="locked@example.com", address=HERE, now=started)
    assert login_failure_record(email="locked@example.com", address=HERE, now=started + 600).locked_for == 900
    assert login_lockouts_expire(now=started + 899) == 0
    # Both counts of counting@, and the count of locked@ from everywhere, whose window started with it.
    assert login_lockouts_expire(now=started + 900) == 3
    assert login_locked_for(email="locked@example.com", address=HERE, now=started + 900) == 600
    assert login_lockouts_expire(now=started + 1500) == 1
    assert not LoginLockout.objects.exists()


def test_a_failure_after_the_window_starts_the_count_again(settings):
    settings.LOGIN_LOCKOUT_FAILURES = 2
    started = 1_000_000.0
    assert login_failure_record(email=EMAIL, address=HERE, now=started).locked_for == 0
    assert login_failure_record(email=EMAIL, address=HERE, now=started + 900).locked_for == 0
    assert login_failure_record(email=EMAIL, address=HERE, now=started + 901).locked_for == 900
