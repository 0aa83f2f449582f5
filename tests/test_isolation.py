"""The isolation layers: what `attnlab doctor` says, refusing a weaker layer, and what a child can see at all."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import cli
from autograder.cli.common import EXIT_USAGE
from autograder.report.gradescope import markdown_text
from autograder.sandbox import bwrap, isolation, launcher
from autograder.sandbox.client import Limits, Sandbox
from autograder.sandbox.isolation import Level
from tests import kit, layers

VIEW = """
import os, socket

def exists(path):
    return os.path.exists(path)

def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as error:
        return type(error).__name__

def pids():
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())

def ids():
    return [os.getuid(), os.geteuid(), os.getgid()]

def write(path):
    try:
        with open(path, "w") as file:
            file.write("x")
        return "written"
    except OSError as error:
        return type(error).__name__

def connect(host, port):
    try:
        socket.create_connection((host, port), timeout=1).close()
        return "connected"
    except OSError as error:
        return type(error).__name__

def caps():
    with open("/proc/self/status") as status:
        return {l.split(":")[0]: int(l.split()[1], 16) for l in status if l.startswith("Cap")}

def tree(top):
    found = []
    for parent, _, files in os.walk(top):
        found += [os.path.relpath(os.path.join(parent, name), top) for name in files]
    return sorted(found)

def writable_places():
    found = []
    for parent, folders, _ in os.walk("/"):
        if parent in ("/proc", "/sys"):
            folders.clear()
            continue
        if os.access(parent, os.W_OK):
            found.append(parent)
            folders.clear()
    return sorted(found)
"""
NAMESPACES = pytest.mark.skipif(Level.NAMESPACES not in layers.testable(), reason="bubblewrap cannot run here")


def test_doctor_names_every_layer_and_the_one_used(capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["doctor"]) == 0
    printed = capsys.readouterr().out
    for level in Level:
        assert f"] {level.label}" in printed
    assert f"Grading here uses: {isolation.choose().label}" in printed


def test_grade_refuses_a_weaker_layer_than_asked(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv(isolation.ENV_LEVEL, "hook")
    code = cli.main(["grade", str(kit.SOLUTIONS), "--step", "softmax", "--isolation", "namespaces"])
    assert code == EXIT_USAGE
    error = capsys.readouterr().err
    assert "not graded: grading needs isolation namespaces, but this machine gives only hook" in error
    assert "attnlab doctor" in error


def test_the_forced_hook_layer_grades_and_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys) -> None:
    monkeypatch.setenv(isolation.ENV_LEVEL, "hook")
    out = tmp_path / "results.json"
    assert cli.main(["grade", str(kit.SOLUTIONS), "--step", "softmax", "--json", str(out), "--isolation", "hook"]) == 0
    assert "Student code ran with isolation: hook" in capsys.readouterr().out
    results = json.loads(out.read_text())
    assert results["extra_data"]["isolation"] == "hook" and results["score"] == results["max_score"]


@pytest.fixture()
def view(tmp_path: Path):
    (tmp_path / "view.py").write_text(VIEW)
    limits = Limits(audit_hook=False, call_timeout_s=60)  # the OS layer alone
    with Sandbox(tmp_path, limits, isolation=Level.NAMESPACES) as box:
        yield box


def _inside_kit() -> set[str]:
    """The first names of the Python folders inside the kit's own tree (a clone with its ``.venv``), if any."""
    return {Path(r).relative_to(kit.ROOT).parts[0] for r in bwrap.python_roots() if Path(r).is_relative_to(kit.ROOT)}


@NAMESPACES
def test_a_namespaced_child_sees_only_what_it_needs(view: Sandbox) -> None:
    for hidden in (kit.HIDDEN, kit.SOLUTIONS, kit.ROOT / "tests", kit.ROOT / "autograder", kit.ROOT / "pyproject.toml"):
        assert not view.call("view", "exists", str(hidden)), f"{hidden} is visible"
    if _inside_kit():  # the venv inside a clone: the path to it, and nothing else of the kit
        assert set(view.call("view", "listing", str(kit.ROOT))) <= _inside_kit()
    else:
        assert not view.call("view", "exists", str(kit.ROOT))
    assert view.call("view", "listing", "/opt/attnlab") == ["autograder"]
    assert not view.call("view", "exists", "/var/attnlab"), "the fork server's folders are visible"
    home = Path.home()
    if any(root.startswith(str(home) + "/") for root in bwrap.python_roots()):
        assert set(view.call("view", "listing", str(home))) <= {".pyenv", ".local", "venvs", ".venv"}
    else:
        assert not view.call("view", "exists", str(home))
    under_tmp = {Path(root).relative_to("/tmp").parts[0] for root in bwrap.python_roots() if root.startswith("/tmp/")}
    assert set(view.call("view", "listing", "/tmp")) <= under_tmp, "/tmp holds more than a Python installed there"
    assert view.call("view", "pids") == [1, 2], "other processes are visible"


