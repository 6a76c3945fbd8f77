"""`manage.py grade_file`: the same grader, synchronously, printing the result."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from tests.support.grading import RESULT_KEYS, SIMULATOR, reference, requires_sandbox

pytestmark = [pytest.mark.django_db, pytest.mark.grader]


@requires_sandbox
def test_json_output_is_exactly_the_result_object(shipped_course, tmp_path):
    path = tmp_path / "solution.py"
    path.write_text(reference(SIMULATOR, "expert"))
    out = io.StringIO()
    call_command("grade_file", SIMULATOR.slug, str(path), "--json", stdout=out, stderr=io.StringIO())
    result = json.loads(out.getvalue())
    assert set(result) == RESULT_KEYS
    assert result["verdict"] == "accepted"
    assert result["timing"]["rewrites_off"] is True and result["speedup"]["vs_naive"] > 0


def test_text_output_and_exit_status_for_code_that_is_not_accepted(shipped_course, tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("def build_pipeline(make_source):\n    return make_source(\n")
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("grade_file", SIMULATOR.slug, str(path), stdout=out, stderr=io.StringIO())
    assert exit_info.value.code == 1
    assert out.getvalue().startswith("verdict: rejected  score: 0/100\nSyntax error on line 2")


def test_unknown_exercise_and_missing_file_are_command_errors(shipped_course, tmp_path):
    with pytest.raises(CommandError, match="No exercise 'nope'"):
        call_command("grade_file", "nope", str(tmp_path / "x.py"))
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("grade_file", SIMULATOR.slug, str(tmp_path / "missing.py"))
