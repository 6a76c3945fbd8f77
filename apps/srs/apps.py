"""App configuration for spaced repetition."""

from django.apps import AppConfig


class SrsConfig(AppConfig):
    name = "apps.srs"
    label = "srs"
    verbose_name = "Spaced repetition"

    def ready(self) -> None:
        from apps.common.jobs import job_kind_register
        from apps.srs.jobs import COURSE_MODELS, PARAMETER_FITS, RESCHEDULES, RETENTION_ADVICE

        for kind in (RESCHEDULES, PARAMETER_FITS, RETENTION_ADVICE, COURSE_MODELS):
            job_kind_register(kind)
