"""The project's routes plus two views that fail, to test the error shape of unhandled errors."""

from django.http import HttpRequest, HttpResponse
from django.urls import path
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from quizsite.urls import urlpatterns as project_urlpatterns


class FailingApiView(APIView):
    permission_classes = [AllowAny]

    def get(self, request: Request) -> Response:
        raise RuntimeError("boom in an API view")


def failing_plain_view(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("boom in a plain view")


urlpatterns = [
    path("api/v1/failing/api/", FailingApiView.as_view()),
    path("api/v1/failing/plain/", failing_plain_view),
    *project_urlpatterns,
]
