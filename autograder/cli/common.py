"""What every ``attnlab`` command shares: exit statuses, audiences, the one way to report a usage error."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

# 0: the command ran (for grade: grading ran, whatever the score); 2: a usage error (bad folder, no lab files,
# an option the command cannot honour); 3: the graders themselves failed (never the student's fault).
EXIT_OK, EXIT_USAGE, EXIT_INTERNAL = 0, 2, 3

STUDENT, INSTRUCTOR = "student", "instructor"  # who a command is for


def usage_error(command: str, message: str) -> int:
    """Print ``attnlab COMMAND: message`` on stderr; the usage-error exit status."""
    print(f"attnlab {command}: {message}", file=sys.stderr)
    return EXIT_USAGE


def write_atomically(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all: a temporary file in the same folder, then renamed over it (a link
    already there is replaced, never followed)."""
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
