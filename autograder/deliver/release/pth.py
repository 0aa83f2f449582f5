"""The start-up guard in a wheel: a ``.pth`` file and the module it imports, added to a built wheel's root.

Every install of the kit (its wheel, its editable install: :mod:`autograder.deliver.release.backend`; the student wheel:
:mod:`autograder.deliver.release.wheel`) carries :mod:`autograder.startup` into site-packages as ``_attnlab_startup.py``
with the folder its ``autograder`` package was installed from, and ``_attnlab_startup.pth`` that imports it when
Python starts. setuptools has no option to install a file into site-packages itself, so the files are added to the
finished wheel (a zip) and to its ``RECORD``, which pip reads to install and to uninstall them (written by hand: no
well-kept library edits a built wheel's contents).
"""

from __future__ import annotations

import base64
import hashlib
import os
import tempfile
import zipfile
from pathlib import Path

MODULE = "_attnlab_startup"
PTH = f"{MODULE}.pth"
SOURCE = Path(__file__).resolve().parents[2] / "startup.py"


def module_text(kit: str | None) -> str:
    """The guard's module for the wheel's root: :mod:`autograder.startup`, installed for the kit in the folder
    ``kit`` (None: the ``autograder`` package beside the module, as a wheel installs it)."""
    return SOURCE.read_text(encoding="utf-8") + f"\n\ninstall({kit!r})\n"


def files(kit: str | None) -> dict[str, bytes]:
    """The two files the wheel's root gets, by name."""
    return {f"{MODULE}.py": module_text(kit).encode("utf-8"), PTH: f"import {MODULE}\n".encode()}


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"{name},sha256={digest},{len(data)}"


def add_to_wheel(wheel: Path, kit: str | None = None) -> Path:
    """Add the guard's files (:func:`files`) to ``wheel``, in place, with their lines in its ``RECORD``; ``wheel``.
    ``kit``: the folder of the ``autograder`` package it installs (an editable install's source), None for a
    wheel that holds the package."""
    wheel = Path(wheel)
    added = files(kit)
    fd, temporary = tempfile.mkstemp(prefix=".attnlab-wheel-", suffix=".whl", dir=wheel.parent)
    os.close(fd)
    try:
        with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as target:
            names = source.namelist()
            record = next(n for n in names if n.endswith(".dist-info/RECORD") and n.count("/") == 1)
            for name in names:
                if name not in added and name != record:
                    target.writestr(source.getinfo(name), source.read(name))
            for name, data in added.items():
                target.writestr(name, data)
            listed = source.read(record).decode("utf-8").splitlines()
            lines = [line for line in listed if line.split(",")[0] not in added]
            lines += [_record_line(n, d) for n, d in added.items()]
            target.writestr(record, "".join(f"{line}\n" for line in lines))
        os.replace(temporary, wheel)
    finally:
        Path(temporary).unlink(missing_ok=True)
    return wheel
