"""Nothing destructive without a guard: ``--force`` replaces only what the kit wrote, and the course secret stays.

``attnlab release OUT --force`` once removed the whole instructor repository (``release . --force --kit .``). Now a
folder that holds the kit, a git repository, the current folder or a home is never written into or removed, and a
bundle is replaced only while every file in it is one the release wrote (its manifest), unchanged. The Gradescope
zip's course secret is kept beside the zip and read again by every rebuild.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from autograder import cli
from autograder.base.kit import Kit
from autograder.cli import common
from autograder.deliver.gradescope import build as zip_build
from autograder.deliver.release import bundle, guard
from tests import kit


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): b"" if p.is_dir() else p.read_bytes() for p in folder.rglob("*")}


@pytest.fixture
def fake_kit(tmp_path: Path) -> Path:
    """A folder that is a kit (solutions/ and hidden/ of the lab), a git repository with notes of its own."""
    root = tmp_path / "kit"
    (root / "solutions" / "lab07_attention").mkdir(parents=True)
    (root / "hidden" / "lab07_attention").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "notes.md").write_text("uncommitted notes\n", encoding="utf-8")
    return root


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    status = cli.main(argv)
    out, err = capsys.readouterr()
    assert status == common.EXIT_USAGE, out + err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


def test_release_into_the_kit_itself_is_refused_and_touches_nothing(
    fake_kit: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fake_kit)
    before = tree(fake_kit)
    line = refused(["release", ".", "--force", "--kit", "."], capsys)
    assert "holds the instructor kit" in line or "holds the current folder" in line
    assert tree(fake_kit) == before


@pytest.mark.parametrize("where", ["parent of the kit", "git repository", "home", "parent of the current folder"])
def test_force_never_removes_a_guarded_folder(
    fake_kit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = {
        "parent of the kit": tmp_path,
        "git repository": tmp_path / "repo",
        "home": tmp_path / "home",
        "parent of the current folder": tmp_path / "work",
    }[where]
    if where == "git repository":
        (target / "deep" / ".git").mkdir(parents=True)
    if where == "home":
        (target / "me").mkdir(parents=True)
        monkeypatch.setenv("HOME", str(target / "me"))
    if where == "parent of the current folder":
        (target / "here").mkdir(parents=True)
        monkeypatch.chdir(target / "here")
    else:
        monkeypatch.chdir(elsewhere)
    (target / "mine.txt").write_text("not the kit's\n", encoding="utf-8")
    before = tree(target)
    with pytest.raises(bundle.ReleaseError, match=r"the bundle is never written there|--force never removes"):
        bundle.build(Kit(fake_kit), target, force=True)
    assert tree(target) == before


def test_force_replaces_only_a_bundle_the_release_wrote_unchanged(student_bundle, tmp_path: Path) -> None:
    copy = tmp_path / "bundle"
    shutil.copytree(student_bundle.root, copy, symlinks=True)
    guard.replaceable(copy, "release", kit.ROOT)  # as written: may be replaced
    readme = copy / "README.md"
    readme.chmod(0o644)
    readme.write_text(readme.read_text(encoding="utf-8") + "a TA's note\n", encoding="utf-8")
    with pytest.raises(guard.Refused, match=r"README\.md was not written by attnlab release"):
        guard.replaceable(copy, "release", kit.ROOT)
    readme.unlink()
    (copy / "lab07_attention" / "my_solution.py").write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(guard.Refused, match=r"my_solution\.py was not written"):
        guard.replaceable(copy, "release", kit.ROOT)
    other = tmp_path / "other"
    other.mkdir()
    (other / "photo.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(guard.Refused, match=r"has no \.attnlab-manifest\.json"):
        guard.replaceable(other, "release", kit.ROOT)
    with pytest.raises(bundle.ReleaseError, match=r"has no \.attnlab-manifest\.json"):
        bundle.build(kit.KIT, other, force=True)
    assert (other / "photo.jpg").read_bytes() == b"\xff\xd8"


def test_the_bundle_lists_what_it_wrote(student_bundle) -> None:
    listed = guard.files_of(student_bundle.root)
    assert "README.md" in listed and student_bundle.wheel.name in listed
    assert (student_bundle.root / guard.MANIFEST).is_file()


def test_nbgrader_course_force_rewrites_only_a_course_the_kit_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    course = tmp_path / "course"
    (course / "private" / "hidden").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text("c = get_config()  # my own course\n", encoding="utf-8")
    (course / "private" / "hidden" / "mine.py").write_text("x = 1\n", encoding="utf-8")
    before = tree(course)
    assert "was not written by attnlab nbgrader-course" in refused(["nbgrader-course", "course", "--force"], capsys)
    assert tree(course) == before


def test_a_rebuilt_zip_keeps_the_course_secret(tmp_path: Path) -> None:
    out = tmp_path / "autograder.zip"
    secret, kept = zip_build.course_secret(out, None)
    assert kept == tmp_path / "course.secret" and len(secret) == 64
    assert kept.read_text(encoding="utf-8").strip() == secret and kept.stat().st_mode & 0o777 == 0o600
    assert zip_build.course_secret(out, None) == (secret, kept), "a rebuild made a new secret"
    assert zip_build.course_secret(out, "given") == ("given", None)
    assert kept.read_text(encoding="utf-8").strip() == secret
    kept.write_text("\n", encoding="utf-8")
    with pytest.raises(zip_build.ZipError, match="is empty"):
        zip_build.course_secret(out, None)


def test_the_gradescope_command_builds_with_the_kept_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[zip_build.ZipOptions] = []

    def fake_build(options: zip_build.ZipOptions) -> Path:
        built.append(options)
        options.out.write_bytes(b"")
        return options.out

    monkeypatch.setattr(zip_build, "build", fake_build)
    monkeypatch.delenv("ATTNLAB_SECRET", raising=False)
    out = tmp_path / "lab.zip"
    assert cli.main(["gradescope", str(out)]) == 0
    out.unlink()
    assert cli.main(["gradescope", str(out), "--timeout", "5"]) == 0
    first, again = built
    assert first.secret == again.secret == (tmp_path / "course.secret").read_text(encoding="utf-8").strip()
    assert "course.secret" in capsys.readouterr().out
    assert os.stat(tmp_path / "course.secret").st_mode & 0o777 == 0o600
