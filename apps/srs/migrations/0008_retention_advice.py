"""Retention advice computed on the workers, one row per set of simulator inputs, and its outbox."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("srs", "0007_easy_days"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="StoredRetentionAdvice",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "parameters_digest",
                    models.CharField(help_text="SHA-256 of the weights the advice is for.", max_length=64),
                ),
                (
                    "parameters_source",
                    models.CharField(
                        choices=[("default", "FSRS-6's default weights"), ("fitted", "The learner's own weights")],
                        max_length=10,
                    ),
                ),
                (
                    "desired_retention",
                    models.FloatField(help_text="The learner's setting the advice is compared with."),
                ),
                (
                    "deck_size_bucket",
                    models.IntegerField(help_text="Cards in the simulated deck: the learner's, rounded up."),
                ),
                (
                    "limits_digest",
                    models.CharField(
                        help_text="SHA-256 of the daily limits, maximum interval and step counts simulated.",
                        max_length=64,
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[("queued", "Queued"), ("running", "Running"), ("done", "Done"), ("failed", "Failed")],
                        default="queued",
                        max_length=10,
                    ),
                ),
                ("advised_retention", models.FloatField(blank=True, null=True)),
                ("advised_reviews_per_day", models.FloatField(blank=True, null=True)),
                ("advised_minutes_per_day", models.FloatField(blank=True, null=True)),
                ("advised_seconds_per_remembered_card", models.FloatField(blank=True, null=True)),
                ("current_reviews_per_day", models.FloatField(blank=True, null=True)),
                ("current_minutes_per_day", models.FloatField(blank=True, null=True)),
                ("current_seconds_per_remembered_card", models.FloatField(blank=True, null=True)),
                (
                    "review_seconds_source",
                    models.CharField(
                        blank=True,
                        help_text="default, learner or mixed: where the seconds per review came from.",
                        max_length=10,
                    ),
                ),
                ("error_message", models.TextField(blank=True)),
                ("requested_at", models.DateTimeField(help_text="When the latest computation was queued.")),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                (
                    "computed_at",
                    models.DateTimeField(blank=True, help_text="When the figures were computed.", null=True),
                ),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "learner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="retention_advice",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "stored retention advice",
                "indexes": [models.Index(fields=["status", "updated_at"], name="retention_advice_status_time")],
                "constraints": [
                    models.UniqueConstraint(
                        fields=(
                            "learner",
                            "parameters_digest",
                            "desired_retention",
                            "deck_size_bucket",
                            "limits_digest",
                        ),
                        name="retention_advice_inputs_unique",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("status__in", ["queued", "running", "done", "failed"])),
                        name="retention_advice_status_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("parameters_source__in", ["default", "fitted"])),
                        name="retention_advice_source_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("computed_at__isnull", True),
                            models.Q(("advised_retention__isnull", False), ("current_minutes_per_day__isnull", False)),
                            _connector="OR",
                        ),
                        name="retention_advice_computed_figures",
                    ),
                ],
            },
        ),
    ]
