"""The rules, one function each: given the indexed program, the findings of one pitfall, in source order.

`no_final_prefetch` comes last: whether a helper's pipeline is extended by another is known only once
every other pipeline has been followed."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from worker.lint.findings import Finding
from worker.lint.program import PipelineProgram
from worker.lint.rules.caching import cache_after_augmentation
from worker.lint.rules.mapped_functions import map_before_batch, python_in_map
from worker.lint.rules.parallelism import no_final_prefetch, no_parallel_calls
from worker.lint.rules.records import ignore_errors_before_parse, schema_default
from worker.lint.rules.sources import generator_for_files, hand_written_threading

Rule = Callable[[PipelineProgram], Iterator[Finding]]

RULE_CHECKS: tuple[Rule, ...] = (
    hand_written_threading,
    generator_for_files,
    no_parallel_calls,
    python_in_map,
    cache_after_augmentation,
    schema_default,
    ignore_errors_before_parse,
    map_before_batch,
    no_final_prefetch,
)
