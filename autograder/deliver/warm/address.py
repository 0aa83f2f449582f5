"""Where a warm grading server listens: a socket in a folder only this user can enter.

The socket is named from the request handler, the scope (the nbgrader course's
private folder, or none), the kit's source and the Python in use, so a changed
kit, course or handler starts a new server. Standard library only: the
notebook kernel imports this.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import IO

ENV_SWITCH = "ATTNLAB_WARM_GRADER"  # "0": every student gets a fresh grader process
SOCKET = "grader.sock"
START_LOCK = "start.lock"  # beside the socket: one server start at a time (the client holds it while it starts one)
LONGEST_SOCKET_PATH = 107  # bytes: a Unix socket's path (sun_path) holds 108 on Linux, its closing NUL included
PACKAGE = Path(__file__).resolve().parents[2]


class WarmUnavailable(Exception):
    """No warm server could serve this request; the caller grades in a fresh process."""


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1") != "0" and hasattr(os, "fork")


def kit_digest() -> str:
    """The kit's source as this process sees it (paths, sizes, mtimes): a changed kit gets a new server."""
    digest = hashlib.sha256(f"{sys.executable}\0{PACKAGE}".encode())
    for path in sorted(PACKAGE.rglob("*.py")):
        info = path.stat()
        digest.update(f"{path.relative_to(PACKAGE)}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:16]


def socket_path(handler: str, scope: Path | None = None) -> Path:
    """The socket of the server for ``handler`` and ``scope`` (short: Unix socket paths are limited to about
    100 bytes)."""
    where = str(Path(scope).resolve()) if scope is not None else ""
    key = hashlib.sha256(f"{handler}\0{where}\0{kit_digest()}".encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"attnlab-{os.getuid()}-{key}" / SOCKET


def short_enough(path: Path) -> Path:
    """``path``, if a Unix socket can be bound there; :class:`WarmUnavailable` at once otherwise (a long ``TMPDIR``:
    the server could never listen, and the caller would wait for it in vain)."""
    if len(os.fsencode(path)) > LONGEST_SOCKET_PATH:
        raise WarmUnavailable(
            f"the warm grader's socket path is longer than a Unix socket allows ({LONGEST_SOCKET_PATH} bytes): {path}"
        )
    return path


def private_folder(path: Path) -> Path:
    """``path``'s folder, created mode 700; refused unless it is a real folder owned by this user and closed to
    others."""
    folder = path.parent
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    if not _private(folder.lstat()):
        raise WarmUnavailable(f"{folder} is not a private folder of this user")
    return folder


def _private(info: os.stat_result) -> bool:
    """Whether ``info`` (of an ``lstat``) is a real folder owned by this user and closed to others."""
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def holds_current_lock(lock: IO[str], path: Path) -> bool:
    """Whether the open ``lock`` file is still the start lock linked beside ``path`` (an ending server may have
    removed the folder while the caller waited for the lock)."""
    try:
        return os.stat(path.with_name(START_LOCK)).st_ino == os.fstat(lock.fileno()).st_ino
    except OSError:
        return False


def _listening(path: Path) -> bool:
    """Whether a server accepts connections on the Unix socket ``path``."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def remove_if_unused(path: Path, *, dead_socket: bool = False) -> bool:
    """Remove the socket ``path``'s folder and its start lock, unless a server listens there or a client is starting
    one (it holds the lock); whether it was removed. Called by a server as it exits, after it unlinked its socket;
    with ``dead_socket``, a socket left there that no server listens on (a killed server's) is removed too.

    The lock is taken without waiting: a client that waits for it finds it unlinked afterwards
    (:func:`holds_current_lock`) and makes the folder again."""
    import fcntl  # POSIX, as the warm server is

    folder = path.parent
    try:
        lock = open(path.with_name(START_LOCK))  # closed below, after the folder is gone
    except FileNotFoundError:
        lock = None
    except OSError:
        return False
    try:
        if lock is not None:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return False  # a client is starting a server here
            if not holds_current_lock(lock, path):
                return False  # another ending server removed it already
        if os.path.lexists(path):
            if not dead_socket or _listening(path):
                return False  # a newer server listens
            path.unlink()
        if lock is not None:
            path.with_name(START_LOCK).unlink()
        folder.rmdir()  # fails where anything else is inside (a lock a client made meanwhile, where there was none)
    except OSError:
        return False
    finally:
        if lock is not None:
            lock.close()
    return True


def sweep() -> int:
    """Remove the folders this user's warm servers left in the temporary folder (a server that was killed, or one of
    a kit from before servers removed their own): each that is private to this user and holds nothing but a start
    lock and a socket no server listens on, unless a client is starting a server there. How many were removed."""
    removed = 0
    for folder in Path(tempfile.gettempdir()).glob(f"attnlab-{os.getuid()}-*"):
        try:
            private = _private(folder.lstat())
        except OSError:
            continue
        if private:
            removed += remove_if_unused(folder / SOCKET, dead_socket=True)
    return removed
