"""The attack suite: each submission tries one class of attack by every route we know; grading must hold.

For every attack and every isolation layer this machine has (and the namespaces layer once more without the
audit hook, so that the operating system's isolation is proven on its own), the attack is graded through the
``attnlab`` command in a fresh process, with the reference graded right after in the same process, and again in
a new one. Each test asserts:

- the step scores no more than the stub (every check raises ``NotImplementedError``): 0;
- nothing outside the working copy was read (each attempt reports how it ended, and reads must fail; the canary
  token never reaches the report) or written (canary folders, the kit copy, another student's folder, the
  site-packages, the host's ``/tmp`` and ``/dev/shm`` are unchanged);
- no process outlives grading;
- the report is complete (every check of the step) and true, on screen and on disk, also seconds later;
- the reference graded right after, in the same process and in a new one, scores full marks.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import site
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.base import tasks
from autograder.sandbox import cgroup, isolation
from autograder.sandbox.isolation import Level
from tests import kit, layers

HERE = Path(__file__).parent
ATTACKS = ("readers", "writers", "processes", "replies", "fillers", "hogs", "shm")
# attempts that may succeed without harm: what they return is checked (no token, nothing found) and what they
# did is checked on the host (nothing written there, nothing left running)
HARMLESS_OK = {
    "readers": {"copies": "0", "scan_env": "0", "environ": None, "cmdline": None},
    # the shared folders: private to the child (namespaces), or cleaned of what its uid left (user); checked below
    "writers": {"tmp": None, "shm": None, "warm": "0", "ww_run_lock": None, "ww_var_tmp": None, "ww_dev_mqueue": None},
    "processes": None,  # starting processes inside the sandbox is allowed; none may survive, nothing may stop
    "replies": None,
    "fillers": {},  # no fill may finish: the working copy and /tmp are bounded (the write fails, or the child ends)
    "hogs": {},  # no thread, process or memory outside the child's walls: each attempt fails
    "shm": {},  # the namespaces layer's /dev/shm is full (the write fails), elsewhere the memory cgroup ends the child
}
SOFTMAX = """import _targets
from _attack import run


def softmax(x, axis=-1):
    raise NotImplementedError(run(_targets.TARGETS, x))
"""
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class Setting:
    """One isolation setting the suite grades each attack at."""

    level: Level
    hook: bool = True
    python: str = sys.executable  # the user layer may need a Python other users can read

    @property
    def id(self) -> str:
        return self.level.label + ("" if self.hook else "-without-hook")


def settings() -> list[Setting]:
    """Every layer that works here; the namespaces layer also without the audit hook; the user layer also
    without the hook, with a Python other users can read where this one is closed to them."""
    found = [Setting(level) for level in layers.testable() if level != Level.USER]
    if Level.NAMESPACES in layers.testable():
        found.append(Setting(Level.NAMESPACES, hook=False))
    python = layers.user_python()
    if python is not None:
        found += [Setting(Level.USER, python=python), Setting(Level.USER, hook=False, python=python)]
    return found


@dataclass(frozen=True)
class Stage:
    """The fake kit, the other student and the canaries around one attack."""

    root: Path
    token: str  # the canaries' content: it must never reach the report
    scratch: str  # the name of files the attack tries to leave behind

    @property
    def kit(self) -> Path:
        return self.root / "kit"

    @property
    def hidden(self) -> Path:
        return self.kit / "hidden" / tasks.LAB

    @property
    def reference(self) -> Path:
        return self.kit / "solutions" / tasks.LAB

    @property
    def other(self) -> Path:
        return self.root / "other-student"

    @property
    def outside(self) -> Path:
        return self.root / "outside"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def secret(self) -> Path:
        return self.root / "course-secret"

    def watched(self) -> list[Path]:
        return [self.kit, self.other, self.outside, self.home, self.secret]


def _stage(root: Path) -> Stage:
    stage = Stage(root, f"canary{secrets.token_hex(8)}", f"attack-scratch-{secrets.token_hex(8)}")
    ignore = shutil.ignore_patterns("__pycache__", "reports")
    shutil.copytree(kit.HIDDEN, stage.hidden, ignore=ignore)
    shutil.copytree(kit.SOLUTIONS, stage.reference, ignore=ignore)
    shutil.copytree(kit.SOLUTIONS, stage.other, ignore=ignore)
    for folder in (stage.outside, stage.home):
        folder.mkdir()
    for path in (stage.hidden / "canary.txt", stage.reference / "canary.txt", stage.other / "canary.txt"):
        path.write_text(stage.token)
    (stage.home / "canary.txt").write_text(stage.token)
    stage.secret.write_text(stage.token)
    return stage


def _snapshot(paths: list[Path]) -> dict[str, str]:
    """Every file and folder under ``paths`` with its content's digest and mode."""
    found = {}
    for top in paths:
        for path in [top, *sorted(top.rglob("*"))] if top.is_dir() else [top]:
            info = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
            found[str(path)] = f"{oct(info.st_mode)} {digest}"
    return found


