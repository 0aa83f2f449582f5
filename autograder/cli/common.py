"""What every ``attnlab`` command shares: exit statuses, audiences, the one way to report a usage error."""

from __future__ import annotations

import sys

# 0: the command ran (for grade: grading ran, whatever the score); 2: a usage error (bad folder, no lab files,
# an option the command cannot honour); 3: the graders themselves failed (never the student's fault).
EXIT_OK, EXIT_USAGE, EXIT_INTERNAL = 0, 2, 3

STUDENT, INSTRUCTOR = "student", "instructor"  # who a command is for


def usage_error(command: str, message: str) -> int:
    """Print ``attnlab COMMAND: message`` on stderr; the usage-error exit status."""
    print(f"attnlab {command}: {message}", file=sys.stderr)
    return EXIT_USAGE
