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


class AnkiNoteType(models.Model):
    """An Anki note type that imported cards came on, as Anki defined it: exports put them back on it."""

    anki_id = models.BigIntegerField(unique=True, help_text="Anki's id of the note type.")
    name = models.CharField(max_length=255)
    fields = models.JSONField(help_text="Field names, in order.")
    templates = models.JSONField(help_text="Card templates, in order: name, front and back formats.")
    css = models.TextField(blank=True)
    sort_field = models.IntegerField(default=0)
    modified = models.BigIntegerField(default=0, help_text="Anki's modification time (seconds) of this version.")

    def __str__(self) -> str:
        return self.name


class AnkiNoteOrigin(models.Model):
    """The Anki note a card was imported from, field for field, so an export gives Anki its own note back."""

    card = models.OneToOneField("content.Card", on_delete=models.CASCADE, related_name="anki_origin")
    note_type = models.ForeignKey(AnkiNoteType, on_delete=models.PROTECT, related_name="notes")
    fields = models.JSONField(help_text="The note's fields as the package held them.")
    tags = models.JSONField(default=list, help_text="The note's tags as the package held them, Anki's own included.")
    modified = models.BigIntegerField(default=0, help_text="The note's modification time (seconds) in the package.")
    imported_content = models.JSONField(
        help_text="The card's term, definition, example, code and format as the import made them: an edit since shows."
    )

    def __str__(self) -> str:
        return f"{self.note_type} note of card {self.card_id}"
