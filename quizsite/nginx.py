"""A local nginx with the shipped proxy settings (quizsite/nginx_proxy.conf) in front of a server.

The tests and the benchmarks go through it, so what they check and measure is the proxy production
runs. Production writes its own http block around the same file (docs/operations.md): TLS, its
server name, its upstream address.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from string import Template

PROXY_CONF = Path(__file__).resolve().parent / "nginx_proxy.conf"
# The smallest whole configuration around the proxy settings: as production's, less TLS, with every
# file nginx writes in a directory of its own.
_MAIN = Template("""
$user
worker_processes $processes;
pid $directory/nginx.pid;
error_log $directory/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $directory/body;
    proxy_temp_path $directory/proxy;
    fastcgi_temp_path $directory/fastcgi;
    uwsgi_temp_path $directory/uwsgi;
    scgi_temp_path $directory/scgi;
    limit_conn_zone $$binary_remote_addr zone=per_address:10m;
    upstream quizsite {
        server 127.0.0.1:$upstream;
        keepalive 32;
        keepalive_timeout 60s;
    }
    server {
        listen 127.0.0.1:$port;
        include $proxy_conf;
    }
}
""")
START_SECONDS = 15
STOP_SECONDS = 10


def nginx_binary() -> str | None:
    """nginx's executable, also where a non-root PATH leaves out /usr/sbin."""
    found = shutil.which("nginx")
    if found is None and Path("/usr/sbin/nginx").exists():
        return "/usr/sbin/nginx"
    return found


@dataclass
class Proxy:
    process: subprocess.Popen[bytes]
    port: int
    error_log: Path


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@contextmanager
def nginx_in_front(*, port: int, upstream_port: int, processes: str = "auto") -> Iterator[Proxy]:
    """nginx listening on 127.0.0.1:`port`, proxying to 127.0.0.1:`upstream_port`; stopped on the way out."""
    binary = nginx_binary()
    if binary is None:
        raise RuntimeError("nginx is not installed (apt-get install nginx-light)")
    with tempfile.TemporaryDirectory(prefix="quizsite-nginx-") as directory:
        config = Path(directory) / "nginx.conf"
        config.write_text(
            _MAIN.substitute(
                # As root, nginx's workers would run as nobody, who cannot write the temporary directory.
                user="user root;" if os.geteuid() == 0 else "",
                processes=processes,
                directory=directory,
                upstream=upstream_port,
                port=port,
                proxy_conf=PROXY_CONF,
            ),
            encoding="utf-8",
        )
        error_log = Path(directory) / "error.log"
        # Before it opens error_log (a configuration it cannot read), nginx writes to stderr.
        startup_log = Path(directory) / "startup.log"
        command = [binary, "-p", directory, "-c", str(config), "-g", "daemon off;"]
        with startup_log.open("wb") as startup:
            process = subprocess.Popen(  # noqa: S603 - argv is ours: nginx and the configuration written above
                command, stdout=startup, stderr=subprocess.STDOUT
            )
        try:
            deadline = time.monotonic() + START_SECONDS
            while not _listening(port):
                if process.poll() is not None or time.monotonic() > deadline:
                    logs = [path.read_text(errors="replace") for path in (startup_log, error_log) if path.exists()]
                    raise RuntimeError(f"nginx did not start on port {port}:\n{''.join(logs)[-3000:]}")
                time.sleep(0.05)
            yield Proxy(process=process, port=port, error_log=error_log)
        finally:
            process.terminate()
            try:
                process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=STOP_SECONDS)
