"""Grade one submission folder: run the grader files under pytest, collect a report.

The graders are pytest files whose checks carry ``@pytest.mark.points(n)``
and whose module names the step with ``pytestmark = pytest.mark.step(id)``.
The public ones ship in ``autograder/grading/graders/``; the hidden ones are handed in
by path. Pytest runs in this process with no conftest loaded and no cache
written; student code runs only in the sandboxed child behind the ``lab``
fixture. The core returns a :class:`GradeReport` and never prints.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import os
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pytest

from autograder.base import tasks
from autograder.base.reference import Reference
from autograder.base.sourceonly import source_only
from autograder.base.text import escape_controls
from autograder.grading import grader_fixtures, lanes, untouched
from autograder.grading.checklist import MARKERS, points_of, step_of, title_of
from autograder.grading.model import CallFailure, CheckResult, GradeReport, StepResult
from autograder.handin import intake, pristine, submission
from autograder.i18n import N_, _
from autograder.judge import checking, messages, oracle
from autograder.judge.checking import CheckFailed, Lab, NeedsReview
from autograder.judge.evidence import RECORDER
from autograder.sandbox import outcome as outcomes
from autograder.sandbox.client import Hangs, IsolationRefused, Level, Limits, Sandbox, Staged, prestart
from autograder.sandbox.isolation import choose, readable_by_others

__all__ = ["GradeOptions", "GradingError", "HandInRefused", "IsolationRefused", "grade", "seed_for", "with_note"]
HandInRefused = intake.HandInRefused

PUBLIC_GRADERS = Path(__file__).parent / "graders" / tasks.LAB
DEFAULT_SECRET = "attnlab-default-secret"
NOTE_DEFAULT_SECRET = N_("hidden inputs use the kit's default secret: set ATTNLAB_SECRET or --secret-file")
NOTE_NO_HIDDEN = N_("no hidden graders were found, so only the public checks ran")
NOTE_READABLE = N_(
    "{path} is readable by every user, so student code (isolation: user) could read it; "
    "make it private (chmod -R o-rwx) or grade where bubblewrap works"
)
NOTE_INSTRUCTOR_READABLE = N_(
    "the kit's instructor-only modules (for example {path}) are readable by every user, so student code "
    "(isolation: user) could read them; grade with the student wheel installed, or close those files to other users"
)
INTERNAL = N_("The grader itself failed on this check ({error}); this is not your mistake, tell your instructor.")
NOT_ISOLATED = N_("the sandbox could not isolate student code: {reason}")


class GradingError(Exception):
    """The graders themselves are inconsistent (points, markers); not a student's fault."""


@dataclass(frozen=True)
class GradeOptions:
    """Where the submission, the hidden graders and the reference are, and how to draw."""

    submission: Path
    hidden: Path | None = None
    reference: Path | None = None
    seed: int | None = None
    public_only: bool = False
    steps: tuple[str, ...] | None = None
    limits: Limits = field(default_factory=Limits)
    isolation: str | None = None  # the weakest isolation layer grading may use ("namespaces", "user", "hook")
    search: bool = False  # look for the lab's files below ``submission`` (an upload, a batch's student folder)
    given: Path | None = None  # a folder with the lab's given data files, added to the copy where they are missing
    left_out: tuple[intake.Ignored, ...] = ()  # what an earlier intake left out (``submission`` is its private copy)


def seed_for(secret: str, identity: str) -> int:
    """The hidden-input seed of one submission: unknowable without the course secret."""
    return int.from_bytes(hashlib.sha256(f"{secret}\0{identity}".encode()).digest()[:6], "big")


