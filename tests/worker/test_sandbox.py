"""The sandbox holds against hostile code: each attack gets its verdict, and the next run still works."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap

import pytest

from tests.support.paths import REPO_ROOT
from worker import sandbox
from worker.sandbox import Limits, SandboxResult, run_sandboxed

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (apt-get install bubblewrap)"
)

# Small limits keep every attack quick; the values are generous for the few lines each test runs.
LIMITS = Limits(wall_seconds=5, cpu_seconds=4, memory_bytes=256 * 2**20, processes=32, scratch_bytes=32 * 2**20)


def run(code: str, limits: Limits = LIMITS) -> SandboxResult:
    return run_sandboxed([sys.executable, "-c", textwrap.dedent(code)], limits=limits)


def assert_still_grades() -> None:
    """After any attack, the next submission runs normally and reports through its pipe."""
    result = run("import os; os.write(int(os.environ['SANDBOX_RESULT_FD']), b'next one fine')")
    assert (result.outcome, result.result) == ("ok", b"next one fine"), result


def test_result_comes_back_through_the_pipe_and_logs_are_kept():
    result = run(
        """
        import os, sys
        print("to stdout"); print("to stderr", file=sys.stderr)
        os.write(int(os.environ["SANDBOX_RESULT_FD"]), b'{"verdict": "accepted"}')
        """
    )
    assert result.outcome == "ok"
    assert result.exit_code == 0
    assert result.result == b'{"verdict": "accepted"}'
    assert result.stdout == "to stdout\n"
    assert result.stderr == "to stderr\n"


def test_a_failing_program_is_an_error_with_its_traceback():
    result = run("raise ValueError('learner bug')")
    assert result.outcome == "error"
    assert result.exit_code == 1
    assert "ValueError: learner bug" in result.stderr
    assert_still_grades()


def test_environment_is_empty_and_the_user_is_nobody():
    result = run(
        """
        import os, json
        os.write(int(os.environ["SANDBOX_RESULT_FD"]), json.dumps([os.getuid(), sorted(os.environ)]).encode())
        """
    )
    uid, names = json.loads(result.result)
    assert uid == sandbox.NOBODY
    assert set(names) == {"HOME", "TMPDIR", "PATH", "LANG", "PWD", "PYTHONDONTWRITEBYTECODE", "SANDBOX_RESULT_FD"}
    assert not {"DATABASE_URL", "REDIS_URL", "SECRET_KEY"} & set(names)


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "/etc/shadow",
        str(REPO_ROOT / "quizsite" / "settings.py"),
        str(REPO_ROOT / ".env"),
        "/root/.bashrc",
    ],
)
def test_files_outside_the_sandbox_cannot_be_read(path):
    result = run(f"open({path!r}).read()")
    assert result.outcome == "error"
    assert "FileNotFoundError" in result.stderr or "PermissionError" in result.stderr
    assert_still_grades()


def test_symlinks_do_not_lead_out_of_the_sandbox():
    result = run(
        f"""
        import os
        os.symlink("/etc/shadow", "shadow")
        os.symlink({str(REPO_ROOT)!r}, "repo")
        found = [os.path.exists("shadow"), os.path.exists("repo/manage.py")]
        os.write(int(os.environ["SANDBOX_RESULT_FD"]), repr(found).encode())
        """
    )
    assert result.result == b"[False, False]"
    assert_still_grades()


@pytest.mark.parametrize("target", ["/usr/evil.py", "/tmp/evil", "/evil", f"{sys.prefix}/evil.py"])
def test_nothing_outside_scratch_can_be_written(target):
    result = run(f"open({target!r}, 'w').write('x')")
    assert result.outcome == "error"
    assert any(word in result.stderr for word in ("Read-only file system", "PermissionError", "No such file"))
    assert not os.path.exists(target)
    assert_still_grades()


def test_scratch_is_writable_and_size_capped():
    result = run("open('/scratch/big', 'wb').write(b'z' * (64 * 2**20))")
    assert result.outcome in {"error", "memory_limit"}
    assert "No space left on device" in result.stderr or result.outcome == "memory_limit"
    assert_still_grades()


@pytest.mark.parametrize(("host", "port"), [("127.0.0.1", 5432), ("127.0.0.1", 6379), ("1.1.1.1", 53)])
def test_there_is_no_network(host, port):
    result = run(f"import socket; socket.create_connection(({host!r}, {port}), timeout=2)")
    assert result.outcome == "error"
    assert "OSError" in result.stderr or "ConnectionRefusedError" in result.stderr
    assert_still_grades()


def test_infinite_loop_is_stopped():
    result = run("while True: pass", limits=Limits(wall_seconds=2, cpu_seconds=60, memory_bytes=LIMITS.memory_bytes))
    assert result.outcome == "timeout"
    assert result.wall_seconds < 10
    assert_still_grades()


def test_cpu_time_limit_stops_a_busy_program_before_the_wall_clock():
    result = run("while True: pass", limits=Limits(wall_seconds=30, cpu_seconds=1, memory_bytes=LIMITS.memory_bytes))
    assert result.outcome == "timeout"
    assert result.signal in {signal.SIGXCPU, signal.SIGKILL}
    assert_still_grades()


def test_sleeping_past_the_limit_is_stopped():
    result = run("import time; time.sleep(60)", limits=Limits(wall_seconds=1))
    assert result.outcome == "timeout"
    assert result.wall_seconds < 10
    assert_still_grades()


def test_memory_bomb_is_stopped():
    result = run("x = bytearray(1024**3)")
    assert result.outcome in {"memory_limit", "error"}  # killed by the cap, or MemoryError raised inside
    assert result.outcome == "memory_limit" or "MemoryError" in result.stderr
    assert_still_grades()


def test_memory_bomb_is_stopped_by_the_watchdog_without_a_cgroup(monkeypatch):
    monkeypatch.setattr(sandbox._MemoryCgroup, "create", classmethod(lambda cls, limits: None))
    result = run("import time\nx = bytearray(1024**3)\nx[::4096] = b'y' * len(x[::4096])\ntime.sleep(30)")
    assert result.outcome in {"memory_limit", "error"}
    assert result.outcome == "memory_limit" or "MemoryError" in result.stderr


def test_fork_bomb_is_contained():
    result = run(
        """
        import os
        while True:
            os.fork()
        """,
        limits=Limits(wall_seconds=4, processes=32, memory_bytes=LIMITS.memory_bytes),
    )
    assert result.outcome in {"error", "timeout", "memory_limit"}
    assert_still_grades()


def test_huge_output_is_capped():
    result = run("print('y' * 10**7)")
    assert len(result.stdout) == LIMITS.log_bytes
    assert "stdout" in result.truncated
    too_big = run("import os; os.write(int(os.environ['SANDBOX_RESULT_FD']), b'x' * (5 * 2**20))")
    assert too_big.outcome == "output_limit"
    assert len(too_big.result) == LIMITS.result_bytes
    assert_still_grades()


def test_killing_the_parent_does_not_escape():
    result = run(
        """
        import os, signal, time
        os.kill(os.getppid(), signal.SIGKILL)
        os.kill(1, signal.SIGKILL)
        time.sleep(60)
        """,
        limits=Limits(wall_seconds=2),
    )
    assert result.outcome == "timeout"
    assert_still_grades()


def test_a_segfault_is_a_crash():
    result = run("import ctypes; ctypes.string_at(0)")
    assert result.outcome == "crashed"
    assert result.signal == signal.SIGSEGV
    assert_still_grades()


def test_escaping_to_a_new_session_is_still_killed():
    result = run(
        """
        import os, time
        if os.fork() == 0:
            os.setsid()
            time.sleep(120)
        time.sleep(120)
        """,
        limits=Limits(wall_seconds=1),
    )
    assert result.outcome == "timeout"
    leftover = subprocess.run(["pgrep", "-f", "time.sleep\\(120\\)"], capture_output=True, text=True)
    assert leftover.stdout.strip() == ""
    assert_still_grades()


def test_worker_package_does_not_import_django():
    code = "import sys, worker.sandbox; print('django' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "False", result.stderr


def test_a_sandbox_started_early_gets_its_input_later_and_its_clock_starts_then():
    code = """
        import os, sys, time
        fd = int(os.environ["SANDBOX_RESULT_FD"])
        time.sleep(1.5)  # slow start-up work, before the job exists
        os.write(fd, b"ready\\n")
        job = sys.stdin.readline()
        os.write(fd, b"progress 1\\n")
        os.write(fd, ("done " + job.strip() + "\\n").encode())
        """
    started = sandbox.SandboxProcess.start(
        [sys.executable, "-c", textwrap.dedent(code)], limits=Limits(wall_seconds=1.0, cpu_seconds=4)
    )
    assert started.wait_ready(timeout=10)
    lines: list[bytes] = []
    result = started.finish(b"job-7\n", lines.append)
    assert result.outcome == "ok", result
    assert lines == [b"progress 1", b"done job-7"]
    assert result.result == b"ready\nprogress 1\ndone job-7\n"


def test_input_the_program_never_reads_cannot_stop_the_clock():
    # Far more input than a pipe holds, and a program that never reads it.
    result = run_sandboxed(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        limits=Limits(wall_seconds=1.5, cpu_seconds=4),
        stdin=b"x" * (4 * 2**20),
    )
    assert result.outcome == "timeout"
    assert result.wall_seconds < 10
    assert_still_grades()


def test_bubblewrap_itself_carries_no_host_environment(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://secret@127.0.0.1/quizsite")
    result = run(
        """
        import os
        seen = []
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    seen.append(open(f"/proc/{pid}/environ").read())
                except OSError:
                    pass
        os.write(int(os.environ["SANDBOX_RESULT_FD"]), repr(seen).encode())
        """
    )
    assert result.outcome == "ok"
    assert b"PATH" in result.result and b"secret" not in result.result


# ----------------------------------------------------------------------------- never host root


def test_the_sandbox_s_processes_are_unprivileged_on_the_host():
    process = sandbox.SandboxProcess.start(
        [
            sys.executable,
            "-c",
            "import os, time; os.write(int(os.environ['SANDBOX_RESULT_FD']), b'up\\n'); time.sleep(5)",
        ],
        limits=LIMITS,
    )
    try:
        assert process.wait_ready(10)
        uids = sandbox.tree_host_uids(process.pid_on_host())
        expected = LIMITS.sandbox_uid if os.geteuid() == 0 else os.geteuid()
        assert uids == {expected}, uids
    finally:
        process.kill()


def test_kernel_settings_cannot_be_opened_for_writing():
    result = run(
        """
        import os
        opened = []
        for path in ("/proc/sys/kernel/core_pattern", "/proc/sys/kernel/core_uses_pid", "/proc/sysrq-trigger"):
            try:
                os.close(os.open(path, os.O_WRONLY))
                opened.append(path)
            except OSError:
                pass
        os.write(int(os.environ["SANDBOX_RESULT_FD"]), repr(opened).encode())
        """
    )
    assert (result.outcome, result.result) == ("ok", b"[]"), result


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can ask for a sandbox as another uid")
def test_a_root_worker_refuses_to_run_learner_code_as_root():
    with pytest.raises(sandbox.SandboxUnavailable, match="GRADER_SANDBOX_UID"):
        run("print('never')", limits=Limits(sandbox_uid=0))


# ----------------------------------------------------------------------------- the seccomp filter

# x86-64 system call numbers; the code inside calls them directly, as an attacker would.
SYSCALLS = {
    "ptrace_attach_pid_1": "101, 16, 1, 0, 0",
    "process_vm_readv": "310, 1, 0, 0, 0, 0, 0",
    "pidfd_getfd": "438, os.pidfd_open(1), 0, 0",
    "io_uring_setup": "425, 8, ctypes.byref(params)",
    "keyctl": "250, 0, 0, 0, 0, 0",
    "bpf": "321, 0, 0, 0",
    "userfaultfd": "323, 0",
    "perf_event_open": "298, ctypes.byref(params), 0, -1, -1, 0",
    "unshare_user": "272, 0x10000000",
    "setns": "308, 0, 0",
    "mount": "165, 0, 0, 0, 0, 0",
    "kexec_load": "246, 0, 0, 0, 0",
    "init_module": "175, 0, 0, 0",
    "clone_newuser": "56, 0x10000000 | 17, 0, 0, 0, 0",
}


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="system call numbers of x86-64")
def test_the_system_calls_an_attacker_wants_are_refused():
    calls = "\n".join(f"    {name!r}: lambda: libc.syscall({args})," for name, args in SYSCALLS.items())
    code = f"""
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
params = (ctypes.c_char * 512)()
calls = {{
{calls}
}}
answers = {{}}
for name, call in calls.items():
    ctypes.set_errno(0)
    try:
        returned = call()
    except OSError as error:
        answers[name] = errno.errorcode.get(error.errno, str(error.errno))
        continue
    answers[name] = errno.errorcode.get(ctypes.get_errno(), "0") if returned < 0 else "allowed"
