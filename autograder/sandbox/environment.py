"""The scrubbed environment and the fixed paths of a sandboxed child (a leaf: standard library only).

Inside the namespaces layer the child sees its working copy at :data:`HOME`
(a tmpfs of its own, filled by the student process from a descriptor of the
grader's copy before any student code runs), a private empty ``/tmp``, and
the public part of the kit's ``autograder`` package under :data:`PACKAGE_PARENT`.
"""

from __future__ import annotations

import os

HOME = "/sandbox"  # the working copy, inside the namespaces layer
TMP = "/tmp"
PRIVATE = (TMP, "/dev/shm")  # writable, and private to each child, in the namespaces layer
PACKAGE_PARENT = "/opt/attnlab"  # holds only the autograder package
KEPT_VARIABLES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")  # older OpenBLAS crashes without them
# Which GPUs a child may use and where the driver's libraries are (a container's NVIDIA runtime sets these; the
# timing step measures on the GPU): the grader's own settings, never a secret.
GPU_VARIABLES = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "CUDA_MODULE_LOADING")
SYSTEM_FOLDERS = ("/usr/", "/lib/", "/lib64/", "/opt/")  # library folders a child may be pointed at
NOT_COPIED_FOLDERS = ("reports",)  # the timing report is read by the grader, never by student code
NOT_COPIED_SUFFIXES = (".pyc",)
MAX_COPIED_FILE_BYTES = 8 << 20  # a larger file of the hand-in stays out of the child's working copy


def left_out_of_copy(parts: tuple[str, ...], entry: object) -> bool:
    """Whether a name of the grader's copy stays out of a child's working copy (``entry``: its
    :class:`autograder.base.safefs.Entry`)."""
    if getattr(entry, "folder", False):
        return len(parts) == 1 and parts[0] in NOT_COPIED_FOLDERS
    return parts[-1].endswith(NOT_COPIED_SUFFIXES) or getattr(entry, "size", 0) > MAX_COPIED_FILE_BYTES


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
    for keep in KEPT_VARIABLES + GPU_VARIABLES:
        if keep in os.environ:
            env[keep] = os.environ[keep]
    libraries = [
        folder
        for folder in os.environ.get("LD_LIBRARY_PATH", "").split(":")
        if folder.startswith(SYSTEM_FOLDERS) and os.path.isdir(folder)
    ]
    if libraries:  # e.g. /usr/local/nvidia/lib64, where a GPU container keeps libcuda
        env["LD_LIBRARY_PATH"] = ":".join(libraries)
    return env
