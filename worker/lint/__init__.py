"""Static advice on a learner's tf.data pipeline: the course's pitfalls, found in the source text.

Grading measures whether a pipeline is correct and how fast it is, but a slow score alone does not tell
a learner *why*. This package reads the submitted code (never runs it, never imports TensorFlow) and
points at the lines that show one of the pitfalls the course teaches: from_generator for plain files,
Python inside map, no final prefetch, sequential map/interleave, hand-written threads, caching after
random augmentation, and element-wise maps that could run on whole batches.

Python cannot tell us which objects are datasets, so the analysis is deliberately syntactic: any
`.map(`, `.batch(`, `.cache(`, ... method call is taken to be a dataset step, a pipeline is followed
through fluent chains and through reassignment of local names, and mapped functions are resolved when
they are a lambda, a def in the module (or in the enclosing function), or a functools.partial of one.
Whatever cannot be resolved produces no advice rather than a guess: a finding is shown to a learner,
so a false alarm costs more than a missed hint.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Sequence

from worker.lint.findings import RULES, Finding
from worker.lint.program import PipelineProgram
from worker.lint.rules import RULE_CHECKS

__all__ = ["RULES", "Finding", "lint_pipeline_code"]


def lint_pipeline_code(code: str, *, source_is_files: bool, forbidden_imports: Sequence[str] = ()) -> list[Finding]:
    """Findings for the pitfalls in `code`, sorted by (line, rule), at most one per rule and line."""
    try:
        with warnings.catch_warnings():
            # Learners' code often has "\d"-style escapes; their SyntaxWarnings are not ours to show.
            warnings.simplefilter("ignore")
            tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return []
    try:
        program = PipelineProgram(tree, source_is_files, forbidden_imports)
        findings = [finding for rule in RULE_CHECKS for finding in rule(program)]
    except Exception:
        # Advice is optional and grading must go on: a linter bug on odd input costs the hints, not the grade.
        return []
    first_per_rule_and_line: dict[tuple[int, str], Finding] = {}
    for finding in findings:
        first_per_rule_and_line.setdefault((finding.line, finding.rule), finding)
    return [first_per_rule_and_line[key] for key in sorted(first_per_rule_and_line)]
