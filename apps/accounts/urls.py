"""Routes of the account endpoints."""

from django.urls import path

from apps.accounts.api import (
    DeviceDetailView,
    DeviceListView,
    LoginView,
    LogoutEverywhereView,
    LogoutView,
    PasswordChangeView,
    PasswordResetConfirmView,
    PasswordResetView,
    RegisterConfirmView,
    RegisterView,
    TokenObtainView,
)
from apps.accounts.profile_api import MeDeleteView, MeExportView, MeView

urlpatterns = [
    path("auth/token/", TokenObtainView.as_view(), name="auth-token"),
    path("auth/register/", RegisterView.as_view(), name="auth-register"),
    path("auth/login/", LoginView.as_view(), name="auth-login"),
    path("auth/register/confirm/", RegisterConfirmView.as_view(), name="auth-register-confirm"),
    path("auth/logout/", LogoutView.as_view(), name="auth-logout"),
    path("auth/logout/everywhere/", LogoutEverywhereView.as_view(), name="auth-logout-everywhere"),
    path("auth/devices/", DeviceListView.as_view(), name="auth-devices"),
    path("auth/devices/<uuid:device_id>/", DeviceDetailView.as_view(), name="auth-device"),
    path("auth/password/change/", PasswordChangeView.as_view(), name="auth-password-change"),
    path("auth/password/reset/", PasswordResetView.as_view(), name="auth-password-reset"),
    path("auth/password/reset/confirm/", PasswordResetConfirmView.as_view(), name="auth-password-reset-confirm"),
    path("me/", MeView.as_view(), name="me"),
    path("me/export/", MeExportView.as_view(), name="me-export"),
    path("me/delete/", MeDeleteView.as_view(), name="me-delete"),
]
