"""The grader's side of the sandbox: start the child, send calls, get typed outcomes back.

Each :class:`Sandbox` works on a fresh copy of the submission, at the isolation
level :func:`autograder.sandbox.isolation.choose` gives. The child is started on
first use and again after it crashed or hung, so a fault costs only the call
that met it. Every call ends in one outcome of :mod:`autograder.sandbox.outcome`;
:meth:`Sandbox.call` returns the value or raises :class:`StudentCallError`
carrying the outcome. Nothing here makes sentences (see
:func:`autograder.judge.messages.call_outcome`), and nothing the child sends is
trusted beyond its type: a reply that is not exactly what the protocol allows
is :class:`~autograder.sandbox.outcome.Malformed`.

A hang costs seconds, not minutes: a function that did not return is never
called again (in this sandbox or a later one sharing its :class:`Hangs`), and
every module's copy of it in later children fails at once; so is a function
whose failed calls took as long as a hang in all (a slow failure is paid once,
not on every call); each sandbox (one per step) has a time budget after which
its calls are skipped.
"""

from __future__ import annotations

import os
import select
import signal
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from autograder.base.text import clean, escape_controls
from autograder.sandbox import launcher, zygote
from autograder.sandbox import outcome as out
from autograder.sandbox.isolation import IsolationRefused, Level, choose
from autograder.sandbox.outcome import StudentCallError
from autograder.sandbox.protocol import AsTorch, FrameTooLarge, ProtocolError, decode, encode, read_message
from autograder.sandbox.protocol import write_message as _write_message

__all__ = ["IsolationRefused", "Level", "Limits", "Sandbox", "StudentCallError", "prestart"]
MAX_TEXT_CHARS = 2000  # any one string field of a reply
IMPORT = ".<module>"  # where a module's import runs: "softmax.<module>"


@dataclass(frozen=True)
class Limits:
    """Per-call and per-process limits of the child."""

    call_timeout_s: float = 10.0
    import_timeout_s: float = 30.0
    step_budget_s: float = 60.0  # wall seconds one sandbox's calls may take in all; later calls are skipped
    failing_budget_s: float = 10.0  # wall seconds a function's failed calls may take in all (a hang's cost)
    hang_grace_s: float = 1.0  # after the child's own deadline, for its report of where it was
    cpu_per_call_s: int = 20
    cpu_total_s: int = 600
    memory_bytes: int = 4 << 30  # address space per process; and memory wherever it lives, where a cgroup counts it
    processes: int = 64  # processes and threads of one child in all (a pids cgroup, or RLIMIT_NPROC of its own uid)
    file_bytes: int = 16 << 20
    output_chars: int = 2000  # kept and shown
    output_limit_chars: int = 1_000_000  # printing more than this in one call fails the call
    reply_bytes: int = 64 << 20
    request_bytes: int = 256 << 20
    work_bytes: int = 64 << 20  # what student code may add to its working copy (and, user layer, shared folders)
    audit_hook: bool = True  # False only in the kit's attack suite, to prove the OS layers hold on their own