def _listing(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _instructor_readable() -> bool:
    from autograder.base.kit import PACKAGE

    return isolation.readable_by_others(PACKAGE / "deliver" / "nbgrader_course" / "notebook.py")


def _site_folders() -> list[Path]:
    return [Path(p) for p in {*site.getsitepackages(), *(p for p in sys.path if p.endswith("site-packages"))}]


def _submission(stage: Stage, attack: str, into: Path, json_path: Path, marker: str) -> Path:
    folder = into / f"attack-{attack}"
    shutil.copytree(kit.STUBS, folder, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    (folder / "softmax.py").write_text(SOFTMAX)
    shutil.copyfile(HERE / f"{attack}.py", folder / "_attack.py")
    shutil.copyfile(HERE / "attempts.py", folder / "_attempts.py")
    (folder / "link_to_hidden").symlink_to(stage.hidden / "canary.txt")
    targets = {
        "token": stage.token,
        "secrets": {
            "hidden": str(stage.hidden / "canary.txt"),
            "reference": str(stage.reference / "canary.txt"),
            "other": str(stage.other / "canary.txt"),
            "home": str(stage.home / "canary.txt"),
            "secret": str(stage.secret),
        },
        "secret": str(stage.secret),
        "outside": str(stage.outside),
        "other": str(stage.other / "softmax.py"),
        "kit": str(stage.hidden),
        "reference": str(stage.reference),
        "json": str(json_path),
        "pth": f"{stage.scratch}.pth",
        "scratch": stage.scratch,
        "marker": marker,
    }
    (folder / "_targets.py").write_text(
        f"TARGETS = {json.dumps(targets)!r}\nimport json\nTARGETS = json.loads(TARGETS)\n"
    )
    return folder


@pytest.fixture()
def warm() -> Iterator[tuple[socket.socket, int]]:
    """A listening socket where a warm grading server of this user would listen, and its inode."""
    folder = Path("/tmp") / f"attnlab-{os.getuid()}-decoy-{secrets.token_hex(6)}"
    folder.mkdir(mode=0o700)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
            listener.bind(str(folder / "grader.sock"))
            listener.listen(1)
            yield listener, os.stat(folder / "grader.sock").st_ino
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _survivors(marker: str) -> list[str]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if marker in cmdline:
                found.append(f"{name}: {cmdline}")
    return found


def _attempts(messages: list[str]) -> dict[str, str]:
    """``{attempt: result}`` from the messages that carry an attack's summary."""
    found: dict[str, str] = {}
    for message in messages:
        plain = re.sub(r"\\(.)", r"\1", message)  # the --json file is Gradescope's Markdown: scan\_env is scan_env
        for match in re.finditer(r"(\w+)=(ok:\S*|[A-Z]\w*)", plain.partition("ATTACK ")[2]):
            found.setdefault(match.group(1), match.group(2))
    return found


def _env(stage: Stage, setting: Setting) -> dict[str, str]:
    return {
        **os.environ,
        isolation.ENV_LEVEL: setting.level.label,
        "ATTNLAB_SECRET": stage.token,
        "HOME": str(stage.home),
        "ATTNLAB_KIT": str(stage.kit),
    }


@pytest.mark.slow
@pytest.mark.parametrize("setting", settings(), ids=lambda s: s.id)
@pytest.mark.parametrize("attack", ATTACKS)
def test_the_attack_gains_nothing_and_leaves_nothing(
    attack: str, setting: Setting, tmp_path: Path, warm: tuple[socket.socket, int]
) -> None:
    stage = _stage(tmp_path / "stage")
    attack_json, reference_json = tmp_path / "attack.json", tmp_path / "reference.json"
    marker = f"31.{secrets.randbelow(10**8):08d}"  # what every process the attack starts runs: sleep 31.xxxxxxxx
    folder = _submission(stage, attack, tmp_path, attack_json, marker)
    before = _snapshot(stage.watched())
    sites = {str(p): sorted(os.listdir(p)) for p in _site_folders() if p.is_dir()}
    command = [setting.python, "-m", "tests.attacks.driver", str(folder), str(stage.reference), str(stage.hidden)]
    command += [str(attack_json), str(reference_json), str(kit.TEST_SEED), "hook" if setting.hook else "no-hook"]
    started = time.monotonic()
    done = subprocess.run(command, cwd=kit.ROOT, env=_env(stage, setting), capture_output=True, text=True, timeout=400)
    screen = done.stdout
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-3000:]}\n{screen[-3000:]}"
    time.sleep(2.0)  # a process that outlived grading would rewrite the report now
    written = attack_json.read_text(encoding="utf-8")

    # the report: complete, true, the same on screen and on disk, nothing that repaints a terminal
    results = json.loads(written)
    reference = json.loads(reference_json.read_text(encoding="utf-8"))
    assert [t["name"] for t in results["tests"]] == [t["name"] for t in reference["tests"]], "checks are missing"
    assert results["score"] == 0 and all(t["score"] == 0 for t in results["tests"]), results
    attack_screen = screen.partition("=== the reference, same process ===")[0]
    assert re.search(r"^Total\s+0\s+10\b", attack_screen, re.M), attack_screen
    assert f"isolation: {setting.level.label}" in attack_screen
    assert results["extra_data"]["isolation"] == setting.level.label
    for text in (screen, written):
        assert not CONTROL.search(text), f"a control character reached the report: {CONTROL.search(text)!r}"
        assert "\\u001b" not in text and stage.token not in text, "the canary or an escape reached the report"
    messages = [t["output"] for t in results["tests"]]
    assert not any("grader itself failed" in m for m in messages)
    if attack == "replies":
        unreadable = {m.partition("cannot read")[2][:60] for m in messages if "cannot read" in m}
        assert len(unreadable) >= 3, messages
    elif attack == "fillers":  # the tmpfs fills up (the write fails), or the keeper stops the child at its quota
        assert any("ATTACK" in m or "wrote more than" in m for m in messages), messages
    elif attack == "shm":  # every attempt fails, or the child's memory cgroup ends it
        assert any("ATTACK" in m or "SIGKILL" in m for m in messages), messages
    else:
        assert any("ATTACK" in m for m in messages), f"the attack did not run: {messages}"

    # every attempt failed, or did something harmless
    allowed = HARMLESS_OK[attack]
    if attack == "readers" and setting.level == Level.USER and _instructor_readable():
        allowed = {**allowed, "instructor": None}  # the threat table's "files readable by every user"
    if attack == "shm" and setting.level == Level.USER and not setting.hook and not cgroup.support().gives("memory"):
        allowed = {**allowed, "shm_files": None}  # the README's gap: the host's tmpfs, without a memory cgroup
    for name, result in _attempts(messages).items():
        if result.startswith("ok:") and allowed is not None:
            assert name in allowed, f"{name} worked: {result}"
            assert allowed[name] is None or result == f"ok:{allowed[name]}", f"{name} found something: {result}"

    # nothing outside the working copy changed; nothing left running
    assert _snapshot(stage.watched()) == before, "a file outside the working copy changed"
    assert {str(p): sorted(os.listdir(p)) for p in _site_folders() if p.is_dir()} == sites, "site-packages changed"
    for folder in ("/tmp", "/dev/shm", "/var/tmp", "/run/lock", "/dev/mqueue"):  # nothing left for the next sandbox
        assert not [name for name in _listing(folder) if name.startswith(stage.scratch)], f"left in {folder}"
    assert _survivors(marker) == [], "processes outlived grading"
    listener, inode = warm
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.connect(listener.getsockname())  # still ours: nobody removed it or listens in its place
    assert os.stat(listener.getsockname()).st_ino == inode
    assert time.monotonic() - started < 300, "the grader was held up"

    # the reference right after: the same process, then a new one
    assert reference["score"] == reference["max_score"] > 0, reference
    fresh = subprocess.run(
        [setting.python, "-m", "autograder", "grade", str(stage.reference), "--step", "softmax", "--seed",
         str(kit.TEST_SEED), "--hidden", str(stage.hidden), "--reference", str(stage.reference),
         "--json", str(tmp_path / "fresh.json")],
        cwd=tmp_path, env=_env(stage, setting), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    again = json.loads((tmp_path / "fresh.json").read_text())
    assert again["score"] == again["max_score"] == reference["max_score"]