class GradingPlugin:
    """Pytest plugin: provides the graders' fixtures and records each check's result."""

    def __init__(
        self,
        options: GradeOptions,
        level: Level,
        cpus: Callable[[], tuple[int, ...] | None] = lambda: None,
        skipped: dict[str, tuple[str, ...]] | None = None,
    ) -> None:
        """``options.submission`` is the intake's copy (:func:`grade` makes it), ``options.left_out`` what the
        intake left out of the hand-in; ``skipped``: the untouched steps whose checks are reported without running
        (step id -> its module's stubbed functions, see :mod:`autograder.handin.pristine`)."""
        self.options, self.level, self.cpus = options, level, cpus  # cpus(): where a new sandbox's children run
        self.skipped = dict(skipped or {})
        self.folder = Path(options.submission)  # the intake's copy: every sandbox reads this, never the hand-in
        self.ignored = {item.path: item.kind for item in options.left_out}
        self.numpy_children = not mentions_torch(options.submission)  # numpy steps may fork from a torch-free server
        self.results: dict[str, CheckResult] = {}
        self.order: list[str] = []
        self._reference: Reference | None = None
        self._oracle: oracle.Oracle | None = None
        self._sandboxes: dict[str, Sandbox] = {}
        self._staged = Staged(self.folder)  # one staged copy of the hand-in for every step's sandbox
        self.hangs = Hangs()  # shared by every step: a function that hung is not called again
        self._hidden_files: dict[str, bool] = {}

    # -- configuration and collection --------------------------------------
    def pytest_configure(self, config: pytest.Config) -> None:
        for line in MARKERS:
            config.addinivalue_line("markers", line)
        config.stash[grader_fixtures.PLUGIN] = self

    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        wanted = set(self.options.steps or tasks.BY_ID)
        kept = [item for item in items if step_of(item).id in wanted]
        kept.sort(key=lambda item: (tasks.STEPS.index(step_of(item)), self._is_hidden(item)))
        self.order = [item.nodeid for item in kept]
        self._check_points(kept)
        for item in kept:  # an untouched step's checks: reported now, never run (no sandbox, no reference)
            step = step_of(item)
            if step.id in self.skipped:
                self.results[item.nodeid] = untouched.check_result(
                    step,
                    item.name,
                    title_of(item),
                    points_of(item),
                    self._is_hidden(item),
                    self.skipped[step.id],
                    list(getattr(item, "fixturenames", ())),
                    hasattr(item, "callspec"),
                )
        run = [item for item in kept if step_of(item).id not in self.skipped]
        if self.numpy_children:  # the steps without torch first, each step's checks still together (a stable sort):
            # their children fork from the numpy-only server while the torch one still imports torch (0.25 s of a
            # whole-lab grade). Scores do not depend on the order (a fresh child per step; a function found hanging
            # fails fast in whichever step meets it next), and the report keeps the lab's order (self.order).
            run.sort(key=lambda item: step_of(item).uses_torch)
        items[:] = run

    def _check_points(self, items: list[pytest.Item]) -> None:
        sums: dict[tuple[str, bool], float] = {}
        for item in items:
            key = (step_of(item).id, self._is_hidden(item))
            sums[key] = sums.get(key, 0.0) + points_of(item)
        for step in tasks.STEPS:
            if self.options.steps and step.id not in self.options.steps:
                continue
            if not any(key[0] == step.id for key in sums):
                continue  # no graders for this step in this run (a kit test requires them)
            expectations = [(False, step.public_points)] + ([(True, step.hidden_points)] if self.options.hidden else [])
            for hidden, points in expectations:
                found = sums.get((step.id, hidden), 0.0)
                if abs(found - points) > 1e-9:
                    kind = "hidden" if hidden else "public"
                    raise GradingError(
                        f"the {kind} checks of step {step.id!r} carry {found:g} points, the registry says {points:g}"
                    )

    def _is_hidden(self, item: pytest.Item) -> bool:
        """Whether ``item`` is a hidden check (each grader file's answer is kept: resolving paths for every
        item, several times each, cost 0.8 s of a whole-lab grade)."""
        path = str(item.path)
        if path not in self._hidden_files:
            hidden = self.options.hidden
            self._hidden_files[path] = hidden is not None and Path(path).resolve().is_relative_to(
                Path(hidden).resolve()
            )
        return self._hidden_files[path]

    # -- what the fixtures serve (autograder.grading.grader_fixtures) ----------------
    def lab(self, request: pytest.FixtureRequest) -> Lab:
        """The submission, for the step of this grader file, through that step's sandbox.

        A step's public and hidden files share one sandbox (checks run step by
        step); the next step starts a fresh one, so no state crosses steps.
        """
        step = step_of(request.node)
        for other in [s for s in self._sandboxes if s != step.id]:
            checking.close(self._sandboxes.pop(other))
        if step.id not in self._sandboxes:
            self._sandboxes[step.id] = Sandbox(
                self.folder,
                self.options.limits,
                self.hangs,
                self.level,
                ignored=self.ignored,
                torch=step.child_uses_torch or not self.numpy_children,
                cpus=self.cpus(),
                label=step.id,
                staged=self._staged,
            )
        return Lab(self._sandboxes[step.id], step, self._trusted(step))

    def _trusted(self, step: tasks.Step) -> Callable[[], tuple[oracle.Oracle, Reference]] | None:
        """Where a failed check's diagnosis runs the reference (None without one): this grade's oracle for a torch
        step, this process for a numpy one (its reference modules are loaded here already), and the reference
        itself, for the known wrong answers of an earlier step's function."""
        if self.options.reference is None:
            return None

        def trusted() -> tuple[oracle.Oracle, Reference]:
            return (self.oracle() if step.torch else oracle.InProcessOracle(self.ref())), self.ref()

        return trusted

    def close_sandboxes(self) -> None:
        for sandbox in self._sandboxes.values():
            checking.close(sandbox)
        self._sandboxes.clear()
        self._staged.close()  # after the sandboxes it served
        if self._oracle is not None:
            self._oracle.close()
            self._oracle = None

    def pytest_sessionfinish(self) -> None:
        self.close_sandboxes()

    def ref(self) -> Reference:
        """The reference solution (hidden graders only; never shipped to students)."""
        if self._reference is None:
            if self.options.reference is None:
                raise GradingError("the hidden graders need the reference solution; pass --reference")
            self._reference = Reference(self.options.reference, tasks.modules_present(self.options.reference))
        return self._reference

    def oracle(self) -> oracle.Oracle:
        """The checks' trusted torch side (:mod:`autograder.judge.oracle`): a sandbox child of its own holding the
        reference in the namespaces layer, this process elsewhere."""
        if self._oracle is None:
            reference = self.options.reference
            if oracle.boxed(self.level):
                self._oracle = oracle.BoxedOracle(
                    Path(reference) if reference is not None else None, self.options.limits, self.level, self.cpus()
                )
            else:
                self._oracle = oracle.InProcessOracle(self.ref() if reference is not None else None)
        return self._oracle

    def rng(self, request: pytest.FixtureRequest) -> np.random.Generator:
        """Hidden inputs for this check: the submission's seed and the check's own name."""
        if self.options.seed is None:
            raise GradingError("hidden checks need a seed")
        return np.random.default_rng([self.options.seed, zlib.crc32(request.node.name.encode())])

    # -- results ------------------------------------------------------------
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        RECORDER.clear()  # what this check exhibits, and nothing from the one before

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
        outcome = yield
        report = outcome.get_result()
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.results[item.nodeid] = self._result(item, call, report)

    def _result(self, item: pytest.Item, call: pytest.CallInfo, report: pytest.TestReport) -> CheckResult:
        step = step_of(item)
        common = dict(
            step=step.id, name=item.name, title=title_of(item), points=points_of(item), hidden=self._is_hidden(item)
        )
        if report.passed:
            return CheckResult(passed=True, evidence=RECORDER.last(), **common)
        error = call.excinfo.value if call.excinfo else None
        cause = outcomes.root_cause(error.outcome) if isinstance(error, CheckFailed) and error.outcome else None
        if isinstance(cause, outcomes.Refused) and cause.isolation:  # no student code ran: the machine's failure
            detail = _(NOT_ISOLATED).format(reason=cause.reason)
            return CheckResult(
                passed=False, message=_(INTERNAL).format(error=detail[:300]), internal_error=True, **common
            )
        if isinstance(error, CheckFailed):
            failure = _call_failure(error) if error.outcome is not None else None
            return CheckResult(
                passed=False,
                message=error.message,
                mistake=error.mistake,
                call_failure=failure,
                evidence=error.evidence,
                not_started=error.not_started,
                review=isinstance(error, NeedsReview),
                **common,
            )
        detail = f"{type(error).__name__}: {error}" if error is not None else report.longreprtext.splitlines()[-1:]
        return CheckResult(
            passed=False, message=_(INTERNAL).format(error=str(detail)[:300]), internal_error=True, **common
        )


