"""Settings for the test suite: the project's settings with a throwaway key and fast hashing."""

import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

os.environ.setdefault("SECRET_KEY", "test-suite-only-key-not-secret")

REDIS_DATABASES = 16


def redis_url_for_test_process(url: str, process: str) -> str:
    """The same Redis server, another numbered database for each parallel test process (gw0, gw1, …).

    The suite's processes share one Redis: without this a Celery worker one of them started would take
    the other's tasks, and one process's cleared cache would clear the other's."""
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or "0")
    database = (base + 1 + int(process.removeprefix("gw"))) % REDIS_DATABASES
    return urlunsplit(parts._replace(path=f"/{database}"))


# pytest-xdist names each process it starts; the processes a test starts in turn inherit the marker
# below and keep the database their parent chose.
_test_process = os.environ.get("PYTEST_XDIST_WORKER", "")
if _test_process and not os.environ.get("QUIZSITE_TEST_PROCESS"):
    os.environ["QUIZSITE_TEST_PROCESS"] = _test_process
    for _name in ("REDIS_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):
        if os.environ.get(_name, "").startswith("redis://"):
            os.environ[_name] = redis_url_for_test_process(os.environ[_name], _test_process)
    if not (os.environ.get("REDIS_URL", "").strip() or os.environ.get("CELERY_BROKER_URL", "").strip()):
        # Without Redis the embedded broker and the results are folders: one set per test process.
        _own = Path(os.environ.get("QUIZSITE_VAR_DIR") or Path(__file__).resolve().parent.parent / "var")
        _own = _own / f"test-{_test_process}"
        os.environ["CELERY_BROKER_FOLDER"] = str(_own / "broker")
        (_own / "celery-results").mkdir(parents=True, exist_ok=True)
        os.environ.setdefault("CELERY_RESULT_BACKEND", f"file://{_own / 'celery-results'}")

from quizsite.settings import *  # noqa: E402, F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]
# Gradings in the tests time one round, and runs that never end are stopped sooner.
GRADER_TIMING_ROUNDS = int(os.environ.get("GRADER_TIMING_ROUNDS") or "1")
GRADER_RUN_SECONDS = 60.0
# Tests check what a grading reports, not how steady it is: a busy test machine re-times nothing.
GRADER_TIMING_RETRIES = 0
# A test's worker grades what the test sends, and nothing of its own between them.
GRADER_BASELINE_REFRESH_SECONDS = float(os.environ.get("GRADER_BASELINE_REFRESH_SECONDS") or "0")
SUBMISSION_STALE_SECONDS = int(os.environ.get("SUBMISSION_STALE_SECONDS") or "15")
_test_process = os.environ.get("QUIZSITE_TEST_PROCESS", "")
if _test_process and not REDIS_URL:  # noqa: F405
    # The file cache too, for this process's tests (a worker a test starts has no need of it).
    CACHES["default"]["LOCATION"] = str(VAR_DIR / f"test-{_test_process}" / "cache")  # noqa: F405
