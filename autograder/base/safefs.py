"""Reading a folder someone else controls without following a link: descriptors, ``O_NOFOLLOW``, bounded reads.

A hand-in is a tree of names its author chose. The grader runs as the
instructor (or as root on Gradescope and in containers), so a path it opens by
name inside a hand-in could be a symbolic link to anything that user may read
or write, or a FIFO that blocks, a device that never ends, ``/proc/self/mem``.
Every open here is relative to the descriptor of a folder that was itself
opened without following a link (``dir_fd`` with ``O_NOFOLLOW``), so a link
swapped in between two steps is refused by the kernel, not missed by a check.
Only folders and regular files are ever opened; a file is opened non-blocking
and checked again after the open (``fstat``), so a FIFO or device put in place
of a regular file is never read.

Standard library only (a leaf): the intake, the submission finder and the sandbox's child import it. Written by
hand: no well-kept library walks a tree by descriptors with these rules (``os.fwalk`` follows no links but opens
whatever it lists and has no bounds).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
O_NOCTTY = getattr(os, "O_NOCTTY", 0)
FOLDER_FLAGS = os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC
NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC
RELATIVE = os.open in os.supports_dir_fd and os.stat in os.supports_dir_fd  # POSIX; not Windows
CHUNK = 1 << 20

# What a name in a hand-in can be besides a folder or a regular file (stable ids, for reports and messages), and a
# folder or file the grader's user may not open or list (a zip's mode-000 folder): left out too, never a failure.
LINK, FIFO, DEVICE, SOCKET, OTHER = "link", "fifo", "device", "socket", "other"
UNREADABLE = "unreadable"


class NotPlain(OSError):
    """The name is not a folder or regular file (``kind``: :data:`LINK`, :data:`FIFO`, ...), or changed into one."""

    def __init__(self, name: str, kind: str) -> None:
        super().__init__(errno.EPERM, f"{name} is a {kind}, not a regular file or folder")
        self.name, self.kind = name, kind


class TooBig(OSError):
    """A bounded read met more than ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        super().__init__(errno.EFBIG, f"more than {limit} bytes")
        self.limit = limit


@dataclass(frozen=True)
class Entry:
    """One name of a folder, as ``lstat`` saw it: a folder, a regular file (with its size), or something else."""

    name: str
    kind: str | None  # None: a folder or a regular file (see ``folder``); else LINK, FIFO, ...
    folder: bool = False
    size: int = 0


def kind_of(mode: int) -> str | None:
    """None for a folder or a regular file, else what the mode says the name is."""
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return LINK
    if stat.S_ISFIFO(mode):
        return FIFO
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return DEVICE
    if stat.S_ISSOCK(mode):
        return SOCKET
    return OTHER


def open_root(path: os.PathLike | str) -> int:
    """A descriptor of the folder ``path`` as its caller names it (a link the caller typed is followed once)."""
    return os.open(path, os.O_RDONLY | O_DIRECTORY | O_CLOEXEC)


def open_folder(parent: int, name: str) -> int:
    """The folder ``name`` of ``parent``; :class:`NotPlain` when it is a link or anything but a folder."""
    try:
        return os.open(name, FOLDER_FLAGS, dir_fd=parent)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise NotPlain(name, _kind_at(parent, name) or LINK) from None
        raise


def open_file(parent: int, name: str) -> int:
    """The regular file ``name`` of ``parent``, opened for reading; :class:`NotPlain` for anything else."""
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=parent)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.EMLINK, errno.ENXIO, errno.EISDIR):
            raise NotPlain(name, _kind_at(parent, name) or LINK) from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):  # swapped for a FIFO or device after it was listed: never read
        os.close(fd)
        raise NotPlain(name, kind_of(mode) or OTHER)
    return fd


