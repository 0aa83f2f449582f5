"""The course's execute preprocessor with a real kernel: isolated path, student id, a dead kernel costs one cell."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")

from autograder.deliver.nbgrader_course import cells, notebook  # noqa: E402
from autograder.deliver.nbgrader_course.preprocessors import KERNEL_DIED, GuardedExecute  # noqa: E402

pytestmark = pytest.mark.slow

# A code cell a student could add at the top: from then on every cell runs inside try/except: pass.
TRANSFORMER_CELL = """# an added cell: from now on every cell runs inside try/except: pass
def _swallow(lines):
    return ["try:\\n"] + ["    " + line for line in lines] + ["\\nexcept BaseException:\\n    pass\\n"]
get_ipython().input_transformers_post.append(_swallow)
"""


def execute(folder: Path, sources: list[str], student: str = "alice") -> list[list]:
    """Run ``sources`` as code cells with the course's preprocessor in ``folder``; each cell's outputs."""
    code = nbformat.v4.new_code_cell
    book = nbformat.v4.new_notebook(
        cells=[code(s) for s in sources],
        metadata={"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}},
    )
    grade = code(
        "pass",
        metadata={
            "nbgrader": {
                "grade_id": notebook.GRADE_ID.format(step="mask"),
                "grade": True,
                "locked": True,
                "points": 14,
                "solution": False,
            }
        },
    )
    book.cells.append(grade)
    resources = {
        "nbgrader": {"student": student, "assignment": "lab", "notebook": "lab"},
        "metadata": {"path": str(folder)},
    }
    executed, _ = GuardedExecute(timeout=120, extra_arguments=["--InteractiveShell.xmode=Minimal"]).preprocess(
        book, resources
    )
    return [cell.outputs for cell in executed.cells]


def text_of(outputs: list) -> str:
    return "".join(o.get("text", "") for o in outputs) + "".join(
        o.get("data", {}).get("text/plain", "") for o in outputs
    )


def test_submission_files_cannot_replace_the_kernel_or_the_kit(tmp_path: Path) -> None:
    (tmp_path / "autograder").mkdir()
    (tmp_path / "autograder" / "__init__.py").write_text("raise SystemExit('the submission replaced autograder')\n")
    (tmp_path / "ipykernel_launcher.py").write_text("raise SystemExit('the submission replaced the kernel')\n")
    (tmp_path / "ipython_kernel_config.py").write_text("print('SUBMISSION CONFIG RAN')\n")
    (tmp_path / "json.py").write_text("raise SystemExit('the submission replaced json')\n")
    outputs = execute(
        tmp_path,
        [
            "import sys, os, autograder.deliver.nbgrader_course.cells as c\nprint(c.__file__)\nprint('' in "
            "sys.path, os.getcwd() in sys.path)"
        ],
    )
    printed = text_of(outputs[0])
    assert str(tmp_path) not in printed.splitlines()[0] and "False False" in printed, printed
    assert "SUBMISSION CONFIG RAN" not in str(outputs)


def test_a_dead_kernel_costs_only_its_cell_and_says_why(tmp_path: Path) -> None:
    sources = [
        "import os\nos._exit(1)",
        f"import os\nprint(os.environ['{cells.ENV_STUDENT}'], os.environ['{cells.ENV_STEPS}'])",
    ]
    outputs = execute(tmp_path, sources, student="bob")
    assert [o.output_type for o in outputs[0]] == ["error"] and outputs[0][0].ename == KERNEL_DIED
    assert "scores 0" in outputs[0][0].evalue
    assert (
        text_of(outputs[1]).strip() == "bob mask"
    )  # a fresh kernel ran the next cell, with the student and the notebook's steps


def test_the_input_transformer_attack_is_real(tmp_path: Path) -> None:
    """Without the sanitiser, an added cell silences every later grade cell (nbgrader: no output, no error = full
    marks)."""
    outputs = execute(tmp_path, [TRANSFORMER_CELL, "raise AssertionError('a failed check')"])
    assert outputs[1] == []
