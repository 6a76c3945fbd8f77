"""App configuration for the learner web app: the server serves its shell page, the bundle does the rest."""

from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "apps.web"
    label = "web"
    verbose_name = "Learner web app"
