"""The graders, hidden graders and reference are imported from their source, never from a bytecode file; what they
compile to is kept in memory only, keyed by the source's content: a warm server compiles them once for all its
workers, and a changed file (even one whose size and modification time were put back) is compiled again."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import CodeType, ModuleType

import pytest

from autograder.base import sourceonly


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths compiled from now on (an empty memory to start with)."""
    monkeypatch.setattr(sourceonly, "_COMPILED", {})
    seen: list[str] = []

    def counting(source: bytes, path: str, *args: object, **kwargs: object) -> CodeType:
        seen.append(path)
        return compile(source, path, *args, **kwargs)

    monkeypatch.setattr(sourceonly, "compile", counting, raising=False)
    return seen


def _imported(root: Path, name: str) -> ModuleType:
    """``name`` imported afresh from ``root`` through the source-only finder."""
    sys.modules.pop(name, None)
    sys.path.insert(0, str(root))
    try:
        with sourceonly.source_only([root]):
            spec = importlib.util.find_spec(name)
            assert spec is not None and isinstance(spec.loader, sourceonly.SourceOnlyLoader)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    finally:
        sys.path.remove(str(root))
        sys.modules.pop(name, None)


def test_compiled_ahead_then_imported_without_compiling(tmp_path: Path, compiled: list[str]) -> None:
    (tmp_path / "checks_a.py").write_text("VALUE = 1\n")
    (tmp_path / "inner").mkdir()
    (tmp_path / "inner" / "checks_b.py").write_text("VALUE = 2\n")
    assert sourceonly.compile_ahead([tmp_path, None]) == 2
    assert len(compiled) == 2
    assert _imported(tmp_path, "checks_a").VALUE == 1
    assert len(compiled) == 2, "the import compiled again what was compiled ahead"


def test_a_changed_source_is_compiled_again_even_with_its_size_and_time_put_back(
    tmp_path: Path, compiled: list[str]
) -> None:
    module = tmp_path / "checks_c.py"
    module.write_text("VALUE = 1\n")
    assert _imported(tmp_path, "checks_c").VALUE == 1
    info = module.stat()
    module.write_text("VALUE = 7\n")  # the same size
    os.utime(module, ns=(info.st_atime_ns, info.st_mtime_ns))  # and the same time: a .pyc would be trusted
    assert _imported(tmp_path, "checks_c").VALUE == 7
    assert len(compiled) == 2


def test_a_planted_bytecode_file_is_never_run(tmp_path: Path, compiled: list[str]) -> None:
    module = tmp_path / "checks_d.py"
    module.write_text("VALUE = 1\n")
    cached = Path(importlib.util.cache_from_source(str(module)))
    cached.parent.mkdir()
    planted = tmp_path / "planted.py"
    planted.write_text("VALUE = 666\n")
    import py_compile

    py_compile.compile(str(planted), cfile=str(cached))  # a valid .pyc, but of other code
    info = module.stat()
    os.utime(cached, ns=(info.st_atime_ns, info.st_mtime_ns))
    header = bytearray(cached.read_bytes())
    header[8:12] = int(info.st_mtime).to_bytes(4, "little")  # its header claims the source's time and size
    header[12:16] = info.st_size.to_bytes(4, "little")
    cached.write_bytes(bytes(header))
    assert _imported(tmp_path, "checks_d").VALUE == 1
    assert sorted(p.name for p in cached.parent.iterdir()) == [cached.name], "a bytecode file was written"


def test_a_file_that_does_not_compile_is_left_for_its_import(tmp_path: Path, compiled: list[str]) -> None:
    (tmp_path / "broken.py").write_text("def (:\n")
    (tmp_path / "fine.py").write_text("VALUE = 1\n")
    assert sourceonly.compile_ahead([tmp_path]) == 1
    with pytest.raises(SyntaxError):
        _imported(tmp_path, "broken")
