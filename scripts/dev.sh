#!/bin/sh
# Set-up and day-to-day commands behind `make run` and `make test`; POSIX sh, so it runs anywhere.
#   sh scripts/dev.sh install   create or refresh .venv from requirements/dev.txt (hashed lock)
#   sh scripts/dev.sh run       install, migrate, load decks/, reset demo users, start web + worker + beat
#   sh scripts/dev.sh test      install, then run the whole test suite in parallel (extra arguments go to pytest)
#   sh scripts/dev.sh test-fast the same, but only the tests that need no browser, sandbox, TensorFlow,
#                               nginx or real worker process, nor fuzzes the whole API (the `slow`
#                               marker, tests/support/fixtures.py)
#   sh scripts/dev.sh lock      recompile requirements/*.txt from requirements/*.in (pins kept unless
#                               UPGRADE=1), with the hashes pip checks on every install
#   sh scripts/dev.sh db-stop   stop the embedded PostgreSQL (var/postgres) that run and test start
#   sh scripts/dev.sh python    print the Python >= 3.12 that install would use
set -eu

cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV="${QUIZSITE_VENV:-$ROOT/.venv}"
MIN_PYTHON="3.12"

say() { printf '%s\n' "$*" >&2; }

python_ok() {
    "$1" -c 'import sys, venv, ensurepip; raise SystemExit(sys.version_info < (3, 12))' >/dev/null 2>&1
}

find_python() {
    if [ -n "${PYTHON:-}" ]; then
        if python_ok "$PYTHON"; then echo "$PYTHON"; return 0; fi
        say "PYTHON=$PYTHON is not a Python >= $MIN_PYTHON with venv and ensurepip."
        return 1
    fi
    for candidate in python3.13 python3.12 python3 python; do
        if command -v "$candidate" >/dev/null 2>&1 && python_ok "$candidate"; then
            command -v "$candidate"; return 0
        fi
    done
    # Interpreters installed but not on PATH: pyenv, Homebrew, python.org, deadsnakes.
    pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
    if command -v pyenv >/dev/null 2>&1; then pyenv_root=$(pyenv root); fi
    for candidate in \
        "$pyenv_root"/versions/3.1[3-9]*/bin/python3 "$pyenv_root"/versions/3.12*/bin/python3 \
        /opt/homebrew/bin/python3.1[2-9] /usr/local/bin/python3.1[2-9] /usr/bin/python3.1[2-9] \
        /Library/Frameworks/Python.framework/Versions/3.1[2-9]/bin/python3; do
        if [ -x "$candidate" ] && python_ok "$candidate"; then echo "$candidate"; return 0; fi
    done
    say "No Python >= $MIN_PYTHON found (looked on PATH, in pyenv, Homebrew and /usr/local)."
    say "Install Python $MIN_PYTHON or newer with its venv module (python.org, 'pyenv install 3.12',"
    say "'apt-get install python3.12-venv' or 'brew install python@3.12'), or point PYTHON=/path/to/python3.12 at one."
    return 1
}

LOCK_FILE=requirements/dev.txt

requirements_stamp() {
    "$VENV/bin/python" -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest() + sys.version)' "$LOCK_FILE"
}

install() {
    if [ -x "$VENV/bin/python" ] && python_ok "$VENV/bin/python" \
        && [ "$(cat "$VENV/.requirements-stamp" 2>/dev/null)" = "$(requirements_stamp)" ]; then
        return 0
    fi
    python=$(find_python)
    say "Creating .venv with $python ($("$python" --version 2>&1))"
    rm -rf "$VENV"
    "$python" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
    say "Installing $LOCK_FILE into .venv (a few minutes the first time)"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes -r "$LOCK_FILE"
    requirements_stamp >"$VENV/.requirements-stamp"
}

free_port() {
    "$VENV/bin/python" - "$1" <<'PY'
import socket, sys
port = int(sys.argv[1])
for candidate in range(port, port + 50):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", candidate))
        except OSError:
            continue
        print(candidate)
        break
PY
}

run() {
    install
    load_env_file
    export DJANGO_DEBUG="${DJANGO_DEBUG:-true}"
    manage="$VENV/bin/python manage.py"
    say "Database: ${DATABASE_URL:-PostgreSQL the project starts under var/postgres}; broker: ${REDIS_URL:-${CELERY_BROKER_URL:-embedded (files under var/broker)}}"
    $manage migrate --no-input -v 0
    $manage load_decks
    port=$(free_port "${PORT:-8000}")
    # Links in mail (password resets, reminders) point at this server unless SITE_URL says otherwise; every
    # process honcho starts (web, workers, beat) gets it, whatever PORT honcho gives each.
    export SITE_URL="${SITE_URL:-http://127.0.0.1:$port}"
    echo
    echo "Demo accounts (passwords are new on every start):"
    $manage demo_accounts
    echo
    echo "Quizsite is starting at http://127.0.0.1:$port/  (sign in with the demo learner's email and password)"
    echo "  API docs:  http://127.0.0.1:$port/api/v1/docs/"
    echo "  Admin:     http://127.0.0.1:$port/admin/  (sign in as staff)"
    echo "  Health:    http://127.0.0.1:$port/healthz"
    echo "Press Ctrl-C to stop the web server, the Celery workers (default and grading) and beat."
    echo
    PORT=$port exec "$VENV/bin/honcho" --env /dev/null start -f Procfile.dev
}

run_tests() {
    install
    load_env_file
    # One process per CPU (at most four), each with its own test database and Redis database; a
    # module's tests stay in one process, so a module's worker or server starts once. -n0 runs in one.
    exec "$VENV/bin/python" -m pytest --numprocesses auto --maxprocesses 4 --dist loadscope "$@"
}

lock() {
    install
    upgrade=""
    [ -n "${UPGRADE:-}" ] && upgrade="--upgrade"
    # web.txt, worker.txt and dev.txt each pin every package of its role; a role's lock never widens
    # another's. Python 3.12 is the oldest the project runs on; the hashes cover every platform's files.
    for role in web worker dev; do
        "$VENV/bin/uv" pip compile --quiet --generate-hashes --python-version "$MIN_PYTHON" $upgrade \
            --annotation-style line --custom-compile-command "make lock" \
            "requirements/$role.in" -o "requirements/$role.txt"
    done
}

# Settings for both commands may live in .env (see .env.example); the environment wins over it.
load_env_file() {
    [ -f "$ROOT/.env" ] || return 0
    eval "$("$VENV/bin/python" - "$ROOT/.env" <<'PY'
import os, shlex, sys
for raw in open(sys.argv[1], encoding="utf-8"):
    line = raw.strip()
    if not line or line.startswith("#") or "=" not in line:
        continue
    name, _, value = line.partition("=")
    name, value = name.strip().removeprefix("export "), value.strip().strip("\"'")
    if name.isidentifier() and name not in os.environ:
        print(f"export {name}={shlex.quote(value)}")
PY
)"
}

command=${1:-}
[ $# -gt 0 ] && shift
case "$command" in
    install) install ;;
    run) run ;;
    test) run_tests "$@" ;;
    test-fast) run_tests -m "not slow" "$@" ;;
    lock) lock ;;
    db-stop) install; "$VENV/bin/python" -m quizsite.local_database stop ;;
    python) find_python ;;
    *) say "usage: sh scripts/dev.sh install|run|test|test-fast|lock|db-stop|python [pytest arguments]"; exit 2 ;;
esac
