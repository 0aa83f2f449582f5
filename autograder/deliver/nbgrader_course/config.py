"""The course's ``nbgrader_config.py``: each setting fixes one way nbgrader's defaults fail a ``.py``-based lab."""

from __future__ import annotations

from pathlib import Path

from autograder.base import tasks

TEMPLATE = '''"""nbgrader configuration of the course for {lab}, written by `attnlab nbgrader-course`.

Each setting fixes one way nbgrader's defaults go wrong for a lab whose work is in .py files.
Run every nbgrader command from this folder. If this file fails to load, nbgrader would log the
error and go on with its defaults (which release the solutions and grade the reference instead of
the students' files), so any error here stops the command instead.
"""

import os
import warnings

try:
    from sqlalchemy.exc import SAWarning
    from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import (
        AssignLatePenalties, CheckCellMetadata, ClearHiddenTests, ClearMarkScheme, ClearOutput, ClearSolutions,
        ComputeChecksums, DeduplicateIds, GetGrades, IgnorePattern, IncludeHeaderFooter, InstantiateTests,
        LimitOutput, LockCells, OverwriteKernelspec, SaveCells,
    )

    from autograder.deliver.nbgrader_course.exchange import KitCollect
    from autograder.deliver.nbgrader_course.export import KitCsvExport
    from autograder.deliver.nbgrader_course.preprocessors import (
        FeedbackClearHiddenTests, GuardedExecute, OnlyKitCode, OverwriteKitCells, SanitiseForViewers,
        SaveKitAutoGrades, StripSolutionFiles,
    )
    from autograder.deliver.nbgrader_course.release import ReleaseCheck

    # nbgrader 0.9 creates each submission's rows before adding them to its session; SQLAlchemy 2 warns at the
    # autoflush in between, then nbgrader adds them (the grades are right): its warnings, not the course's.
    warnings.filterwarnings("ignore", r"Object of type <Submitted\\w+> not in session", SAWarning, r"nbgrader\\.api")

    c = get_config()  # noqa: F821 (nbgrader provides it)
    COURSE = os.path.dirname(os.path.abspath(__file__))
    c.CourseDirectory.root = COURSE
    c.CourseDirectory.release_directory = "release"
    # The course id and the exchange (release_assignment, collect, release_feedback; the students' side is in
    # students_nbgrader_config.py). The exchange is world-writable with the sticky bit, as written by the kit.
    c.CourseDirectory.course_id = "{course_id}"
    c.Exchange.root = {exchange}
    # Collect leaves a submission filed under an id that is not plain (nbgrader submit --student lets a student
    # choose it, and formgrader writes it into its pages unescaped) in the exchange, with an error.
    c.ExchangeFactory.collect = KitCollect

    # Release: nbgrader copies .py files verbatim, solutions included. StripSolutionFiles replaces them by their
    # stubs and fails the release on a malformed marker; ReleaseCheck then verifies the whole release (nbgrader
    # swallows exceptions raised in hooks, so a leak removes the release and exits with status 1).
    c.GenerateAssignment.preprocessors = [
        # nbgrader's defaults
        IncludeHeaderFooter, InstantiateTests, LockCells, ClearSolutions, ClearOutput, CheckCellMetadata,
        ComputeChecksums, SaveCells, ClearHiddenTests, ClearMarkScheme, ComputeChecksums, CheckCellMetadata,
        StripSolutionFiles,
    ]
    c.GenerateAssignment.post_convert_hook = ReleaseCheck(COURSE, os.path.join(COURSE, "private"))

    # Autograde: keep the student's modules (by default nbgrader overwrites them with source/'s reference).
    c.Autograde.exclude_overwriting = {{"{lab}": {modules}}}
    # Code cells the student added never run (they could wrap every grade cell in try/except: pass), and the
    # kit's cells get the kit's metadata back (a skip-execution tag would skip a grade cell: full points).
    # OverwriteKitCells: nbgrader's OverwriteCells, without a false "checksum has changed" for every grade cell
    # released with its hidden tests cleared.
    c.Autograde.sanitize_preprocessors = [
        ClearOutput, DeduplicateIds, OverwriteKernelspec, OverwriteKitCells, OnlyKitCode, CheckCellMetadata,
        SanitiseForViewers,
    ]
    # The kernel runs without the submission on sys.path; a dead kernel is an explicit 0 in the feedback.
    # SaveKitAutoGrades: nbgrader's SaveAutoGrades; it also fills the timing step's review cell from the typed
    # report and scores it, or leaves it for manual grading (0 until then) when a check waits for review.
    # SanitiseForViewers, last of both passes: formgrader and the feedback page render markdown without
    # sanitising it, so the autograded notebook keeps the student's markdown, raw cells and every output only as
    # sanitised HTML, and no widget state or other notebook metadata.
    c.Autograde.autograde_preprocessors = [
        GuardedExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveKitAutoGrades, AssignLatePenalties,
        CheckCellMetadata, SanitiseForViewers,
    ]
    # Minimal tracebacks: an error in a grade cell does not print the cell's (hidden) source.
    c.Execute.extra_arguments = ["--InteractiveShell.xmode=Minimal"]
    # The first grade cell grades the whole notebook (private/settings.json: deadline_s {deadline:g});
    # a margin on top.
    c.Execute.timeout = {timeout}

    # Feedback: hidden test blocks are stripped from the cells students see.
    # (FeedbackClearHiddenTests: ClearHiddenTests without a warning about nbconvert's display_data_priority.)
    c.GenerateFeedback.preprocessors = [GetGrades, CSSHTMLHeaderPreprocessor, FeedbackClearHiddenTests]
    # Every page rendered from a notebook (feedback, formgrader) sanitises HTML and markdown outputs and drops
    # JavaScript ones, with the kit's allow-list (nbconvert's own would show a table's or an image's tags as text).
    c.HTMLExporter.sanitize_html = True
    c.HTMLExporter.filters = {{"clean_html": "autograder.deliver.nbgrader_course.sanitise.clean_html"}}

    # Export: nbgrader's CSV plus a row, with its reason, for every hand-in nbgrader could not autograde (no
    # notebook, a renamed or unreadable one): the points attnlab grade-batch gives its .py files.
    c.ExportApp.plugin_class = KitCsvExport
except Exception as error:
    raise SystemExit(
        f"{{__file__}} failed to load ({{error!r}}); stopped before nbgrader falls back to its defaults"
    ) from error
'''

