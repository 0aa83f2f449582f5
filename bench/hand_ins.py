"""The benchmarks' hand-ins: a folder holding the release made into the reference, a partial or a buggy one."""

from __future__ import annotations

import shutil
from pathlib import Path

from autograder.base import tasks
from autograder.deliver.release import stubs

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions" / tasks.LAB
BUGS = (  # (module, text in the reference, its replacement): known mistakes the graders name
    ("softmax", "shifted = x - np.max(x, axis=axis, keepdims=True)", "shifted = x"),
    ("scaling", "return scores(Q, K) / np.sqrt(d_k)", "return scores(Q, K)"),
    ("scaling", "return Q @ np.swapaxes(K, -1, -2)", "return K @ np.swapaxes(Q, -1, -2)"),
)


KINDS = ("release", "reference", "partial", "buggy")  # what fill makes (any other kind: left as the release)


def fill(folder: Path, kind: str, number: int) -> None:
    """Make ``folder`` (a copy of the release) hand-in ``number`` of ``kind``: "release" (left as it is),
    "reference", "partial" (the first steps done, the rest still stubs) or "buggy" (one known mistake)."""
    if kind not in KINDS[1:]:
        return
    shutil.copytree(SOLUTIONS, folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    if kind == "partial":
        for step in tasks.STEPS[1 + number % 5 :]:
            source = (SOLUTIONS / f"{step.module}.py").read_text(encoding="utf-8")
            (folder / f"{step.module}.py").write_text(stubs.make_stub(source, step.id), encoding="utf-8")
    if kind == "buggy":
        module, old, new = BUGS[number % len(BUGS)]
        path = folder / f"{module}.py"
        path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
