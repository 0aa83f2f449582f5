"""Stubs are generated from the solutions: no drift, no leaked solution line, clear marker errors."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from autograder.base import tasks
from autograder.deliver.release import stubs
from tests import kit


def test_committed_stubs_match_generation() -> None:
    assert stubs.drift(kit.SOLUTIONS, kit.STUBS) == [], "stale stubs: run `attnlab stubs`"


def test_every_registered_step_has_solution_and_stub() -> None:
    for step in tasks.STEPS:
        assert (kit.SOLUTIONS / f"{step.module}.py").is_file(), f"no solution for {step.id}"
        assert (kit.STUBS / f"{step.module}.py").is_file(), f"no stub for {step.id}"


@pytest.mark.parametrize("module", tasks.MODULES)
def test_no_solution_line_survives(module: str) -> None:
    solution = (kit.SOLUTIONS / f"{module}.py").read_text(encoding="utf-8")
    stub_lines = {line.strip() for line in (kit.STUBS / f"{module}.py").read_text(encoding="utf-8").splitlines()}
    leaked = [line for line in stubs.solution_lines(solution) if line in stub_lines]
    assert leaked == [], f"solution lines in the stub of {module}: {leaked}"
    assert stubs.find_regions(solution) or stubs.find_answers(solution), (
        f"{module}.py has no solution region and no answer line"
    )


@pytest.mark.parametrize("module", tasks.MODULES)
def test_stub_keeps_signatures_and_docstrings(module: str) -> None:
    def signatures(path: Path) -> dict[str, tuple[str, str | None]]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        return {
            node.name: ((ast.unparse(node.args) if isinstance(node, ast.FunctionDef) else ""), ast.get_docstring(node))
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.ClassDef))
        }

    solution, stub = signatures(kit.SOLUTIONS / f"{module}.py"), signatures(kit.STUBS / f"{module}.py")
    public = {name: value for name, value in solution.items() if name in stub}
    assert public == {name: stub[name] for name in public}
    data = _module_names(kit.STUBS / f"{module}.py")  # answer dicts such as PREDICTIONS
    for function in tasks.step(module).functions:
        assert function in stub or function in data, f"{function} missing from the stub of {module}"
        assert function in data or stub[function][1], f"{module}.{function} has no docstring"


def _module_names(path: Path) -> set[str]:
    """The names a module assigns at its top level."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    targets = [t for node in tree.body if isinstance(node, ast.Assign) for t in node.targets]
    targets += [node.target for node in tree.body if isinstance(node, ast.AnnAssign)]
    return {t.id for t in targets if isinstance(t, ast.Name)}


def test_answer_lines_become_none_in_the_stub() -> None:
    text = "ANSWERS = {\n    \"shape\": (4, 7, 5),  # ANSWER\n    'row': [1.0, 0.0],# ANSWER\n}\n"
    stub = stubs.make_stub(text, "softmax")
    assert stub == "ANSWERS = {\n    \"shape\": None,  # your prediction\n    'row': None,  # your prediction\n}\n"
    assert set(stubs.solution_lines(text)) == {'"shape": (4, 7, 5),  # ANSWER', "'row': [1.0, 0.0],# ANSWER"}
    with pytest.raises(stubs.MarkerError, match=r"bad\.py:1: an # ANSWER line"):
        stubs.make_stub("x = 3  # ANSWER\n", "softmax", "bad.py")


def test_data_files_ship_unchanged(tmp_path: Path) -> None:
    solutions, assignments = tmp_path / "solutions", tmp_path / "assignments"
    solutions.mkdir()
    (solutions / "softmax.py").write_text(
        'def f() -> int:\n    """Doc."""\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION\n', encoding="utf-8"
    )
    (solutions / "weights.npz").write_bytes(b"PK\x03\x04 weights")
    assert sorted(p.name for p in stubs.write(solutions, assignments)) == ["softmax.py", "weights.npz"]
    assert (assignments / "weights.npz").read_bytes() == b"PK\x03\x04 weights" and stubs.drift(
        solutions, assignments
    ) == []
    (assignments / "weights.npz").write_bytes(b"changed")
    assert stubs.drift(solutions, assignments) == [assignments / "weights.npz"]


def test_stub_raises_task_labelled_error() -> None:
    text = 'def f(x: int) -> int:\n    """Doc."""\n    # BEGIN SOLUTION\n    return x + 1\n    # END SOLUTION\n'
    stub = stubs.make_stub(text, "softmax")
    assert "return x + 1" not in stub
    assert "raise NotImplementedError(\n        \"Lab 7 step 'softmax', task f:" in stub
    assert "handouts/lab07_attention.md#softmax" in stub
    with pytest.raises(NotImplementedError, match=r"task f: not implemented yet \(handout: handouts/lab07_attention"):
        namespace: dict = {}
        exec(stub, namespace)
        namespace["f"](1)


@pytest.mark.parametrize(
    "text, problem",
    [
        ("    # BEGIN SOLUTION\n    x = 1\n", "never closed"),
        ("    # END SOLUTION\n", "without a"),
        ("# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION\n", "inside the region"),
        ("# BEGIN SOLUTON\nx = 1\n# END SOLUTION\n", "malformed marker"),
    ],
)
def test_malformed_markers_are_errors_naming_the_line(text: str, problem: str) -> None:
    with pytest.raises(stubs.MarkerError, match=problem) as caught:
        stubs.make_stub(text, "softmax", "bad.py")
    assert "bad.py:" in str(caught.value)


def _documented_args(doc: str) -> list[str]:
    """The names listed under ``Args:`` in a Google-style docstring."""
    names, inside = [], False
    for line in doc.splitlines():
        if line.strip() in ("Args:", "Arguments:", "Parameters:"):
            inside = True
        elif (inside and line.strip().endswith(":") and not line.startswith(" ")) or (
            inside and line.strip() in ("Returns:", "Raises:", "Example:", "Examples:", "Yields:")
        ):
            inside = False
        elif inside and line.startswith("    ") and not line.startswith("     ") and ":" in line:
            names.append(line.strip().split(":")[0].split(" ")[0])
    return names


@pytest.mark.parametrize("module", tasks.MODULES)
def test_docstrings_name_exactly_the_parameters(module: str) -> None:
    tree = ast.parse((kit.SOLUTIONS / f"{module}.py").read_text(encoding="utf-8"))
    top_level = [*tree.body, *(n for c in tree.body if isinstance(c, ast.ClassDef) for n in c.body)]
    for node in top_level:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        parameters = [
            a.arg
            for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)
            if a.arg not in ("self", "cls")
        ]
        doc = ast.get_docstring(node) or ""
        assert doc, f"{module}.{node.name} has no docstring"
        if parameters and ("Args:" in doc or node.name in tasks.step(module).functions):
            assert _documented_args(doc) == parameters, (
                f"{module}.{node.name}: docstring lists {_documented_args(doc)}, signature has {parameters}"
            )
        for argument in (*node.args.args, *node.args.kwonlyargs):
            if argument.arg not in ("self", "cls"):
                assert argument.annotation is not None, f"{module}.{node.name}: parameter {argument.arg} has no type"
        assert node.returns is not None or node.name == "__init__", f"{module}.{node.name} has no return type"
