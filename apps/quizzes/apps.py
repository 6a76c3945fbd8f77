"""App configuration for quizzes."""

from django.apps import AppConfig


class QuizzesConfig(AppConfig):
    name = "apps.quizzes"
    label = "quizzes"
    verbose_name = "Quizzes"
