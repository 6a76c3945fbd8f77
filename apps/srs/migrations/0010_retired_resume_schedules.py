"""Beat's stored schedules of the three resume tasks that one round for every kind of job replaced.

Beat adds and updates the schedules CELERY_BEAT_SCHEDULE names, but never removes one: these would keep
sending tasks no worker has any more."""

from django.db import migrations

RETIRED_TASKS = (
    "apps.srs.tasks.anki_history_imports_resume",
    "apps.srs.tasks.reschedules_resume",
    "apps.srs.tasks.retention_advice_resume",
)


def retired_schedules_delete(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(task__in=RETIRED_TASKS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("srs", "0009_background_jobs"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(retired_schedules_delete, migrations.RunPython.noop)]
