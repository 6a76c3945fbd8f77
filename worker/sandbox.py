"""Running untrusted code under bubblewrap, with limits, a wall clock, and results only through a pipe.

No Django here. `run_sandboxed` starts one process tree in fresh namespaces (no network, its own
PIDs, a read-only view of the system, a size-capped scratch tmpfs, an empty environment) with
rlimits, a memory, process and CPU cap (a cgroup when one can be made, otherwise a watchdog on
resident memory), a seccomp filter (worker.syscall_filter), and a wall-clock limit that kills the
whole tree. The code inside writes its result to the pipe named by $SANDBOX_RESULT_FD; the host
reads it, capped, and never opens a path inside the sandbox.

Never host root. bubblewrap maps the sandbox's user to the uid that starts it, so a worker running
as root (to make cgroups) starts it as `Limits.sandbox_uid` instead: the process drops to that uid
in a private mount namespace where the paths to bind (a Python under root's private home) have
been mounted somewhere that uid can reach, and only then runs bubblewrap, unprivileged. A sandbox
whose processes would be uid 0 on the host is refused (`SandboxUnavailable`), and so is one
without the seccomp filter.
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import selectors
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from worker.syscall_filter import FilterUnavailable, seccomp_program

# The sandboxed code finds the number of its result pipe's write end in this variable.
RESULT_FD_VARIABLE = "SANDBOX_RESULT_FD"
# ... and, in a sandbox started with a control pipe, the read end of the pipe the host answers on.
CONTROL_FD_VARIABLE = "SANDBOX_CONTROL_FD"
SCRATCH = "/scratch"
# The uid and gid the sandboxed code runs as inside: Debian's "nobody", owner of nothing on the host;
# and the host uid a worker running as root starts sandboxes as, unless told another.
NOBODY = 65534
# Where a root worker's private mount namespace puts the paths it binds (an empty directory on any
# Linux; the tmpfs over it exists only in that namespace).
STAGING = "/mnt"
CGROUP_PREFIX = "quizsite-sandbox-"
# How often the watchdog looks at memory and the clock; short enough to catch a fast memory bomb.
POLL_SECONDS = 0.05
CGROUP_ROOT = Path("/sys/fs/cgroup")

Outcome = Literal["ok", "error", "crashed", "timeout", "memory_limit", "output_limit"]


@dataclass(frozen=True)
class Limits:
    wall_seconds: float = 30.0
    cpu_seconds: int = 60
    memory_bytes: int = 2 * 1024**3
    file_size_bytes: int = 64 * 1024**2
    open_files: int = 256
    processes: int = 64
    scratch_bytes: int = 256 * 1024**2
    result_bytes: int = 1024**2
    log_bytes: int = 64 * 1024
    # CPUs' worth of time the whole sandbox may use (a cgroup quota; None: no quota).
    cpus: float | None = None
    # The host uid (and gid) sandboxes run as when the worker is root; never 0.
    sandbox_uid: int = NOBODY


@dataclass
class SandboxResult:
    outcome: Outcome
    exit_code: int | None
    signal: int | None
    result: bytes
    stdout: str
    stderr: str
    wall_seconds: float
    peak_memory_bytes: int
    detail: str = ""
    truncated: list[str] = field(default_factory=list)


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create namespaces on this host."""


def bwrap_path() -> str:
    found = shutil.which("bwrap")
    if found is None:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    return found


def sandbox_host_uid(limits: Limits) -> int:
    """The host uid learner code will run as; refuses root's."""
    uid = limits.sandbox_uid if os.geteuid() == 0 else os.geteuid()
    if uid == 0:
        raise SandboxUnavailable(
            "learner code would run as root on the host: set GRADER_SANDBOX_UID to an unprivileged uid"
            " (a dedicated user, or 65534), or run the worker as an ordinary user"
        )
    return uid


def python_binds() -> dict[str, str]:
    """Host paths the sandbox needs to run this interpreter and its installed packages, read-only."""
    paths = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)}
    return {path: path for path in sorted(paths)}


