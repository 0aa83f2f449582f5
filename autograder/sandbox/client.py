"""The grader's side of the sandbox: start the child, send calls, get values back.

Each :class:`Sandbox` works on a fresh temporary copy of the submission. The
child is started on first use and again after it crashed or hung, so a fault
costs only the call that met it. Every way a call can fail without a value
becomes a :class:`StudentCallError` whose ``reason`` finishes the sentence
"``softmax(x)`` ..." (messages are the constants below).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from autograder import isolated
from autograder.sandbox import zygote
from autograder.sandbox.environment import child_env
from autograder.sandbox.protocol import AsTorch, ProtocolError, decode, encode, read_message, write_message

RAISED = "raised {error}"
RAISED_AT = "raised {error} ({where})"
IMPORT_FAILED = "could not run because importing {module}.py {reason}"
TIMED_OUT = "did not return within {seconds:g} s"
KILLED_BY_SIGNAL = "ended the grading process with signal {signal} ({meaning})"
EXITED = "ended the grading process with exit code {code} (os._exit or a crash in native code)"
VANISHED = "ended the grading process (its exit status is lost)"
TOO_LARGE = "returned more data than the grader accepts ({limit} MiB)"
TOO_MUCH_OUTPUT = "printed {count} characters, more than the grader accepts in one call ({limit})"
UNSENDABLE = "returned a result the grader cannot accept: {detail}"
GARBLED = "broke the grader's channel ({detail})"
SIGNAL_MEANINGS = {
    "SIGSEGV": "segmentation fault",
    "SIGXCPU": "CPU time limit exceeded",
    "SIGKILL": "killed, often for using too much memory",
    "SIGABRT": "aborted",
    "SIGBUS": "bus error",
    "SIGFPE": "arithmetic fault",
}
COPY_IGNORE = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", ".git", "reports", "*.pyc")
MAX_COPIED_FILE_BYTES = 8 << 20


@dataclass(frozen=True)
class Limits:
    """Per-call and per-process limits of the child."""

    call_timeout_s: float = 10.0
    retry_timeout_s: float = 2.0  # for a function that already hung once
    import_timeout_s: float = 30.0
    cpu_per_call_s: int = 20
    cpu_total_s: int = 600
    memory_bytes: int = 4 << 30
    file_bytes: int = 16 << 20
    output_chars: int = 2000  # kept and shown
    output_limit_chars: int = 1_000_000  # printing more than this in one call fails the call
    reply_bytes: int = 64 << 20
    request_bytes: int = 256 << 20


class StudentCallError(Exception):
    """A call into student code that produced no value; ``reason`` says why."""

    def __init__(self, reason: str, output: str = "") -> None:
        super().__init__(reason)
        self.reason, self.output = reason, output


class _ChildDied(Exception):
    pass


def _copy_submission(folder: Path, into: Path) -> None:
    def ignore(directory: str, names: list[str]) -> set[str]:
        skipped = set(COPY_IGNORE(directory, names))
        for name in names:
            path = Path(directory) / name
            if path.is_file() and not path.is_symlink() and path.stat().st_size > MAX_COPIED_FILE_BYTES:
                skipped.add(name)
        return skipped

    shutil.copytree(folder, into, symlinks=True, ignore=ignore)


class Sandbox:
    """Runs student code from ``submission`` in a limited child process."""

    def __init__(self, submission: Path, limits: Limits = Limits()) -> None:
        self.submission = Path(submission).resolve()
        self.limits = limits
        self._proc: subprocess.Popen | zygote.ForkedChild | None = None
        self._work: Path | None = None
        self._requests = self._replies = None
        self._imported: set[str] = set()
        self._import_failures: dict[str, str] = {}
        self._hung: set[tuple[str, str]] = set()
        self._torch_ready = False

    # -- public API -----------------------------------------------------
    def call(self, module: str, function: str, *args: Any, **kwargs: Any) -> Any:
        """``module.function(*args, **kwargs)`` in the child; the decoded return value."""
        self._ensure_imported(module)
        timeout = self.limits.retry_timeout_s if (module, function) in self._hung else self.limits.call_timeout_s
        try:
            return self._request({"kind": "call", "module": module, "function": function}, args, kwargs, timeout)
        except StudentCallError as error:
            if error.reason.startswith("did not return"):
                self._hung.add((module, function))
            raise

    def probe(self, name: str, module: str, *args: Any, **kwargs: Any) -> Any:
        """Run the child-side probe ``name`` (see :mod:`autograder.sandbox.probes`)."""
        self._ensure_imported(module)
        key = ("probe", name)
        timeout = self.limits.retry_timeout_s if key in self._hung else self.limits.call_timeout_s
        try:
            return self._request({"kind": "probe", "probe": name}, args, kwargs, timeout)
        except StudentCallError as error:
            if error.reason.startswith("did not return"):
                self._hung.add(key)
            raise

    def close(self) -> None:
        self._stop()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- child lifecycle --------------------------------------------------
    def _ensure_imported(self, module: str) -> None:
        if module in self._import_failures:
            raise StudentCallError(self._import_failures[module])
        if module in self._imported and self._proc is not None:
            return
        try:
            self._request({"kind": "import", "module": module}, (), {}, self.limits.import_timeout_s)
        except StudentCallError as error:
            reason = IMPORT_FAILED.format(module=module, reason=error.reason)
            self._import_failures[module] = reason
            raise StudentCallError(reason, error.output) from None
        self._imported.add(module)

    def _start(self) -> None:
        self._work = Path(tempfile.mkdtemp(prefix="attnlab-sandbox-"))
        copy = self._work / "submission"
        _copy_submission(self.submission, copy)
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        self._proc = self._fork(copy, (to_child_r, from_child_w)) or self._spawn(copy, (to_child_r, from_child_w))
        os.close(to_child_r)
        os.close(from_child_w)
        self._requests = os.fdopen(to_child_w, "wb")
        self._replies = from_child_r
        self._imported = set()
        self._torch_ready = False

    def _fork(self, copy: Path, fds: tuple[int, int]) -> zygote.ForkedChild | None:
        """The child forked by this process's fork server (numpy and torch already imported), or None without one."""
        server = zygote.shared()
        if server is None:
            return None
        try:
            return server.spawn(copy, child_env(copy), asdict(self.limits), fds)
        except zygote.ZygoteError:
            return None  # started directly instead; the next sandbox starts a fresh fork server

    def _spawn(self, copy: Path, fds: tuple[int, int]) -> subprocess.Popen:
        """A fresh ``python -I`` child."""
        limits = asdict(self.limits) | {"request_fd": fds[0], "reply_fd": fds[1]}
        return subprocess.Popen(
            isolated.command("autograder.sandbox.child", "main", json.dumps(limits)),
            cwd=copy,
            env=child_env(copy),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=fds,
            start_new_session=True,
        )

    def _stop(self, graceful: bool = True) -> None:
        if self._proc is not None and graceful:
            try:
                self._requests.close()
            except OSError:
                pass
            try:
                self._proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        self._kill()
        if self._work is not None:
            shutil.rmtree(self._work, ignore_errors=True)
            self._work = None

    def _kill(self) -> None:
        if self._proc is None:
            return
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            try:  # a forked child that has not made its own session yet
                os.kill(self._proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self._proc.wait()
        try:
            os.close(self._replies)
        except OSError:
            pass
        self._proc = None

    def _death_reason(self) -> str:
        code = self._proc.wait()
        if code is None:
            return VANISHED
        if code < 0:
            name = signal.Signals(-code).name
            return KILLED_BY_SIGNAL.format(signal=name, meaning=SIGNAL_MEANINGS.get(name, "signal"))
        return EXITED.format(code=code)

    # -- one request ------------------------------------------------------
    def _request(self, header: dict, args: tuple, kwargs: dict, timeout: float) -> Any:
        if self._proc is None:
            self._start()
        if not self._torch_ready and any(isinstance(a, AsTorch) for a in (*args, *kwargs.values())):
            self._torch_ready = True
            self._request({"kind": "torch"}, (), {}, self.limits.import_timeout_s)
        arrays: list[np.ndarray] = []
        payload = encode({"args": list(args), "kwargs": kwargs}, arrays)
        try:
            write_message(self._requests, {**header, "payload": payload}, arrays)
            reply, raw = read_message(
                _DeadlineReader(self._replies, time.monotonic() + timeout), self.limits.reply_bytes
            )
        except TimeoutError:
            self._stop(graceful=False)
            raise StudentCallError(TIMED_OUT.format(seconds=timeout)) from None
        except (EOFError, BrokenPipeError, _ChildDied):
            reason = self._death_reason()
            self._stop(graceful=False)
            raise StudentCallError(reason) from None
        except (ProtocolError, ValueError) as error:
            self._stop(graceful=False)
            if "over the limit" in str(error):
                raise StudentCallError(TOO_LARGE.format(limit=self.limits.reply_bytes >> 20)) from None
            raise StudentCallError(GARBLED.format(detail=str(error)[:100])) from None
        output = str(reply.get("output", ""))
        if not reply.get("ok"):
            error, where = str(reply.get("error")), str(reply.get("where") or "")
            if reply.get("too_much_output"):
                raise StudentCallError(
                    TOO_MUCH_OUTPUT.format(count=reply["too_much_output"], limit=self.limits.output_limit_chars), output
                )
            if reply.get("unsendable"):
                raise StudentCallError(UNSENDABLE.format(detail=error), output)
            reason = RAISED_AT.format(error=error, where=where) if where else RAISED.format(error=error)
            raise StudentCallError(reason, output)
        try:
            return decode(reply.get("value"), raw)
        except ProtocolError as error:
            raise StudentCallError(GARBLED.format(detail=str(error)[:100]), output) from None


class _DeadlineReader:
    """A file-like reader over a pipe fd that raises ``TimeoutError`` at a deadline.

    Written by hand: the standard library has no blocking read with an overall
    deadline, and a child that hangs must not hang the grader.
    """

    def __init__(self, fd: int, deadline: float) -> None:
        self.fd, self.deadline = fd, deadline

    def read(self, size: int) -> bytes:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        ready, _, _ = select.select([self.fd], [], [], left)
        if not ready:
            raise TimeoutError
        return os.read(self.fd, min(size, 1 << 20))