@NAMESPACES
def test_a_namespaced_child_sees_exactly_the_student_wheels_engine(view: Sandbox) -> None:
    """The public engine only: what the student wheel holds (and its bytecode), no instructor module, wherever the
    kit and its environment live; a copy of the kit installed in a site-packages is hidden too."""
    from autograder.deliver.release import contents

    mounted = view.call("view", "tree", "/opt/attnlab/autograder")
    public = {p.relative_to(contents.PACKAGE).as_posix() for p in contents.public_files()}
    for name in mounted:  # every file the wheel's, or the bytecode of one of the wheel's modules (compiled meanwhile)
        source = name.replace("__pycache__/", "").rsplit(".", 2)[0] + ".py" if name.endswith(".pyc") else name
        assert source in public, f"{name} is mounted"
    assert public <= set(mounted)
    sources = [name for name in mounted if name.endswith(".py")]
    assert sources == sorted(p.relative_to(contents.PACKAGE).as_posix() for p in contents.public_files()
                             if p.suffix == ".py")  # fmt: skip
    assert not any(name.startswith(("deliver/batch/", "deliver/release/", "deliver/handout/")) for name in mounted)
    assert "deliver/nbgrader_course/notebook.py" not in mounted and "deliver/nbgrader_course/cells.py" in mounted
    for root in bwrap.python_roots():
        for site in [Path(root), *Path(root).glob("lib*/python3*/site-packages")]:
            if (site / "autograder").is_dir():
                assert view.call("view", "listing", str(site / "autograder")) == [], f"{site}/autograder is visible"


@NAMESPACES
def test_a_namespaced_child_can_write_only_where_nothing_outlives_it(view: Sandbox) -> None:
    """Every writable place the child can reach is its own: its working copy (a tmpfs of its own, bounded), a
    private /tmp and /dev/shm. Nothing it writes persists for the next child, and nothing is shared."""
    assert view.call("view", "writable_places") == ["/dev/shm", "/sandbox", "/tmp"]


@NAMESPACES
def test_a_namespaced_child_writes_only_its_copy_and_private_tmp(view: Sandbox) -> None:
    for path in ("/usr/attack", "/opt/attnlab/autograder/attack.py", f"{bwrap.python_roots()[0]}/attack", "/attack"):
        assert view.call("view", "write", path) in ("OSError", "PermissionError"), path
    assert view.call("view", "write", "/tmp/private") == "written" and not Path("/tmp/private").exists()
    assert view.call("view", "write", "in-the-copy") == "written"


@NAMESPACES
def test_a_namespaced_child_has_no_network_and_no_privileges(view: Sandbox) -> None:
    assert view.call("view", "connect", "127.0.0.1", 22) != "connected"
    assert view.call("view", "connect", "1.1.1.1", 53) != "connected"
    caps = view.call("view", "caps")
    assert all(value == 0 for name, value in caps.items() if name != "CapBnd"), caps
    if isolation.running_as_root():
        ids = view.call("view", "ids")  # a uid of its own per child (what RLIMIT_NPROC counts), never root's
        assert len(set(ids)) == 1 and ids[0] >= launcher.USER_UID_BASE, ids


@NAMESPACES
def test_two_students_never_see_each_other(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        folder.mkdir()
        (folder / "view.py").write_text(VIEW)
        (folder / f"{folder.name}.txt").write_text(folder.name)
    limits = Limits(audit_hook=False)
    with (
        Sandbox(first, limits, isolation=Level.NAMESPACES) as a,
        Sandbox(second, limits, isolation=Level.NAMESPACES) as b,
    ):
        assert a.call("view", "listing", ".") != b.call("view", "listing", ".")
        assert "second.txt" not in a.call("view", "listing", ".") and a.call("view", "pids") == [1, 2]
        assert b.call("view", "pids") == [1, 2]
        for path in (first, second, tmp_path):  # the hand-ins themselves, the classmate's beside one's own
            assert not a.call("view", "exists", str(path)) and not b.call("view", "exists", str(path))


def test_the_listener_of_a_warm_server_is_out_of_reach(tmp_path: Path) -> None:
    """A Unix socket of the grader's user is neither visible (namespaces) nor connectable (audit hook)."""
    path = Path("/tmp") / f"attnlab-{os.getuid()}-view-{os.getpid()}.sock"
    (tmp_path / "view.py").write_text(
        VIEW + "\ndef unix(path):\n    s = socket.socket(socket.AF_UNIX)\n    s.connect(path)\n"
    )
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(path))
        listener.listen(1)
        try:
            with Sandbox(tmp_path) as box:
                assert box.run_call("view", "unix", str(path)).kind in ("raised", "refused")
        finally:
            path.unlink()


