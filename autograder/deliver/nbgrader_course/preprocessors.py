"""nbgrader preprocessors of the course (named in its ``nbgrader_config.py``).

- :class:`StripSolutionFiles` (generate_assignment): replaces the ``.py`` files
  nbgrader copied into the release by their stubs; a malformed marker fails
  the release (nbgrader removes it and exits 1).
- :class:`OverwriteKitCells` (autograde, sanitising): nbgrader's OverwriteCells
  without a false "checksum has changed" warning for every grade cell of every
  student (the released cell is the recorded one with its hidden tests
  cleared, exactly as nbgrader released it); a real change is still reported.
- :class:`OnlyKitCode` (autograde, sanitising): a student id that is not plain is refused (formgrader writes it
  into its pages unescaped); every code cell that is not
  one of the kit's locked cells becomes a markdown cell showing its code, so
  nothing a student adds to the notebook runs before or around the grade cells
  (an IPython input transformer wrapping later cells in ``try/except: pass``
  would otherwise score full marks), and the kit cells get the kit's metadata
  back (a ``skip-execution`` tag would otherwise skip a grade cell: full marks).
- :class:`SaveKitAutoGrades` (autograde): nbgrader's SaveAutoGrades, which also fills each review cell
  (:mod:`autograder.deliver.nbgrader_course.review`) from the typed payload its step's grade cell displayed, and scores
  it: automatically when no check waits for review, else left for manual grading (nbgrader's *needs manual
  grade*, 0 until an instructor scores it).
- :class:`SanitiseForViewers` (autograde, last of both passes): what a viewer of the autograded notebook
  (formgrader, the feedback page, Jupyter) may be shown of what the student wrote: every markdown or raw cell
  that is not the kit's own is replaced by its sanitised HTML (:mod:`autograder.deliver.nbgrader_course.sanitise`),
  outputs keep only safe kinds, cell and notebook metadata only what nbgrader and the templates read. An answer
  cell left as released stays as it is (nbgrader scores it 0 as unanswered).
- :class:`FeedbackClearHiddenTests` (generate_feedback): nbgrader's
  ClearHiddenTests with the one option nbconvert's HTML exporter gives every
  preprocessor declared, so it no longer warns "Config option
  `display_data_priority` not recognized" once per feedback run.
- :class:`GuardedExecute` (autograde): nbgrader's Execute with a kernel that
  does not have the submission folder on its path (a student's
  ``autograder/`` or ``ipykernel_launcher.py`` would otherwise replace the
  kit's) and talks to it encrypted where both ends can (CurveZMQ: the grade
  cells carry the private folder's path), the student id and the notebook's steps in the kernel's environment,
  and a kernel that dies costs only the cell it died in: that cell gets an
  error output (an explicit 0 with the reason in the feedback) and the
  remaining cells run in a fresh kernel.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import zmq
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbformat import NotebookNode
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import ClearHiddenTests, Execute, NbGraderPreprocessor, OverwriteCells, SaveAutoGrades
from traitlets import List

from autograder.base import tasks
from autograder.deliver.nbgrader_course import cells, notebook, release, review, sanitise

# Runs ipykernel_launcher with the working directory taken off sys.path ("-c" puts "" first).
ISOLATED_LAUNCH = (
    "import sys, runpy; del sys.path[0]; runpy.run_module('ipykernel_launcher', run_name='__main__', alter_sys=True)"
)
KERNEL_DIED = "KernelDied"
KERNEL_DIED_TEXT = (
    "the notebook's kernel died while this cell ran, so it scores 0; the cells after it ran in a fresh kernel"
)
ADDED_CELL = "*A code cell added to the notebook; it was not run while grading:*\n\n{code}"


class StripSolutionFiles(NbGraderPreprocessor):
    """Replace the release's copied ``.py`` files by their stubs (per notebook; a stub stays as it is)."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        coursedir = CourseDirectory(config=self.config)
        target = Path(coursedir.format_path(coursedir.release_directory, ".", resources["nbgrader"]["assignment"]))
        for path in release.strip_folder(target):
            self.log.info("attnlab: released the stub of %s", path.name)
        return nb, resources


class OverwriteKitCells(OverwriteCells):
    """OverwriteCells that recognises a locked cell released with its hidden tests cleared.

    ``generate_assignment`` records each grade cell with its hidden tests (SaveCells
    runs before ClearHiddenTests, as it must: autograde restores them from the
    gradebook), and the student's copy is the released one without them. So
    nbgrader's comparison of checksums warns "Attribute 'checksum' for cell ...
    has changed" for every grade cell of every student (14 per student).
    A locked cell whose source is exactly the released form of the recorded
    source gets the recorded source back before nbgrader compares; any other
    change is still reported and overwritten by nbgrader.
    """

    def preprocess_cell(self, cell: NotebookNode, resources: dict, cell_index: int) -> tuple[NotebookNode, dict]:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None:
            try:
                source = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:
                source = None
            if source is not None and source.locked and cell.source == self._released(cell, source.source):
                cell.source = source.source
        return super().preprocess_cell(cell, resources, cell_index)

    def _released(self, cell: NotebookNode, recorded: str) -> str:
        """``recorded`` as generate_assignment released it: its hidden test region removed by nbgrader itself."""
        copy = NotebookNode(cell_type=cell.cell_type, metadata=cell.metadata, source=recorded)
        try:
            ClearHiddenTests(config=self.config).preprocess_cell(copy, {}, 0)
        except RuntimeError:  # unbalanced hidden-test markers: nbgrader compares as it always does
            return recorded
        return copy.source


