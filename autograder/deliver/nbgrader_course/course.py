"""Write an nbgrader course folder for the lab.

::

    DIR/                             mode 711 when the exchange is inside it (students may pass through to
                                     DIR/exchange, never list DIR), else 700
    DIR/.attnlab-course              the stamp that says the kit made this course (its course id, its exchange)
    DIR/nbgrader_config.py           the settings that make nbgrader right for a .py-based lab (instructor only)
    DIR/students_nbgrader_config.py  what the students' nbgrader needs (the exchange, the course id): the file
                                     for /etc/jupyter/nbgrader_config.py on a JupyterHub, or each student's
                                     ~/.jupyter/nbgrader_config.py
    DIR/source/lab07_attention/      instructor only (folders 700, files 600): the notebook (hidden blocks name
                                     DIR/private), the reference modules (stripped to stubs at release), the
                                     handout in every language the kit has, the HTML page of each, the figures,
                                     the public engine's wheel and a README with the student's two commands
    DIR/private/                     instructor only (folders 700, files 600): hidden/ graders, reference/,
                                     secret (the course secret of the hidden inputs), settings.json
    DIR/submitted/ autograded/ feedback/ gradebook.db .nbgrader.log
                                     made here, instructor only, before nbgrader makes them readable by all
    DIR/exchange/                    nbgrader's exchange (or the folder --exchange names): world-writable with
                                     the sticky bit, and the course's inbound/, outbound/ and feedback/ made
                                     with the modes nbgrader gives them, so nobody can take the course id first

The private folder is outside ``source/``, so nbgrader never releases it; the autograded grade cells find it by
its absolute path. Everything is checked before anything is written: a folder that is neither new, empty nor a
course this command made, a malformed solution marker (an error naming the file and line), a bad course id.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from autograder.base import tasks
from autograder.base.kit import Kit
from autograder.deliver.nbgrader_course import config, notebook
from autograder.deliver.nbgrader_course.private import DEFAULT_DEADLINE_S, Private, Settings
from autograder.deliver.release import bundle, stubs

CONFIG = "nbgrader_config.py"
STUDENTS_CONFIG = "students_nbgrader_config.py"
STAMP = ".attnlab-course"
MADE_BY = "attnlab nbgrader-course"
EXCHANGE = "exchange"  # the exchange's folder inside the course, unless the instructor names another
# What nbgrader makes in the course folder; made here first, instructor only (nbgrader would make them with the
# process's umask, readable by every user who may pass through the course folder to reach the exchange).
PRIVATE_FOLDERS = ("submitted", "autograded", "feedback")
GRADEBOOK, NBGRADER_LOG = "gradebook.db", ".nbgrader.log"
COURSE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# The modes nbgrader's exchange gives the course's folders (release_assignment, release_feedback): inbound may be
# written and passed through by everyone but listed by the instructor only; the root is world-writable (nbgrader:
# "chmod ugo+rw"), with the sticky bit so that nobody but its owner may rename or remove a course folder in it.
EXCHANGE_ROOT_MODE = 0o1777
EXCHANGE_MODES = {"": 0o755, "outbound": 0o755, "inbound": 0o2733, "feedback": 0o711}
OWN_FOLDER, OWN_FILE = 0o700, 0o600


class CourseError(Exception):
    """The course cannot be written as asked; the message says why and what to do (one sentence)."""


@dataclass(frozen=True)
class CourseOptions:
    """Where the course goes, its nbgrader course id and exchange, where the kit's reference and hidden graders
    are, and the grading limits."""

    folder: Path
    kit: Path  # the instructor kit: solutions/<lab>, hidden/<lab>, handouts/
    course_id: str | None = None  # nbgrader's course id (default: the course folder's name)
    exchange: Path | None = None  # nbgrader's exchange (default: DIR/exchange)
    call_timeout_s: float | None = None  # sandbox seconds per call into student code (default: the engine's)
    import_timeout_s: float | None = None  # sandbox seconds to import a student module
    deadline_s: float = DEFAULT_DEADLINE_S  # one student's whole grading run
    isolation: str | None = None  # the weakest isolation layer grading may use ("namespaces", "user", "hook")
    force: bool = False
    language: str = "en"  # the notebook's and the feedback's language (autograder.i18n.LANGUAGES)


@dataclass(frozen=True)
class Stamp:
    """What ``DIR/.attnlab-course`` says: the kit made this course, with this course id and exchange."""

    course_id: str
    exchange: str

    def to_json(self) -> str:
        return json.dumps({"made_by": MADE_BY, "course_id": self.course_id, "exchange": self.exchange}) + "\n"

    @staticmethod
    def read(folder: Path) -> Stamp | None:
        """The stamp of the course at ``folder``; None when the kit did not make it (or it is unreadable)."""
        try:
            data = json.loads((folder / STAMP).read_text(encoding="utf-8"))
            if data.get("made_by") == MADE_BY:
                return Stamp(str(data["course_id"]), str(data["exchange"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass
        return None


def made_by_the_kit(folder: Path) -> bool:
    """Whether ``folder`` is a course this command made (its stamp, or the config an earlier kit wrote)."""
    if Stamp.read(folder) is not None:
        return True
    try:
        head = (folder / CONFIG).read_text(encoding="utf-8")[:400]
    except OSError:
        return False
    return f"written by `{MADE_BY}`" in head


def _check_folder(folder: Path, force: bool) -> None:
    """Refuse a folder that is neither new, empty, nor (with ``force``) a course this command made."""
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise CourseError(f"{folder} is not a folder; give a new or empty folder for the course")
    if not folder.exists() or not any(folder.iterdir()):
        return
    if not made_by_the_kit(folder):
        raise CourseError(
            f"{folder} is not empty and is not a course that `{MADE_BY}` made, so nothing was written there; "
            "give a new or empty folder"
        )
    if not force:
        raise CourseError(
            f"{folder} is already a course; pass --force to rewrite its config, source and private files "
            "(its secret, gradebook, exchange and the students' work are kept)"
        )


def _course_id(options: CourseOptions, folder: Path) -> str:
    stamp = Stamp.read(folder)
    course_id = options.course_id or (stamp.course_id if stamp else folder.name)
    if not COURSE_ID.fullmatch(course_id):
        raise CourseError(
            f"{course_id!r} cannot be an nbgrader course id; pass --course-id with letters, digits, '.', '_' or "
            "'-' (at most 64, starting with a letter or digit)"
        )
    if stamp and stamp.course_id != course_id:
        raise CourseError(
            f"{folder} is the course {stamp.course_id!r}; --force keeps its course id (its students' submissions "
            f"and feedback are filed under it), so make a new course for {course_id!r}"
        )
    return course_id


def _check_kit(kit: Kit) -> None:
    for needed in (kit.solutions, kit.hidden):
        if not needed.is_dir():
            raise CourseError(
                f"the kit at {kit.root} has no {needed.relative_to(kit.root)}; give the instructor kit with --kit"
            )
    missing = [f"{module}.py" for module in tasks.MODULES if not (kit.solutions / f"{module}.py").is_file()]
    if missing:
        raise CourseError(f"{kit.solutions} lacks the reference of {', '.join(missing)}")
    for module in sorted(kit.solutions.glob("*.py")):
        stubs.find_regions(module.read_text(encoding="utf-8"), module)  # MarkerError names the file and line
        stubs.find_answers(module.read_text(encoding="utf-8"), module)


def write_course(options: CourseOptions) -> list[Path]:
    """Write the course; returns the files and folders written. Checks everything first (CourseError,
    stubs.MarkerError): nothing is written when a check fails."""
    folder, kit = Path(os.path.abspath(options.folder)), Kit(Path(options.kit).resolve())
    _check_kit(kit)
    _check_folder(folder, options.force)
    course_id = _course_id(options, folder)
    stamp = Stamp.read(folder)
    exchange = Path(os.path.abspath(options.exchange)) if options.exchange else None
    if exchange is None:
        exchange = Path(stamp.exchange) if stamp else folder / EXCHANGE
    if exchange.exists() and not exchange.is_dir():
        raise CourseError(f"the exchange {exchange} is not a folder; give another with --exchange")
    inside = exchange == folder / EXCHANGE
    private = Private(folder / "private")
    notebook_text = notebook.text(notebook.build(str(private.root), options.language))  # ValueError: quotes

    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o711 if inside else OWN_FOLDER)
    written = [
        _write(folder / CONFIG, config.config_text(options.deadline_s, course_id, None if inside else exchange)),
        _write(folder / STUDENTS_CONFIG, config.students_config_text(course_id, exchange), mode=0o644),
    ]
    written += _write_source(kit, folder / "source" / tasks.LAB, notebook_text)
    written += _write_private(kit, private, options)
    written += _nbgrader_places(folder, course_id)
    written += _exchange(exchange, course_id)
    written.append(_write(folder / STAMP, Stamp(course_id, str(exchange)).to_json()))
    return written


def _write_source(kit: Kit, source: Path, notebook_text: str) -> list[Path]:
    """``source/<lab>/``: the notebook, the reference modules, data files, handouts, wheel and README; instructor
    only."""
    source.mkdir(parents=True, exist_ok=True)
    written = [_write(source / notebook.NOTEBOOK, notebook_text)]
    for module in tasks.MODULES:
        written.append(_copy(kit.solutions / f"{module}.py", source / f"{module}.py"))
    for data in stubs.data_files(kit.solutions):  # model weights the steps load, released as they are
        written.append(_copy(data, source / data.name))
    written.extend(bundle.write_handouts(kit, source / "handouts"))  # every language, with its HTML page
    written.extend(_student_kit(kit, source))
    close_to_others(source.parent)
    return written


def _write_private(kit: Kit, private: Private, options: CourseOptions) -> list[Path]:
    """The private folder: hidden graders, reference, the secret (kept across rewrites), settings."""
    private.root.mkdir(parents=True, exist_ok=True)
    private.root.chmod(OWN_FOLDER)
    written = [_copy(kit.hidden, private.hidden, pattern="*.py"), _copy(kit.solutions, private.reference, "*.py")]
    for data in stubs.data_files(kit.solutions):
        written.append(_copy(data, private.reference / data.name))
    secret = private.secret_file
    if not secret.exists():  # kept across rewrites: the hidden inputs of a student stay reproducible
        written.append(_write(secret, secrets.token_hex(32) + "\n"))
    limits = {"call_timeout_s": options.call_timeout_s, "import_timeout_s": options.import_timeout_s}
    settings = Settings(
        options.deadline_s, {k: v for k, v in limits.items() if v is not None}, options.language, options.isolation
    )
    written.append(_write(private.settings_file, settings.to_json()))
    close_to_others(private.root)
    return written


def _nbgrader_places(folder: Path, course_id: str) -> list[Path]:
    """What nbgrader writes in the course folder, made first with modes for the instructor only; the gradebook
    (nbgrader's own schema) records the course id."""
    from nbgrader.api import Gradebook

    made = []
    for name in PRIVATE_FOLDERS:
        (folder / name).mkdir(exist_ok=True)
        (folder / name).chmod(OWN_FOLDER)
        made.append(folder / name)
    for name in (GRADEBOOK, NBGRADER_LOG):
        (folder / name).touch(mode=OWN_FILE)
        (folder / name).chmod(OWN_FILE)
        made.append(folder / name)
    with Gradebook(f"sqlite:///{folder / GRADEBOOK}", course_id):
        pass
    return made


def _exchange(exchange: Path, course_id: str) -> list[Path]:
    """nbgrader's exchange with the course's folders in it, with nbgrader's modes; a folder someone else owns
    is left as it is (nbgrader then says whose it is)."""
    made = []
    if not exchange.exists():
        exchange.mkdir(parents=True)
        made.append(exchange)
    if exchange.stat().st_uid == os.geteuid():
        exchange.chmod(EXCHANGE_ROOT_MODE)
    for name, mode in EXCHANGE_MODES.items():
        path = exchange / course_id / name if name else exchange / course_id
        if not path.exists():
            path.mkdir()
            made.append(path)
        if path.stat().st_uid == os.geteuid():
            path.chmod(mode)
    return made


def unreachable(exchange: Path) -> list[Path]:
    """The folders above ``exchange`` that other users cannot pass through (students could not reach it)."""
    return [
        parent
        for parent in Path(os.path.abspath(exchange)).parents
        if parent.is_dir() and not parent.stat().st_mode & stat.S_IXOTH
    ]


def close_to_others(root: Path) -> None:
    """``root`` and everything in it readable by its owner only (folders 700, files 600; links left alone)."""
    root.chmod(OWN_FOLDER)
    for path in sorted(root.rglob("*")):
        if not path.is_symlink():
            path.chmod(OWN_FOLDER if path.is_dir() else OWN_FILE)


def _student_kit(kit: Kit, source: Path) -> list[Path]:
    """The public engine's wheel and the student's README in the lab folder (nbgrader releases both verbatim)."""
    from autograder.deliver.release import readme, wheel

    for old in source.glob("attnlab-*.whl"):
        old.unlink()
    built = wheel.build(kit, source, readme.text(wheel.file_name(), inside_lab=True))
    return [built, _write(source / "README.md", readme.text(built.name, inside_lab=True))]


def _write(path: Path, text: str, mode: int = OWN_FILE) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def _copy(source: Path, target: Path, pattern: str | None = None) -> Path:
    """Copy a file, or a folder's ``pattern`` files (replacing what was there)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_file():
        shutil.copyfile(source, target)
        return target
    if target.exists():
        shutil.rmtree(target)
    if pattern is None:
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        target.mkdir()
        for path in sorted(source.glob(pattern)):
            shutil.copyfile(path, target / path.name)
    return target
