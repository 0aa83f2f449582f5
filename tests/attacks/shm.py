"""Attack: hold memory in files of a memory file system (``/dev/shm``, where POSIX shared memory lives), unlinked
while open so that no quota of the working copy sees them, up to 3 GiB (copied into the submission as
``_attack.py``). The namespaces layer's own tmpfs mounts are small (the write fails); elsewhere the child's memory
cgroup counts the pages and the kernel ends the child at its limit (SIGKILL), never a grader's process. Runs once
per child."""

import os

from _attempts import attempt, summary

DONE = []
CHUNK = b"\1" * (1 << 20)


def unlinked(folder, scratch, limit_mib=3072):
    """Write files of 16 MiB (the most one file may hold) into ``folder``, each unlinked while open; MiB written."""
    held, written = [], 0
    while written < limit_mib:
        path = os.path.join(folder, f"{scratch}-{len(held)}")
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
        os.unlink(path)  # no quota sees it any more; it lives as long as the descriptor
        held.append(fd)
        for _ in range(16):
            os.write(fd, CHUNK)
            written += 1
    return written


def run(targets, x=None):
    if DONE:
        return "ATTACK already ran in this child"
    DONE.append(True)
    attempt("shm_files", lambda: unlinked("/dev/shm", targets["scratch"]))
    return summary()
