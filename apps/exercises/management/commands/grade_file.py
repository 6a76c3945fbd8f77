"""Grade one file synchronously through the same sandbox the workers use."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.http import Http404

from apps.content.selectors import exercise_get
from apps.exercises.grading import exercise_job, grader_config
from worker.grader import Grader, GradingFailed, Progress
from worker.sandbox import SandboxUnavailable


class Command(BaseCommand):
    help = "Grade a pipeline file against an exercise and print the result (exit status 1 unless accepted)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("exercise", help="The exercise's slug.")
        parser.add_argument("path", type=Path, help="The Python file to grade.")
        parser.add_argument("--json", action="store_true", help="Print exactly the result object, as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            exercise = exercise_get(slug=options["exercise"])
        except Http404 as missing:
            raise CommandError(f"No exercise {options['exercise']!r}.") from missing
        try:
            code = options["path"].read_text()
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"Cannot read {options['path']}: {error}") from error
        grader = Grader(grader_config(warm_processes=0))

        def report(progress: Progress) -> None:
            if not options["json"]:
                self.stderr.write(f"{progress.phase} {progress.value:.0%} {progress.label}".rstrip())

        try:
            result = grader.grade(exercise_job(exercise), code, report)
        except (GradingFailed, SandboxUnavailable) as failure:
            raise CommandError(f"The grader failed: {failure}") from failure
        finally:
            grader.close()
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2))
        else:
            self.stdout.write(result_text(result))
        if result["verdict"] != "accepted":
            sys.exit(1)


def result_text(result: dict[str, Any]) -> str:
    lines = [f"verdict: {result['verdict']}  score: {result['score']['total']:g}/{result['score']['max']:g}"]
    lines.append(result["message"])
    for check in result["checks"]:
        lines.append(f"  [{'ok' if check['passed'] else 'FAIL'}] {check['name']}: {check['message']}")
    timing = result.get("timing")
    if timing:
        lines.append("timing (median epoch, batches/s, input wait):")
        for name in ("submission", "naive", "expert"):
            figures = timing[name]
            lines.append(
                f"  {name:10} {figures['epoch_seconds']:.3f} s  {figures['batches_per_second']:.1f}/s"
                f"  wait {figures['input_wait_fraction']:.0%}  first batch {figures['first_batch_seconds']:.3f} s"
            )
        lines.append(f"  {timing['note']}")
    if result.get("speedup"):
        speedup = result["speedup"]
        lines.append(f"speedup: {speedup['vs_naive']:.2f}x naive, {speedup['vs_expert']:.2f}x expert")
    for finding in result["lint"]:
        lines.append(f"  line {finding['line']}: [{finding['rule']}] {finding['message']}")
    lines.append(f"device: {result['device']}")
    return "\n".join(lines)
