"""Match attempts carry their learner and an optional client-made id; existing attempts take their board's learner."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def attempts_learner_fill(apps, schema_editor):
    MatchAttempt = apps.get_model("games", "MatchAttempt")
    MatchBoard = apps.get_model("games", "MatchBoard")
    MatchAttempt.objects.filter(learner__isnull=True).update(
        learner_id=Subquery(MatchBoard.objects.filter(pk=OuterRef("board_id")).values("learner_id")[:1])
    )


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="matchattempt",
            name="client_attempt_id",
            field=models.UUIDField(
                blank=True,
                help_text="Made by the client to make retries safe; absent when it sent none.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="matchattempt",
            name="learner",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.RunPython(attempts_learner_fill, migrations.RunPython.noop),
    ]
