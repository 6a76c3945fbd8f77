"""Routes of the learner web app: each client route of apps.web.routes serves the shell page."""

from django.urls import URLPattern, path, re_path

from apps.web.routes import ROUTES
from apps.web.views import service_worker_view, shell_view

app_name = "web"

urlpatterns: list[URLPattern] = [
    *(re_path(route.pattern, shell_view, name=route.name) for route in ROUTES),
    path("sw.js", service_worker_view, name="service-worker"),
]
