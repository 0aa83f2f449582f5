"""The coordinator of ``attnlab grade-batch``: jobs out, results in, files written as they arrive.

Locally, ``workers`` threads each hand one student at a time to this
machine's warm grading server (:mod:`autograder.warm`), which forks a worker
per student from one set of imports and one sandbox fork server, so at most
``workers`` students are graded at once. With a Dask scheduler address the
same jobs go to the cluster's workers (:mod:`autograder.batch.cluster`), each
machine with its own warm server. Either way each result is written when it
arrives, so a stopped batch resumes where it was: a student whose result is
on disk for the same files is skipped unless ``force``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from autograder import engine
from autograder.batch import discover, job, records, summary
from autograder.batch.job import Job, Result
from autograder.sandbox.client import Limits
from autograder.warm.server import ENV_WORKERS


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


def jobs_for(options: BatchOptions) -> list[Job]:
    """One job per submission of ``options.submissions``."""
    return [
        Job(
            student=found.student,
            folder=found.folder.resolve(),
            digest=job.digest_of(found.folder),
            hidden=options.hidden,
            reference=options.reference,
            seed=engine.seed_for(options.secret, found.student),
            steps=options.steps,
            limits=options.limits,
            deadline_s=options.deadline_s,
            warm=options.warm,
            given=options.given,
        )
        for found in discover.discover(options.submissions)
    ]


def run(options: BatchOptions) -> BatchRun:
    """Grade every submission not graded yet, write each result, then the CSV and the class summary."""
    started = time.monotonic()
    kept, todo = [], []
    for each in jobs_for(options):
        old = None if options.force else records.read(options.out, each.student)
        if old is not None and old.graded and old.digest == each.digest:
            kept.append(old)
        else:
            todo.append(each)
    results = list(kept)
    from tqdm import tqdm

    with tqdm(total=len(todo), unit="student", desc="grading", disable=not options.progress) as bar:
        for result in execute(todo, options):
            records.write(options.out, result)
            results.append(result)
            bar.set_postfix_str(result.student[:24], refresh=False)
            bar.update()
    steps = records.steps_graded(options.steps)
    max_score = sum(
        engine.tasks.step(s).public_points if options.hidden is None else engine.tasks.step(s).points for s in steps
    )
    csv = records.write_csv(options.csv, results, steps, max_score)
    whole = summary.summarise(results)
    paths = summary.write(whole, options.out)
    return BatchRun(tuple(results), len(todo), len(kept), time.monotonic() - started, csv, paths, whole)


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
    """The job's result; a job that raised (never for a student's reason) becomes an explicit failure."""
    try:
        return future.result()  # type: ignore[attr-defined]
    except Exception as error:
        return Result(
            each.student, each.digest, reason=job.GRADER_FAILED.format(detail=f"{type(error).__name__}: {error}")
        )
