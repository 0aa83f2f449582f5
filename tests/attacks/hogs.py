"""Attack: spend what classmates need: every process and thread the machine has, memory that no limit counts (a
memfd, SysV shared memory, a POSIX message queue) and all the address space (copied into the submission as
``_attack.py``). Every attempt must fail. Each is bounded, so that a wall that does not hold cannot take the machine
down either. Runs once per child; ``shm.py`` holds memory in files of a memory file system."""

import ctypes
import os
import threading

import numpy as np
from _attempts import attempt, summary

DONE = []
CHUNK = b"\1" * (1 << 20)


def _threads(limit=5000):
    threading.stack_size(64 << 10)  # small stacks: the address space is not what stops them
    stop = threading.Event()
    started = []
    try:
        for _ in range(limit):
            thread = threading.Thread(target=stop.wait, daemon=True)
            thread.start()  # RuntimeError at the cap
            started.append(thread)
    finally:
        stop.set()
        for thread in started:
            thread.join()
    return len(started)


def _forks(marker, limit=1000):
    pids = []
    try:
        for _ in range(limit):
            pid = os.fork()  # BlockingIOError at the cap
            if pid == 0:
                try:
                    os.execv("/bin/sleep", ["/bin/sleep", marker])
                finally:
                    os._exit(0)
            pids.append(pid)
    finally:
        for pid in pids:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
    return len(pids)


def _memfd(mib=3072):
    fd = os.memfd_create("hog")
    for _ in range(mib):
        os.write(fd, CHUNK)
    return mib


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _failed():
    number = ctypes.get_errno()
    return OSError(number, os.strerror(number))


def _sysv():
    libc = _libc()
    segment = libc.shmget(0, 1 << 30, 0o1000 | 0o600)  # IPC_PRIVATE, IPC_CREAT: it would outlive the child
    if segment < 0:
        raise _failed()
    libc.shmctl(segment, 0, None)  # IPC_RMID: never left behind on the machine, even where the wall failed
    return segment


def _queue():
    libc = _libc()
    queue = libc.mq_open(b"/attnlab-hog", os.O_CREAT | os.O_RDWR, 0o600, None)
    if queue < 0:
        raise _failed()
    libc.mq_unlink(b"/attnlab-hog")
    return queue


def _anonymous(limit_mib=6144):
    held = []
    for _ in range(limit_mib // 64):
        held.append(np.ones(8 << 20))  # 64 MiB, every page touched: MemoryError at the address-space limit
    return len(held) * 64


def run(targets, x=None):
    if DONE:
        return "ATTACK already ran in this child"
    DONE.append(True)
    attempt("threads", _threads)
    attempt("forks", lambda: _forks(targets["marker"]))
    attempt("memfd", _memfd)
    attempt("sysv_shm", _sysv)
    attempt("mqueue", _queue)
    attempt("anonymous", _anonymous)
    return summary()
