"""The scrubbed environment every sandboxed process starts with (the child, and the fork server).

A leaf module: the client and the fork server both use it.
"""

from __future__ import annotations

import os
from pathlib import Path


def child_env(work: Path) -> dict[str, str]:
    env = {
        "PATH": os.defpath,
        "HOME": str(work),
        "TMPDIR": str(work),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
    }
    for keep in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # older OpenBLAS crashes without them
        if keep in os.environ:
            env[keep] = os.environ[keep]
    return env
