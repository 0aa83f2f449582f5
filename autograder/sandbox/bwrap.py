"""The bubblewrap command line of the namespaces layer: what a sandboxed process can see at all.

The filesystem is built from nothing: the system's libraries (``/usr`` and its
links), the dynamic loader's cache, the Python installation(s) the child runs
(``sys.prefix``, ``sys.base_prefix``, their site-packages), read-only; the kit's
``autograder`` package alone, read-only, at a neutral path; ``/dev`` basics,
its own ``/proc``, a private ``/tmp``; and the working copy (or, for the fork
server, the folder of working copies) as the only writable place. The root is
read-only. Not mounted at all: the kit's source tree (``solutions/``,
``hidden/``), the course folder, the home folder, any socket, the report's path.

New user (when not root), PID, network, IPC, UTS and cgroup namespaces; the
sandbox dies with its parent and runs in its own session. As root, bubblewrap
runs privileged without a user namespace, keeping only the capabilities the
fork server needs to confine each child (and to drop it to an unprivileged uid).
"""

from __future__ import annotations

import os
import shutil
import site
import sys
from pathlib import Path

from autograder.sandbox import environment

SYSTEM_TREES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")
CPU_INFO = "/sys/devices/system/cpu"  # read by torch's and OpenBLAS's CPU detection
PACKAGE = Path(__file__).resolve().parents[1]  # the autograder package folder
KIT_ROOT = PACKAGE.parent  # the kit's source tree when run from a checkout (holds solutions/ and hidden/)
PREFIX_PARTS = ("bin", "lib", "lib64", "pyvenv.cfg")  # what is mounted of a prefix that holds the kit itself
ZYGOTE_CAPABILITIES = ("CAP_SYS_ADMIN", "CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
CHILD_CAPABILITIES = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")


def executable() -> str | None:
    """The ``bwrap`` program, or None when bubblewrap is not installed."""
    return shutil.which("bwrap")


def python_roots() -> list[str]:
    """Folders of the Python installation this kit runs on (prefixes, stdlib, site-packages), deduplicated."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *site.getsitepackages()}
    roots.add(str(Path(sys.executable).parent))
    # site folders a .pth file added (never the current folder or the kit's tree, which can also be on sys.path)
    roots.update(
        entry
        for entry in sys.path
        if os.path.isabs(entry) and {"site-packages", "dist-packages"} & set(Path(entry).parts)
    )
    real = {os.path.realpath(r) for r in roots if r and os.path.isdir(r)}
    return sorted(_outermost(real | {r for r in roots if r and os.path.isdir(r)}))


def _outermost(paths: set[str]) -> list[str]:
    """The paths of ``paths`` that are not inside another one."""
    ordered = sorted(paths, key=len)
    kept: list[str] = []
    for path in ordered:
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return kept


def _holds_kit(root: str) -> bool:
    kit = str(KIT_ROOT)
    return kit == root or kit.startswith(root.rstrip("/") + "/")


def _parents(path: str, made: set[str]) -> list[str]:
    """``--dir`` for every missing ancestor of ``path``, mode 0755 (bubblewrap would make them 0700, which an
    unprivileged uid cannot pass through)."""
    args: list[str] = []
    parts = Path(path).parts[1:-1]
    for depth in range(1, len(parts) + 1):
        folder = "/" + "/".join(parts[:depth])
        if folder not in made and folder not in SYSTEM_TREES:
            made.add(folder)
            args += ["--perms", "0755", "--dir", folder]
    return args


def _ro_binds() -> list[str]:
    args: list[str] = []
    made: set[str] = set()
    for tree in SYSTEM_TREES:
        if os.path.islink(tree):
            args += ["--symlink", os.readlink(tree), tree]
        elif os.path.isdir(tree):
            args += ["--ro-bind", tree, tree]
    for path in SYSTEM_FILES:
        args += ["--ro-bind-try", path, path]
    args += ["--ro-bind-try", CPU_INFO, CPU_INFO]
    for root in python_roots():
        if root in SYSTEM_TREES or any(root.startswith(t + "/") for t in SYSTEM_TREES if not os.path.islink(t)):
            continue  # already mounted with the system
        args += _parents(root, made)
        if _holds_kit(root):  # e.g. a virtual environment made at the kit's root: never mount the kit
            args += ["--perms", "0755", "--dir", root]
            args += [a for part in PREFIX_PARTS for a in ("--ro-bind-try", f"{root}/{part}", f"{root}/{part}")]
        else:
            args += ["--ro-bind", root, root]
    package = f"{environment.PACKAGE_PARENT}/{PACKAGE.name}"
    args += [*_parents(package, made), "--ro-bind", str(PACKAGE), package]
    return args


def command(
    inner: list[str], *, writable: tuple[str, str], privileged: bool, capabilities: tuple[str, ...], chdir: str
) -> list[str]:
    """``bwrap ... inner``: ``inner`` runs as PID 1 of fresh namespaces with ``writable`` = ``(host folder, path
    inside)`` its only writable mount (``/tmp`` aside), starting in ``chdir``.

    Args:
        privileged: bubblewrap runs as root: no user namespace, and only ``capabilities`` are kept.
    """
    binary = executable()
    if binary is None:
        raise FileNotFoundError("bwrap is not installed")
    if privileged:
        namespaces = [
            "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--cap-drop", "ALL", *[a for cap in capabilities for a in ("--cap-add", cap)],
        ]  # fmt: skip
    else:
        namespaces = ["--unshare-all"]
    host, inside = writable
    made = {environment.HOME}
    return [
        binary,
        *namespaces,
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
        "--perms", "1777", "--tmpfs", environment.TMP,  # first: a Python installed under /tmp is mounted on it
        *_ro_binds(),
        "--dev", "/dev",
        "--proc", "/proc",
        "--perms", "0755", "--dir", environment.HOME,
        *_parents(inside, made),
        "--bind", host, inside,
        "--remount-ro", "/",
        "--chdir", chdir,
        "--",
        *inner,
    ]  # fmt: skip
