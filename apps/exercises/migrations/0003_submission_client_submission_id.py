"""Submissions may carry a client-made id, unique per learner, so a retried submission is graded once."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("exercises", "0002_submission_learner_cascade"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="client_submission_id",
            field=models.UUIDField(
                blank=True,
                help_text="Made by the client to make retries safe; absent when it sent none.",
                null=True,
            ),
        ),
        migrations.AddConstraint(
            model_name="submission",
            constraint=models.UniqueConstraint(
                fields=("learner", "client_submission_id"), name="submission_client_id_unique"
            ),
        ),
    ]
