"""Submissions record their hand-offs to the broker, so the reaper can send again what the broker never took."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("exercises", "0003_submission_client_submission_id"),
    ]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="enqueued_at",
            field=models.DateTimeField(
                blank=True,
                help_text="When its grading was last handed to the broker; empty until one hand-off works.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="submission",
            name="publish_attempts",
            field=models.PositiveIntegerField(
                default=0, help_text="Hand-offs to the broker tried, failed ones included."
            ),
        ),
    ]
