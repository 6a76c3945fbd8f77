"""Media files that imported cards show: images and sounds, stored once per content."""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class MediaKind(models.TextChoices):
    PNG = "image/png", "PNG image"
    JPEG = "image/jpeg", "JPEG image"
    GIF = "image/gif", "GIF image"
    WEBP = "image/webp", "WebP image"
    MP3 = "audio/mpeg", "MP3 audio"
    OGG = "audio/ogg", "Ogg audio"
    WAV = "audio/wav", "WAV audio"


def media_file_path(instance: MediaFile, filename: str) -> str:
    # Named by content, never by the package: an imported name cannot choose where a file lands.
    return f"card-media/{instance.sha256[:2]}/{instance.sha256}"


class MediaFile(models.Model):
    sha256 = models.CharField(max_length=64, unique=True)
    original_name = models.CharField(max_length=255, help_text="The name the first package that brought it used.")
    content_type = models.CharField(max_length=40, choices=MediaKind.choices)
    size = models.PositiveBigIntegerField()
    file = models.FileField(upload_to=media_file_path, max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(content_type__in=MediaKind.values), name="media_file_type_allowed"),
            models.CheckConstraint(condition=Q(sha256__regex=r"^[0-9a-f]{64}$"), name="media_file_sha256_hex"),
        ]

    def __str__(self) -> str:
        return self.original_name
