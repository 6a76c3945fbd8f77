"""Beat's stored schedule of the submissions' reaping round, which the resume round of every kind of job
replaced. Beat adds and updates the schedules CELERY_BEAT_SCHEDULE names, but never removes one: this one
would keep sending a task no worker has any more."""

from django.db import migrations

RETIRED_TASK = "apps.exercises.tasks.submissions_reap"


def retired_schedule_delete(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(task=RETIRED_TASK).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("exercises", "0005_submission_background_job"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(retired_schedule_delete, migrations.RunPython.noop)]
