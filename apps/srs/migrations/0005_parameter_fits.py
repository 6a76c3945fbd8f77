"""Per-learner FSRS parameter fits, and the settings that govern them (automatic fitting, pinning)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("srs", "0004_anki_history_import"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="schedulingsettings",
            name="auto_optimize",
            field=models.BooleanField(
                default=True,
                help_text="Fit FSRS parameters to the learner's reviews automatically, adopting only better ones.",
            ),
        ),
        migrations.AddField(
            model_name="schedulingsettings",
            name="optimized_at",
            field=models.DateTimeField(blank=True, editable=False, help_text="When the last fit finished.", null=True),
        ),
        migrations.AddField(
            model_name="schedulingsettings",
            name="parameters_pinned",
            field=models.BooleanField(
                default=False, help_text="Keep fsrs_parameters as they are: no fit ever replaces them."
            ),
        ),
        migrations.AddField(
            model_name="schedulingsettings",
            name="reviews_at_last_fit",
            field=models.IntegerField(
                default=0, editable=False, help_text="Reviews in the learner's log when the last fit ran."
            ),
        ),
        migrations.CreateModel(
            name="ParameterFit",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "status",
                    models.CharField(
                        choices=[("queued", "Queued"), ("running", "Running"), ("done", "Done"), ("failed", "Failed")],
                        default="queued",
                        max_length=10,
                    ),
                ),
                (
                    "trigger",
                    models.CharField(
                        choices=[("schedule", "Nightly schedule"), ("request", "Asked for by the learner")],
                        default="schedule",
                        max_length=10,
                    ),
                ),
                ("parameters", models.JSONField(blank=True, help_text="The 21 fitted FSRS-6 weights.", null=True)),
                (
                    "fitted_on_reviews",
                    models.IntegerField(default=0, help_text="Reviews the parameters were fitted on."),
                ),
                (
                    "evaluated_on_reviews",
                    models.IntegerField(default=0, help_text="Later reviews both parameter sets were scored on."),
                ),
                (
                    "log_loss",
                    models.FloatField(
                        blank=True, help_text="Log loss of the fitted parameters on the test reviews.", null=True
                    ),
                ),
                (
                    "rmse_bins",
                    models.FloatField(blank=True, help_text="RMSE(bins) of the fitted parameters on them.", null=True),
                ),
                (
                    "previous_parameters",
                    models.JSONField(
                        blank=True,
                        help_text="The weights in force when the fit ran (the defaults included).",
                        null=True,
                    ),
                ),
                (
                    "previous_log_loss",
                    models.FloatField(blank=True, help_text="Log loss of the parameters in force.", null=True),
                ),
                (
                    "previous_rmse_bins",
                    models.FloatField(blank=True, help_text="RMSE(bins) of the parameters in force.", null=True),
                ),
                ("adopted", models.BooleanField(default=False)),
                (
                    "reason",
                    models.TextField(
                        blank=True, help_text="Why the parameters were adopted or not, or why the fit failed."
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "learner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="parameter_fits",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "profile",
                    models.ForeignKey(
                        blank=True,
                        help_text="The scheduler profile the adopted parameters became.",
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="parameter_fits",
                        to="srs.schedulerprofile",
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["learner", "created_at"], name="parameter_fit_learner_time")],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("status__in", ["queued", "running"])),
                        fields=("learner",),
                        name="parameter_fit_one_in_flight",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("status__in", ["queued", "running", "done", "failed"])),
                        name="parameter_fit_status_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("fitted_on_reviews__gte", 0), ("evaluated_on_reviews__gte", 0)),
                        name="parameter_fit_counts",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("adopted", False),
                            models.Q(("status", "done"), ("parameters__isnull", False)),
                            _connector="OR",
                        ),
                        name="parameter_fit_adopted_done",
                    ),
                ],
            },
        ),
    ]