def _call_failure(error: CheckFailed) -> CallFailure:
    """The plain summary of the outcome that cost a check its value.

    ``function`` is the student's function where an exception was raised (``KVCache.append``: a probe's
    call reaches it), else the function called, without its module.
    """
    cause = outcomes.root_cause(error.outcome)
    raised = cause if isinstance(cause, outcomes.Raised) else None
    called = (error.function or "").rpartition(".")[2]
    return CallFailure(
        kind=error.outcome.kind,
        function=(raised.function if raised and raised.function else called),
        exception_type=raised.type_name if raised else None,
        exception_mro=raised.mro if raised else (),
    )


class PlainFailureReports:
    """Pytest plugin: the report of a check that failed for the student's reason, without pytest's traceback.

    Pytest formats every failure's long traceback (each frame's source and arguments, NumPy arrays
    included) although the engine reads only the :class:`CheckFailed`; that formatting took about 80% of
    the grading time of a submission whose checks fail (the stubs: 12 s of 14.5). The report keeps the
    check's message as its text; every other failure (a grader's own error) gets pytest's report as before.
    """

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> pytest.TestReport | None:
        if call.excinfo is None or not isinstance(call.excinfo.value, CheckFailed):
            return None
        return pytest.TestReport(
            item.nodeid,
            item.location,
            dict.fromkeys(item.keywords, 1),
            "failed",
            call.excinfo.value.message,
            call.when,
            duration=call.duration,
            start=call.start,
            stop=call.stop,
            user_properties=item.user_properties,
        )


