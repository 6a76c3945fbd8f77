"""scripts/dev.sh finds a suitable Python on its own, and says what it needs when there is none."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys

from tests.support.paths import REPO_ROOT


def find_python(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "scripts/dev.sh", "python"], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60
    )


def test_finds_a_python_of_at_least_3_12():
    result = find_python(dict(os.environ))
    assert result.returncode == 0, result.stderr
    found = result.stdout.strip()
    version = subprocess.run(
        [found, "-c", "import sys; print(sys.version_info[:2] >= (3, 12))"], capture_output=True, text=True
    )
    assert version.stdout.strip() == "True"


def test_an_explicit_python_that_is_too_old_is_refused(tmp_path):
    old = tmp_path / "python3"
    old.write_text("#!/bin/sh\nexit 1\n")  # answers no to the version check, like Python 3.11 does
    old.chmod(0o755)
    result = find_python({**os.environ, "PYTHON": str(old)})
    assert result.returncode != 0
    assert f"PYTHON={old} is not a Python >= 3.12" in result.stderr


def test_no_suitable_python_is_explained(tmp_path):
    # A PATH holding only the shell tools the script uses, and no pyenv: nothing to find.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "cat", "dirname", "rm"):
        if located := shutil.which(tool):
            (bin_dir / tool).symlink_to(located)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "PYENV_ROOT": str(tmp_path / "no-pyenv")}
    result = find_python(env)
    if any(os.path.exists(f"/usr/bin/python3.{minor}") for minor in range(12, 20)):
        assert result.returncode == 0  # this machine has a system Python that qualifies
        return
    assert result.returncode != 0
    assert "No Python >= 3.12 found" in result.stderr
    assert "PYTHON=/path/to/python3.12" in result.stderr


def test_run_points_mail_links_at_the_port_it_serves_on(tmp_path, request):
    """`run` with the port it asked for taken: the server, and the links in mail, move to the next one."""

    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    # honcho stands in for the processes: it prints what each of them would be given.
    honcho = venv / "bin" / "honcho"
    honcho.write_text('#!/bin/sh\necho "SITE_URL=$SITE_URL PORT=$PORT"\n')
    honcho.chmod(0o755)
    stamp = subprocess.run(
        [
            str(python),
            "-c",
            "import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest() + sys.version)",
            "requirements/dev.txt",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (venv / ".requirements-stamp").write_text(stamp)
    # No DATABASE_URL, as on a fresh laptop: the run starts the embedded PostgreSQL under its var folder.
    env = {key: value for key, value in os.environ.items() if key not in {"SITE_URL", "PORT", "DATABASE_URL"}}
    env |= {"QUIZSITE_VENV": str(venv), "QUIZSITE_VAR_DIR": str(tmp_path)}
    request.addfinalizer(
        lambda: subprocess.run(
            [sys.executable, "-m", "quizsite.local_database", "stop"], cwd=REPO_ROOT, env=env, check=True, timeout=60
        )
    )
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            ["sh", "scripts/dev.sh", "run"],
            cwd=REPO_ROOT,
            env=env | {"PORT": str(port)},
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert result.returncode == 0, result.stderr[-2000:]
    announced = re.search(r"starting at http://127\.0\.0\.1:(\d+)/", result.stdout)
    assert announced is not None, result.stdout
    served = int(announced.group(1))
    assert served != port
    assert f"SITE_URL=http://127.0.0.1:{served} PORT={served}" in result.stdout
    # A SITE_URL of the learner's own is kept.
    kept = subprocess.run(
        ["sh", "scripts/dev.sh", "run"],
        cwd=REPO_ROOT,
        env=env | {"SITE_URL": "https://quiz.example"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "SITE_URL=https://quiz.example " in kept.stdout
