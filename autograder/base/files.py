"""Writing a file whole or not at all (a leaf: standard library only).

Reports, results and pages are read by other programs (a gradebook import,
Gradescope, a browser) while they may be rewritten, and student code must
never be able to leave one half written: each is written to a temporary file
in the same folder, flushed to disk, then renamed over the old one (a link
already there is replaced, never followed).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, text: str, *, mode: int = 0o644, make_folder: bool = True) -> Path:
    """Write ``text`` (UTF-8) to ``path``, making its folder if needed (unless ``make_folder`` is False: then a
    missing folder is a ``FileNotFoundError``); ``path``."""
    path = Path(path)
    if make_folder:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path
