"""Every match attempt has a learner, and one learner's client_attempt_id names one attempt.

Separate from 0002: PostgreSQL cannot alter a table in the transaction that updated its rows
while their foreign-key checks are still pending.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0002_matchattempt_client_attempt_id"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="matchattempt",
            name="learner",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddConstraint(
            model_name="matchattempt",
            constraint=models.UniqueConstraint(
                fields=("learner", "client_attempt_id"), name="match_attempt_client_id_unique"
            ),
        ),
    ]
