"""Hostile hand-ins before and around the sandbox: what a hand-in's files, shape and names do to the grader.

One class of two honest classmates and one hostile hand-in per class of attack, graded through every path:
``attnlab grade-batch -j 2`` (the real command, in a fresh process, at every isolation layer this machine has),
``--dask`` on a ``LocalCluster``, the Gradescope runner in a simulated ``/autograder`` and the nbgrader grade
cells' request. Only the softmax step is graded: it is what each attack needs to prove its point.

- ``links``: its softmax.py is a link to a classmate's, its toy model's weights a dangling link into the other
  classmate's folder (the grader used to write through it), a FIFO, a socket, a link to ``/proc/self/mem``;
- ``deep``: folders a thousand deep (a recursive walk used to crash the whole batch before anyone was graded);
- ``snoop``: reads every command line in ``/proc`` for folders and looks there for its classmates' files;
- ``filler``: fills the filesystem its working copy lives on, so that its classmates' copies fail;
- a folder name and a notebook name full of terminal escapes (they used to clear the instructor's screen).

Each must leave the classmates' scores and folders unchanged, get a row of its own with its reason, and never
stop the batch; no escape reaches a terminal, the CSV, a page or ``results.json``.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.base import safefs, tasks
from autograder.sandbox import isolation
from autograder.sandbox.isolation import Level
from tests import kit, layers

LAB = tasks.LAB
POINTS = tasks.step("softmax").points
ESC = "\x1b"
ANSI = "\x1b[2J\x1b[Hansi"  # a folder name that clears a terminal
SNOOP = """
import os

import sys

TOKEN = {token!r}
READ = []


def _look(top, found):
    if top.startswith((sys.prefix, sys.base_prefix, "/usr", "/opt/attnlab", "/proc")):
        return found  # Python and the system: no hand-in there
    for parent, folders, files in os.walk(top):
        if parent.count("/") > 12 or len(READ) > 3000:
            folders.clear()
        for name in files:
            READ.append(name)
            try:
                with open(os.path.join(parent, name), encoding="utf-8", errors="replace") as file:
                    found += TOKEN in file.read(100000)
            except OSError:
                pass
    return found


def softmax(x, axis=-1):
    paths, found = set(), 0
    try:
        pids = os.listdir("/proc")
    except OSError:  # the audit hook refuses it: the namespaces and user layers are proven without it below
        pids = []
    for pid in pids:
        try:
            with open(f"/proc/{{pid}}/cmdline", "rb") as file:
                words = file.read().decode(errors="replace").split("\\0")
        except OSError:
            continue
        paths.update(w for w in words if w.startswith("/") and os.path.isdir(w))
    for path in sorted(paths):
        found = _look(path, found)
    raise NotImplementedError(f"SNOOP paths={{len(paths)}} found={{found}}")
"""
FILLER = """
import os

