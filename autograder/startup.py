"""The kit's own modules come from the kit: an import hook installed when Python starts, before any folder is on
``sys.path`` that a hand-in could fill.

``python -m autograder grade .`` run in a student's folder puts that folder
first on ``sys.path`` before a line of the kit runs, so a folder holding an
``autograder/`` package (or ``autograder.py``) would *be* the grader; a check in
the kit's ``__main__`` would never run. What runs earlier is ``site``: it reads
the ``.pth`` files of site-packages at every start. The kit's install (its
wheel, its editable install, the student wheel: :mod:`autograder.deliver.release.pth`)
puts one there that imports a copy of this module, which puts :class:`Guard`
first in ``sys.meta_path`` with the folder the kit was installed from. When
``autograder`` is first imported:

- if it would come from anywhere else (the current folder, a folder on
  ``PYTHONPATH``), the program refuses to start, with one sentence (exit 2;
  imported by another program, an ImportError with that sentence). A process
  started with ``python -I`` (the kit's own children: the sandbox, the warm
  grader) is exempt: there neither the current folder nor the environment
  reaches ``sys.path``, and the kit puts its own folder there itself;
- if the program is the kit's own command (``python -m autograder...`` or the
  ``attnlab`` script), the current folder is taken off ``sys.path`` (unless the
  kit itself is there: the instructor's checkout), so a
  ``numpy.py``, ``torch.py``, ``pytest.py``, ``csv.py`` or ``tests/`` beside the
  hand-in is never imported by the grader either (pytest runs the graders with
  the kit's own ini file, rootdir and ``--noconftest``: a ``conftest.py`` there is
  never read).

Standard library only, and nothing imported at start beyond what ``site``
already holds: it runs in every Python process of the environment, and it
costs one string comparison per import.
"""

from __future__ import annotations

import os
import sys
import threading


def N_(message: str) -> str:
    """Marks a message for the catalogs (this module cannot import the kit's :mod:`autograder.i18n`)."""
    return message


SHADOWED = N_(
    "refused to start: Python would import the grader from {found} instead of the kit installed at {kit}, so "
    "code in that folder would grade itself; run the command from another folder, naming the submission "
    "(attnlab grade FOLDER)"
)
PACKAGE = "autograder"
EXIT_USAGE = 2
SCRIPTS = ("attnlab", "attnlab-script")  # the console script's name (and its name on Windows)
_looking = threading.local()  # set while Guard asks the other finders (a finder that imports must not loop)


class Guard:
    """The meta path finder that checks where ``autograder`` comes from (see the module's description)."""

    def __init__(self, kit: str) -> None:
        self.kit = os.path.realpath(kit)

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name != PACKAGE or getattr(_looking, "now", False):
            return None  # the kit's submodules come from the package's own __path__
        started_as_kit = _started_as_kit()
        _looking.now = True
        try:
            found = self._found(name)
        finally:
            _looking.now = False
        if found is not None and found != self.kit and not sys.flags.isolated:
            _refuse(SHADOWED, found=found, kit=self.kit, exit_now=started_as_kit)
        if started_as_kit:
            _forget_current_folder(self.kit)
        return None  # found by the usual finders: the kit itself

    def _found(self, name: str) -> str | None:
        """The folder the other finders would import ``name`` from (None: they find none)."""
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            try:
                spec = finder.find_spec(name, None)
            except ImportError:
                continue
            if spec is None:
                continue
            if spec.origin and spec.origin not in ("namespace", "built-in", "frozen"):
                where = os.path.dirname(spec.origin) if spec.submodule_search_locations else spec.origin
            else:
                where = next(iter(spec.submodule_search_locations or ()), "")
            return os.path.realpath(where)
        return None

    def invalidate_caches(self) -> None:
        pass


def _started_as_kit() -> bool:
    """Whether this process is the kit's own command: ``python -m autograder...`` (while runpy looks for the module
    ``sys.argv[0]`` is ``-m``) or the ``attnlab`` script."""
    first = sys.argv[0] if sys.argv else ""
    return first == "-m" or os.path.splitext(os.path.basename(first))[0] in SCRIPTS


def _forget_current_folder(kit: str) -> None:
    """Take the current folder off ``sys.path`` (``""``, ``"."``, what ``-m`` put first, a ``PYTHONPATH=.``),
    unless the kit itself is in it (an instructor in the kit's own checkout)."""
    try:
        here = os.path.realpath(os.getcwd())
    except OSError:
        return
    if os.path.dirname(kit) == here:
        return
    sys.path[:] = [entry for entry in sys.path if os.path.realpath(entry or os.curdir) != here]


def _refuse(message: str, *, exit_now: bool, **fields: str) -> None:
    """Say ``message`` (in the student's language when the kit's catalogs say it) and stop: exit 2 when the kit
    was started as a command, else an ImportError for the program that imported it."""
    text = _translated(message, fields.get("kit", "")).format(**fields)
    if exit_now:
        sys.stderr.write(f"attnlab: {text}\n")
        raise SystemExit(EXIT_USAGE)
    raise ImportError(text, name=PACKAGE)


def _translated(message: str, kit: str) -> str:
    """``message`` from the catalogs of the kit at ``kit``, in the language ``attnlab`` would choose (the
    kit's own :mod:`autograder.i18n`, loaded by path); the English ``message`` when that fails."""
    try:
        import importlib.util

        spec = importlib.util.spec_from_file_location("_attnlab_startup_i18n", os.path.join(kit, "i18n", "__init__.py"))
        if spec is None or spec.loader is None:
            return message
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.translations(module.choose_or_source()).gettext(message)
    except Exception:
        return message


def install(kit: str | None = None) -> None:
    """Put :class:`Guard` first in ``sys.meta_path`` for the kit in the folder ``kit`` (default: ``autograder``
    beside this file, as a wheel installs it), once."""
    folder = kit or os.path.join(os.path.dirname(os.path.abspath(__file__)), PACKAGE)
    if not any(isinstance(finder, Guard) or type(finder).__name__ == "Guard" for finder in sys.meta_path):
        sys.meta_path.insert(0, Guard(folder))
