"""Spaced repetition's fixed names and limits that other modules share: the tasks it hands to workers."""

from __future__ import annotations

# Tasks are published by these names (apps.common.publish); the tasks module registers them under them.
RESCHEDULE_TASK = "apps.srs.tasks.reschedule"
PARAMETER_FIT_TASK = "apps.srs.tasks.parameter_fit"
RETENTION_ADVICE_TASK = "apps.srs.tasks.retention_advice"
COURSE_MODEL_TASK = "apps.srs.tasks.course_model_train"

# A learner with fewer held-out long-term reviews than this follows their course's decision on its memory
# model: fewer would let chance pick their model.
MIN_LEARNER_HELD_OUT = 50

# The broker gets one short try; work it did not take stays queued in its row, and each kind's resume job
# (or the nightly dispatch, for fits) hands it over again.
PUBLISH_TIMEOUT_SECONDS = 2.0
