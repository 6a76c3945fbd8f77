"""The suite's two lanes and its time limit, as the README gives them: `make test-fast` leaves out what needs
a browser, a sandbox, TensorFlow or the project's own processes; a test that hangs fails with its name."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from tests.support.paths import REPO_ROOT


def collected(*args: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-n0", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return {line for line in result.stdout.splitlines() if "::" in line}


def test_the_fast_lane_leaves_out_browsers_sandboxes_and_servers_and_nothing_else():
    paths = ("tests/web", "tests/worker", "tests/common/test_http_server.py", "tests/common/test_env.py")
    fast, slow, every = collected("-m", "not slow", *paths), collected("-m", "slow", *paths), collected(*paths)
    assert fast | slow == every
    assert not fast & slow
    assert not any("test_browser" in test or "test_sandbox.py" in test or "test_http_server" in test for test in fast)
    assert any("tests/web/test_bundle.py" in test for test in fast)
    assert any("tests/worker/test_checks.py" in test for test in fast)
    assert any("tests/common/test_env.py" in test for test in fast)
    assert {test.split("::")[0] for test in slow} >= {
        "tests/web/test_browser.py",
        "tests/worker/test_sandbox.py",
        "tests/worker/test_timing_isolation.py",
        "tests/common/test_http_server.py",
    }


def test_a_test_that_hangs_fails_with_its_name_after_the_limit(tmp_path: Path):
    configured = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert configured["tool"]["pytest"]["ini_options"]["timeout"] == 300
    hanging = tmp_path / "test_hangs.py"
    hanging.write_text("import time\n\n\ndef test_waits_for_ever():\n    time.sleep(60)\n")
    config = ["-c", str(REPO_ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), "-o", "timeout=2"]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *config, "-p", "no:cacheprovider", "-n0", str(hanging)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, result.stdout[-2000:]
    assert "Timeout" in result.stdout
    assert "test_waits_for_ever" in result.stdout
