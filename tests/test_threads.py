"""Every grading process computes its own NumPy on one thread (:mod:`autograder.base.threads`).

Each test starts the entry point in a fresh ``python -I``, grades one step of the reference with it and then asks
``threadpoolctl`` how many threads NumPy's BLAS runs in that process. With a thread per CPU the timing lane's grader
spun a BLAS helper on the CPU that its sandbox child measures on. The fresh process gets none of the variables the
tests' own process has set (:mod:`tests.conftest`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autograder.base import threads
from tests import kit

pytestmark = pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2, reason="one CPU: BLAS runs one thread anyway, so the test could not fail"
)
# After the entry point has graded: the BLAS libraries the process loaded and their threads, as JSON.
THREADS = (
    "from threadpoolctl import threadpool_info; import json; "
    "print(json.dumps([(i['internal_api'], i['num_threads']) for i in threadpool_info() if i['user_api'] == 'blas']))"
)


def blas_threads(program: str, *, stdin: str = "", cwd: Path) -> set[int]:
    """The thread counts of the BLAS libraries of a fresh ``python -I`` that ran ``program`` (then :data:`THREADS`,
    its last line)."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"{program}\n{THREADS}"],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        env={**{k: v for k, v in os.environ.items() if k not in threads.ONE_THREAD}, "ATTNLAB_LANES": "0"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found, "no BLAS library was loaded: nothing was checked"
    return {threads for _library, threads in found}


def test_attnlab_grade_computes_on_one_blas_thread(tmp_path: Path) -> None:
    program = textwrap.dedent(f"""
        import sys
        from autograder import cli
        code = cli.main(["grade", "--step", "softmax", {str(kit.SOLUTIONS)!r}])
        assert code == 0, code
    """)
    assert blas_threads(program, cwd=tmp_path) == {1}


def test_a_fresh_grader_computes_on_one_blas_thread(tmp_path: Path) -> None:
    """``grade_once``: the fresh grader process nbgrader, Gradescope and ``grade-batch`` fall back to."""
    (tmp_path / "one_step_handler.py").write_text(
        textwrap.dedent("""
            from pathlib import Path
            from autograder.grading import engine

            def options(request):
                return engine.GradeOptions(submission=Path(request["folder"]), steps=("softmax",), public_only=True)
        """),
        encoding="utf-8",
    )
    program = textwrap.dedent(f"""
        import sys
        sys.path[:0] = [{str(kit.ROOT)!r}, {str(tmp_path)!r}]
        from autograder.deliver.warm import server
        assert server.grade_once("one_step_handler") == 0
    """)
    stdin = json.dumps({"folder": str(kit.SOLUTIONS)})
    assert blas_threads(program, stdin=stdin, cwd=tmp_path) == {1}
