"""Every standing review's stored states become the ones its place in the card's history gives.

A late review used to be merged by replaying the card's whole history into its memory row only: the
reviews after it kept the states of a history without it, and it kept the card's state from before
it arrived. Merging now replays only a card's tail, starting from the state stored on the review
before it, so every stored state has to be right. Rows already right are left as they are.
"""

from __future__ import annotations

from itertools import groupby
from typing import Any

from django.db import migrations
from django.db.models import Q

from apps.srs.core.scheduling import Rating, ReviewEvent, SchedulerConfig, replay

# (learner, card) histories replayed per round: their reviews are read with one query, in order.
HISTORIES_PER_ROUND = 500
# Rows per UPDATE when rewriting: Django's bulk_update tests each row's id in turn.
ROWS_PER_UPDATE = 200
# Read as tuples, not model instances: building those costs as much as replaying. The learner and the
# card come last, for groupby.
_HISTORY_FIELDS = (
    "pk",
    "client_review_id",
    "rating",
    "reviewed_at",
    "profile_id",
    "state_before",
    "state_after",
    "learner_id",
    "card_id",
)


def _config(data: dict[str, Any]) -> SchedulerConfig:
    # As apps.srs.settings.config.scheduler_config_from_json reads a profile; a migration keeps its own copy.
    return SchedulerConfig(
        desired_retention=float(data["desired_retention"]),
        learning_steps=tuple(data["learning_steps"]),
        relearning_steps=tuple(data["relearning_steps"]),
        maximum_interval=int(data["maximum_interval"]),
        parameters=tuple(float(w) for w in data["parameters"]),
    )


def _pair_after(pair: tuple[int, int]) -> Q:
    learner_id, card_id = pair
    return Q(learner_id__gt=learner_id) | Q(learner_id=learner_id, card_id__gt=card_id)


def _history_of(row: tuple[Any, ...]) -> tuple[int, int]:
    return row[-2], row[-1]


def review_log_states_rewrite(apps: Any) -> int:
    """Replay every learner's history of every card, in keyset rounds; returns how many rows were rewritten."""
    ReviewLog = apps.get_model("srs", "ReviewLog")
    SchedulerProfile = apps.get_model("srs", "SchedulerProfile")
    configs = {pk: _config(config) for pk, config in SchedulerProfile.objects.values_list("pk", "config")}
    standing = ReviewLog.objects.filter(kind="review", undone_by__isnull=True)
    rewritten = 0
    done: tuple[int, int] | None = None
    while True:
        pairs = standing.order_by("learner_id", "card_id").values_list("learner_id", "card_id").distinct()
        if done is not None:
            pairs = pairs.filter(_pair_after(done))
        batch = list(pairs[:HISTORIES_PER_ROUND])
        if not batch:
            return rewritten
        first, last = batch[0], batch[-1]
        # The round's histories are consecutive in (learner, card) order: everything from the first to the last.
        in_round = (Q(learner_id__gt=first[0]) | Q(learner_id=first[0], card_id__gte=first[1])) & ~_pair_after(last)
        rows = (
            standing.filter(in_round)
            .order_by("learner_id", "card_id", "reviewed_at", "client_review_id")
            .values_list(*_HISTORY_FIELDS)
        )
        stale = []
        for (learner_id, card_id), history_rows in groupby(rows.iterator(chunk_size=2000), key=_history_of):
            history = sorted(history_rows, key=lambda row: (row[3], str(row[2])))
            states = replay(
                [
                    ReviewEvent(at, str(review_id), Rating(rating), configs[profile_id])
                    for _, review_id, rating, at, profile_id, *_ in history
                ],
                learner_id=learner_id,
                card_id=card_id,
            )
            before = None
            for row, after in zip(history, states, strict=True):
                pk, stored = row[0], (row[5], row[6])
                wanted = (before.to_dict() if before is not None else None, after.to_dict())
                if stored != wanted:
                    stale.append(ReviewLog(pk=pk, state_before=wanted[0], state_after=wanted[1]))
                before = after
        ReviewLog.objects.bulk_update(stale, ["state_before", "state_after"], batch_size=ROWS_PER_UPDATE)
        rewritten += len(stale)
        done = last


def review_log_states_replay(apps: Any, schema_editor: Any) -> None:
    review_log_states_rewrite(apps)


class Migration(migrations.Migration):
    dependencies = [("srs", "0002_settings_profile")]

    # Nothing to undo: the states rewritten were wrong, and the ones written are what replaying gives.
    operations = [migrations.RunPython(review_log_states_replay, migrations.RunPython.noop, elidable=True)]
