"""Django settings, read from the environment with defaults that run on a laptop with only Python."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured
from kombu import Exchange, Queue
from redis.backoff import NoBackoff
from redis.retry import Retry

from quizsite.env import env_bool, env_float, env_int, env_list, env_path, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = env_path("QUIZSITE_VAR_DIR", BASE_DIR / "var")
VAR_DIR.mkdir(parents=True, exist_ok=True)


DEBUG = env_bool("DJANGO_DEBUG", False)

SECRET_KEY = env_str("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set and DJANGO_DEBUG is off. Set SECRET_KEY to a long random "
            "string (python -c 'import secrets; print(secrets.token_urlsafe(50))'), or set "
            "DJANGO_DEBUG=true for local development."
        )
    # Development only: a fixed key keeps sessions valid across restarts of `make run`.
    SECRET_KEY = "insecure-development-key-never-used-when-debug-is-off"  # noqa: S105

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    # Before staticfiles: runserver (`make run`) leaves static files to WhiteNoise, as in production.
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    # Drag-and-drop ordering in the content admin (its templates and static files).
    "adminsortable2",
    "apps.common",
    "apps.accounts",
    "apps.content",
    "apps.srs",
    "apps.exercises",
    "apps.games",
    "apps.quizzes",
    "apps.explore",
    "apps.reminders",
    "apps.interchange",
    "apps.web",
]

MIDDLEWARE = [
    # First of all: a body over its limit is refused before anything reads it (DATA_UPLOAD_MAX_MEMORY_SIZE).
    "apps.common.middleware.RequestBodyLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # SECURE_CSP is left empty: only views with their own policy (the web app's shell) get the header.
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "apps.common.middleware.ApiErrorMiddleware",
    "apps.common.middleware.DatabaseRetryMiddleware",
    "apps.common.middleware.QueryStringMiddleware",
]

ROOT_URLCONF = "quizsite.urls"
WSGI_APPLICATION = "quizsite.wsgi.application"
ASGI_APPLICATION = "quizsite.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

_DATABASE_URL = env_str("DATABASE_URL", "")
if not _DATABASE_URL:
    # A machine without a PostgreSQL server of its own: the project starts one under var/postgres.
    from quizsite.local_database import LocalDatabaseUnavailable, ensure_running

    try:
        _DATABASE_URL = ensure_running(VAR_DIR / "postgres")
    except LocalDatabaseUnavailable as exc:
        raise ImproperlyConfigured(str(exc)) from exc
_DATABASE = dj_database_url.parse(
    _DATABASE_URL,
    conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
    conn_health_checks=True,
)
if _DATABASE["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured(
        f"DATABASE_URL names {_DATABASE['ENGINE']}; the project runs on PostgreSQL only "
        "(postgres://user:password@host:5432/quizsite), or leave it unset for the embedded one."
    )
# Django's backend, checking a reused connection without a round trip (see there).
DATABASES = {"default": {**_DATABASE, "ENGINE": "apps.common.postgresql"}}
# The few queries every request makes (apps.common.prepared) are kept prepared on each PostgreSQL
# connection. Behind a proxy that pools connections per transaction (PgBouncer's transaction mode),
# which cannot keep them, set this to false.
DATABASE_PREPARED_STATEMENTS = env_bool("DATABASE_PREPARED_STATEMENTS", True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL", "")
# Nothing a request needs lives only in the cache (throttles let requests through without it, sign-in
# lockouts are in the database), so a Redis that is down or hangs must cost a request little: a
# connection gets 0.25 s, a reply 0.5 s, and neither is retried (redis-py's defaults: 5 s each).
REDIS_CACHE_OPTIONS: dict[str, Any] = {
    "socket_connect_timeout": 0.25,
    "socket_timeout": 0.5,
    "retry": Retry(NoBackoff(), 0),
}

if REDIS_URL:
    CACHES = {
        "default": {
            # Django's Redis cache, with its client objects made once instead of once an operation.
            "BACKEND": "apps.common.cache.ReusedClientRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "quizsite",
            "OPTIONS": REDIS_CACHE_OPTIONS,
        }
    }
else:
    # A file cache is shared by the web server, the worker and beat, unlike local memory.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env_path("STATIC_ROOT", VAR_DIR / "static")
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# Uploaded and imported files (card images and sounds), served by apps.interchange with immutable caching.
MEDIA_URL = "/media/"
MEDIA_ROOT = env_path("MEDIA_ROOT", VAR_DIR / "media")
# Images and sounds that course files ship (decks/media/), served at COURSE_MEDIA_URL by name.
COURSE_MEDIA_DIR = env_path("COURSE_MEDIA_DIR", BASE_DIR / "decks" / "media")
COURSE_MEDIA_URL = MEDIA_URL + "course/"
# Largest Anki package or CSV/TSV file the admin's import page accepts (the reader's own limit is the same
# 200 MiB by default: a shared deck with thousands of images stays well under it).
ANKI_PACKAGE_MAX_BYTES = env_int("ANKI_PACKAGE_MAX_BYTES", 200 * 1024 * 1024)

# WhiteNoise keeps its own table of media types, which lacks glTF: without these, models go out as
# application/octet-stream and browsers' 3D loaders cannot tell the format.
WHITENOISE_MIMETYPES = {".glb": "model/gltf-binary", ".gltf": "model/gltf+json"}

# Explorer scene models ship as static files under this folder (apps/explore/static/explorer/, written by
# `python manage.py build_explorer_models`), so the default base URL below serves them from this server.
EXPLORER_STATIC_DIR = "explorer"
# Where clients fetch explorer scene models from; scenes store a path relative to this.
EXPLORER_ASSET_BASE_URL = env_str("EXPLORER_ASSET_BASE_URL", f"/{STATIC_URL}{EXPLORER_STATIC_DIR}/")

EMAIL_BACKEND = env_str(
    "EMAIL_BACKEND",
    "django.core.mail.backends.console.EmailBackend" if DEBUG else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Quizsite <no-reply@localhost>")

if not DEBUG:
    SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", True)
    CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

SPECTACULAR_SETTINGS = {
    "TITLE": "Quizsite API",
    "DESCRIPTION": (
        "Spaced-repetition course backend: courses, lessons, memory decks, questions, "
        "pipeline exercises, concept graphs and explorer scenes. Every error has the shape "
        '{"error": {"code": ..., "message": ..., "fields": {...}}}.'
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    # 3.1: a nullable object is oneOf [$ref, null], which strict validators accept for null; 3.0's
    # allOf [$ref] + nullable refuses it, so generated clients would reject a valid response.
    "OAS_VERSION": "3.1.0",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "apps.common.schema.nullable_as_json_schema",
    ],
    # The docs page's scripts come from this install, so it works without internet access.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "BlockKindEnum": "apps.content.models.BlockKind",
        "QuestionKindEnum": "apps.content.models.QuestionKind",
        "LinkKindEnum": "apps.content.models.LinkKind",
        "SubmissionStatusEnum": "apps.exercises.models.SubmissionStatus",
        "VerdictEnum": "apps.exercises.models.Verdict",
        "HealthStatusEnum": ["ok", "degraded", "unavailable"],
        # A background job's status (a parameter fit, a reschedule): one set of values, one enum in the schema.
        "BackgroundJobStatusEnum": ["queued", "running", "done", "failed"],
        # Retention advice is ready, still being computed, or failed: a status of its own beside the jobs'.
        "RetentionAdviceStatusEnum": ["computing", "ready", "failed"],
        # A board's status, named so it cannot collide with other "status" enums.
        "MatchBoardStatusEnum": ["playing", "finished", "expired"],
        # The activity kinds are the keys of the source registry, so a new source names itself in the schema.
        "ActivityKindEnum": "apps.explore.activity.ACTIVITY_KINDS",
        "QuizAttemptModeEnum": "apps.quizzes.models.AttemptMode",
        # A memory state's stage, and a card's as the card browser says it (those, or new: never reviewed).
        "StageEnum": "apps.srs.progress.serializers.MEMORY_STAGES",
        "CardStageEnum": "apps.srs.progress.serializers.CARD_STAGES",
    },
}

# Celery. Without a broker URL the embedded filesystem broker needs nothing installed; it suits
# one machine only, so production sets REDIS_URL (or CELERY_BROKER_URL).
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL or "filesystem://")
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", REDIS_URL or f"file://{VAR_DIR / 'celery-results'}")
if CELERY_RESULT_BACKEND.startswith("file://"):
    Path(CELERY_RESULT_BACKEND.removeprefix("file://")).mkdir(parents=True, exist_ok=True)
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_RESULT_EXPIRES = 24 * 3600
CELERY_TIMEZONE = "UTC"
CELERY_ENABLE_UTC = True
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_QUEUES = (
    Queue("default", Exchange("default"), routing_key="default"),
    Queue("gpu", Exchange("gpu"), routing_key="gpu"),
)
# Gradings go to their own queue, taken by workers on grading hosts (and only there are sandboxes warmed).
GRADING_QUEUE = "gpu"
CELERY_TASK_ROUTES = {"apps.exercises.tasks.*": {"queue": GRADING_QUEUE}}
# Grading tasks run for seconds to minutes: take one at a time so a busy worker does not hoard.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# Review reminder emails: links in them point at SITE_URL (this API) and FRONTEND_URL (the study app).
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000").rstrip("/")
FRONTEND_URL = env_str("FRONTEND_URL", SITE_URL).rstrip("/")
# A learner gets their reminder from their chosen local hour until this many hours later (a late run still sends).
REMINDER_SEND_WINDOW_HOURS = 3
# With nothing due, no email is sent unless this is on.
REMINDER_SEND_WHEN_NOTHING_DUE = env_bool("REMINDER_SEND_WHEN_NOTHING_DUE", False)
REMINDER_BATCH_SIZE = 1000

# Pipeline grading (worker/). Data are generated once per machine under GRADER_DATA_DIR.
GRADER_DATA_DIR = env_path("GRADER_DATA_DIR", VAR_DIR / "grader-data")
# TensorFlow-imported sandboxes each worker process keeps ready (about 0.4 GB each).
GRADER_WARM_PROCESSES = env_int("GRADER_WARM_PROCESSES", 1)
GRADER_WARM_ON_START = env_bool("GRADER_WARM_ON_START", True)
# Each round times the expert reference (a calibration) and the submission once, in turn, with the
# naive reference's time taken from the host's stored figures; where there are none, a round times
# all three and stores the references' figures for later gradings (worker/baselines.py).
GRADER_TIMING_ROUNDS = env_int("GRADER_TIMING_ROUNDS", 3)
# Timing stops after this many calm rounds, before GRADER_TIMING_ROUNDS, once their speedups against
# both references agree within GRADER_TIMING_AGREEMENT (relative spread): a third round would not move
# the medians by more than that.
GRADER_TIMING_MIN_ROUNDS = env_int("GRADER_TIMING_MIN_ROUNDS", 2)
GRADER_TIMING_AGREEMENT = env_float("GRADER_TIMING_AGREEMENT", 0.02)
GRADER_WARMUP_EPOCHS = env_int("GRADER_WARMUP_EPOCHS", 0)
GRADER_MEASURED_EPOCHS = env_int("GRADER_MEASURED_EPOCHS", 1)
# The references' stored figures are measured again after this long, or in a grading whose expert
# calibration runs are further from them than GRADER_BASELINE_DRIFT (relative); off with GRADER_BASELINES.
GRADER_BASELINES = env_bool("GRADER_BASELINES", True)
GRADER_BASELINE_MAX_AGE_SECONDS = env_float("GRADER_BASELINE_MAX_AGE_SECONDS", 6 * 3600)
GRADER_BASELINE_DRIFT = env_float("GRADER_BASELINE_DRIFT", 0.25)
# How often each grading process looks, between gradings, for figures that are missing or halfway to
# their age limit, and measures them (0: never; gradings then measure them when they must).
GRADER_BASELINE_REFRESH_SECONDS = env_float("GRADER_BASELINE_REFRESH_SECONDS", 60)
# Limit of one run (checking, or one timed run) of learner or reference code.
GRADER_RUN_SECONDS = env_float("GRADER_RUN_SECONDS", 60)
GRADER_JOB_SECONDS = env_int("GRADER_JOB_SECONDS", 540)
GRADER_MEMORY_BYTES = env_int("GRADER_MEMORY_MIB", 4096) * 1024**2
# CPUs' worth of time one grading's sandbox may use (a cgroup quota); 0: as many as its timed runs get.
GRADER_SANDBOX_CPUS = env_float("GRADER_SANDBOX_CPUS", 0)
# The host uid learner code runs as when the worker runs as root (never 0: the worker refuses).
GRADER_SANDBOX_UID = env_int("GRADER_SANDBOX_UID", 65534)
# CPUs the timed runs are pinned to: "auto" (all but the first where there are 4 or more), "none",
# or a list such as "2-7" (see docs/grading.md).
GRADER_TIMING_CPUS = env_str("GRADER_TIMING_CPUS", "auto")
# One timing phase at a time per host: every worker on the host must name the same lock file.
GRADER_TIMING_LOCK = env_path("GRADER_TIMING_LOCK", GRADER_DATA_DIR / "timing.lock")
# A few timing phases of other gradings (tens of seconds each); then it times without the lock.
GRADER_TIMING_LOCK_SECONDS = env_float("GRADER_TIMING_LOCK_SECONDS", 300)
# A round whose runs saw more than this share of their CPUs busy with other work is timed again.
GRADER_TIMING_MAX_BUSY = env_float("GRADER_TIMING_MAX_BUSY", 0.15)
GRADER_TIMING_RETRIES = env_int("GRADER_TIMING_RETRIES", 3)
# Relative noise of a speedup on the grading host (bench.grader --under-load measures it).
GRADER_SPEEDUP_TOLERANCE = env_float("GRADER_SPEEDUP_TOLERANCE", 0.05)
# GRADER_JOB_SECONDS does not count the waits before timing (the lock, and up to 60 s for the next
# sandbox's import), so the task allows for them.
GRADER_TASK_SOFT_SECONDS = GRADER_JOB_SECONDS + int(GRADER_TIMING_LOCK_SECONDS) + 120
SUBMISSIONS_PER_MINUTE = env_int("SUBMISSIONS_PER_MINUTE", 6)
# A grading whose worker has not marked it alive for this long is taken over or re-queued.
SUBMISSION_STALE_SECONDS = env_int("SUBMISSION_STALE_SECONDS", 30)
SUBMISSION_MAX_ATTEMPTS = 2
# Past the soft limit a grading is stopped and failed with a reason; past the hard one its process is killed.
GRADER_TASK_HARD_SECONDS = GRADER_TASK_SOFT_SECONDS + 60
# Every worker's main process runs the resume round of background jobs (apps.common.jobs) this often, one
# process at a time: it hands over again gradings and other jobs whose worker stopped and the queued ones
# the broker never took. Beat's jobs-resume does the same on the same schedule, as a second line; neither
# is needed for the other to work.
JOBS_RESUME_SECONDS = env_float("JOBS_RESUME_SECONDS", 10)
JOBS_RESUME_IN_WORKERS = env_bool("JOBS_RESUME_IN_WORKERS", True)
# A queued submission whose hand-off to the broker failed is sent again once it is this old: long
# enough that the resume round does not race the request's own hand-off.
SUBMISSION_QUEUED_REPUBLISH_SECONDS = env_float("SUBMISSION_QUEUED_REPUBLISH_SECONDS", 30)
# A hand-off to the broker gets one connection of at most this long and no retries, so a request
# answers at once with the broker down (the submission stays queued for the resume round).
GRADING_PUBLISH_TIMEOUT_SECONDS = env_float("GRADING_PUBLISH_TIMEOUT_SECONDS", 0.5)
# A grading message its worker has not acknowledged for this long goes back to the queue (the Redis
# transport's visibility timeout), and a queued submission the broker took but no worker claimed is
# sent again. Longer than any grading may run, so only a dead worker's grading comes back, and a copy
# that comes back after it was graded finds it finished. The filesystem broker has no such timeout.
GRADING_REDELIVERY_SECONDS = GRADER_TASK_HARD_SECONDS + 60
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, Any] = {"visibility_timeout": GRADING_REDELIVERY_SECONDS}
# The embedded broker's folder, shared by every process of the one machine that uses it.
CELERY_BROKER_FOLDER = env_path("CELERY_BROKER_FOLDER", VAR_DIR / "broker")
if CELERY_BROKER_URL == "filesystem://":
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_BROKER_FOLDER),
        "data_folder_out": str(CELERY_BROKER_FOLDER),
        "control_folder": str(CELERY_BROKER_FOLDER / "control"),
        "store_processed": False,
        **CELERY_BROKER_TRANSPORT_OPTIONS,
    }
    (CELERY_BROKER_FOLDER / "control").mkdir(parents=True, exist_ok=True)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

# --- Reviews (apps.srs) ------------------------------------------------------------------------------
# On PostgreSQL one learner's review writes (single, batch, undo) take turns; one that waits longer
# than this for its turn, or for a row lock, is refused with 409 sync_in_progress and Retry-After.
# A batch that finds the turn taken is refused at once, before its body is read. The wait holds a web
# thread, so it is short: a 1,000-review batch takes about a second, a single review milliseconds.
REVIEW_SYNC_LOCK_WAIT_SECONDS = env_float("REVIEW_SYNC_LOCK_WAIT_SECONDS", 3)
# Largest Anki package whose review history a learner may upload (POST /anki-history/); it is kept in
# the database until its import finishes. A deck exported with its scheduling is a few MiB; media make
# up the rest of a larger file, and the history does not need them.
ANKI_HISTORY_MAX_BYTES = env_int("ANKI_HISTORY_MAX_BYTES", 64 * 1024 * 1024)

# --- Games: Match the Pairs ------------------------------------------------------------------------
# Seconds added to a board's score for each wrong attempt.
MATCH_WRONG_ATTEMPT_PENALTY_SECONDS = env_float("MATCH_WRONG_ATTEMPT_PENALTY_SECONDS", 5)
# Minutes after its start that an unfinished board stops taking attempts; it is never scored.
MATCH_BOARD_EXPIRY_MINUTES = env_float("MATCH_BOARD_EXPIRY_MINUTES", 60)
# The rating of the review a matched card gets: 1 Again, 2 Hard, 3 Good, 4 Easy. "after_mistake"
# applies when the card was part of any wrong attempt on that board.
MATCH_RATINGS = {"first_try": 3, "after_mistake": 1}

# --- Quizzes ---------------------------------------------------------------------------------------
# The rating each card a question tests gets when the question is answered: correct, partly right
# (multiple choice with partial credit) or wrong. 1 Again, 2 Hard, 3 Good, 4 Easy.
QUIZ_CARD_RATINGS = {"correct": 3, "partial": 2, "wrong": 1}

# --- Accounts: device tokens, sign-in lockout, account email ----------------------------------------
# Each sign-in gives that device a token of its own. A token expires after TOKEN_TTL_DAYS unused: every
# use moves its expiry on (written at most once per TOKEN_REFRESH_SECONDS). An account holds at most
# TOKENS_PER_ACCOUNT devices; signing in on one more signs out the one used least recently.
KNOX_TOKEN_MODEL = "accounts.DeviceToken"  # noqa: S105 (a model name)
# knox's own migrations would create its default token table even with the model swapped out.
MIGRATION_MODULES = {"knox": None}
TOKEN_TTL_DAYS = env_int("TOKEN_TTL_DAYS", 30)
TOKEN_REFRESH_SECONDS = env_int("TOKEN_REFRESH_SECONDS", 3600)
TOKENS_PER_ACCOUNT = env_int("TOKENS_PER_ACCOUNT", 20)
REST_KNOX = {
    "TOKEN_TTL": timedelta(days=TOKEN_TTL_DAYS),
    "AUTO_REFRESH": True,
    "MIN_REFRESH_INTERVAL": TOKEN_REFRESH_SECONDS,
    "AUTH_HEADER_PREFIX": "Token",
}
# After LOGIN_LOCKOUT_FAILURES failed sign-ins for one email from one address within the window, that
# address is refused (429) for that email for a whole window, even with the right password; other
# addresses are not. After LOGIN_LOCKOUT_ACCOUNT_FAILURES from all addresses together, sign-in to the
# email is paused for a window from every address that has not signed in to it before, and the owner
# is told by email. Failures are counted in the database (table accounts_loginlockout), so a cache
# outage neither stops sign-in nor forgets a lockout.
LOGIN_LOCKOUT_FAILURES = env_int("LOGIN_LOCKOUT_FAILURES", 5)
LOGIN_LOCKOUT_ACCOUNT_FAILURES = env_int("LOGIN_LOCKOUT_ACCOUNT_FAILURES", 50)
LOGIN_LOCKOUT_WINDOW_SECONDS = env_int("LOGIN_LOCKOUT_WINDOW_SECONDS", 900)
# An address the account signed in from is known to it for this long, and exempt from its pause.
LOGIN_KNOWN_ADDRESS_DAYS = env_int("LOGIN_KNOWN_ADDRESS_DAYS", 90)
# Password reset links (to FRONTEND_URL/reset-password) stop working after this many seconds.
PASSWORD_RESET_TIMEOUT = env_int("PASSWORD_RESET_TIMEOUT", 3600)
# Registration links (to FRONTEND_URL/confirm-email) stop working after this many seconds.
REGISTRATION_CONFIRM_TIMEOUT = env_int("REGISTRATION_CONFIRM_TIMEOUT", 2 * 24 * 3600)
# Account email (reset and registration links, sign-in notices) leaves the request through an outbox
# (table accounts_accountemail) and a worker. A send the relay refuses is tried again after
# ACCOUNT_EMAIL_RETRY_SECONDS, doubling each time, ACCOUNT_EMAIL_ATTEMPTS times in all; then the row
# is marked failed with the relay's last answer. Beat hands over queued emails the broker lost.
ACCOUNT_EMAIL_ATTEMPTS = env_int("ACCOUNT_EMAIL_ATTEMPTS", 5)
ACCOUNT_EMAIL_RETRY_SECONDS = env_int("ACCOUNT_EMAIL_RETRY_SECONDS", 60)
# --- Abuse limits: request rates and body size ------------------------------------------------------
# Rates ("count/period", period s, m, h or d) are counted in the default cache, per learner and per
# client address; each can be changed from the environment, e.g. THROTTLE_RATE_REVIEWS_IP=1200/min.
# A throttled request is a 429 (code throttled) with Retry-After in whole seconds.
_THROTTLE_RATE_DEFAULTS = {
    # Every request of a signed-in learner except reviews and submissions, which have their own:
    # about one every two seconds for an hour, beyond a person's pace, but it stops a script.
    "learner": "2000/hour",
    # Reviews (one, or an offline batch of up to 1,000, counts once): two a second per learner, and
    # five learners' worth from one address, for a classroom behind one NAT.
    "reviews_learner": "120/min",
    "reviews_ip": "600/min",
    # Reviews uploaded in batches per learner, each batch counting as the reviews it carries: a week
    # of offline reviews syncs in one go, and one learner's uploads take at most a few CPU-seconds a
    # minute (a batch of 1,000 costs about one) from the other learners.
    "review_volume_learner": "3000/min",
    # Submissions: per learner, SUBMISSIONS_PER_MINUTE, counted by the service in the database.
    "submissions_ip": "30/min",
    # Fits asked for now (POST /srs/optimize/): a fit costs a worker under a second, and the nightly run
    # fits everyone due anyway; a few a day is all a learner needs.
    "optimize_learner": "6/day",
    # Signing in, per address, whatever the account.
    "login_ip": "10/min",
    # Registering and password resets, per address: each sends email or makes an account.
    "account_ip": "20/hour",
    # Invalid API tokens, per address: a client with a revoked or expired token stops after one; a
    # script trying tokens is answered 429 past this.
    "bad_token_ip": "30/min",
}
THROTTLE_RATES = {
    scope: env_str(f"THROTTLE_RATE_{scope.upper()}", rate) for scope, rate in _THROTTLE_RATE_DEFAULTS.items()
}
for _scope, _rate in THROTTLE_RATES.items():
    _count, _, _period = _rate.partition("/")
    if not _count.isdigit() or not _period or _period[0] not in "smhd":
        raise ImproperlyConfigured(f"THROTTLE_RATE_{_scope.upper()}={_rate!r} is not a rate such as 120/min.")
REST_FRAMEWORK: dict[str, Any] = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "apps.accounts.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["apps.common.parsers.StrictJSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "apps.common.negotiation.JsonFirstContentNegotiation",
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        *(["rest_framework.renderers.BrowsableAPIRenderer"] if DEBUG else []),
    ],
    "DEFAULT_PAGINATION_CLASS": "apps.common.pagination.PageNumberPagination",
    "DEFAULT_SCHEMA_CLASS": "apps.common.schema.AutoSchema",
    "EXCEPTION_HANDLER": "apps.common.errors.api_exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    # Responses are JSON only and unknown parameters are ignored: `?format=` must not pick a renderer
    # (DRF's override answers 404 for a format it does not have).
    "URL_FORMAT_OVERRIDE": None,
    "DEFAULT_THROTTLE_CLASSES": ["apps.common.throttling.LearnerRateThrottle"],
    "DEFAULT_THROTTLE_RATES": THROTTLE_RATES,
    # The client's address is REMOTE_ADDR. Behind n trusted proxies that each append to X-Forwarded-For,
    # set NUM_PROXIES=n to count the address the outermost one saw; otherwise the header is ignored, as
    # any client can write it.
    "NUM_PROXIES": env_int("NUM_PROXIES", 0),
}
# Largest request body accepted: 413 (code too_large) above it, checked first of all (see
# RequestBodyLimitMiddleware). A batch of 1,000 reviews takes at most 180 KB of JSON (220 KB
# indented), and a submission's 64 KiB of code at most 192 KiB once escaped (non-ASCII as \uXXXX).
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 256 * 1024)
# API paths that take a file, each with its own body limit instead: the file's limit and room for the
# multipart envelope around it.
API_UPLOAD_BODY_LIMITS = {"/api/v1/anki-history/": ANKI_HISTORY_MAX_BYTES + 64 * 1024}

# --- Periodic tasks (Celery beat) -------------------------------------------------------------------
# An entry's message expiry is "expire_seconds" in its options: this scheduler drops "expires".
CELERY_BEAT_SCHEDULE = {
    "worker-heartbeat": {
        "task": "apps.common.tasks.worker_heartbeat",
        # Often enough that /healthz notices a dead worker within two minutes.
        "schedule": 60.0,
        "options": {"queue": "default", "expire_seconds": 55},
    },
    "review-reminders": {
        "task": "apps.reminders.tasks.send_review_reminders",
        "schedule": crontab(minute="*/15"),
        "options": {"queue": "default", "expire_seconds": 14 * 60},
    },
    # Background jobs (gradings, reschedules, fits, retention advice, Anki history imports) that the broker
    # did not take, or whose worker died, are handed over again: one round for every kind (apps.common.jobs),
    # which every worker also runs on its own timer (JOBS_RESUME_SECONDS).
    "jobs-resume": {
        "task": "apps.common.tasks.jobs_resume",
        "schedule": JOBS_RESUME_SECONDS,
        "options": {"queue": "default", "expire_seconds": JOBS_RESUME_SECONDS},
    },
    # Nightly, at an hour most learners sleep: each learner due a fit of their FSRS weights to their own
    # reviews (apps.srs.adaptation.optimization says when) gets one task; a fit takes well under a second.
    "parameter-fits-dispatch": {
        "task": "apps.srs.tasks.parameter_fits_dispatch",
        "schedule": crontab(hour=3, minute=30),
        "options": {"queue": "default", "expire_seconds": 6 * 3600},
    },
    # Nightly, before the fits: each course due a training of its population model (every learner's
    # reviews of its cards; apps.srs.adaptation.course_models says when) gets one.
    "course-models-dispatch": {
        "task": "apps.srs.tasks.course_models_dispatch",
        "schedule": crontab(hour=2, minute=45),
        "options": {"queue": "default", "expire_seconds": 6 * 3600},
    },
    # Rows of windows and lockouts that are over count nothing; hourly is often enough that guesses at
    # many made-up emails cannot grow the table past about an hour's worth. Expired device tokens go too.
    "login-lockouts-expire": {
        "task": "apps.accounts.tasks.login_lockouts_expire",
        "schedule": 3600.0,
        "options": {"queue": "default", "expire_seconds": 3300},
    },
    # Account emails the broker lost are handed over again.
    "account-emails-resume": {
        "task": "apps.accounts.tasks.account_emails_resume",
        "schedule": 60.0,
        "options": {"queue": "default", "expire_seconds": 55},
    },
}
