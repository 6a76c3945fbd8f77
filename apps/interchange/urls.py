"""Routes of imported media files (mounted at MEDIA_URL, outside the API: browsers load them from card HTML)."""

from django.urls import re_path

from apps.interchange.views import media_file_view

urlpatterns = [
    re_path(r"^(?P<sha256>[0-9a-f]{64})/(?P<name>[^/]+)$", media_file_view, name="interchange-media"),
]
