"""Load balancing of new intervals across a learner's days, with an off switch and easy days."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("srs", "0006_reschedules"),
    ]

    operations = [
        migrations.AddField(
            model_name="schedulingsettings",
            name="load_balancing",
            field=models.BooleanField(
                default=True,
                help_text="Among the days fuzz allows for a new interval, schedule on the least loaded one.",
            ),
        ),
        migrations.AddField(
            model_name="schedulingsettings",
            name="easy_days",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="Weekday (monday..sunday) to its share of a normal day's reviews, 0 to 1; others take 1.",
            ),
        ),
    ]
