"""Generate the student stubs from the reference solutions.

Every ``# BEGIN SOLUTION`` ... ``# END SOLUTION`` region of a solution file is
replaced by one ``raise NotImplementedError(...)`` at the marker's indentation,
labelled with the step, the function and the handout section. A line that
ends in ``# ANSWER`` holds one entry of an answers dict (``"key": value,``)
and keeps its key with the value ``None``. Everything else (signatures,
types, docstrings, imports) is kept as is, so the stubs cannot drift from the
solutions. Malformed markers are errors that name the file and line. The
lab's data files (``*.npz``, e.g. model weights) are copied verbatim.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.base import tasks
from autograder.handin.pristine import DIGESTS, STUB_ERROR
from autograder.handin.submission import data_files

BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"
ANSWER_MARK, ANSWER_STUB = "# ANSWER", "None,  # your prediction"
ANSWER = re.compile(r"""^(?P<key>\s*(?:"[^"\n]*"|'[^'\n]*')\s*:\s*)(?P<value>\S.*?),?\s*# ANSWER\s*$""")
TASK_MESSAGE = STUB_ERROR  # the report reads which functions still raise it (autograder.handin.pristine)
TASK_WHERE = "(handout: {handout})"
DEF = re.compile(r"^\s*def\s+(\w+)\s*\(")


class MarkerError(ValueError):
    """A solution file whose markers do not pair up."""


@dataclass(frozen=True)
class Region:
    """One solution region: the lines it spans (1-based, markers included)."""

    begin: int
    end: int
    task: str
    indent: str


def find_regions(text: str, path: Path | str = "<text>") -> list[Region]:
    """The solution regions of ``text``; :class:`MarkerError` if markers are malformed."""
    regions, open_at, task, indent, current_def = [], None, "", "", None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        match = DEF.match(line)
        if match and open_at is None:
            current_def = match.group(1)
        if stripped.startswith("# BEGIN") or stripped.startswith("# END"):
            if stripped not in (BEGIN, END):
                raise MarkerError(f"{path}:{number}: malformed marker {stripped!r}; write {BEGIN!r} or {END!r}")
        if stripped == BEGIN:
            if open_at is not None:
                raise MarkerError(f"{path}:{number}: {BEGIN} inside the region opened at line {open_at}")
            open_at, indent = number, line[: len(line) - len(line.lstrip())]
            task = current_def or "module"
        elif stripped == END:
            if open_at is None:
                raise MarkerError(f"{path}:{number}: {END} without a {BEGIN}")
            regions.append(Region(open_at, number, task, indent))
            open_at = None
    if open_at is not None:
        raise MarkerError(f"{path}:{open_at}: {BEGIN} is never closed")
    return regions


def find_answers(text: str, path: Path | str = "<text>") -> dict[int, re.Match]:
    """The ``# ANSWER`` lines of ``text`` by line number (1-based); :class:`MarkerError` if one is malformed."""
    found = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if ANSWER_MARK in line:
            match = ANSWER.match(line)
            if match is None:
                raise MarkerError(
                    f"{path}:{number}: an {ANSWER_MARK} line must read '\"key\": value,  {ANSWER_MARK}', not "
                    f"{line.strip()!r}"
                )
            found[number] = match
    return found


def make_stub(text: str, step_id: str, path: Path | str = "<text>") -> str:
    """The stub of one solution file's ``text``."""
    lines = text.splitlines(keepends=True)
    step = tasks.step(step_id)
    for number, match in find_answers(text, path).items():
        lines[number - 1] = f"{match.group('key')}{ANSWER_STUB}\n"
    out, cursor = [], 0
    for region in find_regions(text, path):
        out.extend(lines[cursor : region.begin - 1])
        message = TASK_MESSAGE.format(step=step.id, task=region.task)
        where = TASK_WHERE.format(handout=step.handout)
        inner = region.indent + "    "
        # laid out as ruff format would: one string when it fits in a line of 120, else two
        text = (
            f'{inner}"{message}{where}"\n'
            if len(inner) + len(message + where) + 2 <= 120
            else f'{inner}"{message}"\n{inner}"{where}"\n'
        )
        out.append(f"{region.indent}raise NotImplementedError(\n{text}")
        out.append(f"{region.indent})\n")
        cursor = region.end
    out.extend(lines[cursor:])
    return "".join(out)


def solution_lines(text: str, path: Path | str = "<text>") -> list[str]:
    """The code lines inside the solution regions (stripped; comments, blanks and lone brackets like ``)`` left out)."""
    lines = text.splitlines()
    found = []
    for region in find_regions(text, path):
        for line in lines[region.begin : region.end - 1]:
            stripped = line.strip()
            if any(c.isalnum() for c in stripped) and not stripped.startswith("#"):
                found.append(stripped)
    found.extend(lines[number - 1].strip() for number in find_answers(text, path))
    return found


def generate(solutions: Path, assignments: Path) -> dict[Path, bytes]:
    """Every file of the student folder and its bytes: the stub of each registered step whose solution exists, and
    the data files."""
    found = {
        assignments / f"{step.module}.py": make_stub(
            (solutions / f"{step.module}.py").read_text(encoding="utf-8"), step.id, solutions / f"{step.module}.py"
        ).encode("utf-8")
        for step in tasks.STEPS
        if (solutions / f"{step.module}.py").is_file()
    }
    return found | {assignments / data.name: data.read_bytes() for data in data_files(solutions)}


def write(solutions: Path, assignments: Path) -> list[Path]:
    """Write the stubs and data files; returns the files that changed."""
    changed = []
    for path, content in generate(solutions, assignments).items():
        if not path.exists() or path.read_bytes() != content:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
            changed.append(path)
    return changed


def drift(solutions: Path, assignments: Path) -> list[Path]:
    """The committed stubs and data files that differ from what generation produces."""
    return [p for p, content in generate(solutions, assignments).items() if not p.exists() or p.read_bytes() != content]


def lab_imports(text: str) -> tuple[str, ...]:
    """The lab modules a module's ``text`` imports at its top level (``from scaling import attention``), sorted."""
    found = set()
    for node in ast.parse(text).body:
        if isinstance(node, ast.Import):
            found.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.partition(".")[0])
    return tuple(sorted(found & set(tasks.MODULES)))


def digests(solutions: Path) -> str:
    """The text of :data:`autograder.handin.pristine.DIGESTS` for the stubs of ``solutions``: each stub's SHA-256
    and the lab modules it imports (the grader skips a step whose module and imports are all these bytes)."""
    table = {}
    for step in tasks.STEPS:
        source = solutions / f"{step.module}.py"
        if source.is_file():
            stub = make_stub(source.read_text(encoding="utf-8"), step.id, source)
            table[step.module] = {
                "sha256": hashlib.sha256(stub.encode("utf-8")).hexdigest(),
                "imports": list(lab_imports(stub)),
            }
    return json.dumps(table, indent=1, sort_keys=True) + "\n"


def write_digests(solutions: Path, path: Path = DIGESTS) -> bool:
    """Write the stubs' digests to ``path``; whether it changed."""
    text = digests(solutions)
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True


def digests_drift(solutions: Path, path: Path = DIGESTS) -> bool:
    """Whether ``path`` differs from the digests of the stubs that ``solutions`` generates."""
    return not path.is_file() or path.read_text(encoding="utf-8") != digests(solutions)
