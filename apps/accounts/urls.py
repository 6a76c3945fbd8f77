"""Routes of the account endpoints."""

from django.urls import path

from apps.accounts.api import TokenObtainView

urlpatterns = [
    path("auth/token/", TokenObtainView.as_view(), name="auth-token"),
]
