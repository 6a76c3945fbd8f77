"""Account endpoints: registering, signing in and out, and passwords."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import logout, update_session_auth_hash
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.me import account_get
from apps.accounts.serializers import (
    LoginInput,
    PasswordChangeInput,
    PasswordResetAcceptedOutput,
    PasswordResetConfirmInput,
    PasswordResetInput,
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
    token_obtain,
    token_revoke,
)
from apps.common.throttling import ScopedAddressRateThrottle
from apps.common.validation import body_checked


class TokenObtainView(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list[type] = []
    throttle_classes = [ScopedAddressRateThrottle]
    throttle_scope = "login"

    @extend_schema(
        summary="Exchange a username and password for an API token",
        request=TokenObtainInput,
        responses={200: TokenObtainOutput},
        auth=[],
        description="The same lockout (429 locked_out) and rate limit as signing in by email.",
    )
    def post(self, request: Request) -> Response:
        data = TokenObtainInput(data=request.data)
        data.is_valid(raise_exception=True)
        token = token_obtain(**data.validated_data)
        return Response(TokenObtainOutput({"token": token.key}).data)


class RegisterView(APIView):
    permission_classes = [AllowAny]
    throttle_classes = [ScopedAddressRateThrottle]
    throttle_scope = "account"
    authentication_classes: list[type] = []

    @extend_schema(
        summary="Create a learner account and sign in",
        request=RegisterInput,
        responses={201: RegisterOutput},
        auth=[],
        description=(
            "The email (lower-cased) is also the username. 400 when the email is taken in any case, the "
            "password breaks a password rule, the time zone is not an IANA name or a field is missing."
        ),
    )
    def post(self, request: Request) -> Response:
        values, refused = body_checked(RegisterInput(data=request.data))
        registered = account_register(
            email=values.get("email"),
            password=values.get("password"),
            display_name=values.get("display_name"),
            timezone=values.get("timezone"),
            refused=refused,
        )
        data = RegisterOutput({"token": registered.token.key, "user": account_get(learner=registered.user)}).data
        return Response(data, status=status.HTTP_201_CREATED)


class LoginView(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list[type] = []
    throttle_classes = [ScopedAddressRateThrottle]
    throttle_scope = "login"

    @extend_schema(
        summary="Exchange an email and password for an API token",
        request=LoginInput,
        responses={200: TokenObtainOutput},
        auth=[],
        description=(
            "The same 400 for an unknown email and a wrong password. After LOGIN_LOCKOUT_FAILURES failures "
            "for one email within LOGIN_LOCKOUT_WINDOW_SECONDS, that email is refused with 429 locked_out "
            "and Retry-After for a whole window, even with the right password. Requests from one address "
            "are also rate limited (429 throttled)."
        ),
    )
    def post(self, request: Request) -> Response:
        body = LoginInput(data=request.data)
        body.is_valid(raise_exception=True)
        token = login(**body.validated_data)
        return Response(TokenObtainOutput({"token": token.key}).data)


class LogoutView(APIView):
    @extend_schema(
        summary="Revoke the API token the request was made with",
        request=None,
        responses={204: OpenApiResponse(description="Signed out; the token no longer works.")},
        description="Every device using this token is signed out. A session (web) sign-in is ended too.",
    )
    def post(self, request: Request) -> Response:
        if isinstance(request.auth, Token):
            token_revoke(token=request.auth)
        else:
            logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class PasswordChangeView(APIView):
    @extend_schema(
        summary="Change the password; returns a new API token",
        request=PasswordChangeInput,
        responses={200: TokenObtainOutput},
        description=(
            "The old token stops working, so every other device is signed out; use the returned one. "
            "400 when the current password is wrong or the new one breaks a password rule."
        ),
    )
    def post(self, request: Request) -> Response:
        body = PasswordChangeInput(data=request.data)
        body.is_valid(raise_exception=True)
        user: Any = request.user
        token = password_change(user=user, **body.validated_data)
        if request.auth is None:
            # Signed in with a session: keep this one, as the token is kept for the device that asked.
            update_session_auth_hash(request._request, user)
        return Response(TokenObtainOutput({"token": token.key}).data)


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
            "Always 202, whether or not an account has this email. When one does, it gets a link to "
            "FRONTEND_URL/reset-password?uid=...&token=..., valid for PASSWORD_RESET_TIMEOUT seconds and once."
        ),
    )
    def post(self, request: Request) -> Response:
        body = PasswordResetInput(data=request.data)
        body.is_valid(raise_exception=True)
        password_reset_request(email=body.validated_data["email"])
        detail: dict[str, Any] = {"detail": "If an account has this email, a reset link is on its way."}
        return Response(PasswordResetAcceptedOutput(detail).data, status=status.HTTP_202_ACCEPTED)


class PasswordResetConfirmView(APIView):
    permission_classes = [AllowAny]
    throttle_classes = [ScopedAddressRateThrottle]
    throttle_scope = "account"
    authentication_classes: list[type] = []

    @extend_schema(
        summary="Set a new password from a reset link; returns a new API token",
        request=PasswordResetConfirmInput,
        responses={200: TokenObtainOutput},
        auth=[],
        description=(
            "400 invalid_token when the link is wrong, expired or already used; 400 invalid when the "
            "new password breaks a password rule. Every device signed in before is signed out."
        ),
    )
    def post(self, request: Request) -> Response:
        body = PasswordResetConfirmInput(data=request.data)
        body.is_valid(raise_exception=True)
        token = password_reset_confirm(**body.validated_data)
        return Response(TokenObtainOutput({"token": token.key}).data)
