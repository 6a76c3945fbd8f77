"""Root URL routes: the admin, the versioned API, its schema and docs, the health check and the web app."""

from django.conf import settings
from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from apps.common.api import HealthView
from apps.common.errors import not_found_view
from apps.content.media_views import course_media_view

api_v1: list[URLPattern | URLResolver] = [
    path("", include("apps.accounts.urls")),
    path("", include("apps.content.urls")),
    path("", include("apps.srs.urls")),
    path("", include("apps.interchange.api_urls")),
    path("", include("apps.exercises.urls")),
    path("", include("apps.games.urls")),
    path("", include("apps.quizzes.urls")),
    path("", include("apps.explore.urls")),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    # Anything else under /api/ is a JSON 404, even with DEBUG on.
    re_path(r"^.*$", not_found_view),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    re_path(r"^api/.*$", not_found_view),
    path("healthz", HealthView.as_view(), name="healthz"),
    path(settings.COURSE_MEDIA_URL.strip("/") + "/<str:name>", course_media_view, name="course-media"),
    path(settings.MEDIA_URL.strip("/") + "/", include("apps.interchange.urls")),
    path("", include("apps.reminders.urls")),
    # Last: the learner web app's client routes (apps.web.routes); any other path is a 404 (the app's own
    # page for a browser: apps.web.views.page_not_found_view).
    path("", include("apps.web.urls")),
]

handler400 = "apps.common.errors.bad_request_view"
handler403 = "apps.common.errors.permission_denied_view"
handler404 = "apps.web.views.page_not_found_view"
handler500 = "apps.common.errors.server_error_view"
