"""The course's ``nbgrader_config.py``: each setting fixes one way nbgrader's defaults fail a ``.py``-based lab."""

from __future__ import annotations

from autograder import tasks

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

    from autograder.nbgrader_course.preprocessors import (
        FeedbackClearHiddenTests, GuardedExecute, OnlyKitCode, OverwriteKitCells, SaveKitAutoGrades,
        StripSolutionFiles,
    )
    from autograder.nbgrader_course.release import ReleaseCheck

    # nbgrader 0.9 creates each submission's rows before adding them to its session; SQLAlchemy 2 warns at the
    # autoflush in between, then nbgrader adds them (the grades are right): its warnings, not the course's.
    warnings.filterwarnings("ignore", r"Object of type <Submitted\\w+> not in session", SAWarning, r"nbgrader\\.api")

    c = get_config()  # noqa: F821 (nbgrader provides it)
    COURSE = os.path.dirname(os.path.abspath(__file__))
    c.CourseDirectory.root = COURSE
    c.CourseDirectory.release_directory = "release"

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
    ]
    # The kernel runs without the submission on sys.path; a dead kernel is an explicit 0 in the feedback.
    # SaveKitAutoGrades: nbgrader's SaveAutoGrades; it also fills the timing step's review cell from the typed
    # report and scores it, or leaves it for manual grading (0 until then) when a check waits for review.
    c.Autograde.autograde_preprocessors = [
        GuardedExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveKitAutoGrades, AssignLatePenalties,
        CheckCellMetadata,
    ]
    # Minimal tracebacks: an error in a grade cell does not print the cell's (hidden) source.
    c.Execute.extra_arguments = ["--InteractiveShell.xmode=Minimal"]
    # The first grade cell grades the whole notebook (private/settings.json: deadline_s {deadline:g});
    # a margin on top.
    c.Execute.timeout = {timeout}

    # Feedback: hidden test blocks are stripped from the cells students see.
    # (FeedbackClearHiddenTests: ClearHiddenTests without a warning about nbconvert's display_data_priority.)
    c.GenerateFeedback.preprocessors = [GetGrades, CSSHTMLHeaderPreprocessor, FeedbackClearHiddenTests]
except Exception as error:
    raise SystemExit(
        f"{{__file__}} failed to load ({{error!r}}); stopped before nbgrader falls back to its defaults"
    ) from error
'''

TIMEOUT_MARGIN_S = 120  # kernel start, the grader's own start and its orderly stop after a deadline


def config_text(deadline_s: float) -> str:
    """The text of ``nbgrader_config.py`` for a course whose grading runs may take ``deadline_s``."""
    modules = [f"{module}.py" for module in tasks.MODULES]
    return TEMPLATE.format(
        lab=tasks.LAB, modules=modules, deadline=deadline_s, timeout=int(deadline_s) + TIMEOUT_MARGIN_S
    )
