"""Project package: settings, URL routes, the WSGI/ASGI entry points and the Celery app."""

from quizsite.celery import app as celery_app

__all__ = ["celery_app"]
