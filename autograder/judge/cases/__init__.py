"""The fixed inputs of the public checks, and the snapshots of their answers.

Students have no reference solution, yet a public check should still name a
known mistake. So for every fixed input (a :class:`Case`) the snapshot file
``data/snapshots/<module>.npz`` holds the reference's answer and every known
wrong answer, generated from the reference by ``attnlab snapshot``; a kit test
fails when a snapshot is stale. Hidden checks compute the same things live.

Each module of this package defines ``CASES`` (a tuple of :class:`Case`) for
its steps; case names are unique across modules.

Each case also has a *twin* (:mod:`autograder.judge.diagnose.twin`: the same call on
fresh numbers), stored as the case ``<name>~twin``: a failed check names a
mistake only when the student's answer on the twin is that mistake's answer
there too (:mod:`autograder.judge.diagnose.answers`).
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

from autograder.judge.diagnose import search, twin
from autograder.judge.diagnose.answers import Answers

SNAPSHOT_DIR = "snapshots"
TWIN = "~twin"  # a case's twin is stored as the case "<name>~twin"


@dataclass(frozen=True)
class Case:
    """``module.function(*args)`` on fixed inputs, with the wrong answers to recognise."""

    name: str
    module: str
    function: str
    args: tuple
    variants: Callable[..., dict[str, Any]] | None = None
    kwargs: dict = field(default_factory=dict)
    # A case checked through a call of other inputs (``incremental_attention(X, W_Q, W_K, W_V)``, checked against
    # ``attention(Q, K, V, mask)`` of the projections): those inputs, and how they give the case's arguments. Its
    # twin is the twin of the call's inputs, so that it is the same as the twin of the student's call.
    inputs: tuple | None = None
    from_inputs: Callable[..., tuple] | None = None

    def run(self, ref, args: tuple | None = None, kwargs: dict | None = None) -> tuple[Any, dict[str, Any]]:
        """The reference's answer and the wrong answers (on the case's inputs, or on ``args``), for the snapshot."""
        args, kwargs = (self.args, self.kwargs) if args is None else (args, kwargs or {})
        expected = getattr(getattr(ref, self.module), self.function)(*args, **kwargs)
        wrong = self.variants(ref, *args, **kwargs) if self.variants else {}
        return expected, wrong

    def twin(self) -> tuple[tuple, dict] | None:
        """The twin of the case's inputs (the same every time), or None if nothing in them can be drawn again:
        of the call's inputs, for a case checked through another call (:attr:`inputs`)."""
        return twin.inputs(self.inputs if self.inputs is not None else self.args, {} if self.inputs else self.kwargs)

    def twin_arguments(self, drawn: tuple[tuple, dict]) -> tuple[tuple, dict]:
        """The case's own arguments on its twin (from the twin of the call's inputs when it has them)."""
        if self.inputs is not None and self.from_inputs is not None:
            return tuple(self.from_inputs(*drawn[0])), dict(self.kwargs)
        return drawn


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
    """Every case's expected and wrong answers, and its twin's, flattened to named arrays."""
    arrays: dict[str, np.ndarray] = {}
    with np.errstate(all="ignore"):
        for case in cases:
            runs = [(case.name, case.run(ref))]
            drawn = case.twin()
            if drawn is not None:
                with search.every_variant():  # every name found on the case has its own answer on the twin
                    runs.append((case.name + TWIN, case.run(ref, *case.twin_arguments(drawn))))
            for name, (expected, wrong) in runs:
                _flatten(f"{name}/expected", expected, arrays)
                for mistake, value in wrong.items():
                    _flatten(f"{name}/{mistake}", value, arrays)
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
def _array(key: str) -> np.ndarray:
    """One stored array (``case/expected``, ``case/<mistake>/1``, ...), read once.

    A check reads its own case's answer only, and its wrong answers only when it fails: loading every snapshot
    (about 4,300 arrays) cost a one-step grade 0.5 s, and a case's wrong answers with its answer cost a whole-lab
    grade of a correct hand-in 0.19 s of CPU.
    """
    case = key.partition("/")[0]
    return _archive(_index()[case][0])[key]


def read_all() -> int:
    """Read every case's stored arrays now; how many. The warm server does this once before it forks a worker per
    student, so every worker finds them read (the same public snapshots for every student: about 0.25 s of CPU a
    student otherwise)."""
    keys = [key for _module, keys in _index().values() for key in keys]
    for key in keys:
        _array(key)
    return len(keys)


def expected(case: str, part: int | None = None) -> np.ndarray:
    """The reference's answer to a case (``part`` picks from a returned tuple)."""
    return _array(f"{case}/expected" + (f"/{part}" if part is not None else ""))  # KeyError: no such case or part


def _stored_wrong(case: str, part: int | None) -> dict[str, np.ndarray]:
    suffix = f"/{part}" if part is not None else ""
    found = {}
    for key in _index().get(case, ("", ()))[1]:
        _, _, rest = key.partition("/")
        mistake, _, tail = rest.partition("/")
        if mistake != "expected" and (f"/{tail}" if tail else "") == suffix:
            found[mistake] = _array(key)
    return found


@cache
def _case(name: str) -> Case | None:
    """The case called ``name`` (its module is imported now), or None."""
    entry = _index().get(name)
    if entry is None:
        return None
    module = importlib.import_module(f"{__name__}.{entry[0]}")
    return next((c for c in module.CASES if c.name == name), None)


def wrong(case: str, part: int | None = None) -> Answers:
    """The known wrong answers to a case, by mistake id, with their twin (the answers on the case's twin)."""

    def twin_of() -> tuple[tuple, dict, dict[str, np.ndarray]] | None:
        found, drawn = _case(case), None
        if found is not None:
            drawn = found.twin()
        if drawn is None or case + TWIN not in _index():
            return None
        return drawn[0], drawn[1], _stored_wrong(case + TWIN, part)

    return Answers(lambda: _stored_wrong(case, part), twin_of)  # read when a failed check looks for a mistake


def twin_args(case: str) -> tuple[tuple, dict] | None:
    """The twin of a case's inputs."""
    found = _case(case)
    return found.twin() if found is not None else None
