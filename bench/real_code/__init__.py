"""Real code nobody here wrote, as minimal reproductions in the lab's API: the benchmark of diagnosis.

Each case is the reference submission with some top-level definitions replaced
by our own rewrite of a pattern seen in public code: the pre-fix version of a
real bug (a commit, an issue thread, a review comment), or a correct
implementation in a public project's style. A fact about the code carries over;
the code itself does not (no third-party code is committed here). Every case
has one line of provenance.

A bug names, at collection time, the mistakes a good diagnosis must name
(``names``: every id in it must be named by some failed check of the case's
step; an entry ``"a|b"`` accepts either). A correct case must score full on
its step and on every step whose reference module imports the replaced ones;
``rule`` names the one contract rule it may legitimately break (the checks
whose ids start with it may fail, and only those).

The held-out third is fixed in ``held_out.txt`` (committed before any
diagnosis was designed): ``run.py`` reports it apart, and the diagnosis was
designed on the other cases only.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import shutil
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
HELD_OUT_FILE = HERE / "held_out.txt"


@dataclass(frozen=True)
class Replace:
    """Replace the top-level ``def``/``class`` called ``name`` in ``module``.py by ``source``."""

    module: str
    name: str
    source: str


@dataclass(frozen=True)
class RealCase:
    """One reproduction: a bug (``names`` set) or a correct implementation (``names`` empty)."""

    name: str
    step: str
    provenance: str  # one line: where the fact comes from
    replacements: tuple[Replace, ...]
    names: tuple[str, ...] = ()  # the mistakes a diagnosis must name (bugs only)
    rule: str = ""  # a contract rule a correct case may break: a check-id prefix, e.g. "scaling/test_bad_shapes"
    notes: str = field(default="", compare=False)

    @property
    def correct(self) -> bool:
        return not self.names

    def build(self, solutions: Path, into: Path) -> Path:
        """The submission folder: a copy of ``solutions`` with the replacements made."""
        folder = into / self.name
        shutil.copytree(solutions, folder, ignore=shutil.ignore_patterns("__pycache__", "reports"))
        for replacement in self.replacements:
            path = folder / f"{replacement.module}.py"
            path.write_text(replaced(path.read_text(encoding="utf-8"), replacement), encoding="utf-8")
        return folder


def replaced(text: str, replacement: Replace) -> str:
    """``text`` with the definition ``replacement.name`` swapped for ``replacement.source``.

    The name is a top-level ``def``/``class`` or a method, ``Class.method`` (its source indented as in the class).
    """
    owner, _dot, name = replacement.name.rpartition(".")
    body = ast.parse(text).body
    if owner:
        classes = [n for n in body if isinstance(n, ast.ClassDef) and n.name == owner]
        body = classes[0].body if classes else []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            lines = text.splitlines(keepends=True)
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            source = replacement.source.strip("\n") if not owner else replacement.source.strip("\n").rstrip()
            return "".join(lines[:start]) + source + "\n" + "".join(lines[node.end_lineno :])
    raise ValueError(f"{replacement.module}.py has no definition {replacement.name!r}")


def bug(name: str, step: str, provenance: str, names: tuple[str, ...], *replacements: tuple[str, str, str]) -> RealCase:
    return RealCase(name, step, provenance, tuple(Replace(*r) for r in replacements), names)


def correct(name: str, step: str, provenance: str, *replacements: tuple[str, str, str], rule: str = "") -> RealCase:
    return RealCase(name, step, provenance, tuple(Replace(*r) for r in replacements), (), rule)


def all_cases() -> tuple[RealCase, ...]:
    """Every case of every step module of this package, in name order."""
    found: list[RealCase] = []
    for info in pkgutil.iter_modules([str(HERE)]):
        if info.name.startswith("cases_"):
            found.extend(importlib.import_module(f"{__name__}.{info.name}").CASES)
    names = [c.name for c in found]
    if len(set(names)) != len(names):
        raise ValueError("two real-code cases share a name")
    return tuple(sorted(found, key=lambda c: c.name))


def held_out() -> frozenset[str]:
    """The names of the held-out cases (the committed list)."""
    lines = HELD_OUT_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))
