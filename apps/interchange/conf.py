"""Names the interchange app shares between the code that queues an Anki history import and the worker."""

from __future__ import annotations

# Published by this name (apps.common.publish). The name predates the import's move to this app: it is
# kept so that messages already queued still find the task.
ANKI_HISTORY_IMPORT_TASK = "apps.srs.tasks.anki_history_import"
