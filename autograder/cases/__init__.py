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
from functools import cache, lru_cache
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
    return {name: importlib.import_module(f"{__name__}.{name}") for name in case_module_names()}


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


def case_module_names() -> tuple[str, ...]:
    """The names of this package's case modules, without importing them."""
    return tuple(info.name for info in pkgutil.iter_modules(__path__))


@lru_cache(maxsize=1)
def _index() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Every case with a snapshot: its module and its array names (read from the archives' directories only)."""
    found: dict[str, tuple[str, list[str]]] = {}
    for module in case_module_names():
        archive = _archive(module)
        for key in archive.files if archive is not None else ():
            found.setdefault(key.partition("/")[0], (module, []))[1].append(key)
    return {case: (module, tuple(keys)) for case, (module, keys) in found.items()}


@cache
def _archive(module: str) -> np.lib.npyio.NpzFile | None:
    """The snapshot archive of one case module, opened (its arrays are read when asked for)."""
    entry = resources.files("autograder.data").joinpath(SNAPSHOT_DIR).joinpath(snapshot_name(module))
    return np.load(BytesIO(entry.read_bytes()), allow_pickle=False) if entry.is_file() else None


@cache
def _arrays(case: str) -> dict[str, np.ndarray]:
    """The stored arrays of one case (``case/expected``, ``case/<mistake>/1``, ...), read once.

    A check reads its own case only: loading every snapshot (about 700 arrays) cost a one-step grade 0.5 s.
    """
    if case not in _index():
        return {}
    module, keys = _index()[case]
    archive = _archive(module)
    return {key: archive[key] for key in keys}


def expected(case: str, part: int | None = None) -> np.ndarray:
    """The reference's answer to a case (``part`` picks from a returned tuple)."""
    key = f"{case}/expected" + (f"/{part}" if part is not None else "")
    return _arrays(case)[key]


def wrong(case: str, part: int | None = None) -> dict[str, np.ndarray]:
    """The known wrong answers to a case, by mistake id."""
    suffix = f"/{part}" if part is not None else ""
    found = {}
    for key, value in _arrays(case).items():
        _, _, rest = key.partition("/")
        mistake, _, tail = rest.partition("/")
        if mistake != "expected" and (f"/{tail}" if tail else "") == suffix:
            found[mistake] = value
    return found