def _grader_paths(options: GradeOptions) -> list[str]:
    """The grader folders, or only the selected steps' files (``test_<step>.py``, ``test_<step>_hidden.py``)."""
    folders = [PUBLIC_GRADERS] + ([Path(options.hidden)] if options.hidden else [])
    if not options.steps:
        return [str(folder) for folder in folders]
    files = [
        folder / f"test_{step}{suffix}.py" for step in options.steps for folder, suffix in zip(folders, ("", "_hidden"))
    ]
    return [str(path) for path in files if path.is_file()]


def _guard_imports(submission: Path) -> None:
    """Refuse to grade if the grader's own modules were imported from the submission.

    That happens only when the grader is started with the submission folder on
    ``sys.path`` (``python -m autograder`` run inside it); the ``attnlab``
    command never does.
    """
    for name in ("pytest", "_pytest", "numpy", "autograder"):
        path = getattr(sys.modules.get(name), "__file__", None)
        if path and Path(path).resolve().is_relative_to(submission.resolve()):
            raise GradingError(
                f"the grader's {name} was imported from the submission folder ({path}); run attnlab from another folder"
            )


TORCH_MODULES = frozenset(step.module for step in tasks.STEPS if step.torch)


def mentions_torch(submission: Path) -> bool:
    """Whether a module of the submission other than the torch steps' own says ``torch`` anywhere.

    The numpy steps' children fork from a fork server without torch (cheaper, and ready seconds sooner); a
    submission whose numpy steps use torch (``torch.softmax`` in ``softmax.py``, or a helper module that imports
    it) gets the one with torch preloaded instead, as the torch steps do. Only speed depends on this: code that
    imports torch in a way no text search sees still runs, importing torch in its own child.
    """
    for path in Path(submission).glob("*.py"):
        if path.stem in TORCH_MODULES:
            continue
        try:
            if path.is_file() and b"torch" in path.read_bytes():
                return True
        except OSError:
            continue
    return False


