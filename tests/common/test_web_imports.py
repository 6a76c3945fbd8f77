"""The web process loads neither NumPy nor TensorFlow: only grading and a few rare computations need them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.support.paths import REPO_ROOT
from tests.support.probes import LOAD_THE_SITE

_PROBE = (
    LOAD_THE_SITE
    + """
import json, sys
print(json.dumps(sorted(name for name in ("numpy", "tensorflow", "networkx") if name in sys.modules)))
"""
)


def test_loading_the_web_application_and_every_view_imports_no_numpy_or_tensorflow():
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_DEBUG"}
    result = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=REPO_ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "quizsite.settings", "SECRET_KEY": "import-probe-" + "x" * 40},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
