"""What a release folder holds and who may read it: the bundle (``attnlab release``) and the nbgrader course's
source carry the handout in every language the kit has, each with its HTML page; a bundle is readable by every user
(a course web server, a TA) whatever the umask; the Gradescope zip, which holds the course secret, is not; the
student README installs the torch release the kit is tested with."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from autograder.base import tasks, versions
from autograder.deliver.release import bundle, readme
from tests import kit

LAB = tasks.LAB


def handout_pages() -> set[str]:
    pages = {p.name for p in kit.KIT.handout.parent.glob(f"{LAB}*.md")}
    return pages | {name.removesuffix(".md") + ".html" for name in pages}


def test_the_languages_come_from_the_handouts_there_are(tmp_path: Path) -> None:
    assert bundle.handout_languages(kit.KIT)[0] == "en" and "tr" in bundle.handout_languages(kit.KIT)
    from autograder.base.kit import Kit

    fake = Kit(tmp_path)
    fake.handout.parent.mkdir(parents=True)
    for name in (f"{LAB}.md", f"{LAB}.id.md", f"{LAB}.ru.md", f"{LAB}.draft-notes.md", "other.md"):
        (fake.handout.parent / name).write_text("# Lab 7\n", encoding="utf-8")
    assert bundle.handout_languages(fake) == ("en", "id", "ru")
    written = bundle.write_handouts(fake, tmp_path / "out")
    assert sorted(p.name for p in written) == sorted(
        [f"{LAB}.md", f"{LAB}.html", f"{LAB}.id.md", f"{LAB}.id.html", f"{LAB}.ru.md", f"{LAB}.ru.html"]
    )
    assert 'lang="ru"' in (tmp_path / "out" / f"{LAB}.ru.html").read_text(encoding="utf-8")


def test_the_bundle_holds_every_handout_page(student_bundle) -> None:
    assert handout_pages() <= {p.name for p in (student_bundle.lab / "handouts").iterdir()}


def test_the_bundle_is_readable_by_everyone_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        built = bundle.build(kit.KIT, tmp_path / "bundle")
    finally:
        os.umask(old)
    for path in [built.root, *built.root.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert mode == (0o755 if path.is_dir() else 0o644), f"{path}: {mode:o}"


def test_the_bundle_needs_its_folder_to_exist(tmp_path: Path) -> None:
    with pytest.raises(bundle.ReleaseError, match="does not exist"):
        bundle.build(kit.KIT, tmp_path / "missing" / "bundle")
    assert not (tmp_path / "missing").exists()


def test_the_course_source_holds_every_handout_page(tmp_path: Path) -> None:
    pytest.importorskip("nbgrader")
    from autograder.deliver.nbgrader_course import course

    course.write_course(course.CourseOptions(folder=tmp_path / "course", kit=kit.ROOT))
    source = tmp_path / "course" / "source" / LAB / "handouts"
    assert handout_pages() <= {p.name for p in source.iterdir()}


def test_the_student_readme_installs_the_tested_torch_and_says_how_to_use_another() -> None:
    text = readme.text("attnlab-0.1.0-py3-none-any.whl", inside_lab=True)
    command = f"python3 -m pip install --index-url {versions.TORCH_CPU_INDEX} torch=={versions.TESTED_TORCH}"
    lines = text.split("```sh\n")[1].split("```")[0].splitlines()
    assert lines == [command, "python3 -m pip install attnlab-0.1.0-py3-none-any.whl", "attnlab grade"]
    assert "To use another torch" in text and "`attnlab doctor`" in text and "`attnlab workbench`" in text
    assert "--extra-index-url" not in text, "a CPU index out of reach would fall back to PyPI's CUDA build"
