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

ENV_SWITCH = "ATTNLAB_WARM_GRADER"  # "0": every student gets a fresh grader process
SOCKET = "grader.sock"
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
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise WarmUnavailable(f"{folder} is not a private folder of this user")
    return folder