def _preload_torch(steps: tuple[str, ...]) -> None:
    """Import torch in a background thread when a step whose graders use it will be graded.

    The reference's torch steps import it in this process (about 2.5 s); a thread
    started now does that while the first steps' checks wait on their children.
    Importlib's module locks make a later ``import torch`` wait for this one.
    """
    if any(tasks.step(s).grader_uses_torch for s in steps if s in tasks.BY_ID) and "torch" not in sys.modules:
        threading.Thread(target=_import_torch, name="attnlab-torch-preload", daemon=True).start()


def _import_torch() -> None:
    """torch for the grader's own checks, on one thread: its arrays are small, and the other CPUs are the
    sandbox children's (the warm server found the torch steps 1.2-1.8x faster so)."""
    torch = importlib.import_module("torch")
    torch.set_num_threads(1)


# pytest's built-in plugins the graders never use (doctests, JUnit XML, tmp_path, monkeypatch, warnings capture,
# pdb, unittest classes, ...): each is registered and scanned for fixtures at every grading (a fifth of pytest's
# start-up, which a test suite grading 140 variants pays 140 times).
UNUSED_PLUGINS = tuple(
    argument
    for name in (
        "doctest", "junitxml", "pastebin", "stepwise", "legacypath", "tmpdir", "monkeypatch", "recwarn",
        "faulthandler", "threadexception", "setuponly", "setupplan", "debugging", "warnings", "unittest", "subtests",
    )
    for argument in ("-p", f"no:{name}")
)  # fmt: skip

# What this environment's pytest would otherwise add to the graders' run: plugins installed in it (hypothesis,
# pytest-benchmark, anyio... each loaded into the grader, some changing how tests run) and the user's options.
PYTEST_SETTINGS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTEST_PLUGINS": None, "PYTEST_ADDOPTS": None}


