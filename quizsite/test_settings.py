"""Settings for the test suite: the project's settings with a throwaway key and fast hashing."""

import os

os.environ.setdefault("SECRET_KEY", "test-suite-only-key-not-secret")

from quizsite.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]
# Gradings in the tests time one round, and runs that never end are stopped sooner.
GRADER_TIMING_ROUNDS = int(os.environ.get("GRADER_TIMING_ROUNDS") or "1")
GRADER_RUN_SECONDS = 20.0
# Tests check what a grading reports, not how steady it is: a busy test machine re-times nothing.
GRADER_TIMING_RETRIES = 0
SUBMISSION_STALE_SECONDS = int(os.environ.get("SUBMISSION_STALE_SECONDS") or "15")
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # A file, not memory: the Celery worker the integration tests start must see the test database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-quizsite.sqlite3")}  # noqa: F405
