"""Which isolation layer student code gets on this machine, and why.

Three layers, strongest first; the audit hook and the resource limits are on in every one:

- ``namespaces``: bubblewrap (Linux namespaces). Student code sees a minimal
  read-only filesystem with its working copy the only writable place, its own
  PID, network and IPC namespaces, and (as root) an unprivileged uid.
- ``user``: the grader runs as root without usable namespaces (a Docker or
  Gradescope container): student code runs as a separate unprivileged uid, so
  the operating system keeps it out of whatever that uid may not read, and away
  from the grader's and other students' processes.
- ``hook``: neither (macOS, Windows, a non-root user without user namespaces):
  only the CPython audit hook, which native code can get around.

``ATTNLAB_ISOLATION=namespaces|user|hook`` caps the layer used (to test the
fallbacks); ``attnlab grade --isolation LEVEL`` refuses to grade below LEVEL.
"""

from __future__ import annotations

import enum
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache

from autograder.base import isolated
from autograder.sandbox import bwrap, cgroup, environment, probecache, seccomp

ENV_LEVEL = "ATTNLAB_ISOLATION"
NOBODY = 65534  # the student processes' uid and gid in the namespaces layer, when the grader runs as root
PROBE_TIMEOUT_S = 20.0


class Level(enum.IntEnum):
    """An isolation layer; a larger value isolates more."""

    HOOK = 0
    USER = 1
    NAMESPACES = 2

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Level:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(
                f"unknown isolation level {text!r}; known: {', '.join(level.label for level in cls)}"
            ) from None


WHAT = {
    Level.NAMESPACES: "bubblewrap namespaces: own filesystem view, PID, network and IPC namespaces",
    Level.USER: "a separate unprivileged uid for student code",
    Level.HOOK: "the CPython audit hook and resource limits only (native code can get around it)",
}


class IsolationRefused(Exception):
    """Grading was asked for a stronger isolation than this machine gives; the message says why."""


@dataclass(frozen=True)
class Availability:
    """What this machine gives: for every layer, whether it works and why (or why not)."""

    works: dict[Level, bool]
    why: dict[Level, str]

    @property
    def best(self) -> Level:
        return max(level for level, ok in self.works.items() if ok)


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def namespaces_spec() -> dict:
    """What a confined child of the fork server is made with (the namespaces layer)."""
    root = running_as_root()
    return {
        "confine": {"userns": not root, "work_bytes": 1 << 20},
        "uid": NOBODY if root else None,
        "gid": NOBODY if root else None,
        "checked": True,
    }


def zygote_bwrap(inner: list[str]) -> list[str]:
    """The bubblewrap command of the namespaces layer's fork server (it writes nothing; each child it forks mounts
    its own working copy)."""
    return bwrap.command(
        inner, work_bytes=None, privileged=running_as_root(), capabilities=bwrap.ZYGOTE_CAPABILITIES, chdir="/"
    )


