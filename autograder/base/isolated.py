"""The command line that runs one function of this kit in a fresh ``python -I``.

``-I`` keeps the environment, the user's site-packages and the current folder
off the new process's path, so a submission folder cannot shadow the kit or
its libraries. The kit itself is found by its own location: the bootstrap puts
the package root on the path just long enough to import the function, then
removes it again. This module is imported by the notebook kernel too: keep it light.
"""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
BOOTSTRAP = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from {module} import {function} as run; sys.path.remove(sys.argv[1]); sys.exit(run(*sys.argv[2:]))"
)


def command(module: str, function: str, *args: str, root: str = PACKAGE_ROOT) -> list[str]:
    """``python -I -c <bootstrap> <package root> *args``: runs ``module.function(*args)`` and exits with its return
    value. ``root`` is the folder holding the ``autograder`` package as the new process sees it (inside the
    sandbox's namespaces it is mounted elsewhere)."""
    return [sys.executable, "-I", "-c", BOOTSTRAP.format(module=module, function=function), root, *args]
