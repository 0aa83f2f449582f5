"""The torch release the kit is tested with: the one place in the code that names it.

The student's README installs this release (CPU build), ``attnlab doctor``
warns when the installed torch is another one, and a kit test checks that the
course locks (``requirements/constraints.txt``, ``requirements/lock.txt``, and
through the lock the Gradescope image) pin it. The wheel itself accepts a
range (``pyproject.toml``), so a student with a CUDA build of their own keeps it.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterable
from importlib import metadata

from autograder.i18n import N_, _

TESTED_TORCH = "2.13.0"  # change it with requirements/constraints.txt, then run requirements/compile.sh
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"  # PyTorch's own index of CPU builds (no CUDA libraries)
RELEASE = re.compile(r"^(\d+)\.(\d+)")

UNTESTED_TORCH = N_(
    "torch {installed} is installed, but the kit is tested with torch {tested}; grading should still work, and if a "
    "check fails in a way you cannot explain, install the tested one: {command}"
)
NO_TORCH = N_("torch is not installed; install the tested release: {command}")
NOT_GRADED_NO_TORCH = N_(
    "not graded: torch is not installed, and these steps need it: {steps} (the machine's set-up, not your code: no "
    "point was lost); install the tested release, then grade again: {command}"
)


def install_command(version: str = TESTED_TORCH) -> str:
    """The command that installs torch ``version``'s CPU build (from PyTorch's index only: no silent CUDA build)."""
    return f"python3 -m pip install --index-url {TORCH_CPU_INDEX} torch=={version}"


def release(version: str) -> tuple[int, int] | None:
    """The release (major, minor) of a torch version string (``2.13.0+cpu`` -> ``(2, 13)``); None if unreadable."""
    match = RELEASE.match(version.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def is_tested(version: str) -> bool:
    """Whether ``version`` is the tested release: the same major and minor (patch releases and builds such as
    ``+cpu`` or ``+cu128`` are the same release)."""
    return release(version) is not None and release(version) == release(TESTED_TORCH)


def installed_torch() -> str | None:
    """The installed torch's version, read from its metadata (torch itself is not imported); None without one."""
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def torch_missing(steps: Iterable[str]) -> str | None:
    """One sentence when some of ``steps`` (step ids) need torch and none is installed (never the student's fault:
    grading is refused, exit status 3); else None. Nothing is imported."""
    from autograder.base import tasks

    needing = [step for step in steps if tasks.step(step).uses_torch]
    if not needing or (installed_torch() is not None and importlib.util.find_spec("torch") is not None):
        return None
    return _(NOT_GRADED_NO_TORCH).format(steps=", ".join(needing), command=install_command())


def torch_warning(installed: str | None) -> str | None:
    """One sentence when ``installed`` (a torch version, None: none) is not the tested release; else None."""
    if installed is None:
        return _(NO_TORCH).format(command=install_command())
    if is_tested(installed):
        return None
    return _(UNTESTED_TORCH).format(installed=installed, tested=TESTED_TORCH, command=install_command())
