"""The production server's settings: flags over the environment over the defaults (quizsite/server.py)."""

from __future__ import annotations

import pytest

from quizsite.server import DEFAULT_ADDRESS, DEFAULT_PORT, ServerSettings, cpus, settings_from


def test_the_defaults_bind_this_host_only_with_two_processes_per_cpu() -> None:
    assert settings_from([], environ={}) == ServerSettings(
        address=DEFAULT_ADDRESS, port=DEFAULT_PORT, workers=max(2, 2 * cpus())
    )
    assert DEFAULT_ADDRESS == "127.0.0.1"


def test_the_environment_overrides_the_defaults_and_flags_override_the_environment() -> None:
    environ = {"WEB_ADDRESS": "10.0.0.5", "WEB_PORT": "9000", "WEB_CONCURRENCY": "3"}
    assert settings_from([], environ=environ) == ServerSettings(address="10.0.0.5", port=9000, workers=3)
    flags = ["--address", "10.0.0.6", "--port", "9001", "--workers", "5"]
    assert settings_from(flags, environ=environ) == ServerSettings(address="10.0.0.6", port=9001, workers=5)


def test_no_workers_is_refused() -> None:
    with pytest.raises(SystemExit):
        settings_from(["--workers", "0"], environ={})


def test_the_server_is_granian_serving_the_wsgi_application_with_one_thread_per_process() -> None:
    from granian.constants import Interfaces

    from quizsite.server import server_for

    server = server_for(ServerSettings(address="127.0.0.1", port=8123, workers=3))
    assert server.interface == Interfaces.WSGI
    assert server.target == "quizsite.wsgi:application"
    assert (server.workers, server.blocking_threads) == (3, 1)
    assert server.respawn_failed_workers is True


def test_the_docs_describe_the_server_and_proxy_the_tests_run() -> None:
    """The README and docs/operations.md name the server and the proxy file tests/common/test_http_server.py
    runs, and give the proxy's limits as the file sets them."""
    import re

    from quizsite.nginx import PROXY_CONF
    from tests.support.paths import REPO_ROOT

    readme = (REPO_ROOT / "README.md").read_text()
    operations = (REPO_ROOT / "docs" / "operations.md").read_text()
    proxy = PROXY_CONF.read_text()
    for page in (readme, operations):
        assert "python -m quizsite.server" in page
        assert "quizsite/nginx_proxy.conf" in page
    assert re.search(r"include \S+/quizsite/nginx_proxy\.conf;", operations)
    timeout = re.search(r"client_body_timeout (\d+)s;", proxy)
    per_address = re.search(r"limit_conn per_address (\d+);", proxy)
    assert timeout is not None and per_address is not None
    assert f"drops each stalled one after {timeout.group(1)} s" in operations
    assert f"one client address holds at most {per_address.group(1)} requests at once" in operations
