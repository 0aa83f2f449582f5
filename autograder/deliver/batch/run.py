"""The coordinator of ``attnlab grade-batch``: jobs out, results in, files written as they arrive.

Locally, ``workers`` threads each hand one student at a time to this
machine's warm grading server (:mod:`autograder.deliver.warm`), which forks a worker
per student from one set of imports and one sandbox fork server, so at most
``workers`` students are graded at once. With a Dask scheduler address the
same jobs go to the cluster's workers (:mod:`autograder.deliver.batch.cluster`), each
machine with its own warm server. Either way each result is written when it
arrives, so a stopped batch resumes where it was: a student whose result is
on disk for the same files is skipped unless ``force``.

Nothing one hand-in does stops the batch: finding it, its fingerprint, its
private copy, its grading, the comparison of hand-ins, its feedback page, its
record and its CSV row are each contained per student (a file or folder the
grader may not read is left out of that student's grading, and said in the
row), and a student who could not be graded gets a row with the reason. The
CSV is written whatever happens after the first student: an interrupt (Ctrl-C,
``SIGINT``, ``SIGTERM``) stops the running graders within seconds, and the CSV
then holds the students finished so far; the same command resumes. The warm
grading server the batch used is stopped when it ends (on a Dask cluster, on
every worker), so nothing of the batch outlives it.
A job reaches the grader over the warm server's socket (or a fresh grader's
standard input), never a command line. With ``private_copies`` every hand-in is
taken into a folder only this user can read before any student code runs, and
the submissions folder is closed to other users while the batch runs: at the
``user`` layer (no namespaces) student code can read whatever other users may.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from autograder.base import safefs, tasks
from autograder.base.text import clean
from autograder.deliver.batch import discover, job, records, similarity, summary
from autograder.deliver.batch.job import Job, Result
from autograder.deliver.warm import client
from autograder.deliver.warm import job as warm_job
from autograder.deliver.warm.server import ENV_WORKERS
from autograder.grading import engine
from autograder.handin import intake
from autograder.judge import messages
from autograder.sandbox import isolation
from autograder.sandbox.client import Limits
from autograder.sandbox.isolation import Level

PRIVATE_COPIES = ".private-copies"  # under the batch's output folder (shared with the cluster's workers)
NOT_TAKEN = "its hand-in could not be taken in ({error})"
NOT_RECORDED = "{reason} (its result file could not be written: {error})"
CANNOT_CLOSE = "{folder} cannot be closed to other users ({error}); make it private yourself (chmod o-rwx)"
NO_HAND_INS = (
    "no hand-ins in {folder}: expected a folder per student, an nbgrader course (or its submitted/), or a Gradescope "
    "export"
)
NOT_COMPARED = "the hand-ins could not be compared for review ({error}); the grades are complete"
NO_SUMMARY = "the class summary could not be written ({error}); the grades are complete"
NO_CSV = (
    "the CSV {csv} could not be written ({error}); every student's result is in {out}/students/, and the same "
    "command writes the CSV, grading again only the students not graded"
)
RAN = "this run tried {tried} (graded {graded}, not graded {failed}) and kept {kept} graded before"
RATE = ", {rate:.1f} graded per minute"
STOPPED = (
    "interrupted: {csv} holds the {finished} of {students} students finished ({graded} graded); run the same "
    "command again to grade the other {left} (those graded are kept)"
)
STOPPED_AT_ONCE = (
    "interrupted twice: stopped at once; each student graded is in {out}/students/, and the same command writes "
    "the CSV and grades the others"
)
POLL_S = 0.2  # how often the coordinator looks for an interrupt while it waits for the graders
STOP_GRACE_S = 5.0  # after an interrupt, the graders' time to tear their sandboxes down before they are killed
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


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
    """What a batch did: every student's result (those kept from before included), and what it wrote.

    ``tried_now`` students were tried in this run (``graded_now`` of them graded, the others each with the reason
    they were not), ``kept`` were graded before with the same files and kept. After an interrupt (``interrupted``:
    the signal's number) the results are those finished, ``students`` the hand-ins found, and the summary is not
    written (``summary`` is empty).
    """

    results: tuple[Result, ...]
    tried_now: int
    kept: int
    seconds: float
    csv: Path
    summary: dict[str, Path]
    class_summary: summary.ClassSummary
    students: int = 0
    interrupted: int | None = None
    notes: tuple[str, ...] = ()  # what went wrong outside any student's row (the comparison, the summary)

    @property
    def graded_now(self) -> int:
        """Students graded in this run (a row with points; a hand-in not taken in or a grader failure is not)."""
        return sum(r.graded for r in self.results) - self.kept

    @property
    def grader_failures(self) -> int:
        """Rows the grader failed on (each graded twice): the batch's exit status says there were some."""
        return sum(result.grader_failed for result in self.results)

    @property
    def left(self) -> int:
        """Hand-ins found but not finished (after an interrupt)."""
        return max(self.students - len(self.results), 0)


def run_text(done: BatchRun) -> str:
    """What this run did, in the words of the class summary's first line
    (:func:`autograder.deliver.batch.summary.table`)."""
    text = RAN.format(tried=done.tried_now, graded=done.graded_now, failed=done.tried_now - done.graded_now,
                      kept=done.kept)  # fmt: skip
    return text + (RATE.format(rate=done.graded_now / done.seconds * 60) if done.graded_now and done.seconds else "")


def stopped_text(done: BatchRun) -> str:
    """What an interrupted batch says: what the CSV holds, and how to go on."""
    graded = sum(r.graded for r in done.results)
    return STOPPED.format(csv=done.csv, finished=len(done.results), students=done.students, graded=graded,
                          left=done.left)  # fmt: skip


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


def found(submissions: Path) -> list[discover.Submission]:
    """The hand-ins in ``submissions``; :class:`BatchRefused` when there are none or the folder cannot be listed."""
    try:
        hand_ins = discover.discover(submissions)
    except discover.NotListable as error:
        raise BatchRefused(str(error)) from None
    if not hand_ins:
        raise BatchRefused(NO_HAND_INS.format(folder=clean(str(submissions), 300)))
    return hand_ins


def jobs_for(
    options: BatchOptions,
    copies: dict[str, intake.TakenIn] | None = None,
    hand_ins: list[discover.Submission] | None = None,
) -> tuple[list[Job], list[Result]]:
    """One job per submission of ``options.submissions`` (from its private copy, when there is one), and a result
    for each student whose job could not even be made."""
    jobs, failed = [], []
    for found in hand_ins if hand_ins is not None else discover.discover(options.submissions):
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

    Run on the main thread, an interrupt (``SIGINT``, ``SIGTERM``; also when the signal was ignored by the shell
    that started the batch in the background) stops it within seconds: the graders running are interrupted, no
    other starts, and the CSV holds the students finished (``BatchRun.interrupted`` says which signal). A second
    interrupt ends the process at once.

    Raises:
        IsolationRefused: ``options.isolation`` asks for a layer this machine does not give.
        BatchRefused: no hand-ins, a submissions folder that cannot be listed, or ``private_copies`` cannot close
            the submissions folder.
    """
    started = time.monotonic()
    layer(options)
    hand_ins = found(options.submissions)
    stop = client.Stop()
    results: list[Result] = []
    kept: list[Result] = []
    tried = 0
    flags: tuple[similarity.Flag, ...] = ()
    notes: list[str] = []
    with _interrupts(stop) as interrupted:
        try:
            with _private(options, hand_ins, stop) as (copies, refused):
                jobs, failed = jobs_for(options, copies, hand_ins)
                todo = []
                for each in jobs:
                    old = None if options.force else records.read(options.out, each.student)
                    if old is not None and old.graded and old.digest == each.digest:
                        kept.append(old)
                    else:
                        todo.append(each)
                results += kept
                from tqdm import tqdm

                with tqdm(total=len(todo) + len(failed) + len(refused), unit="student", desc="grading",
                          disable=not options.progress) as bar:  # fmt: skip
                    for result in itertools.chain(refused, failed, execute(todo, options, stop)):  # as they come
                        results.append(_recorded(options.out, result))
                        tried += 1
                        bar.set_postfix_str(clean(result.student, 24), refresh=False)
                        bar.update()
                if not stop.requested:
                    # hand-ins alike: read while the (private) copies are still there; a review reason, never a score
                    flags = _compared(jobs, options, notes)
                    review = similarity.reasons(flags)
                    results = [
                        _recorded(options.out, replace(r, review=review.get(r.student, ())), page=False)
                        if review.get(r.student, ()) != r.review
                        else r
                        for r in results
                    ]
        finally:
            _stop_servers(options)
            steps = records.steps_graded(options.steps)
            public = options.hidden is None
            possible = sum(tasks.step(s).public_points if public else tasks.step(s).points for s in steps)
            csv = records.write_csv(options.csv, results, steps, possible)
    whole = summary.ClassSummary(len(results), (), (), 0.0, 0.0)
    paths: dict[str, Path] = {}
    try:
        whole = summary.summarise(results, flags)
        if not stop.requested:
            paths = summary.write(whole, options.out)
    except Exception as error:  # the grades are written; the summary is a convenience
        notes.append(NO_SUMMARY.format(error=_one_line(error)))
    return BatchRun(tuple(results), tried, len(kept), time.monotonic() - started, csv, paths, whole,
                    students=len(hand_ins), interrupted=interrupted(), notes=tuple(notes))  # fmt: skip


def _compared(jobs: list[Job], options: BatchOptions, notes: list[str]) -> tuple[similarity.Flag, ...]:
    """The review flags of the hand-ins of ``jobs`` (each read by :func:`similarity.read`, which never raises)."""
    try:
        hand_ins = [similarity.read(each.student, each.folder, search=each.search) for each in jobs]
        return similarity.compare(hand_ins, similarity.reference_answers(options.reference))
    except Exception as error:  # the comparison is a review aid: the grades stand without it
        notes.append(NOT_COMPARED.format(error=_one_line(error)))
        return ()


@contextmanager
def _interrupts(stop: client.Stop) -> Iterator[Callable[[], int | None]]:
    """While the block runs on the main thread, ``SIGINT`` and ``SIGTERM`` use ``stop`` (the coordinator sees it
    within :data:`POLL_S`) instead of raising wherever the main thread is; yields a function that tells which
    signal came (None: none). A second signal kills the graders and raises KeyboardInterrupt."""
    received: list[int] = []

    def handler(number: int, _frame: object) -> None:
        if received:  # a second one: the graders killed, no waiting
            stop.kill()
            raise KeyboardInterrupt
        received.append(number)
        stop.request()  # only a flag: the coordinator's loop interrupts the graders

    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return
    before = {number: signal.signal(number, handler) for number in STOP_SIGNALS}
    try:
        yield lambda: received[0] if received else None
    finally:
        for number, previous in before.items():
            signal.signal(number, previous)


def _stop_servers(options: BatchOptions) -> None:
    """Stop the warm grading server this batch graded with (nothing of the batch outlives it)."""
    if options.warm and not options.dask:
        try:
            client.stop(warm_job.HANDLER)
        except OSError:
            pass


def _recorded(out: Path, result: Result, *, page: bool = True) -> Result:
    """``result``, written to its file and page (``page=False``: the page only where there is none, see
    :func:`records.write`); a record that cannot be written is said in its reason."""
    try:
        records.write(out, result, page=page)
    except Exception as error:
        return replace(result, reason=NOT_RECORDED.format(reason=result.reason, error=_one_line(error)))
    return result


@contextmanager
def _private(
    options: BatchOptions, hand_ins: list[discover.Submission], stop: client.Stop
) -> Iterator[tuple[dict[str, intake.TakenIn], list[Result]]]:
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
    for found in hand_ins:
        if stop.requested:
            break
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


def execute(jobs: list[Job], options: BatchOptions, stop: client.Stop | None = None) -> Iterator[Result]:
    """The jobs' results as they finish: on the Dask cluster, or on this machine's warm grader. Once ``stop`` is
    used, the jobs not finished give no result, and this ends within :data:`STOP_GRACE_S` or so."""
    stop = stop or client.Stop()
    if not jobs:
        return
    if options.dask:
        from autograder.deliver.batch import cluster

        yield from cluster.execute(jobs, options.dask, stop)
        return
    os.environ.setdefault(ENV_WORKERS, str(max(options.workers, 2)))  # for a warm server this run starts
    pool = ThreadPoolExecutor(max_workers=options.workers, thread_name_prefix="attnlab-batch")
    futures = {pool.submit(job.grade, each, stop): each for each in jobs}
    pending: set[Future] = set(futures)
    try:
        while pending and not stop.requested:
            done, pending = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            for future in done:  # forgotten once read: the batch keeps each result only as long as it needs
                result = _result(future, futures.pop(future))
                if result is not None:
                    yield result
    finally:
        stop_by = time.monotonic() + STOP_GRACE_S
        pool.shutdown(wait=False, cancel_futures=True)
        if stop.requested:
            stop.now()  # interrupt the graders still running: each tears its sandboxes down
            while stop.running() and time.monotonic() < stop_by:
                time.sleep(POLL_S / 4)
            stop.kill()
        pool.shutdown(wait=True)
    for future in futures:  # finished while the others stopped: kept (every future read above is gone)
        if future in pending and future.done() and not future.cancelled():
            result = _result(future, futures[future])
            if result is not None:
                yield result


def _result(future: Future, each: Job) -> Result | None:
    """The job's result; None for a job the batch's stop switch stopped; a job that raised (never for a student's
    reason) becomes the grader's failure."""
    try:
        return future.result()
    except client.Stopped:
        return None
    except Exception as error:
        return Result(each.student, each.digest, reason=job.GRADER_FAILED.format(detail=_one_line(error)),
                      grader_failed=True)  # fmt: skip


def _one_line(error: BaseException) -> str:
    return clean(f"{type(error).__name__}: {error}".splitlines()[0] if str(error) else type(error).__name__, 300)