def _set_environment(values: dict[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@contextmanager
def _own_pytest() -> Iterator[None]:
    """The graders run with the kit's plugins and options only, whatever the environment has installed or set."""
    saved = {name: os.environ.get(name) for name in PYTEST_SETTINGS}
    _set_environment(PYTEST_SETTINGS)
    try:
        yield
    finally:
        _set_environment(saved)


def grade(options: GradeOptions) -> GradeReport:
    """Run every applicable grader on ``options.submission`` and return the report.

    The hand-in is taken into a private copy first (:func:`autograder.handin.intake.take_in`); nothing here or in the
    graders reads the hand-in itself. Steps that measure time are graded in a lane of their own where the machine
    has a CPU to spare for them (:mod:`autograder.grading.lanes`), alongside the others; the report is the same either
    way.

    Raises:
        IsolationRefused: ``options.isolation`` asks for a layer this machine does not give.
        HandInRefused: the hand-in has no lab files, or passes one of the intake's limits (the student's reason).
        GradingError: the graders themselves are broken.
    """
    started = time.perf_counter()
    _guard_imports(Path(options.submission))
    level = choose(Level.parse(options.isolation) if options.isolation else None)
    work = Path(tempfile.mkdtemp(prefix="attnlab-intake-"))
    try:
        given = submission.data_files(options.given) if options.given is not None else ()
        taken = intake.take_in(options.submission, work / tasks.LAB, search=options.search, given=given)
        if options.left_out:
            taken = replace(taken, ignored=tuple(sorted({*taken.ignored, *options.left_out}, key=lambda i: i.path)))
        return _grade_copy(options, level, taken, started)
    finally:
        intake.remove(work)


def _grade_copy(options: GradeOptions, level: Level, taken: intake.TakenIn, started: float) -> GradeReport:
    """Grade the intake's copy ``taken`` of ``options.submission``."""
    selected = tuple(options.steps or tasks.BY_ID)
    # read before any student code runs: the functions whose stub error is still in the modules taken in
    still_stubbed = pristine.in_folder(taken.folder, {s: tasks.step(s).module for s in selected if s in tasks.BY_ID})
    # the steps whose modules are the released stubs byte for byte: their checks are reported, not run
    skipped = pristine.untouched(
        taken.folder, [s for s in selected if s in tasks.BY_ID], [i.path for i in taken.ignored]
    )
    running = tuple(s for s in selected if s not in skipped)
    # the children's numpy (and torch) load while pytest collects; numpy-only steps fork from a server without torch
    numpy_children = not mentions_torch(taken.folder)
    child_torch = [tasks.step(s).child_uses_torch for s in running]
    oracle_torch = oracle.boxed(level) and any(tasks.step(s).grader_uses_torch for s in running)
    if running:
        torch = any(child_torch) or not numpy_children or oracle_torch
        prestart(torch=torch, level=level, numpy=numpy_children and not all(child_torch))
    split = lanes.plan(running)
    copy = replace(options, submission=taken.folder, left_out=taken.ignored, search=False, given=None)
    untouched_steps = {s: still_stubbed.get(s, ()) for s in skipped}
    if split is None:
        steps = _run_graders(copy, level, selected, still_stubbed, skipped=untouched_steps)
    else:
        steps = _run_in_lanes(copy, level, split, still_stubbed, untouched_steps)
    notes = [messages.left_out(item.path, item.kind) for item in taken.ignored]
    if options.hidden is None and not options.public_only:
        notes.append(_(NOTE_NO_HIDDEN))
    if level == Level.USER:
        notes += [
            _(NOTE_READABLE).format(path=p) for p in (options.hidden, options.reference) if p and readable_by_others(p)
        ]
        notes += [_(NOTE_INSTRUCTOR_READABLE).format(path=p) for p in _readable_instructor_modules()[:1]]
    return GradeReport(
        submission=escape_controls(str(options.submission)),  # a folder name a student chose
        steps=steps,
        public_only=options.hidden is None,
        seed=options.seed if options.hidden else None,
        notes=tuple(notes),
        seconds=time.perf_counter() - started,
        isolation=level.label,
        ignored=taken.ignored,
    )


def _readable_instructor_modules() -> list[Path]:
    """The package's files the student wheel leaves out that every user can read (at the user layer, student code
    can; in the namespaces layer they are not mounted at all)."""
    from autograder.base.kit import PACKAGE
    from autograder.sandbox import bwrap

    public = set(bwrap.public_files())
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).as_posix() not in public and readable_by_others(path)
    ]


def _run_in_lanes(
    options: GradeOptions,
    level: Level,
    split: lanes.Plan,
    still_stubbed: dict[str, tuple[str, ...]],
    skipped: dict[str, tuple[str, ...]],
) -> tuple[StepResult, ...]:
    """The main steps graded here while the timing lane grades the steps that measure time on its own CPU; the
    ``skipped`` steps (untouched, see :func:`_run_graders`) are reported by the main lane."""
    from autograder.grading import serialize

    def timed_lane() -> str:
        steps = _run_graders(options, level, split.timed, still_stubbed, cpus=lambda: split.reserved)
        return serialize.report_json(GradeReport(str(options.submission), steps, options.hidden is None, options.seed))

    order = {step.id: index for index, step in enumerate(tasks.STEPS)}
    main_steps = tuple(sorted((*split.main, *skipped), key=order.__getitem__))
    with lanes.overlapping(split, timed_lane) as lane:
        main = _run_graders(
            options,
            level,
            main_steps,
            still_stubbed,
            cpus=lambda: split.others if lane.running else None,
            skipped=skipped,
        )
    text, problem = lane.result()
    if text is not None:
        timed = serialize.report_from_json(text).steps
    elif problem.startswith(GradingError.__name__ + ":"):
        raise GradingError(problem.partition(":")[2].strip())
    else:  # the lane itself failed (not its graders): its steps are graded here, after the others
        timed = _run_graders(options, level, split.timed, still_stubbed)
    return tuple(sorted((*main, *timed), key=lambda result: order[result.step.id]))


