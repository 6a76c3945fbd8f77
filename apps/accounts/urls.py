"""Routes of the account endpoints."""

from django.urls import path

from apps.accounts.api import (
    LoginView,
    LogoutView,
    PasswordChangeView,
    PasswordResetConfirmView,
    PasswordResetView,
    RegisterView,
    TokenObtainView,
)
from apps.accounts.profile_api import MeDeleteView, MeExportView, MeView

urlpatterns = [
    path("auth/token/", TokenObtainView.as_view(), name="auth-token"),
    path("auth/register/", RegisterView.as_view(), name="auth-register"),
    path("auth/login/", LoginView.as_view(), name="auth-login"),
    path("auth/logout/", LogoutView.as_view(), name="auth-logout"),
    path("auth/password/change/", PasswordChangeView.as_view(), name="auth-password-change"),
    path("auth/password/reset/", PasswordResetView.as_view(), name="auth-password-reset"),
    path("auth/password/reset/confirm/", PasswordResetConfirmView.as_view(), name="auth-password-reset-confirm"),
    path("me/", MeView.as_view(), name="me"),
    path("me/export/", MeExportView.as_view(), name="me-export"),
    path("me/delete/", MeDeleteView.as_view(), name="me-delete"),
]
