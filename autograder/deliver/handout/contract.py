"""The contract of a step, read from its generated stub: signatures and docstrings, nothing else.

The stubs are generated from the reference solutions (``attnlab stubs``), so a
contract taken from them cannot drift from what the graders call. Every public
function and class of the stub is listed (graders call some helpers too); the
bodies, which in a stub only raise ``NotImplementedError``, are left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

from autograder.base import tasks
from autograder.i18n import N_, _

NOT_GENERATED = N_("*The stub `{module}.py` is not generated yet (run `attnlab stubs`).*")
FILL_ANSWERS = N_(
    "Fill in {names} in `{module}.py`: replace each `None` by your answer as a plain literal. "
    "Keep the keys: the graders read them."
)
WRITE_THESE = N_(
    "Write these in `{module}.py`: {names}. The stub already holds each signature and docstring, and each body "
    "raises `NotImplementedError` until you replace it. Keep the names and signatures: the graders call them."
)
PROVIDED = N_("Already written for you in the stub (use them; do not change them): {names}.")


def _header_and_docstring(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[str]:
    """The source lines of ``node`` from its first decorator to the end of its docstring."""
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    body = node.body[0]
    has_doc = (
        isinstance(body, ast.Expr)
        and isinstance(getattr(body, "value", None), ast.Constant)
        and isinstance(body.value.value, str)
    )
    last = body.end_lineno if has_doc else node.body[0].lineno - 1
    return lines[first - 1 : last]


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _raises_not_implemented(node: ast.AST) -> bool:
    """Whether ``node`` (a function or class) contains a stubbed body: ``raise NotImplementedError(...)``."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Raise) and inner.exc is not None:
            target = inner.exc.func if isinstance(inner.exc, ast.Call) else inner.exc
            if isinstance(target, ast.Name) and target.id == "NotImplementedError":
                return True
    return False


def _definitions(stub_text: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    return [
        n
        for n in ast.parse(stub_text).body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and _public(n.name)
    ]


def _source(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    if not isinstance(node, ast.ClassDef):
        return "\n".join(_header_and_docstring(lines, node))
    members = [_header_and_docstring(lines, node)]
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _public(item.name):
            members.append(["", *_header_and_docstring(lines, item)])
    return "\n".join(line for member in members for line in member)


def contract_source(stub_text: str, to_write: bool = True) -> str:
    """Signatures and docstrings of the public functions and classes of one stub module.

    ``to_write`` selects the stubbed ones (their bodies raise ``NotImplementedError``);
    ``False`` selects those the stub provides ready-made.
    """
    lines = stub_text.splitlines()
    return "\n\n\n".join(
        _source(lines, node) for node in _definitions(stub_text) if _raises_not_implemented(node) == to_write
    )


def public_names(stub_text: str, to_write: bool | None = None) -> list[str]:
    """The public top-level functions and classes of a stub (only the stubbed or only the provided ones if asked)."""
    return [n.name for n in _definitions(stub_text) if to_write is None or _raises_not_implemented(n) == to_write]


def _assignments(stub_text: str) -> dict[str, ast.stmt]:
    """The stub's top-level assignments to a plain name, by name."""
    found = {}
    for node in ast.parse(stub_text).body:
        target = (
            node.target
            if isinstance(node, ast.AnnAssign)
            else (node.targets[0] if isinstance(node, ast.Assign) else None)
        )
        if isinstance(target, ast.Name):
            found[target.id] = node
    return found


def answer_names(stub_text: str, names: tuple[str, ...]) -> list[str]:
    """Those of ``names`` that the stub assigns at its top level (answer dicts such as ``PREDICTIONS``)."""
    assigned = _assignments(stub_text)
    return [name for name in names if name in assigned]


def answer_source(stub_text: str, names: tuple[str, ...]) -> str:
    """The source of the stub's top-level assignments of ``names``, as the stub has them."""
    lines, assigned = stub_text.splitlines(), _assignments(stub_text)
    return "\n\n".join(
        "\n".join(lines[assigned[n].lineno - 1 : assigned[n].end_lineno]) for n in names if n in assigned
    )


def _names(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def contract_markdown(step: tasks.Step, assignments: Path) -> str:
    """The handout's contract block of ``step``: the file to edit and its signatures and docstrings."""
    stub = assignments / f"{step.module}.py"
    if not stub.is_file():
        return _(NOT_GENERATED).format(module=step.module)
    text = stub.read_text(encoding="utf-8")
    answers = answer_names(text, step.functions)
    if answers:
        return "\n".join(
            [
                _(FILL_ANSWERS).format(names=_names(answers), module=step.module),
                "",
                "```python",
                answer_source(text, tuple(answers)),
                "```",
            ]
        )
    lines = [
        _(WRITE_THESE).format(module=step.module, names=_names(public_names(text, True))),
        "",
        "```python",
        contract_source(text, True),
        "```",
    ]
    provided = public_names(text, False)
    if provided:
        lines += [
            "",
            _(PROVIDED).format(names=_names(provided)),
            "",
            "```python",
            contract_source(text, False),
            "```",
        ]
    return "\n".join(lines)
