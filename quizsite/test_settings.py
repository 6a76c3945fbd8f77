"""Settings for the test suite: the project's settings with a throwaway key and fast hashing."""

import os

os.environ.setdefault("SECRET_KEY", "test-suite-only-key-not-secret")

from quizsite.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]
