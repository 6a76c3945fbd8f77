"""Answers to questions given in place, in their lessons, outside any quiz attempt."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("content", "0004_card_sources"),
        ("quizzes", "0004_quiz_answer_learner_required"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="LessonAnswer",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "client_answer_id",
                    models.UUIDField(
                        blank=True,
                        help_text="Made by the client; a replay of the same answer with it changes nothing.",
                        null=True,
                    ),
                ),
                (
                    "response",
                    models.JSONField(
                        help_text='What the learner sent, e.g. {"choices": [...]}: choices by the shown ids.'
                    ),
                ),
                (
                    "choice_keys",
                    models.JSONField(
                        blank=True,
                        default=dict,
                        help_text="Choice questions: {shown choice id: authored key} as the learner saw them.",
                    ),
                ),
                ("correct", models.BooleanField()),
                ("credit", models.FloatField()),
                (
                    "scheduled",
                    models.BooleanField(
                        help_text="True when it reviewed the question and its cards; false for practice while not due."
                    ),
                ),
                ("answered_at", models.DateTimeField()),
                (
                    "learner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="lesson_answers",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "question",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="lesson_answers",
                        to="content.question",
                    ),
                ),
            ],
            options={
                "ordering": ["answered_at", "id"],
                "indexes": [
                    models.Index(fields=["learner", "question", "answered_at"], name="lesson_answer_learner_question")
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("learner", "client_answer_id"), name="lesson_answer_client_id_unique"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("credit__gte", 0), ("credit__lte", 1)), name="lesson_answer_credit_range"
                    ),
                ],
            },
        ),
    ]
