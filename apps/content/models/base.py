"""Fields shared by every piece of authored content."""

from django.db import models


class TimestampedModel(models.Model):
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class ArchivableModel(TimestampedModel):
    """Content that learners may have history on: it is archived, never deleted, when removed."""

    archived = models.BooleanField(default=False, help_text="Hidden from learners and from new study; history is kept.")

    class Meta:
        abstract = True
