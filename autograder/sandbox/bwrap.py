"""The bubblewrap command line of the namespaces layer: what a sandboxed process can see at all.

The filesystem is built from nothing: the system's libraries (``/usr`` and its
links), the dynamic loader's cache, the Python installation(s) the child runs
(``sys.prefix``, ``sys.base_prefix``, their site-packages), read-only; of the
kit's ``autograder`` package exactly the files the student wheel holds
(:func:`public_files`: no instructor module, no hidden grader, no reference),
read-only, at a neutral path, and any copy of the package installed in a
site-packages hidden; ``/dev`` basics (read-only), its own ``/proc``, a private
``/tmp``; and the working copy: a size-limited tmpfs of its own, the only
writable place besides ``/tmp``. The root is read-only. Not mounted at all: the
kit's source tree (``solutions/``, ``hidden/``), the course folder, the hand-ins,
the home folder, any socket, the report's path.

New user (when not root), PID, network, IPC, UTS and cgroup namespaces; the
sandbox dies with its parent and runs in its own session. As root, bubblewrap
runs privileged without a user namespace, keeping only the capabilities the
fork server needs to confine each child (and to drop it to an unprivileged uid).
"""

from __future__ import annotations

import glob
import importlib
import os
import shutil
import site
import sys
from functools import cache, lru_cache
from pathlib import Path

from autograder.sandbox import environment

SYSTEM_TREES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")
CPU_INFO = "/sys/devices/system/cpu"  # read by torch's and OpenBLAS's CPU detection
PACKAGE = Path(__file__).resolve().parents[1]  # the autograder package folder
KIT_ROOT = PACKAGE.parent  # the kit's source tree when run from a checkout (holds solutions/ and hidden/)
PREFIX_PARTS = ("bin", "lib", "lib64", "pyvenv.cfg")  # what is mounted of a prefix that holds the kit itself
SHM_BYTES = 16 << 20
GPU_DEVICES = "/dev/nvidia*"  # the NVIDIA driver's device nodes (and /dev/nvidia-caps), where the machine has them
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


