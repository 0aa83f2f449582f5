"""Benchmark: `nbgrader autograde` per student, the kit's notebook against a bare notebook.

Builds one course in a temporary folder with two assignments: the kit's
``lab07_attention`` (written by ``attnlab nbgrader-course``) and ``bare``, whose
notebook has one grade cell that only runs ``import numpy, torch`` (the floor
of any torch lab graded in its notebook). Every student submits both: the
kit's assignment as the reference (``--submission reference``, with its timing
report, so every check passes and the timing step re-measures) or the
untouched release (``--submission release``). Then, alternating so both see
the same machine load, it times ``nbgrader autograde`` of each assignment for
one student and for all ``--students``, and ``attnlab grade`` of one kit
submission with the same hidden graders (the grading work itself, without
nbgrader). Prints medians: the wall time for one student (the kit's includes
starting its warm grading server, stopped before each such run), and the
cost of each further student ((all - one) / (students - 1)). Not a test:
timings on shared machines are noisy.

    python bench/nbgrader_autograde.py [--students 3] [--repeats 3] [--submission reference|release]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grade_overhead import wall  # noqa: E402  (bench/ is this script's own folder on the path)

from autograder.base import tasks  # noqa: E402
from autograder.deliver.nbgrader_course import cells, course, notebook  # noqa: E402
from autograder.deliver.warm import client  # noqa: E402

LAB, BARE = tasks.LAB, "bare"


def bare_notebook() -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell("import numpy, torch", id="bare")
    cell.metadata = {
        "nbgrader": {
            "grade": True,
            "grade_id": "bare",
            "locked": True,
            "points": 1,
            "schema_version": 3,
            "solution": False,
            "task": False,
        }
    }
    kernel = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}}
    return nbformat.v4.new_notebook(cells=[cell], metadata=kernel)


def build(work: Path, students: int, submission: str) -> Path:
    root = work / "course"
    course.write_course(course.CourseOptions(folder=root, kit=ROOT))
    (root / "source" / BARE).mkdir(parents=True)
    nbformat.write(bare_notebook(), root / "source" / BARE / f"{BARE}.ipynb")
    for assignment in (LAB, BARE):
        nbgrader(root, "generate_assignment", assignment)
    for number in range(1, students + 1):
        for assignment in (LAB, BARE):
            folder = root / "submitted" / f"s{number}" / assignment
            shutil.copytree(root / "release" / assignment, folder)
            if assignment == LAB and submission == "reference":
                shutil.copytree(
                    ROOT / "solutions" / LAB, folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
                )
    return root


def nbgrader(root: Path, *args: str) -> float:
    """Wall seconds of one nbgrader command run in the course folder (it must succeed)."""
    return wall([sys.executable, "-m", "nbgrader", *args], root)


def engine(root: Path) -> float:
    """Wall seconds of `attnlab grade` on the first student's kit submission, with the course's hidden graders."""
    private = root / "private"
    command = [
        sys.executable,
        "-m",
        "autograder",
        "grade",
        str(root / "submitted" / "s1" / LAB),
        "--hidden",
        str(private / "hidden"),
        "--reference",
        str(private / "reference"),
        "--secret-file",
        str(private / "secret"),
    ]
    return wall(command, root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--submission", choices=["reference", "release"], default="reference")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="attnlab-bench-") as work:
        root = build(Path(work), args.students, args.submission)
        runs: dict[str, list[float]] = {key: [] for key in ("bare_one", "bare_all", "kit_one", "kit_all", "engine")}
        for _ in range(args.repeats):
            for assignment, key in ((BARE, "bare"), (LAB, "kit")):
                # every first student starts the warm grading server afresh
                client.stop(cells.HANDLER, root / "private")
                runs[f"{key}_one"].append(nbgrader(root, "autograde", assignment, "--student", "s1", "--force"))
                runs[f"{key}_all"].append(nbgrader(root, "autograde", assignment, "--force"))
            runs["engine"].append(engine(root))
        book = nbformat.read(root / "autograded" / "s1" / LAB / notebook.NOTEBOOK, as_version=4)
        cells_run = sum(1 for c in book.cells if c.cell_type == "code" and c.get("outputs"))
    med = {key: statistics.median(values) for key, values in runs.items()}
    extra = {key: (med[f"{key}_all"] - med[f"{key}_one"]) / max(args.students - 1, 1) for key in ("bare", "kit")}
    print(
        f"{args.students} students, {args.repeats} repeats, kit submission: {args.submission} "
        f"({cells_run} code cells ran); medians:"
    )
    print(
        f"  bare notebook (import numpy, torch): one student {med['bare_one']:.2f} s, each further "
        f"student {extra['bare']:.2f} s"
    )
    print(f"  kit notebook  ({LAB}):    one student {med['kit_one']:.2f} s, each further student {extra['kit']:.2f} s")
    print(
        f"  attnlab grade of one submission in a fresh process: {med['engine']:.2f} s (autograde "
        "forks a warm worker instead)"
    )
    print(f"  the kit adds {extra['kit'] - extra['bare']:+.2f} s per further student over the bare notebook")
    for key, values in runs.items():
        print(f"  runs {key}: {', '.join(f'{v:.2f}' for v in values)}")


if __name__ == "__main__":
    main()