ctypes.set_errno(0)
answers["clone3"] = "allowed" if libc.syscall(435, 0, 0) >= 0 else errno.errorcode.get(ctypes.get_errno(), "0")
os.write(int(os.environ["SANDBOX_RESULT_FD"]), json.dumps(answers).encode())
"""
    result = run_sandboxed([sys.executable, "-c", code], limits=LIMITS)
    assert result.outcome == "ok", result
    answers = json.loads(result.result)
    assert answers.pop("clone3") == "ENOSYS"
    assert answers == dict.fromkeys(SYSCALLS, "EPERM")
    assert_still_grades()


def test_threads_and_processes_still_start_under_the_filter():
    result = run(
        """
        import os, threading
        seen = []
        thread = threading.Thread(target=lambda: seen.append("thread"))
        thread.start(); thread.join()
        pid = os.fork()
        if pid == 0:
            os._exit(7)
        seen.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
        os.write(int(os.environ["SANDBOX_RESULT_FD"]), repr(seen).encode())
        """
    )
    assert (result.outcome, result.result) == ("ok", b"['thread', 7]"), result


# ----------------------------------------------------------------------------- the cgroup

requires_cgroups = pytest.mark.skipif(os.geteuid() != 0, reason="only root makes cgroups here")


@requires_cgroups
def test_a_sandbox_gets_its_cpu_quota_and_leaves_no_cgroup_behind():
    limits = Limits(wall_seconds=5, cpu_seconds=4, memory_bytes=256 * 2**20, processes=32, cpus=1.5)
    process = sandbox.SandboxProcess.start([sys.executable, "-c", "import time; time.sleep(0.5)"], limits=limits)
    assert process.cgroup is not None
    directories = list(process.cgroup.directories)
    assert process.cgroup.cpu_quota() == 1.5
    assert process.finish().outcome == "ok"
    assert not any(directory.exists() for directory in directories)


@requires_cgroups
def test_the_cgroups_of_a_worker_that_died_are_swept():
    dead = subprocess.Popen(["true"])
    dead.wait()
    made = []
    for root in (sandbox.CGROUP_ROOT, sandbox.CGROUP_ROOT / "memory"):
        if (root / "cgroup.procs").exists():
            directory = root / f"{sandbox.CGROUP_PREFIX}{dead.pid}-left"
            directory.mkdir()
            made.append(directory)
    assert made
    removed = sandbox.sweep_stale_cgroups()
    assert set(made) <= set(removed)
    assert not any(directory.exists() for directory in made)
