"""Students of an nbgrader course in a test: real accounts of this machine where the tests run as root.

As root, each student is one of the machine's unprivileged accounts (its own uid, gid and name, as on a
JupyterHub: nbgrader takes the student id from the account, and ``collect`` checks the owner of each submission),
with a home of their own; their nbgrader runs as that uid. The Python may sit in a folder other users cannot enter
(``/root/.pyenv``), so their commands run in a bubblewrap mount namespace where the Python's folders, and only
those, are bound over a fresh tmpfs at the same paths; everything else (the exchange, their home, the course) is
the machine's own, permissions and all. Elsewhere (not root, no bubblewrap or setpriv, fewer accounts) every
student is this user with a home of their own, named with ``--student``: the exchange is exercised, its
permissions are not (:attr:`Student.uid` is None).
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.sandbox.bwrap import python_roots

NBGRADER = [sys.executable, "-m", "nbgrader"]
TIMES: list[tuple[str, float]] = []  # (command, seconds) of the students' commands
ID_CHARACTERS = set("abcdefghijklmnopqrstuvwxyz0123456789_-")


@dataclass(frozen=True)
class Student:
    """One student: the nbgrader student id, their home, and their account (None: this user, with ``--student``)."""

    name: str
    home: Path
    uid: int | None = None
    gid: int | None = None


def real_accounts_possible() -> bool:
    return os.geteuid() == 0 and bool(shutil.which("bwrap")) and bool(shutil.which("setpriv"))


def accounts(base: Path, names: tuple[str, ...]) -> list[Student]:
    """One student per name: a real account of this machine where that is possible (its name then replaces
    ``names``' in order), else this user under the given name; each with a home in ``base``."""
    spare = [
        entry
        for entry in sorted(pwd.getpwall(), key=lambda e: e.pw_uid)
        if 0 < entry.pw_uid < 65534 and set(entry.pw_name) <= ID_CHARACTERS and entry.pw_uid != os.geteuid()
    ]
    real = real_accounts_possible() and len(spare) >= len(names)
    students = []
    for index, name in enumerate(names):
        entry = spare[index] if real else None
        student = Student(
            entry.pw_name if entry else name,
            base / f"home-{entry.pw_name if entry else name}",
            entry.pw_uid if entry else None,
            entry.pw_gid if entry else None,
        )
        student.home.mkdir(parents=True)
        student.home.chmod(0o700)  # as a home is on a JupyterHub: the nbgrader cache in it holds the hand-in
        if student.uid is not None:
            os.chown(student.home, student.uid, student.gid)
        students.append(student)
    return students


def give(student: Student, path: Path) -> None:
    """Make ``path`` (a file or a folder, recursively) the student's own, as if they had written it."""
    if student.uid is None:
        return
    for item in [path, *path.rglob("*")] if path.is_dir() else [path]:
        os.chown(item, student.uid, student.gid, follow_symlinks=False)


def _confined(student: Student, command: list[str]) -> list[str]:
    """``command`` as the student's uid, with the Python's folders reachable (see the module)."""
    hidden = sorted({_closed_ancestor(Path(root)) for root in python_roots()} - {None}, key=len)
    mounts = []
    for folder in hidden:
        mounts += ["--tmpfs", folder]
    for root in python_roots():
        if any(root.startswith(folder.rstrip("/") + "/") for folder in hidden):
            mounts += ["--ro-bind", root, root]
    drop = ["setpriv", f"--reuid={student.uid}", f"--regid={student.gid}", "--clear-groups", "--"]
    return ["bwrap", "--dev-bind", "/", "/", *mounts, "--die-with-parent", "--", *drop, *command]


def _closed_ancestor(path: Path) -> str | None:
    """The outermost folder above ``path`` that other users cannot pass through, or None."""
    for parent in reversed(path.parents):
        if not parent.stat().st_mode & 0o001:
            return str(parent)
    return None


def run(
    student: Student, command: list[str], *, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """Run ``command`` as the student, in their home (or ``cwd``), with only their environment."""
    environment = {
        "HOME": str(student.home),
        "USER": student.name,
        "LOGNAME": student.name,
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
    }
    full = command if student.uid is None else _confined(student, command)
    return subprocess.run(
        full, cwd=cwd or student.home, env=environment, capture_output=True, text=True, timeout=timeout
    )


def nbgrader(student: Student, *args: str) -> subprocess.CompletedProcess:
    """``nbgrader ARGS`` as the student (``--student`` names them where they are not a real account)."""
    named = [] if student.uid is not None or args[0] == "fetch_assignment" else [f"--student={student.name}"]
    started = time.monotonic()
    done = run(student, [*NBGRADER, *args, *named])
    TIMES.append((f"{student.name}: nbgrader {args[0]}", time.monotonic() - started))
    assert done.returncode == 0, f"{student.name}: nbgrader {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done


PROBE = """
import json, os, sys
found = {}
for path in sys.argv[1:]:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            open(path, "rb").read(1)
        found[path] = "read"
    except OSError as error:
        found[path] = type(error).__name__
print(json.dumps(found))
"""


def can_read(student: Student, paths: list[Path]) -> dict[str, str]:
    """For each path, whether the student could read it (a file) or list it (a folder): ``read`` or the error."""
    import json

    done = run(student, [sys.executable, "-I", "-c", PROBE, *map(str, paths)])
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
