"""Files and folders the grader may not read, for the kit's tests, also where the tests run as root.

Mode 000 denies nothing to root (``CAP_DAC_OVERRIDE``, ``CAP_DAC_READ_SEARCH``), so a command that must meet an
unreadable hand-in runs, as root, under ``setpriv`` without those two capabilities in any set: still uid 0, still
able to make the sandbox's namespaces, but a mode-000 name is then unreadable to it as to any user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

DROPPED = "-dac_override,-dac_read_search"


def prefix() -> list[str]:
    """What to put before a command so that mode 000 denies it reading (nothing when not root)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root without setpriv (util-linux): mode 000 cannot be made unreadable to the grader")
    return [setpriv, "--bounding-set", DROPPED, "--inh-caps", DROPPED]


def close(path: Path) -> Path:
    """``path`` made mode 000; skips the test unless a command under :func:`prefix` really cannot read it."""
    path.chmod(0)
    probe = ["ls", str(path)] if path.is_dir() else ["cat", str(path)]
    if subprocess.run([*prefix(), *probe], capture_output=True, timeout=30).returncode == 0:
        pytest.skip(f"{path} stays readable here even at mode 000")
    return path


def open_again(root: Path) -> None:
    """Every folder and file under ``root`` readable again (so pytest can remove its temporary folders)."""
    for folder, names, files in os.walk(root):
        for name in (*names, *files):
            path = Path(folder) / name
            if not path.is_symlink():
                path.chmod(0o755 if path.is_dir() else 0o644)
    if root.is_dir():
        root.chmod(0o755)
