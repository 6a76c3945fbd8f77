"""Interchange's background job, as apps.common.jobs runs it: replaying a learner's Anki review history."""

from __future__ import annotations

from datetime import timedelta

from apps.common.jobs import JobKind
from apps.interchange.conf import ANKI_HISTORY_IMPORT_TASK
from apps.srs.conf import PUBLISH_TIMEOUT_SECONDS
from apps.srs.models import AnkiHistoryImport

# A running import saves progress after every batch of reviews (a second or two); one silent this long
# lost its worker.
ANKI_HISTORY_IMPORTS = JobKind(
    model=AnkiHistoryImport,
    task_name=ANKI_HISTORY_IMPORT_TASK,
    what="Anki history imports",
    stalled_after=timedelta(minutes=15),
    publish_timeout_seconds=PUBLISH_TIMEOUT_SECONDS,
)
