"""The reference's answers to the prediction questions, computed once per course and kit, then read from a cache.

The copy flags of a batch (:mod:`autograder.deliver.batch.similarity`) hold each student's predictions to the
reference's own answers. Computing them loads the reference's modules, torch among them: about 1.4 s of CPU and
a torch import in the coordinator, paid again by every regrade of the same course. They are the same for every
student and every batch of that course, so the coordinator keeps them in a file of its own, keyed by everything
they depend on:

- the kit's source (:func:`autograder.deliver.warm.address.kit_digest`: a changed kit starts a new server, and
  gets new answers);
- the question file and the chapter's values (the questions' ``compute`` code reads both);
- every file of the reference folder, by content.

A change to any of them is a new key, so a stale answer is never read. The file lives in a folder only this user
may enter (the warm server's kind, in the temporary folder); it holds the reference's answers, never a student's.
A file read is touched, and writing a new one keeps the :data:`KEEP` most recently used (each is a few hundred
bytes; every kit or reference change adds one), so the folder does not grow with every version of the kit.
A cache that cannot be read or written costs only the time: the answers are computed, as before. Standard
library only: the file is JSON, each value put back into its question's form by
:func:`autograder.judge.predictions.normalise`.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from autograder.base import chapter, tasks
from autograder.deliver.warm import address
from autograder.judge import predictions

ENV_SWITCH = "ATTNLAB_ANSWERS_CACHE"  # "0": compute the reference's answers every time
FORMAT = "attnlab-reference-answers/1"
MAX_FILES = 10_000  # a reference folder larger than this is not cached (computed every time)
KEEP = 64  # cached answers kept: the most recently used (a course, or a kit version, each has its own)

Answers = dict[str, Any]  # question id -> (Question, the reference's value), as similarity.reference_answers gives


def folder() -> Path:
    """This user's private folder of cached answers (made mode 700 on first use)."""
    return Path(tempfile.gettempdir()) / f"attnlab-{os.getuid()}-answers"


def key(reference: Path) -> str | None:
    """The cache key of ``reference``'s answers with this kit (None: the folder cannot be read whole)."""
    digest = hashlib.sha256(f"{FORMAT}\0{address.kit_digest()}\0".encode())
    digest.update(Path(tasks.QUESTIONS).read_bytes())
    digest.update(resources.files("autograder.data").joinpath(chapter.DATA).read_bytes())
    files = sorted(
        path
        for path in Path(reference).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and not path.is_symlink()
    )
    if len(files) > MAX_FILES:
        return None
    for path in files:
        data = path.read_bytes()
        digest.update(f"{path.relative_to(reference).as_posix()}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()[:32]


def answers(reference: Path, compute: Callable[[], Answers]) -> Answers:
    """``reference``'s answers: from the cache when this key was computed before, else from ``compute()`` (then
    kept for the next batch)."""
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return compute()
    try:
        found = key(reference)
    except OSError:
        found = None
    if found is None:
        return compute()
    path = folder() / f"{found}.json"
    cached = _read(path)
    if cached is not None:
        _touch(path)
        return cached
    computed = compute()
    _write(path, computed)
    _prune(path.parent)
    return computed


def _read(path: Path) -> Answers | None:
    """The answers kept in ``path``; None when there are none or they cannot be read back whole."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            return None
        by_id = {question.id: question for question in predictions.load()}
        return {qid: (by_id[qid], predictions.normalise(by_id[qid], value)) for qid, value in data["answers"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # AnswerFormError is a ValueError
        return None


def _write(path: Path, computed: Answers) -> None:
    """Keep ``computed`` in ``path`` (written whole, then renamed); a failure leaves no file and is not an error."""
    try:
        address.private_folder(path)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        values = {qid: value for qid, (_question, value) in computed.items()}
        partial.write_text(json.dumps({"format": FORMAT, "answers": values}), encoding="utf-8")
        os.replace(partial, path)
    except (OSError, TypeError, ValueError, address.WarmUnavailable):
        return


def _touch(path: Path) -> None:
    """Mark ``path`` as used now (what :func:`_prune` keeps by)."""
    try:
        os.utime(path)
    except OSError:
        pass


def _prune(where: Path) -> None:
    """Keep the :data:`KEEP` most recently used answers in ``where``; remove the others, and partial files a
    writer that died left behind. Nothing here is an error: the cache only saves time."""
    try:
        entries = [entry for entry in os.scandir(where) if entry.is_file(follow_symlinks=False)]
        used = sorted(
            (entry for entry in entries if entry.name.endswith(".json")),
            key=lambda entry: entry.stat(follow_symlinks=False).st_mtime,
            reverse=True,
        )
        own = f".{os.getpid()}.tmp"
        partial = [entry for entry in entries if entry.name.endswith(".tmp") and not entry.name.endswith(own)]
        for entry in [*used[KEEP:], *partial]:
            try:
                os.unlink(entry.path)
            except OSError:
                pass
    except OSError:
        return