STUDENTS_TEMPLATE = '''"""nbgrader settings for the students of course {course_id}, from `attnlab nbgrader-course`.

On a JupyterHub put them in the global /etc/jupyter/nbgrader_config.py (see `jupyter --paths`); otherwise each
student puts them in ~/.jupyter/nbgrader_config.py. Then a student runs, from any folder:

    nbgrader fetch_assignment {lab}
    nbgrader submit {lab}
    nbgrader fetch_feedback {lab}
"""

c = get_config()  # noqa: F821 (nbgrader provides it)
c.Exchange.root = {exchange!r}
c.CourseDirectory.course_id = {course_id!r}
'''

TIMEOUT_MARGIN_S = 120  # kernel start, the grader's own start and its orderly stop after a deadline


def config_text(deadline_s: float, course_id: str = "course", exchange: Path | None = None) -> str:
    """The text of ``nbgrader_config.py`` for a course with id ``course_id`` whose grading runs may take
    ``deadline_s``; nbgrader's exchange is ``exchange``, or None for the course's own ``exchange/`` folder."""
    modules = [f"{module}.py" for module in tasks.MODULES]
    where = "os.path.join(COURSE, 'exchange')" if exchange is None else repr(str(exchange))
    return TEMPLATE.format(
        lab=tasks.LAB,
        modules=modules,
        deadline=deadline_s,
        timeout=int(deadline_s) + TIMEOUT_MARGIN_S,
        course_id=course_id,
        exchange=where,
    )


def students_config_text(course_id: str, exchange: Path) -> str:
    """The nbgrader settings the course's students need: the exchange and the course id."""
    return STUDENTS_TEMPLATE.format(course_id=course_id, lab=tasks.LAB, exchange=str(exchange))
