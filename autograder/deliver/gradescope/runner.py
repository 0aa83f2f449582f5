"""What ``run_autograder`` starts on Gradescope: grade ``/autograder/handin/submission``, write ``results.json``.

Gradescope unpacks the autograder zip into ``/autograder/source`` and runs
``run_autograder`` as root for every submission. This runner:

1. closes the source folder (hidden graders, reference, course secret) to every other user;
2. finds the lab's files in the submission (at its top, in one folder, or in a
   notebook's ``%%writefile`` cells; the timing report in the lab folder's
   ``reports/``, beside the modules, at the top or one folder down, or in a
   ``%%writefile reports/timing.json`` cell: :mod:`autograder.handin.submission`) and
   takes them into the grader's own copy (:mod:`autograder.handin.intake`: regular
   files only, no link followed, bounded);
3. grades them, public and hidden checks, in a fresh grader process with a
   deadline (student code runs in that process's sandbox: as an unprivileged
   user where the sandbox can switch to one, and the report names the
   isolation used), with hidden inputs drawn from the course secret and the
   submitters' Gradescope ids;
4. writes ``/autograder/results/results.json`` (atomically). A missing or
   broken submission, a deadline or a failing grader still gives a valid file
   that scores 0 and says why.

Every path is under one root, ``/autograder`` unless ``$ATTNLAB_GRADESCOPE_ROOT``
says otherwise (the kit's tests simulate Gradescope's layout in a temporary folder).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from autograder import i18n
from autograder.base.files import write_atomically
from autograder.base.kit import Kit
from autograder.deliver.warm import client, job
from autograder.grading import engine, serialize
from autograder.handin import submission
from autograder.report import gradescope as results
from autograder.report import gradescope_summary as summary
from autograder.sandbox.client import Limits

ENV_ROOT = "ATTNLAB_GRADESCOPE_ROOT"
DEFAULT_ROOT = "/autograder"
SETTINGS = "attnlab.json"  # in the zip's root, next to setup.sh
KIT = "kit"  # the zip's folder holding solutions/<lab> and hidden/<lab>
STOP_GRACE_S = 15.0

OVERRAN = (
    "Grading did not finish within {seconds:g} s, so this submission scores 0. Code that hangs or runs very "
    "slowly is the usual cause; see the handout's timing advice, then submit again."
)
GRADER_FAILED = "The grader itself failed ({detail}); this is not your mistake: tell your instructor."
NO_KIT = "the autograder zip has no {what}; rebuild it with `attnlab gradescope`"


@dataclass(frozen=True)
class Settings:
    """What the zip's ``attnlab.json`` holds (written by ``attnlab gradescope``)."""

    secret: str
    deadline_s: float = 900.0
    limits: dict[str, Any] = field(default_factory=dict)  # sandbox limits by Limits field name
    steps: tuple[str, ...] | None = None  # None: every step
    language: str | None = None  # the course's language of the feedback (attnlab gradescope --lang); None: English


@dataclass(frozen=True)
class Layout:
    """Gradescope's folders under ``root``."""

    root: Path

    @property
    def source(self) -> Path:
        return self.root / "source"

    @property
    def submission(self) -> Path:
        return self.root / "submission"

    @property
    def metadata(self) -> Path:
        return self.root / "submission_metadata.json"

    @property
    def results(self) -> Path:
        return self.root / "results" / "results.json"

    @property
    def kit(self) -> Kit:
        return Kit(self.source / KIT)


def main() -> int:
    """Grade the submission under ``$ATTNLAB_GRADESCOPE_ROOT`` (default ``/autograder``); always exit 0 with a
    ``results.json`` written."""
    layout = Layout(Path(os.environ.get(ENV_ROOT) or DEFAULT_ROOT))
    started = time.monotonic()
    try:
        document = grade(layout)
    except Exception as error:  # the runner must always leave a results.json behind
        detail = f"{type(error).__name__}: {error}".splitlines()[0][:300]
        document = results.failure(GRADER_FAILED.format(detail=detail))
    document["execution_time"] = round(time.monotonic() - started, 3)
    write_atomically(layout.results, results.dumps(document))
    return 0


def grade(layout: Layout) -> dict[str, Any]:
    """The ``results.json`` of the submission in ``layout``."""
    close_to_others(layout.source)
    settings = read_settings(layout.source / SETTINGS)
    i18n.activate(i18n.choose_or_source(settings.language) if settings.language else i18n.SOURCE)  # results.json's
    kit = layout.kit
    for what, folder in (("reference", kit.solutions), ("hidden graders", kit.hidden)):
        if not folder.is_dir():
            raise FileNotFoundError(NO_KIT.format(what=what))
    located = submission.locate(layout.submission)  # a listing only, to answer at once when there is nothing
    if not located.found:
        return results.failure(located.problem)
    options = engine.GradeOptions(
        submission=layout.submission,
        hidden=kit.hidden,
        reference=kit.solutions,
        seed=engine.seed_for(settings.secret, identity(layout.metadata)),
        steps=settings.steps,
        limits=Limits(**settings.limits),
        search=True,
        given=kit.solutions,  # the toy model's weights, where the upload lacks them (into the copy only)
    )
    outcome = client.grade(
        job.HANDLER,
        job.request_for(options, settings.language),
        deadline_s=settings.deadline_s,
        stop_grace_s=STOP_GRACE_S,
        warm=False,
    )
    source = "notebook" if located.notebook_modules else "files"
    if isinstance(outcome, client.Graded):
        report = replace(outcome.report, submission=layout.submission.name)
        print(summary.instructor_text(report), flush=True)  # run_autograder's stdout: what instructors see
        return results.results(report, lab_files=source)
    if isinstance(outcome, client.Overran):
        return results.failure(OVERRAN.format(seconds=outcome.seconds), lab_files=source)
    if isinstance(outcome, client.NotTakenIn):
        return results.failure(outcome.reason, lab_files=source)
    return results.failure(GRADER_FAILED.format(detail=outcome.detail), lab_files=source)


def read_settings(path: Path) -> Settings:
    """The zip's settings; FileNotFoundError or FormatError (a ValueError) when they are missing or malformed."""
    return serialize.decode(Settings, json.loads(path.read_text(encoding="utf-8")))


def identity(metadata: Path) -> str:
    """The submission's identity for its hidden-input seed: its submitters' Gradescope user ids (so a resubmission
    is graded on the same hidden inputs); the submission's id, or "anonymous", when the metadata lacks them."""
    try:
        data = json.loads(metadata.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "anonymous"
    users = data.get("users") if isinstance(data, dict) else None
    ids = sorted(str(u["id"]) for u in users if isinstance(u, dict) and "id" in u) if isinstance(users, list) else []
    if ids:
        return "+".join(ids)
    return str(data.get("id", "anonymous")) if isinstance(data, dict) else "anonymous"


def close_to_others(source: Path) -> None:
    """Make ``source`` (and what it holds) readable by its owner only: student code, run as another user, cannot
    read the hidden graders, the reference or the course secret."""
    for folder, _, files in os.walk(source):
        os.chmod(folder, 0o700)
        for name in files:
            path = Path(folder) / name
            if not path.is_symlink():
                path.chmod(path.stat().st_mode & 0o700)