@lru_cache(maxsize=1)
def public_files() -> tuple[str, ...]:
    """The package's files (POSIX paths inside it) that the student wheel holds, with their bytecode where it was
    compiled: all of it in a student's install (which holds nothing else), the public part of the instructor's.

    The public/private split is :mod:`autograder.deliver.release.contents`, which only the instructor's install has;
    it is looked up by name (not imported by the sandbox's modules, which the wheel ships without it).
    """
    try:
        contents = importlib.import_module("autograder.deliver.release.contents")
    except ImportError:  # a student's install: the package is the public engine
        contents = None
    found = []
    for path in sorted(PACKAGE.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        relative = path.relative_to(PACKAGE).as_posix()
        if path.parent.name == "__pycache__" and path.suffix == ".pyc":
            source = f"{path.parent.parent.relative_to(PACKAGE).as_posix()}/{path.name.split('.')[0]}.py"
            source = source.removeprefix("./")
            if (PACKAGE / source).is_file() and (contents is None or contents.is_public(source)):
                found.append(relative)
        elif contents is None or contents.is_public(relative):
            found.append(relative)
    return tuple(found)


@lru_cache(maxsize=1)
def _public_binds() -> tuple[str, ...]:
    """The fewest paths (package-relative) whose read-only binds show exactly :func:`public_files`: a folder every
    file under which is public is one bind, any other folder's public files are bound one by one (each bind costs
    bubblewrap a mount; a few hundred of them tripled its start-up)."""
    public = set(public_files())
    every: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*"):
        if path.is_file() or path.is_symlink():
            relative = path.relative_to(PACKAGE).as_posix()
            for depth in range(1, relative.count("/") + 1):
                every.setdefault(relative.rsplit("/", depth)[0], []).append(relative)

    @cache
    def sources_public(folder: str) -> bool:
        """Every Python source directly in ``folder`` is public (asked once a folder: a folder is the ancestor of
        many files, and asking again for each cost a grading process 0.1 s of CPU before its first child)."""
        return all(f"{folder}/{p.name}".removeprefix("/") in public for p in (PACKAGE / folder).glob("*.py"))

    @cache
    def whole(folder: str) -> bool:
        """Every file under ``folder`` is public, and stays so: a bytecode folder whose sources are not all public
        would show the next ``.pyc`` an instructor module leaves there."""
        names = every.get(folder, ())
        caches = {n.rsplit("/", 2)[0] if n.count("/") > 1 else "" for n in names if "/__pycache__/" in f"/{n}"}
        if folder.endswith("__pycache__"):
            caches.add(folder.rsplit("/", 1)[0] if "/" in folder else "")
        return all(sources_public(c) for c in caches) and all(name in public for name in names)

    binds: list[str] = []
    for relative in sorted(public):
        folders = [relative.rsplit("/", d)[0] for d in range(relative.count("/"), 0, -1)]  # outermost first
        whole_folder = next((f for f in folders if whole(f)), None)
        binds.append(whole_folder if whole_folder is not None else relative)
    return tuple(dict.fromkeys(binds))


def _package_binds(made: set[str]) -> list[str]:
    """Read-only binds of exactly :func:`public_files`, at :data:`environment.PACKAGE_PARENT`."""
    target = f"{environment.PACKAGE_PARENT}/{PACKAGE.name}"
    args = [*_parents(f"{target}/x", made)]
    for relative in _public_binds():
        inside = f"{target}/{relative}"
        args += _parents(inside, made)
        args += ["--ro-bind", str(PACKAGE / relative), inside]
    return args


def _installed_kits(roots: list[str]) -> list[str]:
    """Copies of the ``autograder`` package installed in the mounted Python folders (a ``pip install .`` of the
    whole kit holds the instructor's modules too): hidden under an empty, read-only folder."""
    found = []
    for root in roots:
        for folder in [root, *(str(p) for p in Path(root).glob("lib*/python3*/site-packages"))]:
            if os.path.isdir(f"{folder}/{PACKAGE.name}") and not os.path.islink(f"{folder}/{PACKAGE.name}"):
                found.append(f"{folder}/{PACKAGE.name}")
    return [a for path in found for a in ("--perms", "0555", "--tmpfs", path, "--remount-ro", path)]


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
    args += _installed_kits([r for r in python_roots() if not _holds_kit(r)])
    args += _package_binds(made)
    return args


def _gpu_binds() -> list[str]:
    """Binds of the machine's NVIDIA device nodes into the sandbox's ``/dev`` and, read-only, of the PCI devices in
    ``/sys`` that CUDA reads to place them: the timing step measures on the GPU (its driver libraries are under
    ``/usr``, mounted with the system). None where the machine has no GPU."""
    devices = sorted(glob.glob(GPU_DEVICES))
    if not devices:
        return []
    pci = ["/sys/bus/pci", *sorted(glob.glob("/sys/devices/pci*"))]
    return [a for path in devices for a in ("--dev-bind-try", path, path)] + [
        a for path in pci for a in ("--ro-bind-try", path, path)
    ]


def command(
    inner: list[str],
    *,
    work_bytes: int | None,
    privileged: bool,
    capabilities: tuple[str, ...],
    chdir: str,
) -> list[str]:
    """``bwrap ... inner``: ``inner`` runs as PID 1 of fresh namespaces, starting in ``chdir``.

    Args:
        work_bytes: the working copy at :data:`environment.HOME` is a tmpfs of this size, its only writable place
            besides ``/tmp`` (the child copies its files in itself); None: only an empty, read-only
            :data:`environment.HOME` (the fork server, whose children each mount their own).
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
    if work_bytes is None:
        work = ["--perms", "0755", "--dir", environment.HOME]
    else:  # world-writable inside: the student uid copies its files in; nobody else can see this mount
        work = ["--perms", "0777", "--size", str(int(work_bytes)), "--tmpfs", environment.HOME]
    return [
        binary,
        *namespaces,
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
        "--perms", "1777", "--tmpfs", environment.TMP,  # first: a Python installed under /tmp is mounted on it
        *_ro_binds(),
        "--dev", "/dev",
        *_gpu_binds(),
        "--remount-ro", "/dev",  # writable and shared by every child of the fork server otherwise
        "--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm",
        "--proc", "/proc",
        *work,
        "--remount-ro", "/",
        "--chdir", chdir,
        "--",
        *inner,
    ]  # fmt: skip
