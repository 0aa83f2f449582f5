"""Remember, until the next boot, that bubblewrap confined a child here, so a grade need not start it again.

The namespaces layer's probe (:func:`autograder.sandbox.isolation._probe_namespaces`) starts bubblewrap and a
Python inside it: about half a second of every ``attnlab grade``. Its answer depends on this boot (kernel,
sysctls), this user, the bubblewrap binary, this Python and the kit's sandbox code; a record of a *working* probe
is kept under that key in a folder only this user can write (``/run/attnlab`` as root, else
``$XDG_RUNTIME_DIR/attnlab``, a tmpfs emptied at each boot). Only success is remembered: a failed probe is run
again each time, and a record that turns out wrong makes the fork server's start fail, which refuses to grade
(no weaker layer is chosen on its account), so a forged or stale record cannot lower the isolation. No record is
read or written where the folder, or the file, is not this user's own and closed to everyone else.

Written by hand: a few lines of ``os`` calls; a cache library would not check ownership and modes.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from pathlib import Path

from autograder.base import isolated

ENV_SWITCH = "ATTNLAB_PROBE_CACHE"  # "0": probe every time
SYSCTLS = ("/proc/sys/kernel/unprivileged_userns_clone", "/proc/sys/user/max_user_namespaces")
KIT_CODE = ("sandbox", "isolated.py")  # what builds the probe's command and runs inside it


def folder() -> Path | None:
    """Where records live for this user, or None (no safe place: then nothing is cached)."""
    if not sys.platform.startswith("linux") or os.environ.get(ENV_SWITCH, "1") == "0":
        return None
    if os.geteuid() == 0:
        return Path("/run/attnlab")
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return Path(runtime) / "attnlab" if runtime and os.path.isabs(runtime) else None


def _private(path: Path, kind: int) -> bool:
    """Whether ``path`` (not a link) is of ``kind``, this user's, and closed to group and others."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_IFMT(info.st_mode) == kind and info.st_uid == os.geteuid() and not info.st_mode & 0o077


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read(1 << 12)
    except OSError:
        return b"-"


def _identity(path: str | None) -> bytes:
    try:
        info = os.stat(path) if path else None
    except OSError:
        info = None
    return f"{path}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}".encode() if info else b"-"


def key(bwrap_path: str | None) -> str:
    """The record's name: this boot, user, bubblewrap, Python, sysctls and the kit's sandbox code."""
    digest = hashlib.sha256()
    for part in (_read("/proc/sys/kernel/random/boot_id"), str(os.geteuid()).encode()):
        digest.update(part + b"\0")
    for part in (_identity(bwrap_path), _identity(os.path.realpath(sys.executable)), *map(_read, SYSCTLS)):
        digest.update(part + b"\0")
    package = Path(isolated.PACKAGE_ROOT) / "autograder"
    for name in KIT_CODE:
        for path in sorted((package / name).rglob("*.py")) if (package / name).is_dir() else [package / name]:
            digest.update(path.name.encode() + b"\0" + _read(str(path)) + b"\0")
    return digest.hexdigest()[:32]


def remembered(bwrap_path: str | None) -> str | None:
    """The recorded answer of a probe that worked under this key, or None."""
    where = folder()
    if where is None or not _private(where, stat.S_IFDIR):
        return None
    record = where / key(bwrap_path)
    if not _private(record, stat.S_IFREG):
        return None
    text = _read(str(record)).decode("utf-8", errors="replace").strip()
    return text if text.startswith("bubblewrap ") else None


def remember(bwrap_path: str | None, answer: str) -> None:
    """Record that the probe worked (``answer`` is its reason text); silently nothing where no safe place is."""
    where = folder()
    if where is None:
        return
    try:
        where.mkdir(mode=0o700, exist_ok=True)
        if not _private(where, stat.S_IFDIR):
            return
        temporary = where / f".{os.getpid()}.tmp"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(answer)
        os.replace(temporary, where / key(bwrap_path))
    except OSError:
        pass


def forget() -> None:
    """Remove every record of this user (after a fork server inside bubblewrap failed to start)."""
    where = folder()
    if where is None or not _private(where, stat.S_IFDIR):
        return
    for record in where.iterdir():
        try:
            record.unlink()
        except OSError:
            pass
