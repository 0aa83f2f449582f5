"""Which functions of a submitted module still raise the stub's error: read from the module's text, never run.

``attnlab stubs`` replaces every solution region by one ``raise
NotImplementedError(...)`` whose message is :data:`STUB_ERROR`, naming the
step and the function (the task). A student's module still holds that raise,
word for word, in every function not written yet, whether or not a check
reaches it: a function that only a later function calls (``decode_step``
under ``incremental_attention``, ``mlp`` under ``gpt_forward``) never raises
while its caller raises first. So the report's "not implemented yet" line is
read from the text: each line that holds the step's stub error, qualified by
the ``class``/``def`` lines around it (``KVCache.append``).

The text is only scanned line by line (no ``ast``, no import): what a student
wrote can make a name appear here or not, and nothing else. The file is opened
without following a link, only if it is a regular file, and read up to
:data:`MAX_BYTES` (standard library only: the public engine ships it).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

# The stub's error, as ``attnlab stubs`` writes it (autograder.stubs imports it from here).
STUB_ERROR = "Lab 7 step '{step}', task {task}: not implemented yet "
MAX_BYTES = 1 << 20  # a lab module is a few kB; past this the rest is not scanned
DEFINITION = re.compile(r"^(?P<indent>[ \t]*)(?:async[ \t]+)?(?:def|class)[ \t]+(?P<name>\w+)")


def _error_line(step: str) -> re.Pattern:
    """The stub error of ``step`` with its task captured."""
    before, after = STUB_ERROR.split("{task}")
    return re.compile(re.escape(before.format(step=step)) + r"(?P<task>\w+)" + re.escape(after.rstrip()))


def read_text(path: Path) -> str:
    """The text of the regular file ``path`` (a link is not followed); empty when there is none to read."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, MAX_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""
    finally:
        os.close(fd)


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


def in_folder(folder: Path, modules: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """For each step (``modules``: step id -> module name) the functions of ``folder/<module>.py`` still stubbed."""
    found = {step: in_text(read_text(Path(folder) / f"{module}.py"), step) for step, module in modules.items()}
    return {step: names for step, names in found.items() if names}