@pytest.mark.slow
def test_the_user_layer_grades_the_reference_as_another_uid(tmp_path: Path) -> None:
    python = layers.user_python()
    if python is None:
        pytest.skip("the user layer needs root and a Python other users can read")
    out = tmp_path / "results.json"
    done = subprocess.run(
        [python, "-m", "autograder", "grade", str(kit.SOLUTIONS), "--step", "softmax", "--step", "scaling",
         "--json", str(out), "--isolation", "user"],
        cwd=tmp_path, env={**os.environ, isolation.ENV_LEVEL: "user"}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(out.read_text())
    assert results["extra_data"]["isolation"] == "user" and results["score"] == results["max_score"] > 0
    if isolation.readable_by_others(kit.HIDDEN):  # the kit's own hidden graders: the report warns
        assert markdown_text(f"{kit.HIDDEN} is readable by every user") in results["output"]  # Markdown, escaped
    assert sys.executable != python or isolation._user()[0]


PROBE_PACKAGE = "attnlab_tmp_probe"
UNDER_TMP = f"""
import json, os, sys
from pathlib import Path
from autograder.sandbox.client import Limits, Sandbox

folder = Path(sys.argv[1])
(folder / "lazy.py").write_text(
    "import os\\n"
    "def value():\\n"
    "    import {PROBE_PACKAGE}.sub\\n"  # imported only now, inside the child's own mount namespace
    "    return {PROBE_PACKAGE}.sub.VALUE\\n"
    "def write_into_it():\\n"
    "    import {PROBE_PACKAGE}\\n"
    "    try:\\n"
    "        open(os.path.join(os.path.dirname({PROBE_PACKAGE}.__file__), 'planted.py'), 'w').close()\\n"
    "        return 'written'\\n"
    "    except OSError as error:\\n"
    "        return type(error).__name__\\n"
)
with Sandbox(folder, Limits(call_timeout_s=20)) as sandbox:
    print(json.dumps([sandbox.call("lazy", "value"), sandbox.call("lazy", "write_into_it"), sandbox.isolation.label]))
"""


@NAMESPACES
def test_a_python_installed_under_tmp_keeps_working_in_the_private_tmp(tmp_path: Path) -> None:
    """CI and courses make virtual environments under /tmp; each child's private /tmp must not hide them."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="attnlab-venv-", dir="/tmp") as place:
        venv = Path(place) / "venv"
        base = getattr(sys, "_base_executable", sys.executable)  # a venv of this venv's own Python
        subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
        site = next(venv.glob("lib/python3*/site-packages"))
        # this environment's packages and the kit, whichever layout they are in (a .venv in a clone, a venv
        # elsewhere, the system's Python): a venv made with --system-site-packages would reach the base Python's only
        reached = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))] + [str(kit.ROOT)]
        (site / "attnlab-test.pth").write_text("".join(f"{p}\n" for p in dict.fromkeys(reached)))
        (site / PROBE_PACKAGE).mkdir()
        (site / PROBE_PACKAGE / "__init__.py").write_text("")
        (site / PROBE_PACKAGE / "sub.py").write_text("VALUE = 42\n")
        (tmp_path / "work").mkdir()
        done = subprocess.run(
            [str(venv / "bin" / "python"), "-c", UNDER_TMP, str(tmp_path / "work")],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        value, written, used = json.loads(done.stdout.strip().splitlines()[-1])
        assert (value, used) == (42, "namespaces")
        assert written != "written" and not (site / PROBE_PACKAGE / "planted.py").exists()


def test_every_world_writable_folder_is_found_for_the_user_layer() -> None:
    """The user layer cleans what a sandbox's uid leaves in every folder any user may write (not a list of three):
    found as ``find / -xdev -perm -0002 -type d`` would, on every writable filesystem mounted here."""
    import stat

    from autograder.sandbox import writable

    # find runs first and the list is found fresh afterwards (not the cached one an earlier test may have made), so a
    # folder a parallel test makes or pytest renames for removal meanwhile is either in both or no longer there
    expected = subprocess.run(
        ["find", "/", "-xdev", "-type", "d", "-perm", "-0002"], capture_output=True, text=True, timeout=300
    ).stdout.split()
    found = writable.world_writable.__wrapped__()

    def writable_by_all_or_gone(path: str) -> bool:  # a parallel test may remove its own folder meanwhile
        try:
            return bool(os.lstat(path).st_mode & stat.S_IWOTH)
        except FileNotFoundError:
            return True

    assert "/tmp" in found and all(writable_by_all_or_gone(p) for p in found)
    assert set(expected) <= set(found) | {p for p in expected if not os.path.exists(p)}  # a folder gone meanwhile
