"""Attack: spend what classmates need: every process and thread the machine has, memory that no limit counts (a
memfd, SysV shared memory, a POSIX message queue) and all the address space (copied into the submission as
``_attack.py``). Every attempt must fail. Each is bounded, so that a wall that does not hold cannot take the machine
down either. Runs once per child; ``shm.py`` holds memory in files of a memory file system.
``tests/test_sandbox_resources.py`` calls these functions one by one."""

import ctypes
import os
import threading

import numpy as np
from _attempts import attempt, summary

DONE = []
HELD = []  # the events that hold the threads of threads(hold=True)
CHUNK = b"\1" * (1 << 20)


def threads(limit=5000, hold=False):
    """Start up to ``limit`` threads (small stacks: the address space is not what stops them); how many started."""
    threading.stack_size(64 << 10)
    stop = threading.Event()
    started = []
    try:
        for _ in range(limit):
            thread = threading.Thread(target=stop.wait, daemon=True)
            thread.start()
            started.append(thread)
    except RuntimeError:  # can't start new thread: the cap
        pass
    if hold:
        HELD.append(stop)
    else:
        stop.set()
        for thread in started:
            thread.join()
    return len(started)


def forks(marker="30", limit=1000):
    """Fork up to ``limit`` processes (each runs ``sleep marker``), then end them; how many were forked."""
    pids = []
    try:
        for _ in range(limit):
            pid = os.fork()
            if pid == 0:
                try:
                    os.execv("/bin/sleep", ["/bin/sleep", marker])
                finally:
                    os._exit(0)
            pids.append(pid)
    except BlockingIOError:  # the cap
        pass
    for pid in pids:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    return len(pids)


def memfd(mib=3072):
    fd = os.memfd_create("hog")
    for _ in range(mib):
        os.write(fd, CHUNK)
    return mib


def _libc_call(name, *args):
    libc = ctypes.CDLL(None, use_errno=True)
    result = getattr(libc, name)(*args)
    if result < 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number))
    return libc, result


def sysv_shm():
    libc, segment = _libc_call("shmget", 0, 1 << 30, 0o1000 | 0o600)  # IPC_PRIVATE, IPC_CREAT: outlives the child
    libc.shmctl(segment, 0, None)  # IPC_RMID: never left on the machine, even where the wall failed
    return segment


def message_queue():
    libc, queue = _libc_call("mq_open", b"/attnlab-hog", os.O_CREAT | os.O_RDWR, 0o600, None)
    libc.mq_unlink(b"/attnlab-hog")
    return queue


def anonymous(limit_mib=6144):
    held = []
    for _ in range(limit_mib // 64):
        held.append(np.ones(8 << 20))  # 64 MiB, every page touched: MemoryError at the address-space limit
    return len(held) * 64


def _all(count, tried):
    """An attempt worked only when every one of ``tried`` started; stopped earlier, it failed (a wall held)."""
    if count < tried:
        raise RuntimeError(f"stopped after {count}")
    return count


def run(targets, x=None):
    if DONE:
        return "ATTACK already ran in this child"
    DONE.append(True)
    attempt("threads", lambda: _all(threads(), 5000))
    attempt("forks", lambda: _all(forks(targets["marker"]), 1000))
    attempt("memfd", memfd)
    attempt("sysv_shm", sysv_shm)
    attempt("mqueue", message_queue)
    attempt("anonymous", anonymous)
    return summary()