@dataclass
class Hangs:
    """Functions that did not return, or whose failed calls cost as much as a hang, shared by the sandboxes of one
    grading run.

    ``called``: functions (``module.name``, or ``probe.name``) the grader called that hung: never called
    again. ``inside``: where the child was when it hung (``module.qualified_name``): later children replace
    those functions so that any call reaching them fails at once. ``failing``: the wall seconds that the failed
    calls of each function took so far (by the function that raised, else by the call); ``costly``: those past
    the budget, replaced in later children like hung ones.
    """

    called: dict[str, out.Skipped] = field(default_factory=dict)
    inside: dict[str, float] = field(default_factory=dict)
    failing: dict[str, float] = field(default_factory=dict)
    costly: dict[str, float] = field(default_factory=dict)

    def record(self, key: str, timed_out: out.TimedOut) -> None:
        """``key`` (the call) did not return: where it was is replaced in later children; when that is the
        function itself, or unknown (a hang in native code), the call itself is never made again."""
        if timed_out.function:
            self.inside[timed_out.function] = timed_out.seconds
        if timed_out.function in (None, key):  # else: later calls that do not reach the hang still run
            self.called[key] = out.Skipped(out.HUNG_EARLIER, function=key, seconds=timed_out.seconds)

    def charge(self, key: str, failed: out.Failure, seconds: float, budget_s: float) -> bool:
        """The call ``key`` failed after ``seconds``: charged to the student function that raised (else to the
        call). A function whose failed calls took ``budget_s`` in all (what one hang costs) is treated like a hung
        one from then on; True when that happened now (the running child must make way for one that replaces it).
        A call that returns is never charged, however slow."""
        where = _raised_in(failed) or key
        self.failing[where] = self.failing.get(where, 0.0) + seconds
        if where in self.costly or self.failing[where] < budget_s:
            return False
        self.costly[where] = round(self.failing[where], 1)
        if where == key:
            self.called[key] = out.Skipped(out.FAILED_COSTLY, function=key, seconds=self.costly[where])
        return True

    def replaced(self) -> list[str]:
        """The functions a new child replaces by ones that fail at once (hung, or failing at a hang's cost)."""
        return sorted({*self.inside, *self.costly})

    def skipped(self, skipped: out.Skipped) -> out.Skipped:
        """A child's report that a call reached a replaced function, with why that function was replaced."""
        if skipped.function in self.costly:
            return out.Skipped(out.FAILED_COSTLY, skipped.function, self.costly[skipped.function], skipped.output)
        if skipped.function in self.inside:
            return out.Skipped(out.HUNG_EARLIER, skipped.function, self.inside[skipped.function], skipped.output)
        return skipped


def _raised_in(failed: out.Failure) -> str | None:
    """``module.qualified_name`` of the student function a failure was raised in (``softmax.<module>`` at import),
    or None when it was not raised in a student file."""
    cause = out.root_cause(failed)
    if isinstance(cause, out.Raised) and cause.function and cause.file and cause.file.endswith(".py"):
        return f"{cause.file[: -len('.py')].replace('/', '.')}.{cause.function}"
    return None


class _ChildDied(Exception):
    pass


def prestart(torch: bool = True, level: Level | None = None, numpy: bool = False) -> None:
    """Start the fork server of this machine's isolation level now, so its imports overlap the grader's start-up.

    Args:
        torch: preload torch (only worth its 2 s when a torch step will be graded).
        numpy: also (first) a numpy-only fork server, for the steps that need no torch: it is ready seconds
            earlier and its forks are cheaper.
    """
    level = level if level is not None else choose()
    if numpy:
        zygote.shared(level, torch=False)
    if torch or not numpy:
        zygote.shared(level, torch)


class Staged:
    """One staged copy of ``submission`` (:func:`launcher.stage`) that the sandboxes of one grade share: the source
    of every working copy of their children. It is made when the first of them starts a child, and removed by
    :meth:`close`, which its owner calls after closing those sandboxes.

    A child never reaches the staged copy (in the namespaces layer its student process copies it in through a
    descriptor it closes before any student code runs; in the user layer it sits in a folder the student uid cannot
    enter; in the hook layer student code may write only in its working copy), so one copy can serve every step:
    staging the hand-in for each of a grade's 15 sandboxes took about 0.03 s of a worker's 0.5 s of CPU.
    """

    def __init__(self, submission: Path) -> None:
        self.submission = Path(submission).resolve()
        self._path: Path | None = None

    def path(self) -> Path:
        """The staged copy (made now if it is not yet)."""
        if self._path is None:
            self._path = launcher.stage(self.submission)
        return self._path

    def close(self) -> None:
        if self._path is not None:
            path, self._path = self._path, None
            launcher.unstage(path)


