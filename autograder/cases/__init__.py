"""The fixed inputs of the public checks, and the snapshots of their answers.

Students have no reference solution, yet a public check should still name a
known mistake. So for every fixed input (a :class:`Case`) the snapshot file
``data/snapshots/<module>.npz`` holds the reference's answer and every known
wrong answer, generated from the reference by ``attnlab snapshot``; a kit test
fails when a snapshot is stale. Hidden checks compute the same things live.

Each module of this package defines ``CASES`` (a tuple of :class:`Case`) for
its steps; case names are unique across modules.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from io import BytesIO
from typing import Any

import numpy as np

SNAPSHOT_DIR = "snapshots"


@dataclass(frozen=True)
class Case:
    """``module.function(*args)`` on fixed inputs, with the wrong answers to recognise."""

    name: str
    module: str
    function: str
    args: tuple
    variants: Callable[..., dict[str, Any]] | None = None
    kwargs: dict = field(default_factory=dict)

    def run(self, ref) -> tuple[Any, dict[str, Any]]:
        """The reference's answer and the wrong answers, for the snapshot."""
        expected = getattr(getattr(ref, self.module), self.function)(*self.args, **self.kwargs)
        wrong = self.variants(ref, *self.args, **self.kwargs) if self.variants else {}
        return expected, wrong


def case_modules() -> dict[str, Any]:
    """Every case module of this package by name (``core``, ``positions``, ...)."""
    return {info.name: importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)}


def _flatten(prefix: str, value: Any, into: dict[str, np.ndarray]) -> None:
    if isinstance(value, (tuple, list)):
        for index, item in enumerate(value):
            _flatten(f"{prefix}/{index}", item, into)
    else:
        into[prefix] = np.asarray(value)


def build_snapshot(ref, cases: tuple[Case, ...]) -> dict[str, np.ndarray]:
    """Every case's expected and wrong answers, flattened to named arrays."""
    arrays: dict[str, np.ndarray] = {}
    with np.errstate(all="ignore"):
        for case in cases:
            expected, wrong = case.run(ref)
            _flatten(f"{case.name}/expected", expected, arrays)
            for mistake, value in wrong.items():
                _flatten(f"{case.name}/{mistake}", value, arrays)
    return arrays


def snapshot_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """Deterministic npz bytes (sorted keys, fixed zip timestamps from numpy)."""
    buffer = BytesIO()
    np.savez_compressed(buffer, **dict(sorted(arrays.items())))
    return buffer.getvalue()


def snapshot_name(module: str) -> str:
    return f"{module}.npz"


@lru_cache(maxsize=1)
def _snapshot() -> dict[str, np.ndarray]:
    folder = resources.files("autograder.data").joinpath(SNAPSHOT_DIR)
    arrays: dict[str, np.ndarray] = {}
    for module in case_modules():
        entry = folder.joinpath(snapshot_name(module))
        if entry.is_file():
            with np.load(BytesIO(entry.read_bytes()), allow_pickle=False) as data:
                arrays.update({key: data[key] for key in data.files})
    return arrays


def expected(case: str, part: int | None = None) -> np.ndarray:
    """The reference's answer to a case (``part`` picks from a returned tuple)."""
    key = f"{case}/expected" + (f"/{part}" if part is not None else "")
    return _snapshot()[key]


def wrong(case: str, part: int | None = None) -> dict[str, np.ndarray]:
    """The known wrong answers to a case, by mistake id."""
    suffix = f"/{part}" if part is not None else ""
    found = {}
    for key, value in _snapshot().items():
        name, _, rest = key.partition("/")
        mistake, _, tail = rest.partition("/")
        if name == case and mistake != "expected" and (f"/{tail}" if tail else "") == suffix:
            found[mistake] = value
    return found
