"""Is a step still the released stub? The one module for that question, read from the files, never run.

**Untouched steps** (:func:`untouched`): a step whose module, and every lab module that module imports
(``block`` imports ``scaling``, which imports ``softmax``), are byte for byte the stubs ``attnlab stubs``
generates from ``solutions/`` earns nothing: its functions raise ``NotImplementedError``. The engine reports such
a step without running its checks (no fork server, no child, no reference, no torch for it): every check fails as
not started, with its id, title and points (:mod:`autograder.grading.untouched` writes those results).

Only an exact match counts. Each file's SHA-256 is compared with :data:`DIGESTS` (written by ``attnlab stubs``
from the solutions, checked against them by the kit's tests); a student who wrote code above an unchanged
``raise NotImplementedError`` line, or changed one character anywhere, is graded as before. Skipping can only
give a step 0 points, so a forged module gains nothing by it. A module that imports a module the student wrote
is not untouched (a pristine ``timing.py`` measures a working ``toy_gpt``), nor the timing step while the folder
holds a timing report (its checks read it). ``ATTNLAB_SKIP_UNTOUCHED=0`` runs every check.

**Stubbed functions** (:func:`in_text`, :func:`in_folder`): which functions of a submitted module still hold the
stub's error. ``attnlab stubs`` replaces every solution region by one ``raise NotImplementedError(...)`` whose
message is :data:`STUB_ERROR`, naming the step and the function (the task). A student's module still holds that
raise, word for word, in every function not written yet, whether or not a check reaches it: a function that only
a later function calls (``decode_step`` under ``incremental_attention``, ``mlp`` under ``gpt_forward``) never
raises while its caller raises first. So the report's "not implemented yet" line is read from the text: each
line that holds the step's stub error, qualified by the ``class``/``def`` lines around it (``KVCache.append``).
The text is only scanned line by line (no ``ast``, no import): what a student wrote can make a name appear here
or not, and nothing else.

Both open a file without following a link, only if it is a regular file, and read up to :data:`MAX_BYTES` (a
longer file is not a stub; its text is scanned that far). Standard library only: the early start
(:mod:`autograder.cli.early`) asks before numpy is imported, and the public engine ships it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

from autograder.base import safefs, tasks

ENV_SWITCH = "ATTNLAB_SKIP_UNTOUCHED"  # "0": run the checks of untouched steps too
DIGESTS = Path(__file__).parents[1] / "data" / "stubs.json"  # module -> {"sha256": ..., "imports": [...]}
REPORT = "reports/timing.json"  # autograder.judge.timing.report.PATH: a test keeps them equal
MAX_BYTES = 1 << 20  # a stub is a few kB


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1") != "0"


@functools.cache
def table() -> dict[str, dict]:
    """The released stubs' digests and lab imports by module name (empty where the file is missing or unreadable)."""
    try:
        found = json.loads(DIGESTS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _open_regular(path: Path) -> int:
    """A descriptor of the regular file ``path``, its own name not followed if it is a link
    (:func:`autograder.base.safefs.open_file`); an ``OSError`` for anything else."""
    path = Path(path)
    with safefs.opened(safefs.open_root(path.parent)) as folder:
        return safefs.open_file(folder, path.name)


def read_bytes(path: Path) -> bytes | None:
    """The bytes of the regular file ``path`` (a link is not followed); None if there is none, or it is longer than
    :data:`MAX_BYTES`."""
    try:
        with safefs.opened(_open_regular(path)) as fd:
            return safefs.read_all(fd, MAX_BYTES)
    except OSError:  # missing, not a regular file (safefs.NotPlain), longer than MAX_BYTES (safefs.TooBig)
        return None


def _is_stub(folder: Path, module: str, known: dict[str, bool]) -> bool:
    """Whether ``folder/<module>.py`` and the lab modules it imports (transitively) are all the released stubs."""
    if module in known:
        return known[module]
    known[module] = False  # while its imports are looked at (a cycle is not untouched)
    entry = table().get(module)
    if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
        return False
    content = read_bytes(folder / f"{module}.py")
    same = content is not None and hashlib.sha256(content).hexdigest() == entry["sha256"]
    imports = entry.get("imports", [])
    known[module] = bool(same and isinstance(imports, list) and all(_is_stub(folder, m, known) for m in imports))
    return known[module]


def _has_report(folder: Path, ignored: Iterable[str]) -> bool:
    """Whether the folder holds a timing report, or had one the intake left out (a link)."""
    name = REPORT.rpartition("/")[2]
    if any(str(path).endswith(name) for path in ignored):
        return True
    try:
        os.lstat(folder / REPORT)
    except OSError:
        return False
    return True


def untouched(folder: Path, steps: Iterable[str], ignored: Iterable[str] = ()) -> tuple[str, ...]:
    """The ``steps`` of ``folder`` (ids, in the order given) whose checks need not run: all their modules are stubs.

    ``ignored`` are the paths the intake left out of ``folder`` (a timing report among them keeps the timing step).
    """
    if not enabled():
        return ()
    folder, ignored = Path(folder), tuple(ignored)
    known: dict[str, bool] = {}
    found = []
    for step_id in steps:
        step = tasks.step(step_id)
        if not _is_stub(folder, step.module, known):
            continue
        if step.measures_time and _has_report(folder, ignored):
            continue
        found.append(step.id)
    return tuple(found)


# The stub's error, as ``attnlab stubs`` writes it (autograder.deliver.release.stubs imports it from here).
STUB_ERROR = "Lab 7 step '{step}', task {task}: not implemented yet "
DEFINITION = re.compile(r"^(?P<indent>[ \t]*)(?:async[ \t]+)?(?:def|class)[ \t]+(?P<name>\w+)")


def _error_line(step: str | None) -> re.Pattern:
    """The stub error of ``step`` (None: of any step) with its task captured."""
    before, after = STUB_ERROR.split("{task}")
    head, tail = before.split("{step}")
    which = r"\w+" if step is None else re.escape(step)
    return re.compile(re.escape(head) + which + re.escape(tail) + r"(?P<task>\w+)" + re.escape(after.rstrip()))


def read_text(path: Path) -> str:
    """The text of the regular file ``path`` (a link is not followed) up to :data:`MAX_BYTES`; empty when there is
    none to read."""
    try:
        with safefs.opened(_open_regular(path)) as fd:
            return os.read(fd, MAX_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""


def in_text(text: str, step: str) -> tuple[str, ...]:
    """The functions of ``text`` (a module of ``step``) that hold the step's stub error, in file order, each once.

    A function is named with the classes and functions around it (``KVCache.append``), as a traceback names it.
    """
    error = _error_line(step)
    around: list[tuple[int, str]] = []  # (indentation, name) of the definitions enclosing the current line
    found: list[str] = []
    for line in text.splitlines():
        definition = DEFINITION.match(line)
        if definition:
            depth = len(definition.group("indent").expandtabs())
            around = [entry for entry in around if entry[0] < depth] + [(depth, definition.group("name"))]
            continue
        match = error.search(line)
        if match is None:
            continue
        depth = len(line) - len(line.lstrip())
        names = [name for indent, name in around if indent < depth]
        task = match.group("task")
        name = ".".join(names) if names and names[-1] == task else task
        if name not in found:
            found.append(name)
    return tuple(found)


ANY_ERROR = _error_line(None)  # a stub's error of any step, as ``attnlab stubs`` writes it


def raised_at_stub(folder: Path, file: str | None, line: int | None) -> bool:
    """Whether line ``line`` of ``folder/file`` (a module the student handed in, e.g. ``mask.py``) starts a stub's
    own ``raise NotImplementedError(...)`` as ``attnlab stubs`` writes it (the raise on that line, the stub's error
    on it or the next): an error raised there is the unwritten function and nothing else, so the checks look for
    no cause. Read from the text, like :func:`in_text`; a file that is not a plain module of the folder, or a line
    it does not have, is not a stub."""
    if not file or "/" in file or "\0" in file or not file.endswith(".py") or not isinstance(line, int) or line < 1:
        return False
    lines = read_text(Path(folder) / file).splitlines()
    if line > len(lines) or not lines[line - 1].lstrip().startswith("raise NotImplementedError("):
        return False
    return any(ANY_ERROR.search(text) for text in lines[line - 1 : line + 1])


def in_folder(folder: Path, modules: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """For each step (``modules``: step id -> module name) the functions of ``folder/<module>.py`` still stubbed."""
    found = {step: in_text(read_text(Path(folder) / f"{module}.py"), step) for step, module in modules.items()}
    return {step: names for step, names in found.items() if names}
