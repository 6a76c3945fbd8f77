"""A quiz answer always names its learner, and a client's answer id is unique per learner."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    # Apart from the backfill, for the same reason as it is apart from 0002.
    dependencies = [
        ("quizzes", "0003_choice_ids_backfill"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="quizanswer",
            name="learner",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="quiz_answers",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddConstraint(
            model_name="quizanswer",
            constraint=models.UniqueConstraint(
                fields=("learner", "client_answer_id"), name="quiz_answer_client_id_unique"
            ),
        ),
    ]
