"""The coordinator of ``attnlab grade-batch``: jobs out, results in, files written as they arrive.

Locally, ``workers`` threads each hand one student at a time to this
machine's warm grading server (:mod:`autograder.warm`), which forks a worker
per student from one set of imports and one sandbox fork server, so at most
``workers`` students are graded at once. With a Dask scheduler address the
same jobs go to the cluster's workers (:mod:`autograder.batch.cluster`), each
machine with its own warm server. Either way each result is written when it
arrives, so a stopped batch resumes where it was: a student whose result is
on disk for the same files is skipped unless ``force``.

Nothing one hand-in does stops the batch: finding it, its fingerprint, its
private copy, its grading, its feedback page and its record are each contained
per student, and a student who could not be graded gets a row with the reason.
A job reaches the grader over the warm server's socket (or a fresh grader's
standard input), never a command line. With ``private_copies`` every hand-in is
taken into a folder only this user can read before any student code runs, and
the submissions folder is closed to other users while the batch runs: at the
``user`` layer (no namespaces) student code can read whatever other users may.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from autograder import engine, intake, messages, safefs, tasks
from autograder.batch import discover, job, records, similarity, summary
from autograder.batch.job import Job, Result
from autograder.sandbox import isolation
from autograder.sandbox.client import Limits
from autograder.sandbox.isolation import Level
from autograder.text import clean
from autograder.warm.server import ENV_WORKERS

PRIVATE_COPIES = ".private-copies"  # under the batch's output folder (shared with the cluster's workers)
NOT_TAKEN = "its hand-in could not be taken in ({error})"
NOT_RECORDED = "{reason} (its result file could not be written: {error})"
CANNOT_CLOSE = "{folder} cannot be closed to other users ({error}); make it private yourself (chmod o-rwx)"


class BatchRefused(Exception):
    """The batch cannot run as asked (the message says why): an instructor's usage error, nothing was graded."""


@dataclass(frozen=True)
class BatchOptions:
    """What to grade, with which graders, where the results go, and how many at once."""

    submissions: Path
    csv: Path
    out: Path
    hidden: Path | None
    reference: Path | None
    secret: str
    given: Path | None = None  # the lab's given data files (the toy model's weights)
    steps: tuple[str, ...] | None = None
    limits: Limits = field(default_factory=Limits)
    deadline_s: float = 900.0
    workers: int = 2
    force: bool = False
    dask: str | None = None  # a Dask scheduler's address (or scheduler file)
    warm: bool = True
    progress: bool = True
    private_copies: bool = False  # take every hand-in into a private folder first; close the submissions folder
    isolation: str | None = None  # the weakest layer the batch may grade with ("namespaces": refuse below it)


@dataclass(frozen=True)
class BatchRun:
    """What a batch did: every student's result (those skipped included), and what it wrote."""

    results: tuple[Result, ...]
    graded_now: int
    skipped: int
    seconds: float
    csv: Path
    summary: dict[str, Path]
    class_summary: summary.ClassSummary

    @property
    def grader_failures(self) -> int:
        """Rows the grader failed on (each graded twice): the batch's exit status says there were some."""
        return sum(result.grader_failed for result in self.results)


def first_lines(options: BatchOptions, level: Level) -> list[str]:
    """What the batch says before it starts: the layer, and a warning when another user (and so student code at
    the user layer) could read the submissions."""
    lines = [f"isolation of student code: {level.label} ({isolation.WHAT[level]})"]
    if level == Level.USER and not options.private_copies:
        warning = isolation.readable_warning(options.submissions)
        if warning:
            lines.append(f"warning: {warning}")
    return lines


def layer(options: BatchOptions) -> Level:
    """The isolation layer this batch grades with; IsolationRefused below ``options.isolation``."""
    return isolation.choose(Level.parse(options.isolation) if options.isolation else None)


def jobs_for(options: BatchOptions, copies: dict[str, intake.TakenIn] | None = None) -> tuple[list[Job], list[Result]]:
    """One job per submission of ``options.submissions`` (from its private copy, when there is one), and a result
    for each student whose job could not even be made."""
    jobs, failed = [], []
    for found in discover.discover(options.submissions):
        taken = (copies or {}).get(found.student)
        copy = taken.folder if taken is not None else None
        try:
            folder = copy if copy is not None else found.folder.resolve()
            jobs.append(
                Job(
                    student=found.student,
                    folder=folder,
                    digest=job.digest_of(folder, search=copy is None),
                    hidden=options.hidden,
                    reference=options.reference,
                    seed=engine.seed_for(options.secret, found.student),
                    steps=options.steps,
                    limits=options.limits,
                    deadline_s=options.deadline_s,
                    warm=options.warm,
                    given=options.given,
                    search=copy is None,
                    isolation=options.isolation,
                    left_out=taken.ignored if taken is not None else (),
                )
            )
        except Exception as error:  # never for one student's folder: the others are graded
            failed.append(Result(found.student, "", reason=NOT_TAKEN.format(error=_one_line(error))))
    return jobs, failed


