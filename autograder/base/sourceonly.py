"""Import the grader's own modules from source, never from a bytecode cache.

A ``.pyc`` in a ``__pycache__`` folder is trusted by Python whenever its
header matches the source's mtime and size, so whoever could write one next
to the reference or the hidden graders could run code in the grader. While
grading, the reference folder, the hidden graders and the public graders are
imported through :class:`SourceOnlyFinder`: it compiles each file from its
source and writes no cache (the standard library has no switch that stops
reading caches for some folders only; ``sys.pycache_prefix`` would recompile
torch and numpy as well). Everything else imports as usual.

What a file compiles to is kept in this process's memory only, keyed by the
file's path and the SHA-256 of its source, which is read again at every import
(:func:`code_of`): a warm grading server compiles the graders and the reference
once (:func:`compile_ahead`) and every worker it forks imports them without
compiling; a changed file has another key and is compiled afresh. Nothing is
written where another process could change it.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import CodeType

_COMPILED: dict[tuple[str, bytes], CodeType] = {}  # (path, SHA-256 of its source) -> its code, in memory only


def code_of(source: bytes, path: str) -> CodeType:
    """``source`` (the file ``path``'s bytes, just read) compiled, as the import system compiles a file; from
    memory when these very bytes of this path were compiled before in this process (or the one it was forked
    from)."""
    key = (path, hashlib.sha256(source).digest())
    code = _COMPILED.get(key)
    if code is None:
        code = _COMPILED[key] = compile(source, path, "exec", dont_inherit=True)
    return code


def compile_ahead(roots: Iterable[os.PathLike | str | None]) -> int:
    """Compile every ``.py`` file under ``roots`` into this process's memory (:func:`code_of`), named as
    :class:`SourceOnlyFinder` names them; how many. A file that cannot be read or compiled is left for its import to
    report."""
    count = 0
    for root in roots:
        if root is None:
            continue
        for folder, subfolders, files in os.walk(os.path.realpath(root)):
            subfolders[:] = [name for name in subfolders if name != "__pycache__"]
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    try:
                        with open(path, "rb") as file:
                            code_of(file.read(), path)
                    except Exception:  # unreadable, not Python, too deep: its import says so
                        continue
                    count += 1
    return count


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """A source loader that neither reads nor writes bytecode (compiled code stays in memory: :func:`code_of`)."""

    def get_code(self, fullname: str) -> CodeType:
        return code_of(self.get_data(self.path), self.path)

    def set_data(self, path: str, data: bytes, *, _mode: int = 0o666) -> None:
        pass  # no cache is ever written


class SourceOnlyFinder(importlib.abc.MetaPathFinder):
    """Finds ``name.py`` in the trusted ``roots`` (when they are searched) and loads it from source."""

    def __init__(self, roots: Iterable[os.PathLike | str]) -> None:
        self.roots = frozenset(os.path.realpath(root) for root in roots)
        # Each path entry's real path, resolved once per grading: every import made while grading asks this finder
        # first, and resolving every sys.path entry each time cost 0.7 s of a whole-lab grade.
        self._resolved: dict[str, str] = {}

    def _real(self, entry: str) -> str:
        folder = self._resolved.get(entry)
        if folder is None:
            folder = self._resolved[entry] = os.path.realpath(entry)
        return folder

    def find_spec(
        self, fullname: str, path: Iterable[str] | None = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        name = fullname.rpartition(".")[2]
        for entry in path if path is not None else sys.path:
            folder = self._real(entry) if isinstance(entry, str) else None
            if folder in self.roots:
                candidate = os.path.join(folder, f"{name}.py")
                if os.path.isfile(candidate):
                    loader = SourceOnlyLoader(fullname, candidate)
                    return importlib.util.spec_from_file_location(fullname, candidate, loader=loader)
        return None


@contextmanager
def source_only(roots: Iterable[os.PathLike | str | None]) -> Iterator[SourceOnlyFinder]:
    """Within the block, modules in ``roots`` are imported from source only."""
    finder = SourceOnlyFinder(root for root in roots if root is not None)
    sys.meta_path.insert(0, finder)
    try:
        yield finder
    finally:
        sys.meta_path.remove(finder)
