"""The project's WSGI application with two empty views in front of its URLs: the floor under every endpoint.

bench/http.py serves it (the factory `bench.http_floor:floor_application`, or its ASGI twin) beside the
bare callable, so its table shows what the framework alone costs, on the same machine in the same run:
FLOOR_DJANGO_PATH is a plain Django view behind the project's whole middleware stack, FLOOR_API_PATH a
DRF view with the API's default authentication, permission and rate-limit classes; both answer a
constant JSON body and read nothing from the database. Importing this module does nothing, so
bench/http.py can read the paths.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

FLOOR_DJANGO_PATH = "/floor/django/"
FLOOR_API_PATH = "/floor/api/"
# A DRF view with no authentication, permission or rate limit: what DRF's dispatch alone costs.
FLOOR_DRF_PATH = "/floor/drf/"


def floor_application() -> Any:
    """The project's WSGI application (quizsite.wsgi) on the URL conf of this module."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.settings")
    import django
    from django.conf import settings

    django.setup(set_prefix=False)
    settings.ROOT_URLCONF = __name__
    from quizsite.wsgi import application

    return application


def floor_asgi_application() -> Any:
    """The project's ASGI application (quizsite.asgi) on the URL conf of this module."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.settings")
    import django
    from django.conf import settings

    django.setup(set_prefix=False)
    settings.ROOT_URLCONF = __name__
    from quizsite.asgi import application

    return application


@cache
def _urlpatterns() -> list[Any]:
    from django.http import HttpRequest, HttpResponse
    from django.urls import path
    from rest_framework.permissions import AllowAny
    from rest_framework.request import Request
    from rest_framework.response import Response
    from rest_framework.views import APIView

    from quizsite.urls import urlpatterns

    def django_floor(request: HttpRequest) -> HttpResponse:
        return HttpResponse(b'{"ok":true}', content_type="application/json")

    class ApiFloorView(APIView):
        def get(self, request: Request) -> Response:
            return Response({"ok": True})

    class DrfFloorView(ApiFloorView):
        authentication_classes = ()
        permission_classes = (AllowAny,)
        throttle_classes = ()

    return [
        path(FLOOR_DJANGO_PATH.lstrip("/"), django_floor),
        path(FLOOR_API_PATH.lstrip("/"), ApiFloorView.as_view()),
        path(FLOOR_DRF_PATH.lstrip("/"), DrfFloorView.as_view()),
        *urlpatterns,
    ]


def __getattr__(name: str) -> Any:
    # Django's URL resolver reads `urlpatterns` once the settings point here; only then can views be built.
    if name == "urlpatterns":
        return _urlpatterns()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
