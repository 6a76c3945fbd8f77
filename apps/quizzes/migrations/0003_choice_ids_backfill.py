"""Attempts made before choice ids keep their shown order behind new random ids; answers name their learner."""

import secrets

from django.db import migrations
from django.db.models import OuterRef, Subquery

# As apps.quizzes.choices.CHOICE_ID_BYTES at the time of writing; a migration keeps its own copy.
CHOICE_ID_BYTES = 12


def _new_id(taken: set[str]) -> str:
    choice_id = secrets.token_urlsafe(CHOICE_ID_BYTES)
    while choice_id in taken:
        choice_id = secrets.token_urlsafe(CHOICE_ID_BYTES)
    taken.add(choice_id)
    return choice_id


def keys_to_ids(apps, schema_editor):
    """Each attempt keeps its shown order, behind new ids; its answers are rewritten with those ids."""
    QuizAttempt = apps.get_model("quizzes", "QuizAttempt")
    QuizAnswer = apps.get_model("quizzes", "QuizAnswer")
    QuizAnswer.objects.update(
        learner_id=Subquery(QuizAttempt.objects.filter(pk=OuterRef("attempt_id")).values("learner_id")[:1])
    )
    for attempt in QuizAttempt.objects.iterator():
        orders: dict[str, list[str]] = {}
        keys: dict[str, dict[str, str]] = {}
        for question_id, authored in attempt.choice_orders.items():
            taken = set(authored)
            ids = [_new_id(taken) for _ in authored]
            orders[question_id] = ids
            keys[question_id] = dict(zip(ids, authored, strict=True))
        attempt.choice_orders, attempt.choice_keys = orders, keys
        attempt.save(update_fields=["choice_orders", "choice_keys"])
        for answer in QuizAnswer.objects.filter(attempt=attempt):
            by_key = {key: choice_id for choice_id, key in keys.get(str(answer.question_id), {}).items()}
            response = dict(answer.response)
            if "choice" in response:
                response["choice"] = by_key.get(response["choice"], response["choice"])
            if "choices" in response:
                response["choices"] = sorted(by_key.get(key, key) for key in response["choices"])
            answer.response = response
            answer.save(update_fields=["response"])


def ids_to_keys(apps, schema_editor):
    QuizAttempt = apps.get_model("quizzes", "QuizAttempt")
    QuizAnswer = apps.get_model("quizzes", "QuizAnswer")
    for attempt in QuizAttempt.objects.iterator():
        keys: dict[str, dict[str, str]] = attempt.choice_keys
        attempt.choice_orders = {
            question_id: [keys.get(question_id, {}).get(choice_id, choice_id) for choice_id in ids]
            for question_id, ids in attempt.choice_orders.items()
        }
        attempt.save(update_fields=["choice_orders"])
        for answer in QuizAnswer.objects.filter(attempt=attempt):
            by_id = keys.get(str(answer.question_id), {})
            response = dict(answer.response)
            if "choice" in response:
                response["choice"] = by_id.get(response["choice"], response["choice"])
            if "choices" in response:
                response["choices"] = sorted(by_id.get(choice_id, choice_id) for choice_id in response["choices"])
            answer.response = response
            answer.save(update_fields=["response"])


class Migration(migrations.Migration):
    # Apart from the schema changes: PostgreSQL refuses to build an index on a table with pending
    # deferred foreign-key checks, which the backfill leaves until its commit.
    dependencies = [("quizzes", "0002_opaque_choice_ids_and_client_answer_id")]

    operations = [migrations.RunPython(keys_to_ids, ids_to_keys, elidable=False)]
