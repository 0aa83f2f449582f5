"""The sandboxed child: imports the student's modules and runs probes for the grader.

Started by :mod:`autograder.sandbox.client` as ``python -I`` running
:func:`main` with the limits as JSON in ``argv``, and with the working copy of the
submission as its current directory. It reads requests and answers on the two pipe
descriptors named in the limits; its own stdout and stderr go to a capped log file, and what student code
prints during a call is captured in memory and returned, capped, with the reply.

Order matters: limits, output redirection, the trusted imports and the audit
hook are all in place before the first line of student code runs.
"""

from __future__ import annotations

import ctypes  # noqa: F401  imported before the audit hook so torch can load later
import importlib.util
import io
import json
import os
import resource
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np

from autograder.sandbox import policy, probes
from autograder.sandbox.protocol import MAX_HEADER_BYTES, decode, encode, read_message, write_message


class OutputLimitExceeded(BaseException):
    """Raised into student code that prints past the per-call limit (stops print loops)."""


class CappedText(io.TextIOBase):
    """A text stream that keeps the first ``limit`` characters, counts the rest, and stops at ``stop_at``."""

    def __init__(self, limit: int, stop_at: int) -> None:
        self.limit, self.stop_at, self.kept, self.dropped = limit, stop_at, [], 0
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        text = str(text)
        room = max(self.limit - self.size, 0)
        self.kept.append(text[:room])
        self.size += min(len(text), room)
        self.dropped += max(len(text) - room, 0)
        if self.size + self.dropped > self.stop_at:
            raise OutputLimitExceeded(f"more than {self.stop_at} characters printed")
        return len(text)

    def text(self) -> str:
        body = "".join(self.kept)
        if self.dropped:
            body += f"\n... ({self.dropped} more characters of output cut)"
        return body


def _set_limits(limits: dict) -> None:
    """Hard process limits; the per-call CPU limit is armed before each call."""
    for name, value in (
        ("RLIMIT_AS", limits["memory_bytes"]),
        ("RLIMIT_FSIZE", limits["file_bytes"]),
        ("RLIMIT_CORE", 0),
        ("RLIMIT_NOFILE", 256),
    ):
        resource.setrlimit(getattr(resource, name), (value, value))
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_total_s"], limits["cpu_total_s"] + 1))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails instead of killing


def _arm_cpu_limit(seconds: int) -> None:
    """Let the next call use at most ``seconds`` of CPU time (SIGXCPU ends the child)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = int(used.ru_utime + used.ru_stime) + 1
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (min(spent + seconds, hard), hard))


def _redirect_output(log_path: Path) -> None:
    """Point fds 1 and 2 (C-level prints, crashes) at a log file in the working copy."""
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)


class Submission:
    """Imports the student's modules by file from the working copy, once each."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        # last on the path: the student's helpers import, but a numpy.py in the
        # folder never shadows the real numpy.
        sys.path.append(str(folder))

    def load(self, name: str) -> ModuleType:
        if name in sys.modules and getattr(sys.modules[name], "__file__", None) == str(self.folder / f"{name}.py"):
            return sys.modules[name]
        path = self.folder / f"{name}.py"
        if not path.is_file():
            raise ModuleNotFoundError(f"{name}.py is not in the submission folder")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return module


def _describe(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return text[:500]


def _where(error: BaseException, folder: Path) -> str:
    """The deepest frame of the traceback that lies in the student's files."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith(str(folder))]
    if not frames:
        return ""
    last = frames[-1]
    return f"{Path(last.filename).name}, line {last.lineno}"


def handle(request: dict, payload: dict, submission: Submission, limits: dict) -> tuple[dict, list]:
    """Run one request with output captured; the reply never raises."""
    captured = CappedText(limits["output_chars"], limits["output_limit_chars"])
    sys.stdout = sys.stderr = captured
    value, error, where, unsendable = None, None, "", False
    try:
        _arm_cpu_limit(limits["cpu_per_call_s"])
        kind = request["kind"]
        if kind == "import":
            submission.load(request["module"])
        elif kind == "torch":
            import torch  # noqa: F401  slow once; kept out of the timed calls
        elif kind == "call":
            function: Callable = getattr(submission.load(request["module"]), request["function"])
            value = function(*payload["args"], **payload["kwargs"])
        elif kind == "probe":
            value = probes.PROBES[request["probe"]](submission.load, *payload["args"], **payload["kwargs"])
        else:
            raise ValueError(f"unknown request {kind!r}")
    except BaseException as caught:
        error, where = _describe(caught), _where(caught, submission.folder)
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    arrays: list[np.ndarray] = []
    if error is None:
        try:
            value = encode(value, arrays)
            size = sum(a.nbytes for a in arrays)
            if size > limits["reply_bytes"]:
                raise ValueError(
                    f"{size >> 20} MiB is more than the grader accepts ({limits['reply_bytes'] >> 20} MiB)"
                )
            plain = len(json.dumps(value))
            if plain > MAX_HEADER_BYTES // 2:
                raise ValueError(
                    f"{plain} bytes of plain numbers and strings is more than the grader accepts; return an array"
                )
        except BaseException as caught:
            error, arrays, unsendable = str(caught)[:300], [], True
    printed = captured.size + captured.dropped
    if error is None and printed > limits["output_limit_chars"]:
        error, arrays = "too much output", []
    reply = {"ok": error is None, "error": error, "where": where, "output": captured.text(), "unsendable": unsendable}
    if printed > limits["output_limit_chars"]:
        reply["too_much_output"] = printed
    if error is None:
        reply["value"] = value
    return reply, arrays


def main(limits_json: str) -> None:
    """Serve requests until the grader closes the request pipe."""
    limits = json.loads(limits_json)
    work = Path.cwd()
    _set_limits(limits)
    _redirect_output(work / ".sandbox-output.log")
    policy.install(work, allowed_callers=(_arm_cpu_limit.__code__,))
    requests = os.fdopen(limits["request_fd"], "rb", buffering=0)
    replies = os.fdopen(limits["reply_fd"], "wb")
    submission = Submission(work)
    while True:
        try:
            header, raw = read_message(requests, limits["request_bytes"])
        except EOFError:
            return
        reply, arrays = handle(header, decode(header["payload"], raw), submission, limits)
        write_message(replies, reply, arrays)


if __name__ == "__main__":
    main(sys.argv[1])