class _MemoryCgroup:
    """A cgroup (v1 memory + pids, or v2) for one run; None from `create` where none can be made."""

    def __init__(self, directories: list[Path], version: int) -> None:
        self.directories = directories
        self.version = version

    @classmethod
    def create(cls, limits: Limits) -> _MemoryCgroup | None:
        # The creator's pid in the name: a cgroup whose creator has gone is swept (sweep_stale_cgroups).
        name = f"{CGROUP_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:12]}"
        unified = (CGROUP_ROOT / "cgroup.controllers").exists()
        made = cls([], 2 if unified else 1)
        sweep_stale_cgroups()
        try:
            if unified:
                directory = CGROUP_ROOT / name
                directory.mkdir()
                made.directories.append(directory)
                (directory / "memory.max").write_text(str(_hard_memory_cap(limits)))
                (directory / "memory.swap.max").write_text("0")
                (directory / "pids.max").write_text(str(limits.processes))
                if limits.cpus is not None:
                    with contextlib.suppress(OSError):  # the cpu controller is not delegated here
                        (directory / "cpu.max").write_text(f"{_cpu_quota_us(limits.cpus)} {CPU_PERIOD_US}")
                return made
            memory, pids = CGROUP_ROOT / "memory" / name, CGROUP_ROOT / "pids" / name
            memory.mkdir()
            made.directories.append(memory)
            (memory / "memory.limit_in_bytes").write_text(str(_hard_memory_cap(limits)))
            with contextlib.suppress(OSError):  # no swap accounting on this kernel: nothing to cap
                (memory / "memory.memsw.limit_in_bytes").write_text(str(_hard_memory_cap(limits)))
            pids.mkdir()
            made.directories.append(pids)
            (pids / "pids.max").write_text(str(limits.processes))
            if limits.cpus is not None and (CGROUP_ROOT / "cpu").is_dir():
                cpu = CGROUP_ROOT / "cpu" / name
                cpu.mkdir()
                made.directories.append(cpu)
                (cpu / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
                (cpu / "cpu.cfs_quota_us").write_text(str(_cpu_quota_us(limits.cpus)))
            return made
        except OSError:
            made.remove()
            return None

    def cpu_quota(self) -> float | None:
        """The CPUs' worth of time the cgroup allows, as the kernel has it (None: no quota)."""
        for directory in self.directories:
            with contextlib.suppress(OSError, ValueError):
                if self.version == 2:
                    quota, period = (directory / "cpu.max").read_text().split()
                else:
                    quota = (directory / "cpu.cfs_quota_us").read_text().strip()
                    period = (directory / "cpu.cfs_period_us").read_text().strip()
                if quota not in ("max", "-1"):
                    return int(quota) / int(period)
        return None

    def procs_files(self) -> list[str]:
        return [str(directory / "cgroup.procs") for directory in self.directories]

    def anonymous_bytes(self) -> int:
        """Memory the code itself holds (not page cache), from the cgroup's own accounting."""
        wanted = "anon" if self.version == 2 else "total_rss"
        try:
            for line in (self.directories[0] / "memory.stat").read_text().splitlines():
                name, _, value = line.partition(" ")
                if name == wanted:
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def peak_bytes(self) -> int:
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        try:
            return int((self.directories[0] / name).read_text())
        except (OSError, ValueError):
            return 0

    def ran_out_of_memory(self) -> bool:
        try:
            if self.version == 2:
                events = (self.directories[0] / "memory.events").read_text()
            else:
                events = (self.directories[0] / "memory.oom_control").read_text()
                if int((self.directories[0] / "memory.failcnt").read_text()) > 0 and "oom_kill 0" not in events:
                    return True
        except (OSError, ValueError):
            return False
        return any(line.split()[0] == "oom_kill" and int(line.split()[1]) > 0 for line in events.splitlines())

    def remove(self) -> None:
        """Kill whatever is still inside, then remove the cgroup (a cgroup with a process in it stays)."""
        for directory in self.directories:
            _cgroup_remove(directory)


def _cgroup_remove(directory: Path) -> None:
    for _ in range(250):
        try:
            directory.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:  # processes still in it, or still exiting
            with contextlib.suppress(OSError, ValueError):
                for pid in (directory / "cgroup.procs").read_text().split():
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(int(pid), signal.SIGKILL)
            time.sleep(0.02)


def sweep_stale_cgroups() -> list[Path]:
    """Remove the sandbox cgroups of processes that have gone (a worker killed whole leaves its own);
    a live process's are its business. Returns what it removed."""
    removed = []
    roots = [CGROUP_ROOT] + [CGROUP_ROOT / name for name in ("memory", "pids", "cpu")]
    for root in roots:
        with contextlib.suppress(OSError):
            for directory in root.glob(f"{CGROUP_PREFIX}*"):
                owner = directory.name.removeprefix(CGROUP_PREFIX).split("-")[0]
                if owner.isdigit() and not _alive(int(owner)):
                    _cgroup_remove(directory)
                    removed.append(directory)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# The CFS period of a CPU quota: the kernel's default.
CPU_PERIOD_US = 100_000


def _cpu_quota_us(cpus: float) -> int:
    return max(int(cpus * CPU_PERIOD_US), 1000)


def _hard_memory_cap(limits: Limits) -> int:
    """The cgroup's own cap sits above the limit the watchdog enforces: at the cap the kernel
    first evicts page cache (shared libraries included), which can leave a memory bomb crawling
    instead of killed. The watchdog kills at the limit; the cap is the backstop."""
    return limits.memory_bytes + max(256 * 2**20, limits.memory_bytes // 4)


def _tree_rss_bytes(root_pid: int) -> int:
    """Resident memory of a process and all its descendants, read from /proc."""
    page = os.sysconf("SC_PAGE_SIZE")
    return sum(int(fields[21]) * page for _, fields in _process_tree(root_pid))


def _process_tree(root_pid: int) -> list[tuple[int, list[str]]]:
    """A process and all its descendants, each with the fields of its /proc stat after the name."""
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat_file:
                stat = stat_file.read().decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        pid = int(entry)
        children.setdefault(int(fields[1]), []).append(pid)
        stats[pid] = fields
    tree, pending = [], [root_pid]
    while pending:
        pid = pending.pop()
        if pid in stats:
            tree.append((pid, stats[pid]))
        pending.extend(children.get(pid, []))
    return tree


def tree_host_uids(root_pid: int) -> set[int]:
    """The host uids (real, effective, saved, file system) of a process and its descendants."""
    uids: set[int] = set()
    for pid, _ in _process_tree(root_pid):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("Uid:"):
                    uids.update(int(value) for value in line.split()[1:])
    return uids


def _command(
    argv: Sequence[str],
    binds: Mapping[str, str],
    limits: Limits,
    env: Mapping[str, str],
    devices: Sequence[str],
    seccomp_fd: int,
    as_pid_1: bool,
) -> list[str]:
    # The code inside runs as nobody in its own user namespace, with no capability, no further user
    # namespaces and the seccomp filter.
    command = [bwrap_path(), "--unshare-all", "--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY)]
    if as_pid_1:
        command.append("--as-pid-1")
    command += [
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--cap-drop", "ALL",
        "--seccomp", str(seccomp_fd),
        "--ro-bind", "/usr", "/usr",
        "--symlink", "usr/bin", "/bin",
        "--symlink", "usr/sbin", "/sbin",
        "--symlink", "usr/lib", "/lib",
        "--symlink", "usr/lib64", "/lib64",
        "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache",
        "--proc", "/proc",
        "--dev", "/dev",
        "--size", str(limits.scratch_bytes),
        "--tmpfs", SCRATCH,
        "--chdir", SCRATCH,
        "--clearenv",
        "--setenv", "HOME", SCRATCH,
        "--setenv", "TMPDIR", SCRATCH,
        "--setenv", "PATH", "/usr/bin:/bin",
        "--setenv", "LANG", "C.UTF-8",
        "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
    ]  # fmt: skip
    for name, value in env.items():
        command += ["--setenv", name, value]
    staged = os.geteuid() == 0
    for index, (host, destination) in enumerate(binds.items()):
        command += ["--ro-bind", f"{STAGING}/{index}" if staged else host, destination]
    for device in devices:  # GPU device nodes, which --dev leaves out
        command += ["--dev-bind-try", device, device]
    # Last, once every mount point exists: the root itself becomes read-only, leaving only scratch.
    command += ["--remount-ro", "/", "--", *argv]
    if not staged:
        return command
    return _as_unprivileged(command, list(binds), sandbox_host_uid(limits))


def _as_unprivileged(command: list[str], sources: list[str], uid: int) -> list[str]:
    """A root worker's command: in a private mount namespace, mount each bind source at
    STAGING/<index> (reachable by `uid` wherever the source is), drop every privilege for `uid`, and
    only then run bubblewrap, which makes the sandbox as that unprivileged user."""
    steps = [f'mount -t tmpfs -o mode=0755,size=64k quizsite-staging "{STAGING}"']
    for index in range(len(sources)):
        steps.append(f'mkdir "{STAGING}/{index}" && mount --rbind "${index + 1}" "{STAGING}/{index}"')
    script = " && ".join(steps) + f' && shift {len(sources)} && exec "$@"'
    drop = [
        "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
        "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs",
    ]  # fmt: skip
    unshare = ["unshare", "--mount", "--propagation", "private"]
    return [*unshare, "/bin/sh", "-c", script, "sandbox-staging", *sources, *drop, *command]


def run_sandboxed(
    argv: Sequence[str],
    *,
    limits: Limits | None = None,
    binds: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes = b"",
) -> SandboxResult:
    """Run argv in a fresh sandbox and report how it ended; never raises for anything the code does."""
    return SandboxProcess.start(argv, limits=limits, binds=binds, env=env).finish(stdin)


class SandboxProcess:
    """A sandbox started now and given its input later, so that slow start-up work (importing a
    large library) can happen before the job exists. The wall clock runs from `finish`.

    Started with `control=True`, the sandbox also gets a pipe the host can answer on while it runs
    (`send_control`), for code inside that asks the host something through its result lines.
    Started with `as_pid_1=True`, argv is the sandbox's PID 1, with no bubblewrap reaper beside it
    holding the sandbox's descriptors: no signal from inside reaches it unless it handles it, and
    when it exits everything inside is killed (it must reap its own orphans and not rely on a
    CPU-time signal, which PID 1 ignores)."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        result_read: int,
        limits: Limits,
        cgroup: _MemoryCgroup | None,
        control_write: int | None = None,
    ) -> None:
        self.process = process
        self.result_read = result_read
        self.limits = limits
        self.cgroup = cgroup
        self.control_write = control_write
        self.started = time.monotonic()
        self._received_early = bytearray()
        self._excluded_seconds = 0.0
        self._checked_unprivileged = False

    @classmethod
    def start(
        cls,
        argv: Sequence[str],
        *,
        limits: Limits | None = None,
        binds: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        devices: Sequence[str] = (),
        control: bool = False,
        as_pid_1: bool = False,
    ) -> SandboxProcess:
        limits = limits or Limits()
        sandbox_host_uid(limits)
        try:
            program = seccomp_program()
        except FilterUnavailable as error:
            raise SandboxUnavailable(str(error)) from error
        seccomp_fd = os.memfd_create("sandbox-seccomp")
        os.write(seccomp_fd, program)
        os.lseek(seccomp_fd, 0, os.SEEK_SET)
        result_read, result_write = os.pipe()
        control_read, control_write = os.pipe() if control else (None, None)
        sandbox_env = {**(env or {}), RESULT_FD_VARIABLE: str(result_write)}
        if control_read is not None:
            sandbox_env[CONTROL_FD_VARIABLE] = str(control_read)
        cgroup = _MemoryCgroup.create(limits)
        command = _command(
            argv, {**python_binds(), **(binds or {})}, limits, sandbox_env, devices, seccomp_fd, as_pid_1
        )
        rlimits = [
            (resource.RLIMIT_CPU, limits.cpu_seconds),  # soft limit: SIGXCPU, then SIGKILL a second later
            (resource.RLIMIT_FSIZE, limits.file_size_bytes),
            (resource.RLIMIT_NOFILE, limits.open_files),
            (resource.RLIMIT_CORE, 0),
        ]
        if cgroup is None and os.geteuid() != 0:
            # Without a pids cgroup, the process count of the unprivileged uid is the fork-bomb guard.
            # (Root's count covers every root process on the host, so it cannot serve there.)
            rlimits.append((resource.RLIMIT_NPROC, limits.processes))

        def prepare_child() -> None:
            # Runs in the child between fork and exec: join the cgroup, then set the rlimits.
            if cgroup is not None:
                for procs in cgroup.procs_files():
                    with open(procs, "w") as procs_file:
                        procs_file.write(str(os.getpid()))
            for kind, value in rlimits:
                resource.setrlimit(kind, (value, value + 1 if kind == resource.RLIMIT_CPU else value))

        try:
            process = subprocess.Popen(  # noqa: S603 - argv is ours: bwrap and a fixed interpreter
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=tuple(fd for fd in (result_write, control_read, seccomp_fd) if fd is not None),
                # bwrap itself stays in the sandbox as its PID 1, where /proc/1/environ shows its
                # environment: it gets none of the host's.
                env={"PATH": "/usr/bin:/bin"},
                preexec_fn=prepare_child,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as error:
            for fd in (result_read, result_write, control_read, control_write, seccomp_fd):
                if fd is not None:
                    os.close(fd)
            if cgroup is not None:
                cgroup.remove()
            raise SandboxUnavailable(f"cannot start bubblewrap: {error}") from error
        os.close(result_write)
        os.close(seccomp_fd)
        if control_read is not None:
            os.close(control_read)
        return cls(process, result_read, limits, cgroup, control_write)

    def alive(self) -> bool:
        return self.process.poll() is None

    def pid_on_host(self) -> int:
        """The host pid of the sandbox's outermost process (bubblewrap's)."""
        return self.process.pid

    def send_control(self, data: bytes) -> None:
        """Write to the control pipe (a short answer fits its buffer, so this does not block); a
        sandbox that has gone, or closed its end, is not an error here: supervision reports it."""
        if self.control_write is None:
            raise ValueError("this sandbox was started without a control pipe")
        with contextlib.suppress(BrokenPipeError, OSError):
            os.write(self.control_write, data)

    def exclude_from_clock(self, seconds: float) -> None:
        """Time spent waiting on the host's behalf (for a lock, say), which the code's wall-clock
        limit does not count; called from `on_result_line`, the wait happens before the next check."""
        self._excluded_seconds += max(seconds, 0.0)

    def wait_ready(self, timeout: float) -> bool:
        """Wait until the code inside has written its first result line (it says it is ready)."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._received_early:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self.alive():
                return False
            readable, _, _ = select.select([self.result_read], [], [], min(remaining, 0.5))
            if readable:
                chunk = os.read(self.result_read, 65536)
                if not chunk:
                    return False
                self._received_early += chunk
        self.assert_unprivileged()
        return True

    def assert_unprivileged(self) -> None:
        """Once the code inside has spoken, every process of the sandbox must be unprivileged on the
        host; one that is not is killed and grading stops (SandboxUnavailable)."""
        if self._checked_unprivileged:
            return
        if 0 in tree_host_uids(self.process.pid):
            self.kill()
            raise SandboxUnavailable(
                "the sandbox's processes run as root on the host: run the worker as an ordinary user, or"
                " as root with GRADER_SANDBOX_UID set to an unprivileged uid"
            )
        self._checked_unprivileged = True

    def finish(self, stdin: bytes = b"", on_result_line: Callable[[bytes], None] | None = None) -> SandboxResult:
        """Send the input, then supervise until the sandbox ends; `on_result_line` sees each complete
        line of the result pipe as it arrives (progress reports), the whole result is returned too.
        Whatever interrupts the supervision (a time limit of the caller's) kills the sandbox."""
        try:
            return _supervise(
                self.process,
                self.result_read,
                self.limits,
                self.cgroup,
                time.monotonic(),
                stdin,
                on_result_line,
                bytes(self._received_early),
                lambda: self._excluded_seconds,
                self.assert_unprivileged,
            )
        except BaseException:
            self.kill()
            raise
        finally:
            self._close_control()

    def _close_control(self) -> None:
        if self.control_write is not None:
            with contextlib.suppress(OSError):
                os.close(self.control_write)
            self.control_write = None

    def kill(self) -> None:
        """Abandon the sandbox: kill it and release its cgroup and pipe."""
        _kill(self.process)
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        with contextlib.suppress(OSError):
            os.close(self.result_read)
        self._close_control()
        if self.cgroup is not None:
            self.cgroup.remove()


def _supervise(
    process: subprocess.Popen[bytes],
    result_read: int,
    limits: Limits,
    cgroup: _MemoryCgroup | None,
    started: float,
    stdin: bytes,
    on_result_line: Callable[[bytes], None] | None = None,
    received_early: bytes = b"",
    excluded_seconds: Callable[[], float] = lambda: 0.0,
    on_first_result: Callable[[], None] = lambda: None,
) -> SandboxResult:
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None  # noqa: S101
    caps = {"result": limits.result_bytes, "stdout": limits.log_bytes, "stderr": limits.log_bytes}
    buffers: dict[str, bytearray] = {name: bytearray() for name in caps}
    buffers["result"] += received_early[: caps["result"]]
    truncated: list[str] = []
    reader = selectors.DefaultSelector()
    # The input is written as the sandbox takes it, so a sandbox that reads it late, or never,
    # cannot stall the clock and the memory watchdog.
    unsent = memoryview(stdin)
    if unsent:
        os.set_blocking(process.stdin.fileno(), False)
        reader.register(process.stdin.fileno(), selectors.EVENT_WRITE, "stdin")
    else:
        process.stdin.close()
    reader.register(result_read, selectors.EVENT_READ, "result")
    reader.register(process.stdout.fileno(), selectors.EVENT_READ, "stdout")
    reader.register(process.stderr.fileno(), selectors.EVENT_READ, "stderr")
    open_streams = 3
    killed_for: Outcome | None = None
    detail = ""
    peak = 0
    next_memory_check = started
    while open_streams or process.poll() is None:
        now = time.monotonic()
        deadline = started + limits.wall_seconds + excluded_seconds()
        if now >= deadline and killed_for is None:
            killed_for, detail = "timeout", f"still running after {limits.wall_seconds:g} s of wall-clock time"
            _kill(process)
        if now >= next_memory_check and process.poll() is None:
            next_memory_check = now + POLL_SECONDS
            rss = cgroup.anonymous_bytes() if cgroup is not None else _tree_rss_bytes(process.pid)
            peak = max(peak, rss)
            if rss > limits.memory_bytes and killed_for is None:
                killed_for, detail = "memory_limit", f"used {rss // 2**20} MiB, over {limits.memory_bytes // 2**20} MiB"
                _kill(process)
        if not open_streams:
            time.sleep(POLL_SECONDS)
            continue
        for key, _ in reader.select(timeout=POLL_SECONDS):
            name = key.data
            if name == "stdin":
                unsent = _write_some(process.stdin, unsent)
                if not unsent:
                    reader.unregister(key.fd)
                    process.stdin.close()
                continue
            chunk = os.read(key.fd, 65536)
            if not chunk:
                reader.unregister(key.fd)
                open_streams -= 1
                continue
            if name == "result" and not buffers["result"]:
                on_first_result()
            room = caps[name] - len(buffers[name])
            if name == "result" and on_result_line is not None and room > 0:
                _pass_complete_lines(buffers[name], chunk[:room], on_result_line)
            buffers[name] += chunk[: max(room, 0)]
            if len(chunk) > room and name not in truncated:
                truncated.append(name)
                if name == "result" and killed_for is None:
                    killed_for, detail = "output_limit", f"result over {caps[name]} bytes"
                    _kill(process)
        if killed_for is not None and process.poll() is not None and time.monotonic() > deadline + 5:
            break  # streams held open by an escaped grandchild: the kill has landed, stop reading
    reader.close()
    os.close(result_read)
    if not process.stdin.closed:
        with contextlib.suppress(OSError):
            process.stdin.close()
    return_code = process.wait()
    if cgroup is not None:
        peak = cgroup.peak_bytes()
        if killed_for is None and cgroup.ran_out_of_memory():
            killed_for, detail = "memory_limit", f"over {limits.memory_bytes // 2**20} MiB (killed by the kernel)"
        cgroup.remove()
    exit_code, signal_number = _decode_status(return_code)
    outcome = killed_for or _outcome(exit_code, signal_number)
    if outcome == "timeout" and not detail:
        detail = f"used its {limits.cpu_seconds} s of CPU time"
    return SandboxResult(
        outcome=outcome,
        exit_code=exit_code,
        signal=signal_number,
        result=bytes(buffers["result"]),
        stdout=buffers["stdout"].decode(errors="replace"),
        stderr=buffers["stderr"].decode(errors="replace"),
        wall_seconds=time.monotonic() - started,
        peak_memory_bytes=peak,
        detail=detail,
        truncated=truncated,
    )


def _write_some(stream: IO[bytes], unsent: memoryview) -> memoryview:
    """Write what the pipe takes now; what is left to send (nothing once the reader has gone)."""
    try:
        return unsent[os.write(stream.fileno(), unsent[:65536]) :]
    except BlockingIOError:
        return unsent
    except (BrokenPipeError, ConnectionResetError):
        return unsent[len(unsent) :]


def _pass_complete_lines(received: bytearray, chunk: bytes, on_result_line: Callable[[bytes], None]) -> None:
    """Call back with each line that `chunk` completes, given what was received before it."""
    start = received.rfind(b"\n") + 1
    pending = bytes(received[start:]) + chunk
    *complete, _ = pending.split(b"\n")
    for line in complete:
        on_result_line(line)


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill bwrap and its process group; --die-with-parent then takes down the sandbox's PID namespace."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()


def _decode_status(return_code: int) -> tuple[int | None, int | None]:
    """bwrap exits with the code of the sandboxed process, or 128 + the signal that killed it."""
    if return_code < 0:
        return None, -return_code
    if return_code > 128:
        return None, return_code - 128
    return return_code, None


def _outcome(exit_code: int | None, signal_number: int | None) -> Outcome:
    if signal_number == signal.SIGXCPU:  # RLIMIT_CPU's soft limit
        return "timeout"
    if signal_number is not None:
        return "crashed"
    return "ok" if exit_code == 0 else "error"
