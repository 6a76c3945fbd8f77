"""The seccomp filter every sandbox runs under: the system calls learner code has no use for and an
attacker would want, refused.

In the spirit of Docker's default profile and of isolate: a pipeline reads files, computes and
starts threads; it never debugs another process, reads another's memory or descriptors, talks to
the kernel's keyrings, BPF or performance counters, mounts, makes namespaces, loads modules or
sets the clock. The program is compiled by libseccomp (through pyseccomp) once per process and
handed to bubblewrap, which installs it after setting the sandbox up, so it holds for every
process inside, the grading process included.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
from collections.abc import Mapping

# Each refused call, and why a sandbox must not have it (the closing note and docs/grading.md list them).
REFUSED_SYSCALLS: Mapping[str, str] = {
    # Reaching into another process: its memory, its descriptors, its execution.
    "ptrace": "tracing another process, the grading process included",
    "process_vm_readv": "reading another process's memory",
    "process_vm_writev": "writing another process's memory",
    "pidfd_getfd": "copying a descriptor out of another process",
    "kcmp": "comparing other processes' descriptors and memory",
    "process_madvise": "advising on another process's memory",
    # Kernel interfaces with a long record of privilege escalations.
    "io_uring_setup": "io_uring",
    "io_uring_enter": "io_uring",
    "io_uring_register": "io_uring",
    "keyctl": "the kernel's keyrings",
    "add_key": "the kernel's keyrings",
    "request_key": "the kernel's keyrings",
    "bpf": "loading BPF programs",
    "userfaultfd": "user fault handling (a tool for winning kernel races)",
    "perf_event_open": "performance counters",
    "fanotify_init": "watching the file system",
    "lookup_dcookie": "kernel profiling",
    # Namespaces and mounts: the sandbox is set up once, from outside.
    "unshare": "new namespaces",
    "setns": "joining namespaces",
    "mount": "mounting",
    "umount2": "unmounting",
    "pivot_root": "changing the root",
    "chroot": "changing the root",
    "open_tree": "mounting",
    "move_mount": "mounting",
    "fsopen": "mounting",
    "fsconfig": "mounting",
    "fsmount": "mounting",
    "fspick": "mounting",
    "mount_setattr": "mounting",
    "name_to_handle_at": "opening files by handle, past the mount's view",
    "open_by_handle_at": "opening files by handle, past the mount's view",
    # The machine itself.
    "kexec_load": "replacing the kernel",
    "kexec_file_load": "replacing the kernel",
    "init_module": "loading kernel modules",
    "finit_module": "loading kernel modules",
    "delete_module": "unloading kernel modules",
    "reboot": "rebooting",
    "swapon": "swap",
    "swapoff": "swap",
    "acct": "process accounting",
    "quotactl": "disk quotas",
    "syslog": "the kernel log",
    "vhangup": "terminals",
    "iopl": "I/O ports",
    "ioperm": "I/O ports",
    "settimeofday": "setting the clock",
    "clock_settime": "setting the clock",
    "clock_adjtime": "setting the clock",
    "adjtimex": "setting the clock",
    "uselib": "a legacy loader",
    "personality": "changing the execution domain (turning address randomisation off)",
}

# clone3 passes its flags in memory a filter cannot read: refused as missing, so that the C library
# falls back to clone, whose flags the filter reads and where new namespaces are refused.
MISSING_SYSCALLS = ("clone3",)
NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
    "CLONE_NEWTIME": 0x00000080,
}
# personality(0xffffffff) only reads the current persona (glibc and Python ask it); that stays allowed.
PERSONALITY_QUERY = 0xFFFFFFFF


class FilterUnavailable(RuntimeError):
    """libseccomp is missing: without the filter nothing is graded."""


@functools.cache
def seccomp_program() -> bytes:
    """The filter as the BPF program bubblewrap's --seccomp reads."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError, RuntimeError) as error:  # the library loads libseccomp.so.2 on import
        raise FilterUnavailable(f"libseccomp is not available ({error}): apt-get install libseccomp2") from error
    refuse = seccomp.ERRNO(errno.EPERM)
    program = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in REFUSED_SYSCALLS:
        if name == "personality":
            program.add_rule(refuse, name, seccomp.Arg(0, seccomp.NE, PERSONALITY_QUERY))
            continue
        _add_if_known(program, refuse, name)
    for name in MISSING_SYSCALLS:
        _add_if_known(program, seccomp.ERRNO(errno.ENOSYS), name)
    for flag in NAMESPACE_FLAGS.values():  # rules for one call are alternatives: any flag set refuses it
        program.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    with os.fdopen(os.memfd_create("seccomp-program"), "w+b") as compiled:
        program.export_bpf(compiled)
        compiled.seek(0)
        return compiled.read()


def _add_if_known(program: object, action: int, name: str) -> None:
    """Refuse a call by name; one this kernel's architecture does not have (iopl on arm64) has nothing to refuse."""
    with contextlib.suppress(ValueError, OSError):
        program.add_rule(action, name)  # type: ignore[attr-defined]
