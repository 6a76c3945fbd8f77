"""Routes of the account endpoints."""

from django.urls import path

from apps.accounts.api import TokenObtainView
from apps.accounts.profile_api import MeView

urlpatterns = [
    path("auth/token/", TokenObtainView.as_view(), name="auth-token"),
    path("me/", MeView.as_view(), name="me"),
]
