"""Attempts keep random choice ids beside the authored keys; answers may carry a client-made id."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("content", "0002_quizzes_and_question_cards"),
        ("quizzes", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="quizanswer",
            name="client_answer_id",
            field=models.UUIDField(
                blank=True,
                help_text="Made by the client; a replay of the same answer with it changes nothing.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="quizanswer",
            name="learner",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="quiz_answers",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="quizattempt",
            name="choice_keys",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="For each choice question (its id as text), {choice id: authored key}. "
                "Never sent to the learner.",
            ),
        ),
        migrations.AlterField(
            model_name="quizanswer",
            name="response",
            field=models.JSONField(
                help_text='What the learner sent, e.g. {"choices": [...]}: choices by the attempt\'s ids, '
                "not authored keys."
            ),
        ),
        migrations.AlterField(
            model_name="quizattempt",
            name="choice_orders",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="For each choice question (its id as text), the attempt's random choice ids in the order "
                "shown.",
            ),
        ),
    ]