class OnlyKitCode(NbGraderPreprocessor):
    """Sanitising: only the kit's code cells run, with the kit's metadata; any other code cell becomes inert markdown.

    Runs after OverwriteKitCells, which has restored the kit cells' source. A kit
    cell is a code cell whose grade id is a locked code cell of the gradebook's
    source notebook. Its metadata is rebuilt from the gradebook, so a tag the
    student added (``skip-execution`` makes nbclient skip the cell, and a grade
    cell without output scores full points) or a changed flag is gone.
    """

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        info = resources["nbgrader"]
        student = info.get("student")  # autograde always names it
        if student is not None and not sanitise.PLAIN_ID.fullmatch(str(student)):  # formgrader writes it as HTML
            raise ValueError(f"attnlab: not autograded: the student id {student!r} is not a plain id")
        with Gradebook(info["db_url"]) as gradebook:
            source = gradebook.find_notebook(info["notebook"], info["assignment"])
            locked = {cell.name for cell in source.source_cells if cell.locked and cell.cell_type == "code"}
            points = {cell.name: float(cell.max_score) for cell in source.grade_cells}
        nb.cells = [self._sanitised(cell, index, locked, points) for index, cell in enumerate(nb.cells)]
        return nb, resources

    def _sanitised(self, cell: NotebookNode, index: int, locked: set[str], points: dict[str, float]) -> NotebookNode:
        if cell.cell_type != "code":
            return cell
        nbgrader = cell.metadata.get("nbgrader", {})
        grade_id = nbgrader.get("grade_id")
        if grade_id in locked:
            kit = {
                "grade": grade_id in points,
                "grade_id": grade_id,
                "locked": True,
                "schema_version": 3,
                "solution": False,
                "task": False,
                "checksum": nbgrader.get("checksum"),
            }
            if grade_id in points:
                kit["points"] = points[grade_id]
            cell.metadata = NotebookNode({"deletable": False, "editable": False, "nbgrader": NotebookNode(kit)})
            return cell
        self.log.warning("attnlab: a code cell added by the student (cell %d) will not run", index)
        markdown = NotebookNode(
            cell_type="markdown",
            metadata=NotebookNode(),
            source=ADDED_CELL.format(code=sanitise.fenced(cell.source, "python")),
        )
        if "id" in cell:
            markdown["id"] = cell["id"]
        return markdown


class SaveKitAutoGrades(SaveAutoGrades):
    """SaveAutoGrades that fills and scores the review cells from their grade cells' payloads.

    A payload is read only from the display output of a kit grade cell (OnlyKitCode left no other code cell,
    ClearOutput no older output); a review cell without one (its grade cell did not run) keeps its text and
    scores 0. With a payload the cell shows the payload's text; it scores the payload's ``score`` (capped to the
    cell's points) when no check waits for review, and no automatic score otherwise: nbgrader then marks it
    *needs manual grade* and counts it 0 until an instructor scores it in formgrader.
    """

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        found: dict[str, dict] = {}
        for cell in nb.cells:
            if cell.cell_type != "code" or not str(cell.metadata.get("nbgrader", {}).get("grade_id", "")).startswith(
                notebook.GRADE_ID.format(step="")
            ):
                continue
            for output in cell.get("outputs", []):
                data = output.get("data", {}) if output.get("output_type") == "display_data" else {}
                if isinstance(data.get(review.MIME), dict) and data[review.MIME].get("step") in tasks.BY_ID:
                    found[data[review.MIME]["step"]] = data[review.MIME]
        self._review_scores: dict[str, float | None] = {}
        for cell in nb.cells:
            grade_id = str(cell.metadata.get("nbgrader", {}).get("grade_id", ""))
            step = grade_id.removeprefix(review.GRADE_ID.format(step=""))
            if cell.cell_type != "markdown" or not grade_id.startswith(review.GRADE_ID.format(step="")):
                continue
            if step not in tasks.BY_ID or grade_id in self._review_scores:
                continue
            data = found.get(step)
            points = float(cell.metadata["nbgrader"].get("points", 0))
            if data is None:
                self._review_scores[grade_id] = 0.0
                continue
            cell.source = str(data.get("markdown", cell.source))
            score = data.get("score")
            self._review_scores[grade_id] = None if score is None else min(max(float(score), 0.0), points)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell: NotebookNode, resources: dict, cell_index: int) -> tuple[NotebookNode, dict]:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in self._review_scores:
            grade = self.gradebook.find_grade(grade_id, self.notebook_id, self.assignment_id, self.student_id)
            grade.auto_score = self._review_scores[grade_id]
            grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None
            self.gradebook.db.commit()
        return super().preprocess_cell(cell, resources, cell_index)