class Sandbox:
    """Runs student code from ``submission`` in a limited child process."""

    def __init__(
        self,
        submission: Path,
        limits: Limits = Limits(),
        hangs: Hangs | None = None,
        isolation: Level | None = None,
        *,
        ignored: Mapping[str, str] | None = None,
        torch: bool | None = None,
        cpus: tuple[int, ...] | None = None,
        label: str = "child",
        staged: Staged | None = None,
    ) -> None:
        """``submission`` is the grader's copy of a hand-in (:mod:`autograder.handin.intake`); ``ignored`` maps what the
        intake left out of it (``"softmax.py"``) to what that was (``"link"``). ``torch``: whether the code graded
        here uses torch (False: a numpy-only fork server will do; None: any); when True the child imports torch
        before any student code (no native library loads afterwards). ``cpus``: the CPUs its children may run on
        (None: any). ``label``: what its processes are called in ``ps`` and in profiles (``as:<label>`` the student
        process, ``ak:<label>`` its keeper). ``staged``: a staged copy of ``submission`` shared with other sandboxes
        (its owner removes it; None: this sandbox stages its own and removes it as it closes)."""
        self.submission = Path(submission).resolve()
        if staged is not None and staged.submission != self.submission:
            raise ValueError(f"a staged copy of {staged.submission}, not of {self.submission}")
        self._stage = staged if staged is not None else Staged(self.submission)  # each child's working copy's source
        self._owns_stage = staged is None
        self.label = label
        self.torch, self.cpus = torch, cpus
        self.limits = limits
        self.hangs = hangs if hangs is not None else Hangs()
        self.isolation = isolation if isolation is not None else choose()
        self.ignored: dict[str, str] = dict(ignored or {})
        self._child: launcher.Child | None = None
        self._imported: set[str] = set()
        self._import_failures: dict[str, out.ImportFailed] = {}
        self._torch_ready = False
        self.spent_s = 0.0

    # -- public API -----------------------------------------------------
    def call(self, module: str, function: str, *args: Any, **kwargs: Any) -> Any:
        """``module.function(*args, **kwargs)`` in the child; the decoded return value."""
        return _value(self.run_call(module, function, *args, **kwargs))

    def probe(self, name: str, module: str, *args: Any, **kwargs: Any) -> Any:
        """Run the child-side probe ``name`` (see :mod:`autograder.sandbox.probes`)."""
        return _value(self.run_probe(name, module, *args, **kwargs))

    def run_call(self, module: str, function: str, *args: Any, **kwargs: Any) -> out.Outcome:
        """The outcome of ``module.function(*args, **kwargs)`` (never raises for what student code does)."""
        header = {"kind": "call", "module": module, "function": function}
        return self._run(f"{module}.{function}", module, header, args, kwargs)

    def run_probe(self, name: str, module: str | None, *args: Any, **kwargs: Any) -> out.Outcome:
        """The outcome of probe ``name`` after ``module`` is imported (None: a probe that imports what it needs)."""
        return self._run(f"probe.{name}", module, {"kind": "probe", "probe": name}, args, kwargs)

    def child_cpu_ns(self) -> int | None:
        """The CPU nanoseconds the running child's processes have used so far (the student process, its threads,
        every process it started), as its keeper reads them from the kernel's accounting, out of student code's
        reach; None when no child runs, off Linux, or when the keeper cannot tell. Only differences between two
        readings of one child mean anything (before and after a request)."""
        return self._child.cpu_ns() if self._child is not None else None

    def close(self) -> None:
        self._stop()
        if self._owns_stage:
            self._stage.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one call ---------------------------------------------------------
    def _run(self, key: str, module: str | None, header: dict, args: tuple, kwargs: dict) -> out.Outcome:
        if key in self.hangs.called:
            return self.hangs.called[key]
        if self.spent_s >= self.limits.step_budget_s:
            return out.Skipped(out.BUDGET_SPENT, seconds=round(self.spent_s, 1))
        if not self.torch and any(isinstance(a, AsTorch) for a in (*args, *kwargs.values())):
            self.torch = True  # torch loads before student code: the next child imports it first
            self._stop()
        failed = self._ensure_imported(module) if module is not None else None
        if failed is not None:
            return failed
        started = time.monotonic()
        outcome = self._timed(header, args, kwargs, self.limits.call_timeout_s)
        if isinstance(outcome, out.TimedOut):
            self.hangs.record(key, outcome)
        elif isinstance(outcome, out.Skipped):
            outcome = self.hangs.skipped(outcome)
        elif not isinstance(outcome, out.Returned) and self.hangs.charge(
            key, outcome, time.monotonic() - started, self.limits.failing_budget_s
        ):
            self._stop()  # the next child replaces the function that failed at a hang's cost
        return outcome

    def _ensure_imported(self, module: str) -> out.ImportFailed | None:
        if module in self._import_failures:
            return self._import_failures[module]
        left_out = self.ignored.get(f"{module}.py")
        if left_out is not None:  # the intake left the file out: nothing to import, and the student is told why
            failed = out.ImportFailed(module, out.NotTakenIn(f"{module}.py", left_out))
            self._import_failures[module] = failed
            return failed
        if module in self._imported and self._child is not None:
            return None
        started = time.monotonic()
        outcome = self._timed({"kind": "import", "module": module}, (), {}, self.limits.import_timeout_s)
        if isinstance(outcome, out.Returned):
            self._imported.add(module)
            return None
        if isinstance(outcome, out.TimedOut) and outcome.function:
            self.hangs.inside[outcome.function] = outcome.seconds
        elif isinstance(outcome, out.Skipped):
            outcome = self.hangs.skipped(outcome)
        elif self.hangs.charge(f"{module}{IMPORT}", outcome, time.monotonic() - started, self.limits.failing_budget_s):
            self._stop()
        failed = out.ImportFailed(module, outcome, outcome.output)
        self._import_failures[module] = failed
        return failed

    def _timed(self, header: dict, args: tuple, kwargs: dict, timeout: float) -> out.Outcome:
        started = time.monotonic()
        try:
            return self._request(header, args, kwargs, timeout)
        finally:
            self.spent_s += time.monotonic() - started

    # -- child lifecycle --------------------------------------------------
    def _start(self) -> None:
        limits = asdict(self.limits) | {"hung": self.hangs.replaced(), "torch": bool(self.torch), "label": self.label}
        self._child = launcher.start(
            self._stage.path(), self.isolation, limits, self.torch, self.cpus, work_bytes=self.limits.work_bytes
        )
        self._imported = set()
        self._torch_ready = False

    def _stop(self, graceful: bool = True) -> None:
        if self._child is not None:
            child, self._child = self._child, None
            child.stop(graceful)

    def _ended(self) -> out.Failure:
        """How the child ended (it has, or is about to)."""
        ended = self._child.poll_ended(2.0) if self._child is not None else None
        self._stop(graceful=False)
        if ended is None:
            return out.Refused("the grading process ended unexpectedly (its exit status is lost)")
        if ended.error is not None:  # the keeper's own report: the child was never confined, no student code ran
            return out.Refused(ended.error, isolation=True)
        if ended.exceeded is not None:
            return out.WroteTooMuch(ended.exceeded)
        if os.WIFSIGNALED(ended.status):
            number = os.WTERMSIG(ended.status)
            try:
                name = signal.Signals(number).name
            except ValueError:
                name = f"signal {number}"
            return out.Crashed(name)
        return out.Exited(os.waitstatus_to_exitcode(ended.status))

    # -- one request ------------------------------------------------------
    def _request(self, header: dict, args: tuple, kwargs: dict, timeout: float) -> out.Outcome:
        if self._child is None:
            try:
                self._start()
            except OSError as error:
                return out.Refused(f"the sandbox could not start a child ({error})", isolation=True)
        if not self._torch_ready and any(isinstance(a, AsTorch) for a in (*args, *kwargs.values())):
            self._torch_ready = True
            prepared = self._request({"kind": "torch"}, (), {}, self.limits.import_timeout_s)
            if not isinstance(prepared, out.Returned):
                return prepared
        arrays: list[np.ndarray] = []
        payload = encode({"args": list(args), "kwargs": kwargs}, arrays)
        child = self._child
        try:
            _write_message(child.requests, {**header, "payload": payload, "timeout": timeout}, arrays)
            reply, raw = read_message(
                _DeadlineReader(child, time.monotonic() + timeout + self.limits.hang_grace_s),
                self.limits.reply_bytes,
            )
        except TimeoutError:
            self._stop(graceful=False)
            return out.TimedOut(timeout)
        except (EOFError, BrokenPipeError, _ChildDied):
            return self._ended()
        except FrameTooLarge:
            self._stop(graceful=False)
            return out.TooLarge(self.limits.reply_bytes)
        except ProtocolError as error:
            self._stop(graceful=False)
            return out.Malformed(str(error)[:200])
        try:
            outcome = _reply_outcome(reply, raw, self.limits, timeout)
        except (ProtocolError, ValueError, TypeError, KeyError, RecursionError) as error:
            self._stop(graceful=False)
            return out.Malformed(f"{type(error).__name__}: {str(error)[:200]}")
        if isinstance(outcome, (out.TimedOut, out.Malformed)):
            self._stop(graceful=False)  # a timed-out child has ended itself; a garbling one is not trusted on
        return outcome


