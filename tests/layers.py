"""The isolation layers this machine can test (the hook layer everywhere; the others where they work)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path

from autograder.sandbox import bwrap, isolation
from autograder.sandbox.isolation import Level

KIT_ROOT = Path(__file__).resolve().parents[1]


def testable() -> list[Level]:
    """Every layer that works for this Python here, strongest first (the sandbox's tests run at each)."""
    found = isolation.available()
    return [level for level in sorted(Level, reverse=True) if found.works[level]]


def strongest() -> Level:
    return testable()[0]


@lru_cache(maxsize=1)
def user_python() -> str | None:
    """A Python that can grade at the user layer here, or None.

    This one, when other users can read it. Otherwise (as root, with this Python in a closed folder such as
    ``/root``), a virtual environment of the system's Python of the same version that reaches this one's
    packages and the kit through a ``.pth`` file, in a folder every user can read.
    """
    if not isolation.running_as_root():
        return None
    if isolation._user()[0]:
        return sys.executable
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    base = shutil.which(f"python{version}", path="/usr/bin:/usr/local/bin")
    if base is None or isolation._closed_folder(base) or isolation._closed_folder(str(KIT_ROOT)):
        return None
    sites = [p for p in bwrap.python_roots() if p.endswith("site-packages")] + [sysconfig.get_paths()["purelib"]]
    if any(isolation._closed_folder(p) for p in sites):
        return None
    # one per checkout: its .pth names this kit, and other checkouts here test their own
    kit = hashlib.sha256(str(KIT_ROOT).encode()).hexdigest()[:8]
    folder = Path("/tmp") / f"attnlab-user-python-{version}-{os.getuid()}-{kit}"
    python = folder / "bin" / "python"
    # one writer at a time: pytest-xdist's workers (and other test runs here) share the folder
    with open(f"{folder}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not python.exists():
            done = subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], capture_output=True)
            if done.returncode != 0:
                return None
            folder.chmod(0o755)
        purelib = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        lines = "".join(f"{p}\n" for p in dict.fromkeys([*sites, str(KIT_ROOT)]))
        (Path(purelib) / "attnlab-kit.pth").write_text(lines)
    check = subprocess.run(
        [str(python), "-c", "from autograder.sandbox import isolation; print(isolation._user()[0])"],
        cwd="/",
        capture_output=True,
        text=True,
    )
    return str(python) if check.stdout.strip() == "True" else None
