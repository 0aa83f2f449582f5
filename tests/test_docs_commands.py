"""Every shell command in README.md and docs/ is run by a test, or says why it cannot be, in a way this test reads.

A fenced ``sh`` block is preceded by one marker comment:

- ``<!-- run -->``: each line runs here, in order, in a scratch folder holding the lab's stubs (``lab07_attention/``,
  ``path/to/my/folder/``), a class of hand-ins (``submissions/alice`` the reference, ``submissions/bob`` the stubs)
  and a course secret (``my-course.secret``), with ``$ATTNLAB_KIT`` the kit; every line must exit 0;
- ``<!-- covered: FILE -->``: ``FILE`` runs it. ``.ci/run`` must hold each line word for word; a test
  (``tests/x.py::test_name``) must exist;
- ``<!-- not run: REASON -->``: why no test can run it (a pip install from the network, a cluster, a course).

The pages the other parts of the kit own keep their text as written there: their blocks are marked in
:data:`ELSEWHERE` (page -> a marker per block, in order), read the same way.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import kit

PAGES = [kit.ROOT / "README.md", *sorted((kit.ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(?:sh|bash|shell|console)\n(?P<body>.*?)^```", re.MULTILINE | re.DOTALL)
MARKER = re.compile(r"<!--\s*(?P<kind>run|covered|not run)\s*(?::\s*(?P<what>.*?))?\s*-->\s*$")
# Blocks of the pages moved as they were (their sections are another part's): page -> one marker per block.
ELSEWHERE = {
    "docs/nbgrader.md": ["covered: tests/test_nbgrader_course.py::test_every_students_exported_score"],
    "docs/batch.md": ["covered: tests/test_batch.py::test_the_command_writes_the_csv_and_the_summary"],
    "docs/timing.md": ["covered: tests/test_step_timing.py::test_quick_sweep_of_the_reference_grades_full"],
    "docs/diagnosis.md": [],
    "docs/sandbox.md": [],
    "docs/threat-model.md": [],
}


def blocks() -> list[tuple[str, int, str, str, str]]:
    """Every shell block: (page, its number on the page, marker kind, marker text, body)."""
    found = []
    for page in PAGES:
        name = page.relative_to(kit.ROOT).as_posix()
        text = page.read_text(encoding="utf-8")
        for number, match in enumerate(BLOCK.finditer(text)):
            if name in ELSEWHERE:
                given = ELSEWHERE[name]
                marker = f"<!-- {given[number]} -->" if number < len(given) else ""
            else:
                before = [line for line in text[: match.start()].splitlines() if line.strip()]
                marker = before[-1] if before else ""
            parsed = MARKER.search(marker)
            kind, what = (parsed.group("kind"), parsed.group("what") or "") if parsed else ("", "")
            found.append((name, number, kind, what, match.group("body")))
    return found


def commands(body: str) -> list[str]:
    """The command lines of a block (comments and continuation-free lines; a ``# comment`` tail is kept: bash
    ignores it)."""
    return [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")]


BLOCKS = blocks()


def test_every_block_is_marked() -> None:
    unmarked = [f"{page} block {number + 1}" for page, number, kind, _, _ in BLOCKS if not kind]
    assert not unmarked, f"shell blocks with no run/covered/not-run marker: {unmarked}"
    for page, number, kind, what, _ in BLOCKS:
        if kind in ("covered", "not run"):
            assert what.strip(), f"{page} block {number + 1}: {kind} needs a file or a reason"
    for page, given in ELSEWHERE.items():
        assert len(given) == len([b for b in BLOCKS if b[0] == page]), f"{page}: one marker per block"


@pytest.mark.parametrize(
    "page, number, what, body",
    [(p, n, w, b) for p, n, k, w, b in BLOCKS if k == "covered"],
    ids=[f"{p}#{n + 1}" for p, n, k, _, _ in BLOCKS if k == "covered"],
)
def test_a_covered_block_is_run_by_the_file_it_names(page: str, number: int, what: str, body: str) -> None:
    path, _, test = what.strip().partition("::")
    source = kit.ROOT / path
    assert source.is_file(), f"{page}: {path} does not exist"
    if test:
        tree = ast.parse(source.read_text(encoding="utf-8"))
        names = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
        assert test in names, f"{page}: {path} has no {test}"
        return
    script = " ".join(source.read_text(encoding="utf-8").split())
    for line in commands(body):
        assert " ".join(line.split("  #")[0].split()) in script, f"{page}: {path} does not run {line!r}"


def test_every_relative_link_of_the_readme_is_there() -> None:
    text = (kit.ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\((?!https?:|#)([^)#]+)", text)
    assert links, "the README links no page"
    missing = [link for link in links if not (kit.ROOT / link).exists()]
    assert not missing, missing


@pytest.fixture
def scratch(tmp_path: Path, reference_folder: Path) -> Path:
    """A folder as the commands' examples assume it."""
    for folder in ("lab07_attention", "path/to/my/folder", "submissions/bob"):
        shutil.copytree(kit.STUBS, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(reference_folder, tmp_path / "submissions" / "alice", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "my-course.secret").write_text("a course secret for the documentation's commands\n", encoding="utf-8")
    return tmp_path


@pytest.fixture
def reference_folder() -> Path:
    return kit.SOLUTIONS


RUN = [(p, n, b) for p, n, k, _, b in BLOCKS if k == "run"]


@pytest.mark.parametrize("page, number, body", RUN, ids=[f"{p}#{n + 1}" for p, n, _ in RUN])
def test_a_run_block_runs(scratch: Path, page: str, number: int, body: str) -> None:
    env = {**os.environ, "ATTNLAB_KIT": str(kit.ROOT), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env.pop("ATTNLAB_LANG", None)
    for line in commands(body):
        done = subprocess.run(
            ["bash", "-c", line], cwd=scratch, env=env, capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode == 0, f"{page} block {number + 1}: {line}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
