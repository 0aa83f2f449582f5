"""One thread for the grading process's own NumPy and torch: asked for before NumPy loads.

The grader's own arrays are small (a check's comparisons, eight reference rows of the timing harness); what runs in
parallel is its sandbox children and, in a batch, its workers. With its default of a thread per CPU, OpenBLAS
wakes a helper thread for a product as small as ``(8, 64) @ (64, 1024)``, and the helper spins for a while after
the product returns. In a whole-lab grade the timing lane and its sandbox child share one reserved CPU
(:mod:`autograder.grading.lanes`), so the spinning took that CPU from the measurement: the lane's grader spent
0.25 to 0.44 s of CPU measuring the kernels with a thread per CPU, 0.05 s with one, and the measurement's wall
time fell from 0.48 to 0.24-0.27 s (the benchmark's sixth pass). Every grading process asks for one thread: the
warm server (and so each worker it forks), a fresh grader (:func:`autograder.deliver.warm.server.grade_once`) and
``attnlab grade``.

Environment variables, because OpenBLAS, MKL and OpenMP read them once, as they load: a process that has loaded
NumPy already keeps its threads. Written by hand: ``threadpoolctl`` changes a loaded library's threads, but that
is another dependency of every install for what three variables do before the first import.
"""

from __future__ import annotations

import os

ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def one_thread() -> None:
    """Ask NumPy's BLAS and OpenMP (torch's CPU threads too) for one thread in this process and the processes it
    starts outside the sandbox (its children get the same three variables from
    :func:`autograder.sandbox.environment.child_env`, a standard-library leaf that cannot import this); it takes
    effect here only if NumPy is not loaded yet."""
    os.environ.update(ONE_THREAD)
