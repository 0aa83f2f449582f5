"""Write an nbgrader course folder for the lab.

::

    DIR/nbgrader_config.py           the settings that make nbgrader right for a .py-based lab
    DIR/source/lab07_attention/      the notebook (hidden blocks name DIR/private), the reference
                                     modules (stripped to stubs at release), the handout in every
                                     language the kit has, the HTML page of each, the figures,
                                     the public engine's wheel and a README with the student's two
                                     commands (install the wheel; grade)
    DIR/private/                     instructor only (mode 700): hidden/ graders, reference/,
                                     secret (the course secret of the hidden inputs), settings.json

The private folder is outside ``source/``, so nbgrader never releases it; the
autograded grade cells find it by its absolute path. Writing checks the
solutions' markers first (a malformed one is an error naming the file and line).
"""

from __future__ import annotations

import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from autograder import stubs, tasks
from autograder.kit import Kit
from autograder.nbgrader_course import config, notebook
from autograder.nbgrader_course.private import DEFAULT_DEADLINE_S, Private, Settings
from autograder.release import bundle

CONFIG = "nbgrader_config.py"


class CourseError(Exception):
    """The course cannot be written as asked; the message says why and what to do."""


@dataclass(frozen=True)
class CourseOptions:
    """Where the course goes, where the kit's reference and hidden graders are, and the grading limits."""

    folder: Path
    kit: Path  # the instructor kit: solutions/<lab>, hidden/<lab>, handouts/
    call_timeout_s: float | None = None  # sandbox seconds per call into student code (default: the engine's)
    import_timeout_s: float | None = None  # sandbox seconds to import a student module
    deadline_s: float = DEFAULT_DEADLINE_S  # one student's whole grading run
    isolation: str | None = None  # the weakest isolation layer grading may use ("namespaces", "user", "hook")
    force: bool = False
    language: str = "en"  # the notebook's and the feedback's language (autograder.i18n.LANGUAGES)


def write_course(options: CourseOptions) -> list[Path]:
    """Write the course; returns the files and folders written."""
    folder, kit = Path(options.folder).resolve(), Kit(Path(options.kit).resolve())
    solutions, hidden = kit.solutions, kit.hidden
    for needed in (solutions, hidden):
        if not needed.is_dir():
            raise CourseError(
                f"the kit at {kit.root} has no {needed.relative_to(kit.root)}; give the instructor kit with --kit"
            )
    missing = [f"{module}.py" for module in tasks.MODULES if not (solutions / f"{module}.py").is_file()]
    if missing:
        raise CourseError(f"{solutions} lacks the reference of {', '.join(missing)}")
    for module in sorted(solutions.glob("*.py")):
        stubs.find_regions(module.read_text(encoding="utf-8"), module)  # MarkerError names the file and line
        stubs.find_answers(module.read_text(encoding="utf-8"), module)
    if (folder / CONFIG).exists() and not options.force:
        raise CourseError(
            f"{folder / CONFIG} exists; pass --force to rewrite the course's config, source and private files"
        )

    private = Private(folder / "private")
    source = folder / "source" / tasks.LAB
    written = [_write(folder / CONFIG, config.config_text(options.deadline_s))]
    source.mkdir(parents=True, exist_ok=True)
    written.append(
        _write(source / notebook.NOTEBOOK, notebook.text(notebook.build(str(private.root), options.language)))
    )
    for module in tasks.MODULES:
        written.append(_copy(solutions / f"{module}.py", source / f"{module}.py"))
    for data in stubs.data_files(solutions):  # model weights the steps load, released as they are
        written.append(_copy(data, source / data.name))
    written.extend(bundle.write_handouts(kit, source / "handouts"))  # every language, with its HTML page
    written.extend(_student_kit(kit, source))

    private.root.mkdir(parents=True, exist_ok=True)
    private.root.chmod(0o700)
    written.append(_copy(hidden, private.hidden, pattern="*.py"))
    written.append(_copy(solutions, private.reference, pattern="*.py"))
    for data in stubs.data_files(solutions):
        written.append(_copy(data, private.reference / data.name))
    secret = private.secret_file
    if not secret.exists():  # kept across rewrites: the hidden inputs of a student stay reproducible
        secret.write_text(secrets.token_hex(32) + "\n", encoding="utf-8")
        secret.chmod(0o600)
        written.append(secret)
    limits = {"call_timeout_s": options.call_timeout_s, "import_timeout_s": options.import_timeout_s}
    settings = Settings(
        options.deadline_s, {k: v for k, v in limits.items() if v is not None}, options.language, options.isolation
    )
    written.append(_write(private.settings_file, settings.to_json()))
    return written


def _student_kit(kit: Kit, source: Path) -> list[Path]:
    """The public engine's wheel and the student's README in the lab folder (nbgrader releases both verbatim)."""
    from autograder.release import readme, wheel

    for old in source.glob("attnlab-*.whl"):
        old.unlink()
    built = wheel.build(kit, source, readme.text(wheel.file_name(), inside_lab=True))
    return [built, _write(source / "README.md", readme.text(built.name, inside_lab=True))]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
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
