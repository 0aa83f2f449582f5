"""The student release of the course: solution regions stripped from the ``.py`` files, then verified.

``nbgrader generate_assignment`` copies every non-notebook file verbatim, so
the reference's ``.py`` files would be released with their solutions. The
course's :class:`~autograder.deliver.nbgrader_course.preprocessors.StripSolutionFiles`
replaces each copied file by its stub (:func:`strip_folder`, the same
generation as ``attnlab stubs``; a malformed marker raises
:class:`~autograder.deliver.release.stubs.MarkerError` and nbgrader fails the release). The
course's ``post_convert_hook`` then checks the finished release
(:func:`leaks`); nbgrader swallows exceptions raised in hooks, so a leak
removes the release and exits the process with status 1 (:class:`ReleaseCheck`).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from autograder.base import tasks
from autograder.deliver.nbgrader_course.private import Private
from autograder.deliver.release import bundle, stubs
from autograder.deliver.release import leaks as scan

LEAK = "{path}: {what}"
EXIT_LEAK = 1
log = logging.getLogger("attnlab.release")


def stub_text(source: Path) -> str:
    """The released text of the step module ``source`` (its stub); MarkerError if its markers are malformed."""
    step_id = source.stem
    if step_id not in tasks.BY_ID:
        raise stubs.MarkerError(
            f"{source}: not a lab step module ({', '.join(tasks.MODULES)}); the release only takes step modules"
        )
    return stubs.make_stub(source.read_text(encoding="utf-8"), step_id, source)


def strip_folder(release: Path) -> list[Path]:
    """Replace every ``.py`` file in ``release`` by its stub; returns the files written."""
    written = []
    for path in sorted(Path(release).rglob("*.py")):
        path.write_text(stub_text(path), encoding="utf-8")
        written.append(path)
    return written


def leaks(release: Path, source: Path, private: Path | None = None) -> list[str]:
    """What in ``release`` should not be there: a module that is not its stub, markers, hidden tests, model
    answers, solution lines or hidden graders (the kit's release scan, the wheel included), the private path."""
    hidden = Private(Path(private)).hidden if private is not None else Path(source) / "no-hidden-graders"
    found = scan.scan_folder(release, scan.Secrets.read(source, hidden))
    for path in sorted(p for p in Path(release).rglob("*") if p.is_file() and p.suffix in scan.TEXT):
        if private is not None and str(private) in path.read_text(encoding="utf-8", errors="replace"):
            found.append(LEAK.format(path=path, what="names the private folder"))
    return found


class ReleaseCheck:
    """nbgrader's ``post_convert_hook`` for generate_assignment: verify the release, or remove it and exit 1; a
    release that passes is made readable by every user (it holds nothing secret), as the bundle is."""

    def __init__(self, course: Path, private: Path) -> None:
        self.course, self.private = Path(course), Path(private)

    def __call__(self, assignment: str, student: str | None = None, notebooks: list[str] | None = None) -> None:
        release = self.course / "release" / assignment
        if not release.is_dir():
            return
        problems = leaks(release, self.course / "source" / assignment, self.private)
        if problems:
            for problem in problems:
                log.error("attnlab: the release leaks: %s", problem)
            shutil.rmtree(release, ignore_errors=True)
            log.error("attnlab: removed %s; fix the source and run generate_assignment again", release)
            raise SystemExit(EXIT_LEAK)  # not an Exception: nbgrader would swallow that
        bundle.open_to_everyone(release)