def _value(outcome: out.Outcome) -> Any:
    if isinstance(outcome, out.Returned):
        return outcome.value
    raise StudentCallError(outcome)


def _text(value: Any, limit: int = MAX_TEXT_CHARS) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return clean(value, limit)


def _int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"expected an integer, got {type(value).__name__}")
    return value


def _optional(value: Any, kind: Any) -> Any:
    return None if value is None else kind(value)


def _reply_outcome(reply: dict, raw: list[np.ndarray], limits: Limits, timeout: float) -> out.Outcome:
    """The typed outcome of a reply; a reply of any other shape raises (and is Malformed)."""
    output = _text(reply.get("output", ""), limits.output_chars + 200)
    if reply.get("ok") is True:
        return out.Returned(decode(reply.get("value"), raw, clean=escape_controls), output)
    if reply.get("ok") is not False:
        raise ValueError("a reply that is neither ok nor a failure")
    failure = reply["failure"]
    if not isinstance(failure, dict):
        raise TypeError("the failure is not an object")
    kind = failure.get("kind")
    if kind == "raised":
        mro = failure.get("mro")
        if not isinstance(mro, list) or len(mro) > 64:
            raise TypeError("a class hierarchy that is not a list of names")
        files = failure.get("files", [])
        if not isinstance(files, list) or len(files) > 32:
            raise TypeError("student files that are not a list")
        return out.Raised(
            type_name=_text(failure["type"], 200),
            mro=tuple(_text(name, 200) for name in mro),
            message=_text(failure.get("message", ""), 1000),
            file=_optional(failure.get("file"), lambda v: _text(v, 300)),
            line=_optional(failure.get("line"), _int),
            student_files=tuple(_text(name, 300) for name in files),
            output=output,
            function=_optional(failure.get("function"), lambda v: _text(v, 200)),
        )
    if kind == "timed_out":
        return out.TimedOut(
            timeout,
            _optional(failure.get("function"), lambda v: _text(v, 300)),
            _optional(failure.get("line"), _int),
            output,
        )
    if kind == "hung_earlier":
        return out.Skipped(out.HUNG_EARLIER, function=_text(failure["function"], 300), output=output)
    if kind == "refused":
        return out.Refused(_text(failure["reason"], 1000), output)
    if kind == "too_much_output":
        return out.TooMuchOutput(_int(failure["chars"]), limits.output_limit_chars, output)
    if kind == "too_large":
        return out.TooLarge(limits.reply_bytes, output)
    if kind == "unsendable":
        return out.Malformed(_text(failure["detail"], 300), output)
    raise ValueError(f"an unknown failure kind {str(kind)[:40]!r}")


class _DeadlineReader:
    """A file-like reader over the child's reply pipe that raises ``TimeoutError`` at a deadline and
    ``_ChildDied`` when the child's keeper reports the end of the student process.

    Written by hand: the standard library has no blocking read with an overall
    deadline, and a child that hangs must not hang the grader.
    """

    def __init__(self, child: launcher.Child, deadline: float) -> None:
        self.child, self.deadline = child, deadline

    def read(self, size: int) -> bytes:
        while True:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([self.child.replies, self.child.control], [], [], left)
            if not ready:
                raise TimeoutError
            if self.child.replies in ready:
                return os.read(self.child.replies, min(size, 1 << 20))
            self.child.poll_ended(0)  # the keeper wrote: its report that the student process ended, or a late answer
            if self.child.ended is not None or self.child.eof:
                raise _ChildDied  # the student process ended without replying
