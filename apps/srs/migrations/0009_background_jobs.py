"""The four background-job models share one lifecycle (apps.common.jobs.BackgroundJob): the fields some lacked."""

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("srs", "0008_retention_advice"),
    ]

    operations = [
        migrations.AddField(
            model_name="ankihistoryimport",
            name="started_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="parameterfit",
            name="error_message",
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name="parameterfit",
            name="updated_at",
            field=models.DateTimeField(auto_now=True, default=django.utils.timezone.now),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="storedretentionadvice",
            name="finished_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
