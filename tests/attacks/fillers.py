"""Attack: spend what classmates need. Fill the filesystem the working copy lives on (16 MiB a file, the most one
file may hold, as many files as it takes) and the shared temporary folders, and keep the space (copied into the
submission as ``_attack.py``). A bounded working copy stops it: the namespaces layer's tmpfs fills up (the write
fails), elsewhere the keeper stops the child once its files pass their quota; either way nothing is left."""

import os

from _attempts import attempt, summary

CHUNK = b"\0" * (1 << 20)


def _fill(folder, prefix, limit_mib=4096):
    written = 0
    for index in range(limit_mib // 16):
        with open(os.path.join(folder, f"{prefix}-{index}"), "wb") as file:
            for _ in range(16):
                file.write(CHUNK)
                written += 1
    return f"{written}MiB"


def run(targets, x=None):
    scratch = targets["scratch"]
    attempt("fill_copy", lambda: _fill(".", "filler"))
    attempt("fill_tmp", lambda: _fill("/tmp", scratch))
    return summary()