def trusted_roots(options: GradeOptions) -> tuple[Path | None, ...]:
    """The folders whose Python the graders import from source, never from a bytecode cache
    (:mod:`autograder.base.sourceonly`): the public graders, the hidden graders, the reference (None: not used)."""
    return (PUBLIC_GRADERS, options.hidden, options.reference)


def _run_graders(
    options: GradeOptions,
    level: Level,
    selected: tuple[str, ...],
    still_stubbed: dict[str, tuple[str, ...]],
    cpus: Callable[[], tuple[int, ...] | None] = lambda: None,
    skipped: dict[str, tuple[str, ...]] | None = None,
) -> tuple[StepResult, ...]:
    """Run the graders of the ``selected`` steps under pytest in this process; each step's results, in order.

    The checks of the ``skipped`` steps among them (untouched: step id -> its stubbed functions) are collected
    and reported as not started (:mod:`autograder.grading.untouched`), never run.
    """
    options = replace(options, steps=selected)
    skipped = {step: names for step, names in (skipped or {}).items() if step in selected}
    if not oracle.boxed(level):  # else the checks' torch runs in the oracle's child (autograder.judge.oracle)
        _preload_torch(tuple(step for step in selected if step not in skipped))
    plugin = GradingPlugin(options, level, cpus, skipped)
    paths = _grader_paths(options)
    args = [
        *paths,
        "-c", str(PUBLIC_GRADERS / "pytest.ini"),
        "--rootdir", str(PUBLIC_GRADERS),
        "--noconftest",
        "--import-mode=importlib",  # grader files by path: no sys.path changes, two hidden folders in one process
        "--assert=plain",  # pytest's rewriting would read its own bytecode cache next to the graders
        "-p", "no:cacheprovider",
        "-p", "no:logging",  # its collection hook walks the loggers while the torch preload thread adds some
        "-p", "no:unraisableexception",  # it runs gc.collect() 5 times at the end: 0.65 s a student with torch loaded
        *UNUSED_PLUGINS,
        "-s",
        "-q",
        "--strict-markers",
    ]  # fmt: skip
    sink = io.StringIO()
    trusted = trusted_roots(options)
    try:
        with redirect_stdout(sink), redirect_stderr(sink), messages.plain_numbers(), source_only(trusted):
            with _own_pytest():
                code = pytest.main(args, plugins=[plugin, PlainFailureReports(), grader_fixtures])
    finally:
        plugin.close_sandboxes()
    nothing_ran = (
        code == pytest.ExitCode.NO_TESTS_COLLECTED and plugin.order and set(plugin.results) >= set(plugin.order)
    )  # every check collected was an untouched step's
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) and not nothing_ran:
        raise GradingError(f"the graders could not run (pytest exit {int(code)}):\n{sink.getvalue()[-3000:]}")
    steps = []
    for step in tasks.STEPS:
        checks = tuple(
            plugin.results[n] for n in plugin.order if n in plugin.results and plugin.results[n].step == step.id
        )
        if checks:
            steps.append(StepResult(step, checks, still_stubbed.get(step.id, ())))
    missing = [n for n in plugin.order if n not in plugin.results]
    if missing:
        raise GradingError(f"no result for {len(missing)} checks, e.g. {missing[0]}")
    return tuple(steps)


def with_note(report: GradeReport, note: str) -> GradeReport:
    """The same report with one more note."""
    return replace(report, notes=(*report.notes, note))
