"""A submission's grading is a background job of apps.common.jobs: its heartbeat is `updated_at` and what the
learner is told on failure is `error_message`, as for every other kind."""

from django.db import migrations, models
from django.db.models.functions import Coalesce


def heartbeats_fill(apps, schema_editor):
    """A grading never claimed has no heartbeat; its row last changed when it was stored."""
    submission = apps.get_model("exercises", "Submission")
    submission.objects.filter(updated_at=None).update(updated_at=Coalesce("started_at", "created_at"))


class Migration(migrations.Migration):
    dependencies = [("exercises", "0004_submission_enqueued_at")]

    operations = [
        migrations.RemoveIndex(model_name="submission", name="submission_status_heartbeat"),
        migrations.RenameField(model_name="submission", old_name="heartbeat_at", new_name="updated_at"),
        migrations.RunPython(heartbeats_fill, migrations.RunPython.noop),
        migrations.AlterField(model_name="submission", name="updated_at", field=models.DateTimeField(auto_now=True)),
        migrations.AddIndex(
            model_name="submission",
            index=models.Index(fields=["status", "updated_at"], name="submission_status_heartbeat"),
        ),
        migrations.RenameField(model_name="submission", old_name="error", new_name="error_message"),
        migrations.AlterField(
            model_name="submission",
            name="enqueued_at",
            field=models.DateTimeField(
                blank=True,
                help_text="When it was last handed to the broker; empty until one hand-off works.",
                null=True,
            ),
        ),
    ]
