"""A stored memory row as the scheduling core's MemoryState: the one place that reads a stored state's fields.

A row may hold anything its columns allow (an old row, an import, an admin edit): a stability of 0,
a difficulty of 1e308, a step of -32767, a last review in year 9999. FSRS divides by the stability
and adds intervals to the last review, so each value is read clamped to the range FSRS itself keeps
it in; the row is not changed, and the next review stores a state computed from the clamped one.
"""

from __future__ import annotations

from fsrs.scheduler import MAX_DIFFICULTY, MIN_DIFFICULTY, STABILITY_MIN

from apps.common.stored import float_clamped, time_clamped
from apps.srs.core.scheduling import DEFAULT_MAXIMUM_INTERVAL_DAYS, MemoryStage, MemoryState
from apps.srs.models import StoredMemoryState

# FSRS never lowers a stability below its minimum; above a thousand times the longest interval, a
# larger one changes no schedule, and it keeps FSRS's arithmetic finite.
STABILITY_MAX_DAYS = 1000.0 * DEFAULT_MAXIMUM_INTERVAL_DAYS
_STEPPED_STAGES = (MemoryStage.LEARNING, MemoryStage.RELEARNING)


def _step_of(stage: MemoryStage, step: int | None) -> int | None:
    # A learning card without a step, or with a negative one, starts its steps again; a step past
    # the last one graduates the card, as FSRS does for a list of steps that got shorter.
    if stage not in _STEPPED_STAGES:
        return None
    return step if step is not None and step >= 0 else 0


def memory_state_of(memory: StoredMemoryState | None) -> MemoryState | None:
    """The row as the scheduling core's MemoryState, every value within the range FSRS computes in."""
    if memory is None:
        return None
    stage = MemoryStage(memory.stage)
    return MemoryState(
        stage=stage,
        step=_step_of(stage, memory.step),
        stability=float_clamped(memory.stability, low=STABILITY_MIN, high=STABILITY_MAX_DAYS, default=STABILITY_MIN),
        difficulty=float_clamped(memory.difficulty, low=MIN_DIFFICULTY, high=MAX_DIFFICULTY, default=MAX_DIFFICULTY),
        due=time_clamped(memory.due),
        last_review=time_clamped(memory.last_review),
        reps=max(memory.reps, 0),
        lapses=max(memory.lapses, 0),
    )


def memory_state_store(memory: StoredMemoryState, state: MemoryState) -> None:
    """Copy a scheduling state onto its row (unsaved); the one place that writes a stored state's fields."""
    memory.stage = int(state.stage)
    memory.step = state.step
    memory.stability = state.stability
    memory.difficulty = state.difficulty
    memory.due = state.due
    memory.last_review = state.last_review
    memory.reps = state.reps
    memory.lapses = state.lapses