def _probe_namespaces() -> tuple[bool, str]:
    if not sys.platform.startswith("linux"):
        return False, f"bubblewrap needs Linux (this is {sys.platform})"
    if bwrap.executable() is None:
        return False, "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    known = probecache.remembered(bwrap.executable())  # a probe that worked since this boot (0.5 s a grade)
    if known is not None:
        return True, known
    inner = isolated.command(
        "autograder.sandbox.keeper", "selftest", json.dumps(namespaces_spec()), root=environment.PACKAGE_PARENT
    )
    try:
        done = subprocess.run(
            zygote_bwrap(inner),
            env=environment.child_env("/"),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return False, f"bubblewrap could not be started ({error})"
    answer = done.stdout.strip().splitlines()[-1:] or done.stderr.strip().splitlines()[-1:] or ["no answer"]
    if done.returncode == 0 and answer == ["ok"]:
        mode = "in a user namespace"
        if running_as_root():
            mode = "as root, privileged; student code runs as a uid of its own per child"
        answer = f"bubblewrap {bwrap.executable()} works ({mode})"
        probecache.remember(bwrap.executable(), answer)
        return True, answer
    return False, f"bubblewrap cannot confine a child here: {answer[0][:300]}"


def _closed_folder(path: str) -> str | None:
    """The first folder on the way to ``path`` that other users cannot pass through, if any."""
    current = "/"
    for part in os.path.realpath(path).split("/")[1:]:
        current = os.path.join(current, part)
        try:
            if os.path.isdir(current) and not os.stat(current).st_mode & 0o001:
                return current
        except OSError:
            return current
    return None


def readable_by_others(path: os.PathLike | str) -> bool:
    """Whether a user other than the owner can read ``path`` (every folder on the way open to them, the file or
    folder itself readable): at the user layer, student code could."""
    try:
        return _closed_folder(os.path.dirname(os.path.realpath(path))) is None and bool(os.stat(path).st_mode & 0o004)
    except OSError:
        return False


READABLE_SUBMISSIONS = (
    "{path} is readable by other users, so at the user layer (student code runs as another uid, without "
    "namespaces) one student's code could read a classmate's hand-in: grade with --private-copies (every hand-in "
    "is copied into a folder only the grader can read, and {path} is closed to other users while the batch runs), "
    "make it private (chmod -R o-rwx {path}), or refuse to grade below namespaces with --isolation namespaces"
)


def readable_warning(path: os.PathLike | str) -> str | None:
    """The warning for a folder of hand-ins that other users can reach (every folder on the way open to them, the
    folder itself readable or searchable by them), or None."""
    try:
        reachable = _closed_folder(os.path.dirname(os.path.realpath(path))) is None
        open_to_others = bool(os.stat(path).st_mode & 0o005)
    except OSError:
        return None
    return READABLE_SUBMISSIONS.format(path=path) if reachable and open_to_others else None


def _probe_user() -> tuple[bool, str]:
    if not running_as_root():
        return False, "the grader does not run as root (only root can run student code as another user)"
    closed = next(filter(None, (_closed_folder(root) for root in bwrap.python_roots())), None)
    if closed is not None:
        return False, f"other users cannot read this Python installation ({closed} is closed to them)"
    try:
        done = subprocess.run(
            isolated.command("autograder.sandbox.keeper", "loads"),
            user=NOBODY,
            group=NOBODY,
            extra_groups=[],
            cwd="/",
            env=environment.child_env("/"),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return False, f"an unprivileged uid could not start Python ({error})"
    if done.returncode != 0:
        return False, "an unprivileged uid cannot load this Python and the kit (are they readable by other users?)"
    return True, "the grader runs as root, so student code runs as a separate unprivileged uid per sandbox"


@lru_cache(maxsize=1)
def _namespaces() -> tuple[bool, str]:
    return _probe_namespaces()


@lru_cache(maxsize=1)
def _user() -> tuple[bool, str]:
    return _probe_user()


PROBES = {Level.NAMESPACES: _namespaces, Level.USER: _user, Level.HOOK: lambda: (True, WHAT[Level.HOOK])}


def available() -> Availability:
    """Probe every layer on this machine (each once per process: a bubblewrap start, a Python start)."""
    found = {level: probe() for level, probe in PROBES.items()}
    return Availability(
        works={level: ok for level, (ok, _) in found.items()}, why={level: why for level, (_, why) in found.items()}
    )


def cap() -> Level | None:
    """The strongest layer allowed by ``ATTNLAB_ISOLATION`` (None: no cap)."""
    text = os.environ.get(ENV_LEVEL, "").strip()
    return Level.parse(text) if text else None


def choose(required: Level | None = None) -> Level:
    """The layer to grade with: the strongest available one under the cap; refused below ``required``.

    Layers are probed strongest first and only as far as needed.
    """
    limit = cap()
    chosen = next(
        level for level in sorted(Level, reverse=True) if (limit is None or level <= limit) and PROBES[level]()[0]
    )
    if required is not None and chosen < required:
        found = available()
        reasons = "; ".join(
            f"{level.label}: {found.why[level]}" for level in sorted(Level, reverse=True) if level > chosen
        )
        capped = f" ({ENV_LEVEL}={limit.label} caps it)" if limit is not None and limit < required else ""
        raise IsolationRefused(
            f"grading needs isolation {required.label}, but this machine gives only {chosen.label}{capped}: "
            f"{reasons}. Run `attnlab doctor` for details."
        )
    return chosen


def doctor_lines() -> list[str]:
    """What ``attnlab doctor`` prints about isolation: each layer, whether it works here and why."""
    found = available()
    limit = cap()
    lines = ["Isolation of student code (strongest first):"]
    for level in sorted(Level, reverse=True):
        mark = "yes" if found.works[level] else "no "
        lines.append(f"  [{mark}] {level.label:<10} {found.why[level]}")
    chosen = choose()
    lines.append(f"Grading here uses: {chosen.label} ({WHAT[chosen]})")
    if limit is not None:
        lines.append(f"  ({ENV_LEVEL}={limit.label} caps the layer)")
    if chosen < Level.NAMESPACES:
        lines.append(
            "  Stronger isolation: install bubblewrap and allow unprivileged user namespaces "
            "(sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces > 0), or grade as root."
        )
    return lines + walls_lines(chosen)


def walls_lines(level: Level) -> list[str]:
    """What bounds each child's processes, threads and memory here at ``level`` (for ``attnlab doctor``)."""
    groups, (filtered, filter_why) = cgroup.support(), seccomp.available()
    processes = ["a pids cgroup per child"] if groups.gives("pids") else []
    if level == Level.USER or (level == Level.NAMESPACES and running_as_root()):
        processes.append("RLIMIT_NPROC of the child's own uid")
    elif level == Level.NAMESPACES:
        processes.append("RLIMIT_NPROC in the child's own user namespace")
    elif not running_as_root() and sys.platform.startswith("linux"):
        processes.append("RLIMIT_NPROC above what the grader's uid runs (approximate: the uid is shared)")
    processes = processes or ["nothing (rlimits do not bind root; the audit hook refuses processes, not threads)"]
    memory = "a memory cgroup per child (wherever it lives), and " if groups.gives("memory") else "no cgroup: only "
    return [
        "Resource walls of each child (processes and threads; memory):",
        f"  processes and threads: {'; '.join(processes)}",
        f"  memory: {memory}the address space of each process (RLIMIT_AS)",
        f"  memfd and shared memory: {filter_why if filtered else f'not refused ({filter_why})'}",
        f"  cgroups: {groups.why or 'none'}",
        "  the out-of-memory killer takes student processes first (oom_score_adj 1000)",
    ]
