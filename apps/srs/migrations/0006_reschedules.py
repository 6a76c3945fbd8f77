"""Reschedule runs: a learner's review cards moved to the due dates new settings give, and the outbox of those runs."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("srs", "0005_parameter_fits"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Reschedule",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "reason",
                    models.CharField(
                        choices=[("parameters", "New FSRS parameters"), ("desired_retention", "New desired retention")],
                        max_length=20,
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
                (
                    "cards_total",
                    models.IntegerField(default=0, help_text="The learner's cards in the review stage at the start."),
                ),
                ("cards_examined", models.IntegerField(default=0)),
                ("cards_moved", models.IntegerField(default=0, help_text="Cards whose due date changed.")),
                (
                    "last_card_id",
                    models.BigIntegerField(default=0, editable=False, help_text="Where a resumed run goes on from."),
                ),
                ("error_message", models.TextField(blank=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "from_profile",
                    models.ForeignKey(
                        blank=True,
                        help_text="The settings the learner's reviews were last recorded with when the change was made.",
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="srs.schedulerprofile",
                    ),
                ),
                (
                    "learner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="reschedules",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "to_profile",
                    models.ForeignKey(
                        blank=True,
                        help_text="The settings the due dates were computed with; set when the run starts.",
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="srs.schedulerprofile",
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["learner", "created_at"], name="reschedule_learner_time")],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("status", "queued")), fields=("learner",), name="reschedule_one_queued"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("status__in", ["queued", "running", "done", "failed"])),
                        name="reschedule_status_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("reason__in", ["parameters", "desired_retention"])),
                        name="reschedule_reason_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("cards_total__gte", 0),
                            ("cards_examined__gte", 0),
                            ("cards_moved__gte", 0),
                            ("cards_moved__lte", models.F("cards_examined")),
                        ),
                        name="reschedule_counts",
                    ),
                ],
            },
        ),
    ]