def _kind_at(parent: int, name: str) -> str | None:
    try:
        return kind_of(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return None


@contextmanager
def opened(fd: int) -> Iterator[int]:
    """Close ``fd`` when the block ends."""
    try:
        yield fd
    finally:
        os.close(fd)


def open_below(root: int, parts: tuple[str, ...]) -> int:
    """The folder ``root/parts[0]/parts[1]/...``, each step opened without following a link."""
    fd = os.dup(root)
    for part in parts:
        try:
            inner = open_folder(fd, part)
        finally:
            os.close(fd)
        fd = inner
    return fd


def entries(folder: int, limit: int) -> list[Entry]:
    """The names of ``folder`` (sorted), each as ``lstat`` sees it; :class:`TooBig` past ``limit`` names."""
    found: list[Entry] = []
    with os.scandir(folder) as listing:  # scandir duplicates the descriptor
        for item in listing:
            if len(found) >= limit:
                raise TooBig(limit)
            try:
                info = os.stat(item.name, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                continue  # removed since it was listed
            kind = kind_of(info.st_mode)
            found.append(Entry(item.name, kind, stat.S_ISDIR(info.st_mode), info.st_size if kind is None else 0))
    return sorted(found, key=lambda entry: entry.name)


def read_file(parent: int, name: str, limit: int) -> bytes:
    """The whole regular file ``name`` of ``parent``; :class:`TooBig` when it holds more than ``limit`` bytes."""
    with opened(open_file(parent, name)) as fd:
        return read_all(fd, limit)


def read_all(fd: int, limit: int) -> bytes:
    """Everything left in ``fd``, at most ``limit`` bytes (:class:`TooBig` past that)."""
    chunks, size = [], 0
    while True:
        chunk = os.read(fd, min(CHUNK, limit + 1 - size))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise TooBig(limit)


def write_new(parent: int, name: str, data: bytes, mode: int = 0o644) -> None:
    """Create the file ``name`` in ``parent`` holding ``data``: never an existing name, never through a link."""
    with opened(os.open(name, NEW_FILE_FLAGS, mode, dir_fd=parent)) as fd:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]


def make_folder(parent: int, name: str, mode: int = 0o755) -> int:
    """Create the folder ``name`` in ``parent`` (or open it when this copy made it already); its descriptor."""
    try:
        os.mkdir(name, mode, dir_fd=parent)
    except FileExistsError:
        pass
    return open_folder(parent, name)


def remove_tree(path: os.PathLike | str) -> None:
    """Remove the folder ``path`` and everything in it, however deep, never following a link; errors are ignored
    (what cannot be removed stays).

    Iterative: :func:`shutil.rmtree` recurses once per folder level (Python 3.11), so a working copy a student made
    a thousand folders deep would raise ``RecursionError`` in the grader.
    """
    try:
        top = os.open(path, FOLDER_FLAGS)
    except OSError:
        try:
            os.unlink(path)
        except OSError:
            pass
        return
    # each frame: (folder descriptor, its name in the frame below, names in it that could not be removed)
    stack: list[tuple[int, str, set[str]]] = [(top, "", set())]
    while stack:
        folder, _name, stuck = stack[-1]
        deeper = None
        try:
            with os.scandir(folder) as listing:
                for item in listing:
                    if item.name in stuck:
                        continue
                    try:
                        if item.is_dir(follow_symlinks=False):
                            deeper = item.name
                            break
                        os.unlink(item.name, dir_fd=folder)
                    except OSError:
                        stuck.add(item.name)
        except OSError:
            pass
        if deeper is not None:
            try:
                stack.append((os.open(deeper, FOLDER_FLAGS, dir_fd=folder), deeper, set()))
            except OSError:
                stuck.add(deeper)
            continue
        stack.pop()
        os.close(folder)
        if stack:
            try:
                os.rmdir(_name, dir_fd=stack[-1][0])
            except OSError:
                stack[-1][2].add(_name)
    try:
        os.rmdir(path)
    except OSError:
        pass