def run(options: BatchOptions) -> BatchRun:
    """Grade every submission not graded yet, write each result, then the CSV and the class summary.

    Raises:
        IsolationRefused: ``options.isolation`` asks for a layer this machine does not give.
        BatchRefused: ``private_copies`` cannot close the submissions folder.
    """
    started = time.monotonic()
    layer(options)
    with _private(options) as (copies, refused):
        jobs, failed = jobs_for(options, copies)
        kept, todo = [], []
        for each in jobs:
            old = None if options.force else records.read(options.out, each.student)
            if old is not None and old.graded and old.digest == each.digest:
                kept.append(old)
            else:
                todo.append(each)
        results = list(kept)
        from tqdm import tqdm

        with tqdm(total=len(todo) + len(failed) + len(refused), unit="student", desc="grading",
                  disable=not options.progress) as bar:  # fmt: skip
            for result in [*refused, *failed, *execute(todo, options)]:
                results.append(_recorded(options.out, result))
                bar.set_postfix_str(clean(result.student, 24), refresh=False)
                bar.update()
        # hand-ins alike: read while the (private) copies are still there; a review reason, never a score change
        flags = similarity.compare(
            (similarity.read(each.student, each.folder) for each in jobs),
            similarity.reference_answers(options.reference),
        )
        review = similarity.reasons(flags)
        results = [
            _recorded(options.out, replace(r, review=review.get(r.student, ())))
            if review.get(r.student, ()) != r.review
            else r
            for r in results
        ]
    steps = records.steps_graded(options.steps)
    max_score = sum(tasks.step(s).public_points if options.hidden is None else tasks.step(s).points for s in steps)
    csv = records.write_csv(options.csv, results, steps, max_score)
    whole = summary.summarise(results, flags)
    paths = summary.write(whole, options.out)
    return BatchRun(tuple(results), len(todo) + len(failed) + len(refused), len(kept), time.monotonic() - started,
                    csv, paths, whole)  # fmt: skip


def _recorded(out: Path, result: Result) -> Result:
    """``result``, written to its file and page; a record that cannot be written is said in its reason."""
    try:
        records.write(out, result)
    except Exception as error:
        return replace(result, reason=NOT_RECORDED.format(reason=result.reason, error=_one_line(error)))
    return result


@contextmanager
def _private(options: BatchOptions) -> Iterator[tuple[dict[str, intake.TakenIn], list[Result]]]:
    """With ``private_copies``: every hand-in taken into ``OUT/.private-copies/`` (mode 700) by the intake's rules
    before any student code runs, and the submissions folder closed to other users until the batch ends; yields
    ``({student: copy}, [results of hand-ins that could not be taken in])``. Without: nothing."""
    if not options.private_copies:
        yield {}, []
        return
    holder = Path(options.out) / PRIVATE_COPIES
    safefs.remove_tree(holder)
    holder.mkdir(mode=0o700, parents=True)
    holder.chmod(0o700)
    copies, refused = {}, []
    for found in discover.discover(options.submissions):
        target = holder / records.file_stem(found.student) / tasks.LAB
        try:
            copies[found.student] = intake.take_in(found.folder, target, search=True)
        except intake.HandInRefused as error:
            refused.append(Result(found.student, "", reason=messages.hand_in_refused(error)))
        except Exception as error:
            refused.append(Result(found.student, "", reason=NOT_TAKEN.format(error=_one_line(error))))
    try:
        with _closed_to_others(Path(options.submissions)):
            yield copies, refused
    finally:
        safefs.remove_tree(holder)


@contextmanager
def _closed_to_others(folder: Path) -> Iterator[None]:
    """``folder`` without its permissions for other users (so nothing under it can be reached by them) until the
    block ends, then as it was."""
    mode = folder.stat().st_mode & 0o7777
    if mode & 0o007:
        try:
            folder.chmod(mode & ~0o007)
        except OSError as error:
            raise BatchRefused(CANNOT_CLOSE.format(folder=folder, error=error.strerror)) from None
    try:
        yield
    finally:
        if mode & 0o007:
            folder.chmod(mode)


def execute(jobs: list[Job], options: BatchOptions) -> Iterator[Result]:
    """The jobs' results as they finish: on the Dask cluster, or on this machine's warm grader."""
    if not jobs:
        return
    if options.dask:
        from autograder.batch import cluster

        yield from cluster.execute(jobs, options.dask)
        return
    os.environ.setdefault(ENV_WORKERS, str(max(options.workers, 2)))  # for a warm server this run starts
    with ThreadPoolExecutor(max_workers=options.workers, thread_name_prefix="attnlab-batch") as pool:
        futures = {pool.submit(job.grade, each): each for each in jobs}
        for future in as_completed(futures):
            yield _result(future, futures[future])


def _result(future: object, each: Job) -> Result:
    """The job's result; a job that raised (never for a student's reason) becomes the grader's failure."""
    try:
        return future.result()  # type: ignore[attr-defined]
    except Exception as error:
        return Result(each.student, each.digest, reason=job.GRADER_FAILED.format(detail=_one_line(error)),
                      grader_failed=True)  # fmt: skip


def _one_line(error: BaseException) -> str:
    return clean(f"{type(error).__name__}: {error}".splitlines()[0] if str(error) else type(error).__name__, 300)
