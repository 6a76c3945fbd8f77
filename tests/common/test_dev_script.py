"""scripts/dev.sh finds a suitable Python on its own, and says what it needs when there is none."""

from __future__ import annotations

import os
import shutil
import subprocess

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
