"""The engine's modules import one another without circles, and its stages only downwards.

A circle is harmless at run time as long as the imports inside functions
break it, but it hides a rule in the wrong room (see the design notes), so
every import counts here, function-level ones included. Built with the
standard library: ``ast`` reads the imports, ``graphlib`` finds a cycle.
"""

from __future__ import annotations

import ast
import graphlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import kit

try:
    import tomllib  # novermin
except ImportError:  # Python 3.10
    import tomli as tomllib

PACKAGE = "autograder"


def module_names(root: Path) -> dict[str, Path]:
    """Every module of the package under ``root`` by dotted name (a package by its ``__init__``)."""
    found = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _target(name: str, modules: dict[str, Path]) -> str | None:
    """The package's own module an import of ``name`` loads, if any (``a.b.c`` falls back to ``a.b``)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that module ``name`` imports anywhere in its file."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(filter(None, (_target(alias.name, modules) for alias in node.names)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name if is_package else name.rpartition(".")[0]
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            for alias in node.names:
                target = _target(f"{source}.{alias.name}", modules) if source else None
                if target == _target(source, modules) or target is None:
                    target = _target(source, modules)  # a name defined in the module, not a submodule
                if target:
                    found.add(target)
    found.discard(name)
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    modules = module_names(root)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph``, or None."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        return list(error.args[1])
    return None


def test_the_engine_has_no_import_circle() -> None:
    found = cycle(import_graph(kit.ROOT))
    assert found is None, f"import circle: {' -> '.join(found)}"


@pytest.mark.parametrize(
    "files, circular",
    [
        ({"a.py": "from autograder import b\n", "b.py": "def f():\n    from autograder.a import x\n"}, True),
        ({"p/__init__.py": "from autograder.p import q\n", "p/q.py": "from . import r\n", "p/r.py": ""}, False),
        ({"p/__init__.py": "", "p/q.py": "from .r import x\n", "p/r.py": "from ..p import q\n"}, True),
        ({"a.py": "import autograder.b.c\n", "b/__init__.py": "", "b/c.py": "import os\n"}, False),
    ],
)
def test_a_circle_is_found_even_inside_a_function(tmp_path: Path, files: dict[str, str], circular: bool) -> None:
    for name, text in {"__init__.py": "", **files}.items():
        path = tmp_path / PACKAGE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert (cycle(import_graph(tmp_path)) is not None) is circular


def _lint_imports(config: Path, cwd: Path, pythonpath: str | None = None) -> subprocess.CompletedProcess:
    """``lint-imports`` on ``config`` (no cache: a read-only checkout has nowhere to write one)."""
    environment = {**os.environ, "PYTHONPATH": pythonpath} if pythonpath else None
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(sys.argv[1], no_cache=True))"
    return subprocess.run(
        [sys.executable, "-c", code, str(config)], cwd=cwd, capture_output=True, text=True, env=environment
    )


def test_the_stages_import_only_downwards() -> None:
    """pyproject's import-linter contracts hold: the stages a hand-in passes through import only the stages below
    them, in the order data flows, and each stage's modules the order written for it."""
    done = _lint_imports(kit.ROOT / "pyproject.toml", kit.ROOT)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_the_stage_contract_refuses_an_import_against_the_flow(tmp_path: Path) -> None:
    """The same stage contract, on a package laid out like the engine (a module in every stage) in which the
    lowest stage imports the commands, is broken: the contract can fail."""
    project = tomllib.loads((kit.ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    stages = project["tool"]["importlinter"]["contracts"][0]["layers"]
    renamed = [layer.replace(PACKAGE, "staged") for layer in stages]
    for layer in renamed:
        folder = tmp_path / Path(*layer.split("."))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").write_text("")
        (folder.parent / "__init__.py").write_text("")
    (tmp_path / Path(*renamed[-1].split(".")) / "low.py").write_text(f"import {renamed[0]}\n")
    contract = {"name": "stages", "type": "layers", "layers": renamed}
    config = tmp_path / "contracts.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "staged"\n\n[[tool.importlinter.contracts]]\n'
        + "".join(f"{key} = {json.dumps(value)}\n" for key, value in contract.items()),
        encoding="utf-8",
    )
    done = _lint_imports(config, tmp_path, pythonpath=str(tmp_path))
    assert done.returncode != 0 and "1 broken" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"{renamed[-1]}.low -> {renamed[0]}" in done.stdout
