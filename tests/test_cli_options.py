"""Every option of every ``attnlab`` command is checked when it is parsed.

A table feeds each command every wrong kind of value (a number out of its range or no number, a folder or file
that is missing or of the other kind, an empty secret, a folder that is no kit, an output that cannot be written
or would replace a file the kit did not write, a Dask address that does not answer, an unknown option, step or
language) and asserts what a user must see: exit status 2, one line on stderr naming the command, no traceback,
nothing on stdout, nothing created or removed. The commands run in this process (their parser and their checks
are the same code as the console script's); ``ATTNLAB_EARLY=0`` keeps ``grade`` from starting its fork servers.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autograder import cli
from autograder.cli import common
from tests import kit

# (command line, words the one line must hold); paths are relative to the test's own empty folder, which holds:
# file.txt, empty.secret (empty), folder/, notes.html (a page the kit did not write), a fake kit "notakit/"
CASES: list[tuple[tuple[str, ...], str]] = [
    (("frobnicate",), "invalid choice"),
    ((), "required"),
    # grade
    (("grade", "nosuch"), "nosuch does not exist"),
    (("grade", "file.txt"), "file.txt is not a folder"),
    (("grade", "--steps", "softmax"), "attnlab grade: unknown option --steps (did you mean --step?)"),
    (("grade", "--step", "nosuch"), "--step: invalid choice"),
    (("grade", "--lang", "xx"), "--lang: invalid choice"),
    (("grade", "--isolation", "none"), "--isolation: invalid choice"),
    *[(("grade", "--timeout", value), "--timeout: takes seconds") for value in ("-1", "0", "x", "nan", "inf", "1e9")],
    *[(("grade", "--seed", value), "--seed: takes a seed") for value in ("-5", "x", "1.5", str(2**64))],
    (("grade", "--secret-file", "nosuch"), "--secret-file: nosuch does not exist"),
    (("grade", "--secret-file", "folder"), "--secret-file: folder is a folder"),
    (("grade", "--secret-file", "empty.secret"), "empty.secret is empty"),
    (("grade", "--hidden", "nosuch"), "--hidden: nosuch does not exist"),
    (("grade", "--hidden", "file.txt"), "--hidden: file.txt is not a folder"),
    (("grade", "--reference", "nosuch"), "--reference: nosuch does not exist"),
    (("grade", "--reference", "file.txt"), "--reference: file.txt is not a folder"),
    (("grade", "--hidden", "folder"), "--hidden: folder holds no hidden graders"),
    (("grade", "--reference", "folder"), "--reference: folder holds none of the reference's modules"),
    (("grade", "--student", " "), "--student: takes a non-empty value"),
    (("grade", "--json", "folder"), "it is a folder"),
    (("grade", "--json", "nosuch/r.json"), "does not exist"),
    (("grade", "--json", "file.txt"), "a file the kit did not write"),
    (("grade", "--html", "file.txt/r.html"), "is not a folder"),
    (("grade", "--html", "notes.html"), "a file the kit did not write"),
    # timing, workbench, doctor
    (("timing", "nosuch"), "attnlab timing: folder: nosuch does not exist"),
    (("timing", "file.txt"), "file.txt is not a folder"),
    (("timing", "--device", "gpu"), "--device: invalid choice"),
    (("workbench", "nosuch"), "nosuch does not exist"),
    (("workbench", "--out", "folder"), "it is a folder"),
    (("workbench", "--out", "nosuch/w.html"), "does not exist"),
    (("workbench", "--out", "notes.html"), "a file the kit did not write"),
    (("workbench", "--timeout", "-1"), "--timeout: takes seconds"),
    (("doctor", "nosuch"), "attnlab doctor: SUBMISSIONS: nosuch does not exist"),
    (("doctor", "file.txt"), "file.txt is not a folder"),
    # instructor commands
    (("stubs", "--solutions", "nosuch"), "--solutions: nosuch does not exist"),
    (("stubs", "--assignments", "file.txt"), "--assignments: file.txt is not a folder"),
    (("snapshot", "--reference", "nosuch"), "--reference: nosuch does not exist"),
    (("snapshot", "--module", "nosuch"), "no case module 'nosuch'"),
    (("handout", "--root", "nosuch"), "--root: nosuch does not exist"),
    (("handout", "--root", "notakit"), "notakit is not an instructor kit"),
    (("handout", "--html", "folder"), "it is a folder"),
    (("handout", "--screenshot", "nosuch/s.png"), "does not exist"),
    (("handout", "--pdf", "file.txt"), "a file the kit did not write"),
    (("i18n", "--init", "xx"), "is no language code"),
    (("nbgrader-course", "nosuch/course"), "does not exist"),
    (("nbgrader-course", "file.txt"), "file.txt is not a folder"),
    (("nbgrader-course", "course", "--kit", "notakit"), "notakit is not an instructor kit"),
    (("nbgrader-course", "course", "--kit", "nosuch"), "--kit: nosuch does not exist"),
    (("nbgrader-course", "course", "--timeout", "-1"), "--timeout: takes seconds"),
    (("nbgrader-course", "course", "--import-timeout", "0"), "--import-timeout: takes seconds"),
    (("nbgrader-course", "course", "--deadline", "x"), "--deadline: takes seconds"),
    (("nbgrader-course", "course", "--lang", "xx"), "--lang: invalid choice"),
    (("release", "nosuch/bundle"), "does not exist"),
    (("release", "file.txt"), "file.txt is not a folder"),
    (("release", "bundle", "--kit", "notakit"), "notakit is not an instructor kit"),
    (("gradescope", "x.zi"), "does not end in .zip"),
    (("gradescope", "nosuch/x.zip"), "does not exist"),
    (("gradescope", "x.zip", "--timeout", "-3"), "--timeout: takes seconds"),
    (("gradescope", "x.zip", "--deadline", "-3"), "--deadline: takes seconds"),
    (("gradescope", "x.zip", "--deadline", "5000"), "at most 2400"),
    (("gradescope", "x.zip", "--secret-file", "nosuch"), "nosuch does not exist"),
    (("gradescope", "x.zip", "--secret-file", "folder"), "folder is a folder"),
    (("gradescope", "x.zip", "--secret-file", "empty.secret"), "empty.secret is empty"),
    (("gradescope", "x.zip", "--kit", "notakit"), "notakit is not an instructor kit"),
    (("gradescope", "x.zip", "--step", "nosuch"), "--step: invalid choice"),
    (("grade-batch", "nosuch"), "SUBMISSIONS: nosuch does not exist"),
    (("grade-batch", "file.txt"), "file.txt is not a folder"),
    (("grade-batch", "folder", "--csv", "folder"), "it is a folder"),
    (("grade-batch", "folder", "--csv", "file.txt/x/g.csv"), "file.txt is not a folder"),
    (("grade-batch", "folder", "--csv", "file.txt"), "a file the kit did not write"),
    (("grade-batch", "folder", "--out", "file.txt"), "--out: file.txt is not a folder"),
    (("grade-batch", "folder", "--out", "file.txt/x/out"), "file.txt is not a folder"),
    *[(("grade-batch", "folder", "-j", value), "-j/--jobs: takes a whole number") for value in ("0", "-2", "x", "2.5")],
    (("grade-batch", "folder", "--dask", "tcp://127.0.0.1:1"), "no Dask scheduler answers at tcp://127.0.0.1:1"),
    (("grade-batch", "folder", "--dask", "nosuch.json"), "the scheduler file nosuch.json does not exist"),
    (("grade-batch", "folder", "--dask", "file.txt:"), "not a Dask scheduler address"),
    (("grade-batch", "folder", "--hidden", "nosuch"), "--hidden: nosuch does not exist"),
    (("grade-batch", "folder", "--reference", "file.txt"), "--reference: file.txt is not a folder"),
    (("grade-batch", "folder", "--hidden", "folder"), "--hidden: folder holds no hidden graders"),
    (("grade-batch", "folder", "--secret-file", "empty.secret"), "empty.secret is empty"),
    (("grade-batch", "folder", "--timeout", "-1"), "--timeout: takes seconds"),
    (("grade-batch", "folder", "--deadline", "-5"), "--deadline: takes seconds"),
    (("grade-batch", "folder", "--step", "x"), "--step: invalid choice"),
]


def tree(folder: Path) -> dict[str, tuple[bool, bytes]]:
    """Every path under ``folder`` with whether it is a folder and its bytes: what a refused command must leave."""
    return {
        p.relative_to(folder).as_posix(): (p.is_dir(), b"" if p.is_dir() else p.read_bytes())
        for p in sorted(folder.rglob("*"))
    }


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working folder with a file, an empty secret, a folder, a page of someone else's, a fake kit."""
    (tmp_path / "file.txt").write_text("x\n", encoding="utf-8")
    (tmp_path / "empty.secret").write_text("\n", encoding="utf-8")
    (tmp_path / "folder").mkdir()
    (tmp_path / "notes.html").write_text("<html><body>my notes</body></html>\n", encoding="utf-8")
    (tmp_path / "notakit" / "solutions").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ATTNLAB_EARLY", "0")
    monkeypatch.delenv("ATTNLAB_KIT", raising=False)
    monkeypatch.delenv("ATTNLAB_LANG", raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    return tmp_path


def refused(argv: tuple[str, ...], folder: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``attnlab ARGV`` in ``folder``; assert the refusal a user must see; its one line."""
    capsys.readouterr()
    before = tree(folder)
    try:
        status = cli.main(list(argv))
    except SystemExit as exit:
        status = exit.code
    out, err = capsys.readouterr()
    assert status == common.EXIT_USAGE, f"attnlab {' '.join(argv)} exited {status}: {out}{err}"
    assert out == "", f"attnlab {' '.join(argv)} started work: {out}"
    assert len(err.splitlines()) == 1 and err.endswith("\n"), f"not one line: {err!r}"
    assert "Traceback" not in err and "usage:" not in err
    assert tree(folder) == before, f"attnlab {' '.join(argv)} created or removed something"
    return err.strip()


@pytest.mark.parametrize("argv, words", CASES, ids=[" ".join(argv) or "(none)" for argv, _ in CASES])
def test_every_wrong_value_is_one_line_and_exit_two_before_any_work(
    here: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], words: str
) -> None:
    line = refused(argv, here, capsys)
    assert words in line, line
    command = argv[0] if argv and argv[0] != "frobnicate" else ""
    assert line.startswith(f"attnlab {command}".strip() + ":"), f"the line does not name the command: {line}"


def test_the_table_covers_every_command() -> None:
    assert {argv[0] for argv, _ in CASES if argv} - {"frobnicate"} == {c.NAME for c in cli.commands()}


@pytest.mark.parametrize("command", ["grade", "grade-batch", "release", "nbgrader-course", "gradescope"])
def test_a_kit_named_by_the_environment_that_is_not_there_is_refused(
    here: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.setenv("ATTNLAB_KIT", str(here / "nonexistent"))
    args = {"grade": (), "grade-batch": ("folder",), "release": ("b",), "nbgrader-course": ("c",)}
    line = refused((command, *args.get(command, ("x.zip",))), here, capsys)
    assert "$ATTNLAB_KIT" in line and "does not exist" in line


def test_the_parser_speaks_the_students_language(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from autograder import i18n

    line = refused(("grade", "--lang", "tr", "--timeout", "-1"), here, capsys)
    assert line.startswith("attnlab grade: --timeout:") and "seconds" not in line, line
    assert i18n.language() == i18n.SOURCE, "the parser's language stayed on after it"


def test_a_students_install_lists_only_the_students_options(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(common, "student_install", lambda: True)
    with pytest.raises(SystemExit):
        cli.main(["grade", "--help"])
    shown = capsys.readouterr().out
    for option in ("--hidden", "--reference", "--secret-file", "--student", "--seed", "--isolation", "--public-only"):
        assert option not in shown, option
    for option in ("--step", "--json", "--html", "--lang", "--timeout"):
        assert option in shown, option
    monkeypatch.setattr(common, "student_install", lambda: False)
    with pytest.raises(SystemExit):
        cli.main(["grade", "--help"])
    assert "--hidden" in capsys.readouterr().out


def test_a_page_the_kit_wrote_may_be_written_again(here: Path) -> None:
    from autograder.cli import options
    from autograder.report import htmlpage

    page = here / "report.html"
    page.write_text(htmlpage.page("<p>x</p>", title="t", style=""), encoding="utf-8")
    assert options.output_file("--html", "report.html")(str(page)) == page
    assert options.written_by_kit(kit.ROOT / "handouts" / "figures" / "workbench.png")
    assert not options.written_by_kit(kit.ROOT / "README.md")


def test_an_unknown_option_far_from_any_names_the_help(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert refused(("grade-batch", "folder", "--zzzz"), here, capsys).endswith(
        "(attnlab grade-batch --help lists its options)"
    )
    assert os.listdir(here)  # the fixture's files are all still there


def test_the_students_installed_command_lists_only_the_students_options(student_python: Path) -> None:
    """The wheel as a student installs it (second tier: the course lock's virtual environment)."""
    import subprocess

    attnlab = student_python.parent / "attnlab"
    shown = subprocess.run([str(attnlab), "grade", "--help"], capture_output=True, text=True, timeout=120, check=True)
    assert "--step" in shown.stdout and "--hidden" not in shown.stdout and "--secret-file" not in shown.stdout
    refused = subprocess.run(
        [str(attnlab), "grade", "--timeout", "-1"], capture_output=True, text=True, timeout=120, check=False
    )
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
