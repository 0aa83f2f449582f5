"""A seccomp filter for the student process: no memory that no limit counts.

The address-space limit (``RLIMIT_AS``) counts the memory a process maps; some
memory is never mapped by anyone, or outlives every process: a ``memfd``
written with ``write``, a SysV shared-memory segment (it stays after its last
process detaches), a POSIX message queue. Where the child has a memory cgroup
(:mod:`autograder.sandbox.cgroup`) the kernel charges those pages to it; where
it has none (Docker, Gradescope, macOS) they would sit outside every limit, and
the kernel's out-of-memory killer would end a grader's process, not the
student's. So the student process refuses to make them at all: this filter,
installed before any student code runs (after it, ``no_new_privs`` is set and
no filter can be removed), makes ``memfd_create``, ``memfd_secret``, ``shmget``
and ``mq_open`` fail with ``EPERM`` in every layer, whatever the caller (Python,
ctypes, a thread, native code). Honest code needs none of them (numpy and
torch on a CPU make none). Files on a tmpfs (``/dev/shm``) are bounded
elsewhere: the namespaces layer's tmpfs mounts have sizes, and in the user
layer the keeper counts what the child's uid owns there towards its quota.

The filter is built with seccompy (pure Python, no compiler or libseccomp; it
kills a process that makes a system call of a foreign ABI, such as 32-bit
``int 0x80``); x86_64's x32 numbers of the same calls are refused too. Linux
on x86_64 or aarch64 only: elsewhere, or without seccompy, :func:`available`
says why and the other walls stand alone.
"""

from __future__ import annotations

import errno
import platform
import sys
from functools import lru_cache

REFUSED = ("memfd_create", "memfd_secret", "shmget", "mq_open")
X32_BIT = 0x40000000  # x86_64: the x32 ABI's system calls have this bit set, with the same arch in the filter


@lru_cache(maxsize=1)
def available() -> tuple[bool, str]:
    """Whether the filter can be installed here, and what it does (or why not). Imports seccompy, which also
    loads libc for it: the fork server calls this before any child is forked."""
    if not sys.platform.startswith("linux"):
        return False, f"seccomp needs Linux (this is {sys.platform})"
    try:
        import seccompy
    except ImportError:
        return False, "seccompy is not installed (pip install seccompy)"
    try:
        seccompy.audit_arch()
        if not seccompy.supported():
            return False, "this kernel has no seccomp filters"
    except OSError as error:  # seccompy's errors are OSErrors
        return False, f"seccomp cannot be used here ({error})"
    return True, f"seccomp refuses {', '.join(REFUSED)}"


def install() -> None:
    """Install the filter on this (single-threaded, not yet student) process; nothing where it is not available.

    Raises:
        OSError: the kernel refused the filter (the caller runs no student code).
    """
    if not available()[0]:
        return
    import seccompy

    refused = seccompy.Filter(default=seccompy.Action.ALLOW)
    for name in REFUSED:
        try:
            number = seccompy.syscall_nr(name)
        except ValueError:
            continue  # a call this architecture does not have
        refused.errno(number, errno.EPERM)
        if platform.machine().lower() in ("x86_64", "amd64"):
            refused.errno(number | X32_BIT, errno.EPERM)
    refused.load()  # seccompy's errors are OSErrors
