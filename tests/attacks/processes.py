"""Attack: start processes that outlive grading (one rewrites the report after the grader wrote it), and kill or
stop the grader (copied into the submission as ``_attack.py``). Runs once per child."""

import ctypes
import os
import signal
import time

from _attempts import attempt, summary

DONE = []


def _sleeper(marker):
    return [b"/bin/sleep", marker.encode()]


def _fork_exec(marker, setsid=True):
    import _posixsubprocess

    errors_read, errors_write = os.pipe()
    return _posixsubprocess.fork_exec(
        _sleeper(marker), [b"/bin/sleep"], True, (errors_write,), None, None,
        -1, -1, -1, -1, -1, -1, errors_read, errors_write, True, setsid, -1, None, None, None, -1, None, False,
    )  # fmt: skip


def _popen(marker):
    import subprocess

    return subprocess.Popen(_sleeper(marker), start_new_session=True).pid


def _fork_rewriter(json_path, marker):
    pid = os.fork()
    if pid == 0:
        os.setsid()
        for _ in range(600):  # wait for the grader's report, then replace it with full marks
            if os.path.exists(json_path):
                with open(json_path, "w", encoding="utf-8") as file:
                    file.write('{"score": 999, "max_score": 999, "tests": []}')
                break
            time.sleep(0.05)
        os.execv("/bin/sleep", ["/bin/sleep", marker])
    return pid


def _libc_fork(marker):
    libc = ctypes.CDLL("/lib/x86_64-linux-gnu/libc.so.6")
    pid = libc.fork()
    if pid == 0:
        libc.setsid()
        os.execv("/bin/sleep", ["/bin/sleep", marker])
    return pid


def _multiprocessing():
    import multiprocessing

    process = multiprocessing.Process(target=time.sleep, args=(60,), daemon=False)
    process.start()
    return process.pid


def _forty(marker):
    return [_fork_exec(marker) for _ in range(40)]


def _ancestors():
    pids, pid = [], os.getppid()
    for _ in range(4):
        pids.append(pid)
        try:
            with open(f"/proc/{pid}/stat") as file:
                pid = int(file.read().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return [p for p in pids if p > 1 or p == os.getppid()]


def _signal_all(send):
    sent = []
    for pid in _ancestors():
        send(pid)
        sent.append(pid)
    return sent


def _pidfd(sig):
    return _signal_all(lambda pid: signal.pidfd_send_signal(os.pidfd_open(pid), sig))


def _libc_kill(sig):
    libc = ctypes.CDLL("/lib/x86_64-linux-gnu/libc.so.6")
    return _signal_all(lambda pid: libc.kill(pid, sig))


def run(targets, x=None):
    if DONE:
        return "ATTACK already ran in this child"
    DONE.append(True)
    marker = targets["marker"]
    attempt("fork_exec", lambda: _fork_exec(marker))
    attempt("popen", lambda: _popen(marker))
    attempt("fork", lambda: _fork_rewriter(targets["json"], marker))
    attempt("libc_fork", lambda: _libc_fork(marker))
    attempt("mp", _multiprocessing)
    attempt("forty", lambda: len(_forty(marker)))
    attempt("stop_pidfd", lambda: _pidfd(signal.SIGSTOP))
    attempt("stop_kill", lambda: _signal_all(lambda pid: os.kill(pid, signal.SIGSTOP)))
    attempt("kill_libc", lambda: _libc_kill(signal.SIGKILL))
    attempt("kill_pidfd", lambda: _pidfd(signal.SIGKILL))
    attempt("killpg", lambda: _signal_all(lambda pid: os.killpg(pid, signal.SIGKILL)))
    return summary()