class SanitiseForViewers(NbGraderPreprocessor):
    """The notebook as formgrader, the feedback page and Jupyter may show it
    (:func:`autograder.deliver.nbgrader_course.sanitise.for_viewers`, with the gradebook's cells as the kit's).

    Last in both of autograde's passes: the notebook the first pass leaves in ``autograded/`` (where formgrader
    would find it if the second pass never ran) holds no student HTML either, and the second sanitises the
    outputs the grade cells produced. An answer cell left as released stays as it is, so nbgrader still scores
    it 0 as unanswered; any other answer scores by hand either way."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gradebook:
            source = gradebook.find_notebook(info["notebook"], info["assignment"])
            kit = {cell.name: (cell.cell_type, cell.source) for cell in source.source_cells}
        return sanitise.for_viewers(nb, kit, set(kit)), resources


class FeedbackClearHiddenTests(ClearHiddenTests):
    """ClearHiddenTests for generate_feedback, with ``display_data_priority`` configurable.

    nbconvert's HTML exporter sets ``NbConvertBase.display_data_priority`` for every preprocessor it runs;
    nbgrader's base preprocessor declares that trait again without ``config=True``, so traitlets warned that
    ClearHiddenTests does not recognise it. The value is not used here: clearing hidden tests shows no output.
    """

    display_data_priority = List(ClearHiddenTests.class_traits()["display_data_priority"].default()).tag(config=True)


class IsolatedKernelManager(AsyncKernelManager):
    """Starts ipykernel without the working directory (the submission) on ``sys.path``; the channels are
    encrypted (CurveZMQ keys made by the manager) where pyzmq and the kernel's spec support it, as ipykernel asks
    ("Kernel is running over TCP without encryption")."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if self.has_trait("transport_encryption") and zmq.has("curve"):  # jupyter_client >= 8.10
            self.transport_encryption = "auto"  # used when the kernel spec declares "curve"

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        command = super().format_kernel_cmd(extra_arguments)
        for at in range(1, len(command) - 1):
            if command[at : at + 2] == ["-m", "ipykernel_launcher"]:
                return [
                    *command[:at],
                    "-c",
                    ISOLATED_LAUNCH,
                    *command[at + 2 :],
                    "--InteractiveShellApp.ignore_cwd=True",
                ]
        raise RuntimeError(
            f"attnlab: the notebook's kernel is not started with `-m ipykernel_launcher` ({command}); "
            "the course needs an ipykernel kernel"
        )


class GuardedExecute(Execute):
    """nbgrader's Execute: isolated kernel, the student's id in its environment, a dead kernel costs one cell."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs["kernel_manager_class"] = IsolatedKernelManager
        super().__init__(**kwargs)

    async def async_start_new_kernel(self, **kwargs: Any) -> None:
        resources = self.resources.get("nbgrader", {}) if isinstance(self.resources, dict) else {}
        environment = dict(os.environ)
        environment[cells.ENV_STEPS] = ",".join(notebook.steps_of(self.nb))
        if resources.get("student"):
            environment[cells.ENV_STUDENT] = str(resources["student"])
        kwargs.setdefault("env", environment)
        await super().async_start_new_kernel(**kwargs)

    start_new_kernel = run_sync(async_start_new_kernel)  # nbclient binds the sync name to its own coroutine

    def preprocess(self, nb: NotebookNode, resources: Any = None, km: Any = None) -> tuple[NotebookNode, dict]:
        """nbconvert's ExecutePreprocessor.preprocess, with a fresh kernel after one dies."""
        NotebookClient.__init__(self, nb, km)  # as nbconvert does: resets the execution state
        self.reset_execution_trackers()
        self._check_assign_resources(resources)
        index = 0
        while index < len(self.nb.cells):
            with self.setup_kernel():
                reply = self.wait_for_reply(self.kc.kernel_info())
                self.nb.metadata["language_info"] = reply["content"]["language_info"]
                while index < len(self.nb.cells):
                    cell, index = self.nb.cells[index], index + 1
                    try:
                        self.preprocess_cell(cell, resources, index - 1)
                    except DeadKernelError:
                        self.log.error("attnlab: the kernel died in cell %d; that cell scores 0", index - 1)
                        cell.outputs.append(
                            NotebookNode(
                                output_type="error",
                                ename=KERNEL_DIED,
                                evalue=KERNEL_DIED_TEXT,
                                traceback=[f"{KERNEL_DIED}: {KERNEL_DIED_TEXT}"],
                            )
                        )
                        break
        self.set_widgets_metadata()
        return self.nb, self.resources
