"""Python run in a child process to load the site as the web server does, for tests that watch what it imports."""

# The WSGI application as the web server loads it, then every view, as the first requests would.
LOAD_THE_SITE = """
from quizsite.wsgi import application
from django.urls import get_resolver

def views(patterns):
    for pattern in patterns:
        if hasattr(pattern, "url_patterns"):
            yield from views(pattern.url_patterns)
        else:
            yield pattern.callback

assert list(views(get_resolver().url_patterns))
"""
