"""The scrubbed environment and the fixed paths of a sandboxed child (a leaf: standard library only).

Inside the namespaces layer the child sees its working copy at :data:`HOME`,
a private empty ``/tmp``, and the kit's ``autograder`` package (public graders
and snapshots only) under :data:`PACKAGE_PARENT`; the fork server finds the
working copies under :data:`WORKS`, which each child hides again before any
student code runs.
"""

from __future__ import annotations

import os

HOME = "/sandbox"  # the working copy, inside the namespaces layer
TMP = "/tmp"
PRIVATE = (TMP, "/dev/shm")  # writable, and private to each child, in the namespaces layer
PACKAGE_PARENT = "/opt/attnlab"  # holds only the autograder package
WORKS = "/var/attnlab/works"  # the fork server's view of every working copy (hidden from each child)
KEPT_VARIABLES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")  # older OpenBLAS crashes without them


def child_env(home: str, tmp: str | None = None) -> dict[str, str]:
    """The whole environment of a child working in ``home`` (nothing of the grader's, no secret)."""
    env = {
        "PATH": os.defpath,
        "HOME": str(home),
        "TMPDIR": str(tmp or home),
        "USER": "student",
        "LOGNAME": "student",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
    }
    for keep in KEPT_VARIABLES:
        if keep in os.environ:
            env[keep] = os.environ[keep]
    return env