_chunk = b"\\0" * (1 << 20)
try:
    for _index in range(4096 // 16):
        with open(f"filler-{_index}", "wb") as _file:
            for _ in range(16):
                _file.write(_chunk)
except OSError:
    pass

from reference_softmax import softmax  # noqa: E402,F401  (correct, once the disk is full)
"""


@dataclass(frozen=True)
class Class:
    root: Path  # the submissions folder
    outside: Path  # where links point and dangling ones would be written through
    token: str  # in each honest classmate's files: must never reach another row

    @property
    def honest(self) -> tuple[Path, Path]:
        return self.root / "ann", self.root / "bob"


def _snapshot(*folders: Path) -> dict[str, str]:
    found = {}
    for top in folders:
        for path in sorted(top.rglob("*")):
            found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "folder"
    return found


def _reference(folder: Path) -> Path:
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    return folder


def make_class(root: Path, token: str) -> Class:
    """Two honest classmates and one hostile hand-in per class, in ``root`` (readable by every user, as collected
    hand-ins usually are)."""
    import socket

    import nbformat

    root.mkdir(parents=True)
    outside = root.parent / "outside"
    outside.mkdir()
    ann, bob = _reference(root / "ann"), _reference(root / "bob")
    for folder in (ann, bob):
        (folder / "canary.txt").write_text(token, encoding="utf-8")
        (folder / "softmax.py").write_text(f"# {token}\n" + (folder / "softmax.py").read_text("utf-8"), "utf-8")
    links = _reference(root / "links")
    (links / "softmax.py").unlink()
    (links / "softmax.py").symlink_to(ann / "softmax.py")  # a classmate's module
    (links / "toy_gpt_weights.npz").unlink()
    (links / "toy_gpt_weights.npz").symlink_to(bob / "stolen.npz")  # dangling: the grader would write there
    (links / "mem.py").symlink_to("/proc/self/mem")
    (links / "out").symlink_to(outside, target_is_directory=True)
    (links / "scaling.py").unlink()
    (links / "mask.py").unlink()
    os.mkfifo(links / "scaling.py")
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(links / "mask.py"))
    deep = _reference(root / "deep")
    inner = deep
    for _ in range(1000):
        inner = inner / "d"
        inner.mkdir()
    snoop = root / "snoop"
    shutil.copytree(kit.STUBS, snoop, ignore=shutil.ignore_patterns("__pycache__"))
    (snoop / "softmax.py").write_text(SNOOP.format(token=token), encoding="utf-8")
    filler = _reference(root / "filler")
    (filler / "reference_softmax.py").write_text((filler / "softmax.py").read_text("utf-8"), encoding="utf-8")
    (filler / "softmax.py").write_text(FILLER, encoding="utf-8")
    named = root / ANSI
    named.mkdir()
    (named / f"{ESC}[31mwork{ESC}[0m.ipynb").write_text("{not json", encoding="utf-8")  # a broken notebook
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("%%writefile softmax.py\n" + ESC + "[2J")])
    (root / "notebook").mkdir()
    nbformat.write(book, root / "notebook" / f"{ESC}[2Jx.ipynb")
    return Class(root, outside, token)  # modes as the umask (022) made them: readable by every user


@pytest.fixture()
def hand_ins() -> Iterator[Class]:
    """The class, under /var/tmp (readable by every user: the user layer's student uid must be able to try)."""
    place = Path(tempfile.mkdtemp(prefix="attnlab-class-", dir="/var/tmp" if Path("/var/tmp").is_dir() else None))
    place.chmod(0o755)
    try:
        yield make_class(place / "submitted", f"classmate{os.urandom(6).hex()}")
    finally:
        safefs.remove_tree(place)  # shutil.rmtree recurses once per level: the deep hand-in would break it


def _watch_command_lines(process: subprocess.Popen, secret: str) -> list[str]:
    """While ``process`` runs: the command lines that name ``secret`` at moments when student code is running (a
    process of a sandbox's own uid exists), as student code at the user layer could read them in ``/proc``.

    ``process``'s own command line counts once it has started itself again without its arguments (same pid, a
    command line without ``secret``): before that, none of its students' code has run, and a sandbox process seen
    then is another test's (the first tier runs tests in parallel)."""
    import time

    from autograder.sandbox.launcher import USER_UID_BASE

    seen, own = [], ""
    hidden = False  # process has started itself again, its arguments in a descriptor
    while process.poll() is None:
        lines, students = [], False
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                students |= os.stat(f"/proc/{name}").st_uid >= USER_UID_BASE
                line = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if int(name) == process.pid:
                own, hidden = own or line, hidden or (bool(line) and secret not in line)
                if not hidden:
                    continue
            lines.append(line)
        if students:
            seen += [line for line in lines if secret in line]
        time.sleep(0.2)
    if own and not hidden:  # it kept its arguments on its command line the whole time
        seen.append(own)
    return seen


def layer_settings() -> list[tuple[Level, str]]:
    """Every layer this machine has, with the Python that can grade there."""
    found = [(level, sys.executable) for level in layers.testable() if level != Level.USER]
    python = layers.user_python()
    if python is not None:
        found.append((Level.USER, python))
    return found


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


def _assert_the_class_held(group: Class, rows: dict[str, dict[str, str]], out: Path, before: dict[str, str]) -> None:
    """Honest classmates at full marks; every hostile hand-in a row of its own with its reason; nothing changed
    outside the grader's copies; no escape in any file written."""
    assert set(rows) == {"ann", "bob", "links", "deep", "snoop", "filler", "notebook", "\\x1b[2J\\x1b[Hansi"}, rows
    for honest in ("ann", "bob"):
        assert rows[honest]["status"] == "graded" and float(rows[honest]["total"]) == POINTS, rows[honest]
    assert rows["links"]["status"] == "graded" and float(rows["links"]["softmax"]) == 0
    links = json.loads((out / "students" / "links.json").read_text(encoding="utf-8"))
    kinds = {(item["path"], item["kind"]) for item in links["report"]["report"]["ignored"]}
    assert {("softmax.py", "link"), ("scaling.py", "fifo"), ("mask.py", "socket")} <= kinds
    assert rows["deep"]["status"] == "failed" and "nested more than 32 deep" in rows["deep"]["reason"]
    assert rows["snoop"]["status"] == "graded" and float(rows["snoop"]["total"]) == 0
    snoop = json.loads((out / "students" / "snoop.json").read_text(encoding="utf-8"))
    said = " ".join(c["message"] for s in snoop["report"]["report"]["steps"] for c in s["checks"])
    assert "SNOOP" in said and "found=0" in said, said
    assert rows["filler"]["status"] == "graded"  # its own checks may fail; its classmates' do not
    assert (
        rows["\\x1b[2J\\x1b[Hansi"]["status"] == "failed"
        and "could not be read" in rows["\\x1b[2J\\x1b[Hansi"]["reason"]
    )
    assert rows["notebook"]["status"] == "graded"
    assert _snapshot(*group.honest, group.outside) == before, "a classmate's folder or a link's target changed"
    assert not (group.honest[1] / "stolen.npz").exists(), "the grader wrote through a dangling link"
    for written in [*out.rglob("*.json"), *out.rglob("*.html"), *out.rglob("*.md")]:
        text = written.read_text(encoding="utf-8", errors="replace")
        assert ESC not in text and group.token not in text.replace(f"# {group.token}", ""), written


@pytest.mark.slow
@pytest.mark.parametrize("level, python", layer_settings(), ids=lambda value: getattr(value, "label", ""))
def test_grade_batch_holds_against_every_hostile_hand_in(hand_ins: Class, level: Level, python: str) -> None:
    before = _snapshot(*hand_ins.honest, hand_ins.outside)
    out = hand_ins.root.parent / "graded"
    command = [python, "-m", "autograder", "grade-batch", str(hand_ins.root), "--csv", str(out / "grades.csv"),
               "--out", str(out), "-j", "2", "--step", "softmax", "--no-progress", "--deadline", "240"]  # fmt: skip
    if level == Level.USER:
        command.append("--private-copies")  # the hand-ins are readable by every user, so the snoop needs it closed
    env = {**os.environ, isolation.ENV_LEVEL: level.label, "ATTNLAB_SECRET": "hand-ins", "ATTNLAB_KIT": str(kit.ROOT)}
    with subprocess.Popen(command, cwd=hand_ins.root.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as process:  # fmt: skip
        seen = _watch_command_lines(process, str(hand_ins.root))
        stdout, stderr = process.communicate(timeout=900)
    done = subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    if level == Level.USER:  # while student code ran, no command line named the hand-ins (it could read them all)
        assert seen == [], seen
    assert ESC not in done.stdout and ESC not in done.stderr, "a name from a hand-in reached the terminal raw"
    assert f"isolation of student code: {level.label}" in done.stderr
    assert "not graded: deep: Your hand-in was not graded" in done.stdout
    assert "not graded: \\x1b[2J\\x1b[Hansi" in done.stdout
    _assert_the_class_held(hand_ins, _rows(out / "grades.csv"), out, before)
    if level == Level.USER:
        assert (hand_ins.root.stat().st_mode & 0o007) == 0o005, "the submissions folder was not opened again"


def test_the_batch_warns_when_other_users_can_read_the_hand_ins(hand_ins: Class, monkeypatch) -> None:
    from autograder.deliver.batch import run as batch

    options = batch.BatchOptions(hand_ins.root, Path("g.csv"), Path("g"), None, None, "s")
    assert not any("readable by other users" in line for line in batch.first_lines(options, Level.NAMESPACES))
    lines = batch.first_lines(options, Level.USER)
    assert any("readable by other users" in line and "--private-copies" in line for line in lines), lines
    hand_ins.root.chmod(0o700)
    assert not any("warning" in line for line in batch.first_lines(options, Level.USER))


@pytest.mark.slow
def test_dask_jobs_hold_against_hostile_hand_ins(hand_ins: Class, tmp_path: Path) -> None:
    """The same class on a Dask LocalCluster: every student a row, the classmates at full marks."""
    from distributed import LocalCluster

    from autograder.deliver.batch import run as batch

    before = _snapshot(*hand_ins.honest, hand_ins.outside)
    out = tmp_path / "graded"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        done = batch.run(
            batch.BatchOptions(
                submissions=hand_ins.root, csv=out / "grades.csv", out=out, hidden=kit.HIDDEN,
                reference=kit.SOLUTIONS, secret="hand-ins", given=kit.SOLUTIONS, steps=("softmax",), deadline_s=240,
                dask=cluster.scheduler_address, progress=False,
            )
        )  # fmt: skip
    assert done.grader_failures == 0
    _assert_the_class_held(hand_ins, _rows(out / "grades.csv"), out, before)


def _gradescope_root(place: Path, upload: Path) -> Path:
    """A simulated ``/autograder`` holding the kit as the zip does and ``upload`` as the submission."""
    from autograder.deliver.gradescope import runner

    root = place / "autograder"
    shutil.copytree(kit.HIDDEN, root / "source" / runner.KIT / "hidden" / LAB)
    shutil.copytree(kit.SOLUTIONS, root / "source" / runner.KIT / "solutions" / LAB)
    settings = {"secret": "gs", "deadline_s": 240.0, "limits": {}, "steps": ["softmax"]}
    (root / "source" / runner.SETTINGS).write_text(json.dumps(settings), encoding="utf-8")
    os.rename(upload, root / "submission")  # moved as it is: links, FIFOs, sockets and depth included
    (root / "results").mkdir()
    return root


GRADESCOPE = "import sys\nfrom autograder.deliver.gradescope import runner\nsys.exit(runner.main())\n"
GRADE_CELLS = """
import json, sys
from pathlib import Path
from autograder.deliver.nbgrader_course import cells

found = {}
for student in ("links", "deep"):
    outcome = cells._grade_once(Path(sys.argv[1]) / student, ("softmax",), None)
    report = outcome.report
    found[student] = {
        "failure": outcome.failure,
        "earned": report.step("softmax").earned if report else None,
        "ignored": [[i.path, i.kind] for i in report.ignored] if report else [],
        "isolation": report.isolation if report else None,
    }
print(json.dumps(found))
"""


def _env(level: Level, **more: str) -> dict[str, str]:
    return {**os.environ, isolation.ENV_LEVEL: level.label, "ATTNLAB_KIT": str(kit.ROOT), **more}


@pytest.mark.slow
@pytest.mark.parametrize("level, python", layer_settings(), ids=lambda value: getattr(value, "label", ""))
@pytest.mark.parametrize("student", ["links", "deep"])
def test_the_gradescope_runner_holds_against_hostile_uploads(
    hand_ins: Class, student: str, level: Level, python: str
) -> None:
    from autograder.deliver.gradescope import runner

    root = _gradescope_root(hand_ins.root.parent, hand_ins.root / student)
    before = _snapshot(*hand_ins.honest, hand_ins.outside)
    done = subprocess.run([python, "-c", GRADESCOPE], env=_env(level, **{runner.ENV_ROOT: str(root)}), cwd="/",
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    written = (root / "results" / "results.json").read_text(encoding="utf-8")
    document = json.loads(written)
    assert ESC not in written and document["score"] == 0
    if student == "deep":
        assert document["tests"] == [] and "nested more than 32 deep" in document["output"]
    else:
        assert document["extra_data"]["isolation"] == level.label
        softmax = [t for t in document["tests"] if t["tags"][0] == "softmax"]
        assert softmax and all(t["score"] == 0 for t in softmax)
        assert any("symbolic link" in t["output"] for t in softmax)
    assert _snapshot(*hand_ins.honest, hand_ins.outside) == before


@pytest.mark.slow
@pytest.mark.parametrize("level, python", layer_settings(), ids=lambda value: getattr(value, "label", ""))
def test_the_nbgrader_grade_cells_hold_against_hostile_hand_ins(hand_ins: Class, level: Level, python: str) -> None:
    """The grade cells' request (the notebook's folder, public checks) through the same intake."""
    before = _snapshot(*hand_ins.honest, hand_ins.outside)
    done = subprocess.run([python, "-c", GRADE_CELLS, str(hand_ins.root)], env=_env(level), cwd="/",
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["links"]["earned"] == 0 and found["links"]["isolation"] == level.label
    assert ["softmax.py", "link"] in found["links"]["ignored"]
    assert found["deep"]["earned"] is None
    assert found["deep"]["failure"].startswith("Your hand-in was not graded: its folders are nested")
    assert _snapshot(*hand_ins.honest, hand_ins.outside) == before
