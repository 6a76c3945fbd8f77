"""Account endpoints: registering, signing in and out, devices, and passwords."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth import logout, update_session_auth_hash
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.devices import (
    IssuedToken,
    device_revoke,
    device_token_revoke,
    device_tokens_of,
    device_tokens_revoke_all,
)
from apps.accounts.me import account_get
from apps.accounts.models import DeviceToken
from apps.accounts.serializers import (
    DeviceOutput,
    LoginInput,
    PasswordChangeInput,
    PasswordResetAcceptedOutput,
    PasswordResetConfirmInput,
    PasswordResetInput,
    RegisterAcceptedOutput,
    RegisterConfirmInput,
    RegisterInput,
    RegisterOutput,
    TokenObtainInput,
    TokenObtainOutput,
)
from apps.accounts.services import (
    account_register,
    login,
    password_change,
    password_reset_confirm,
    password_reset_request,
    registration_confirm,
    token_obtain,
)
from apps.common.throttling import ScopedAddressRateThrottle, client_address
from apps.common.validation import body_checked

_LOCKOUT = (
    "After LOGIN_LOCKOUT_FAILURES failures for one email from one address within LOGIN_LOCKOUT_WINDOW_SECONDS, "
    "that address is refused for that email with 429 locked_out and Retry-After for a whole window, even with "
    "the right password; other addresses are not. After LOGIN_LOCKOUT_ACCOUNT_FAILURES from all addresses, the "
    "email is paused the same way for addresses it has never signed in from, and its owner is emailed. "
    "Requests from one address are also rate limited (429 throttled)."
)
_CHECK_INBOX = "Check your inbox: if this address can be signed up, a link to finish is on its way."


def _token_body(issued: IssuedToken) -> dict[str, Any]:
    return {"token": issued.key, "expiry": issued.device.expiry, "device_id": issued.device.public_id}


def _current_device(request: Request) -> DeviceToken | None:
    return request.auth if isinstance(request.auth, DeviceToken) else None


class TokenObtainView(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list[type] = []
    throttle_classes = [ScopedAddressRateThrottle]
    throttle_scope = "login"

    @extend_schema(
        summary="Exchange a username and password for a device token",
        request=TokenObtainInput,
        responses={200: TokenObtainOutput},
        auth=[],
        description="Each call signs in one more device. The same lockouts (429 locked_out) and rate limit as "
        "signing in by email.",
    )
    def post(self, request: Request) -> Response:
        data = TokenObtainInput(data=request.data)
        data.is_valid(raise_exception=True)
        issued = token_obtain(**data.validated_data, address=client_address(request))
        return Response(TokenObtainOutput(_token_body(issued)).data)


class RegisterView(APIView):
    permission_classes = [AllowAny]
    throttle_classes = [ScopedAddressRateThrottle]
    throttle_scope = "account"
    authentication_classes: list[type] = []

    @extend_schema(
        summary="Sign up: email a link that creates the account",
        request=RegisterInput,
        responses={202: RegisterAcceptedOutput},
        auth=[],
        description=(
            "202 with the same words whether or not the address has an account: a new address is sent a link "
            "to FRONTEND_URL/confirm-email?token=... (POST it to /auth/register/confirm/ to create the account "
            "and sign in), valid for REGISTRATION_CONFIRM_TIMEOUT seconds; an address with an account is sent "
            "a note saying so instead. The email (lower-cased, its domain as IDNA) is also the username. 400 "
            "when the email cannot be delivered to (its part before the @ must be ASCII), the password breaks "
            "a password rule, the time zone is not an IANA name or a field is missing."
        ),
    )
    def post(self, request: Request) -> Response:
        values, refused = body_checked(RegisterInput(data=request.data))
        account_register(
            email=values.get("email"),
            password=values.get("password"),
            display_name=values.get("display_name"),
            timezone=values.get("timezone"),
            refused=refused,
        )
        return Response(RegisterAcceptedOutput({"detail": _CHECK_INBOX}).data, status=status.HTTP_202_ACCEPTED)


class RegisterConfirmView(APIView):
    permission_classes = [AllowAny]
    throttle_classes = [ScopedAddressRateThrottle]
    throttle_scope = "account"
    authentication_classes: list[type] = []

    @extend_schema(
        summary="Finish signing up from the emailed link: create the account and sign in",
        request=RegisterConfirmInput,
        responses={201: RegisterOutput},
        auth=[],
        description="400 invalid_token when the link is wrong, expired or used; 400 already_registered when "
        "the address got an account since.",
    )
    def post(self, request: Request) -> Response:
        body = RegisterConfirmInput(data=request.data)
        body.is_valid(raise_exception=True)
        registered = registration_confirm(**body.validated_data)
        data = RegisterOutput({**_token_body(registered.token), "user": account_get(learner=registered.user)}).data
        return Response(data, status=status.HTTP_201_CREATED)


class LoginView(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list[type] = []
    throttle_classes = [ScopedAddressRateThrottle]
    throttle_scope = "login"

    @extend_schema(
        summary="Exchange an email and password for a device token",
        request=LoginInput,
        responses={200: TokenObtainOutput},
        auth=[],
        description="Each sign-in is one more device with its own token. The same 400 for an unknown email and "
        "a wrong password. " + _LOCKOUT,
    )
    def post(self, request: Request) -> Response:
        body = LoginInput(data=request.data)
        body.is_valid(raise_exception=True)
        issued = login(**body.validated_data, address=client_address(request))
        return Response(TokenObtainOutput(_token_body(issued)).data)


class LogoutView(APIView):
    @extend_schema(
        summary="Sign out this device: revoke the token the request was made with",
        request=None,
        responses={204: OpenApiResponse(description="Signed out; this token no longer works, other devices' do.")},
        description="Only this device is signed out. A session (web) sign-in is ended too.",
    )
    def post(self, request: Request) -> Response:
        device = _current_device(request)
        if device is not None:
            device_token_revoke(token=device)
        else:
            logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class LogoutEverywhereView(APIView):
    @extend_schema(
        summary="Sign out everywhere: revoke every device's token",
        request=None,
        responses={204: OpenApiResponse(description="Every device, this one included, is signed out.")},
    )
    def post(self, request: Request) -> Response:
        device_tokens_revoke_all(user=request.user)
        if _current_device(request) is None:
            logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DeviceListView(APIView):
    @extend_schema(
        summary="The devices signed in to this account",
        responses={200: DeviceOutput(many=True)},
        description="Every token that has not expired, the most recently used first; `current` marks this one.",
    )
    def get(self, request: Request) -> Response:
        device = _current_device(request)
        rows = [
            {
                "public_id": row.public_id,
                "device_name": row.device_name,
                "created": row.created,
                "last_used_at": row.last_used_at,
                "expiry": row.expiry,
                "current": device is not None and row.public_id == device.public_id,
            }
            for row in device_tokens_of(user=request.user)
        ]
        return Response(DeviceOutput(rows, many=True).data)


class DeviceDetailView(APIView):
    @extend_schema(
        summary="Sign out one device",
        request=None,
        responses={204: OpenApiResponse(description="That device's token no longer works.")},
        description="404 when no device of this account has the id.",
    )
    def delete(self, request: Request, device_id: uuid.UUID) -> Response:
        device_revoke(user=request.user, public_id=device_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class PasswordChangeView(APIView):
    @extend_schema(
        summary="Change the password; every device is signed out and this one gets a new token",
        request=PasswordChangeInput,
        responses={200: TokenObtainOutput},
        description=(
            "Every token stops working, this device's too: use the returned one. 400 when the current "
            "password is wrong or the new one breaks a password rule."
        ),
    )
    def post(self, request: Request) -> Response:
        body = PasswordChangeInput(data=request.data)
        body.is_valid(raise_exception=True)
        user: Any = request.user
        issued = password_change(user=user, device=_current_device(request), **body.validated_data)
        if request.auth is None:
            # Signed in with a session: keep this one, as a token is issued for the device that asked.
            update_session_auth_hash(request._request, user)
        return Response(TokenObtainOutput(_token_body(issued)).data)


class PasswordResetView(APIView):
    permission_classes = [AllowAny]
    throttle_classes = [ScopedAddressRateThrottle]
    throttle_scope = "account"
    authentication_classes: list[type] = []

    @extend_schema(
        summary="Email a password reset link",
        request=PasswordResetInput,
        responses={202: PasswordResetAcceptedOutput},
        auth=[],
        description=(
            "Always 202, with the same words and the same work whether or not an account has this email: the "
            "email is sent by a worker. When an active account has it, it gets a link to "
            "FRONTEND_URL/reset-password?uid=...&token=..., valid for PASSWORD_RESET_TIMEOUT seconds and once."
        ),
    )
    def post(self, request: Request) -> Response:
        body = PasswordResetInput(data=request.data)
        body.is_valid(raise_exception=True)
        password_reset_request(email=body.validated_data["email"])
        detail: dict[str, Any] = {
            "detail": "Check your inbox: if an account has this email, a reset link is on its way."
        }
        return Response(PasswordResetAcceptedOutput(detail).data, status=status.HTTP_202_ACCEPTED)


class PasswordResetConfirmView(APIView):
    permission_classes = [AllowAny]
    throttle_classes = [ScopedAddressRateThrottle]
    throttle_scope = "account"
    authentication_classes: list[type] = []

    @extend_schema(
        summary="Set a new password from a reset link; returns a new device token",
        request=PasswordResetConfirmInput,
        responses={200: TokenObtainOutput},
        auth=[],
        description=(
            "400 invalid_token when the link is wrong, expired or already used; 400 invalid when the "
            "new password breaks a password rule. Every device signed in before is signed out, and the "
            "email's sign-in lockouts are lifted."
        ),
    )
    def post(self, request: Request) -> Response:
        body = PasswordResetConfirmInput(data=request.data)
        body.is_valid(raise_exception=True)
        issued = password_reset_confirm(**body.validated_data, address=client_address(request))
        return Response(TokenObtainOutput(_token_body(issued)).data)
