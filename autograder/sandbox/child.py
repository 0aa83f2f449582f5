"""The sandboxed child: imports the student's modules and runs probes for the grader.

Started by its keeper (:mod:`autograder.sandbox.keeper`) with the limits as
JSON and with the working copy of the submission as its current directory. It
reads requests and answers on the two pipe descriptors named in the limits; its
own stdout and stderr go to a capped log file, and what student code prints
during a call is captured in memory and returned, capped, with the reply.

Order matters: limits, output redirection, the trusted imports and the audit
hook are all in place before the first line of student code runs.

A reply says how the request ended, as data (see :func:`handle`); the grader
turns it into a typed outcome (:mod:`autograder.sandbox.outcome`) and never
trusts it further than that: nothing here is more than a claim of student code.
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
from collections.abc import Callable, Mapping
from pathlib import Path
from types import FrameType, MappingProxyType, ModuleType

import numpy as np

from autograder.sandbox import policy, probes, seccomp
from autograder.sandbox.protocol import MAX_HEADER_BYTES, decode, encode, read_message, write_message

MAX_MESSAGE_CHARS = 500
IMPORT_HANG = ".<module>"  # where a hang at import is: "softmax.<module>"


class OutputLimitExceeded(BaseException):
    """Raised into student code that prints past the per-call limit (stops print loops)."""


class HungEarlier(BaseException):
    """Raised by a function that did not return earlier in grading, in place of running it again."""


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
    """The seccomp filter (no memory outside every limit: memfd, shared memory), then hard process limits; the
    per-call CPU limit is armed before each call. ``nproc``: the processes and threads of this child's uid (the
    launcher's count, :func:`autograder.sandbox.launcher.process_cap`; None: none, a pids cgroup may still cap
    them)."""
    seccomp.install()
    for name, value in (
        ("RLIMIT_AS", limits["memory_bytes"]),
        ("RLIMIT_FSIZE", limits["file_bytes"]),
        ("RLIMIT_CORE", 0),
        ("RLIMIT_NOFILE", 256),
        ("RLIMIT_MSGQUEUE", 0),
        ("RLIMIT_NPROC", limits.get("nproc")),
    ):
        if value is not None and hasattr(resource, name):
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
    """Imports the student's modules by file from the working copy, once each.

    ``hung`` names functions (``"module.qualified_name"``) that did not return
    earlier in grading: each is replaced by one raising :class:`HungEarlier`
    as soon as its module is loaded, before any other module can import it, so a
    call that reaches it fails at once instead of hanging again.
    """

    def __init__(self, folder: Path, hung: tuple[str, ...] = ()) -> None:
        self.folder = folder
        self.hung, self._poisoned = hung, False
        self.hung_imports = frozenset(t.removesuffix(IMPORT_HANG) for t in hung if t.endswith(IMPORT_HANG))
        if self.hung_imports:
            sys.meta_path.insert(0, _HungImports(self.hung_imports))
        # last on the path: the student's helpers import, but a numpy.py in the
        # folder never shadows the real numpy.
        sys.path.append(str(folder))

    def load(self, name: str) -> ModuleType:
        self._poison()
        return self._load(name)

    def _load(self, name: str) -> ModuleType:
        if name in self.hung_imports:
            raise HungEarlier(name + IMPORT_HANG)
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

    def _poison(self) -> None:
        if self._poisoned:
            return
        self._poisoned = True
        for target in self.hung:
            if target.endswith(IMPORT_HANG):
                continue
            module_name, _, qualified = target.partition(".")
            try:
                owner: object = self._load(module_name)
                *path, last = qualified.split(".")
                for part in path:
                    owner = getattr(owner, part)
                setattr(owner, last, _hung_stand_in(target))
            except BaseException:
                continue


class _HungImports:
    """A finder that stops the import of a module whose import did not finish earlier in grading."""

    def __init__(self, modules: frozenset[str]) -> None:
        self.modules = modules

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        if fullname in self.modules:
            raise HungEarlier(fullname + IMPORT_HANG)
        return None


def _hung_stand_in(target: str) -> Callable[..., None]:
    def hung(*args: object, **kwargs: object) -> None:
        raise HungEarlier(target)

    return hung


def _student_frames(frames: list[tuple[str, int, str]], folder: Path) -> list[tuple[str, int, str]]:
    """The ``(file relative to the folder, line, function)`` of the frames in the student's files."""
    prefix = str(folder).rstrip("/") + "/"
    return [(name[len(prefix) :], line, function) for name, line, function in frames if name.startswith(prefix)]


def _raised(error: BaseException, folder: Path) -> dict:
    """The description of an exception the grader turns into a ``Raised`` outcome."""
    try:
        message = str(error)
    except BaseException:
        message = "<the exception's message could not be read>"
    frames, tb = [], error.__traceback__
    while tb is not None:  # the code objects, for qualified names (Class.method)
        code = tb.tb_frame.f_code
        frames.append((code.co_filename, tb.tb_lineno or 0, getattr(code, "co_qualname", code.co_name)))
        tb = tb.tb_next
    student = _student_frames(frames, folder)
    files = list(dict.fromkeys(name for name, _, _ in student))
    deepest = student[-1] if student else None
    return {
        "kind": "raised",
        "type": type(error).__name__[:200],
        "mro": [cls.__name__[:200] for cls in type(error).__mro__][:64],
        "message": message[:MAX_MESSAGE_CHARS],
        "file": deepest[0] if deepest else None,
        "line": deepest[1] if deepest else None,
        "function": deepest[2][:200] if deepest else None,
        "files": files[:32],
    }


def _qualified(module_file: str, frame: FrameType) -> str:
    module = module_file[: -len(".py")].replace("/", ".") if module_file.endswith(".py") else module_file
    name = getattr(frame.f_code, "co_qualname", frame.f_code.co_name)  # co_qualname: Python 3.11+
    return f"{module}.{name}"


class _Timer:
    """The call's own deadline: at ``seconds`` the child reports where the student code was, and ends."""

    def __init__(self, reply_fd: int, folder: Path, captured: CappedText) -> None:
        self.reply_fd, self.folder, self.captured = reply_fd, folder, captured

    def arm(self, seconds: float | None) -> None:
        if seconds:
            signal.signal(signal.SIGALRM, self._expired)
            signal.setitimer(signal.ITIMER_REAL, seconds)

    @staticmethod
    def disarm() -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)

    def _expired(self, signum: int, frame: FrameType | None) -> None:
        where: dict = {"kind": "timed_out", "function": None, "line": None}
        prefix = str(self.folder).rstrip("/") + "/"
        while frame is not None:
            if frame.f_code.co_filename.startswith(prefix):
                where["function"] = _qualified(frame.f_code.co_filename[len(prefix) :], frame)  # "m.<module>" at import
                where["line"] = frame.f_lineno
                break
            frame = frame.f_back
        try:
            write_message(_RawWriter(self.reply_fd), {"ok": False, "failure": where, "output": self.captured.text()})
        finally:
            os._exit(0)


class _RawWriter:
    """Writes straight to a descriptor (the timer's reply must not go through a half-written buffer)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def write(self, data: bytes) -> int:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]
        return len(data)

    def flush(self) -> None:
        pass


def handle(
    request: dict,
    payload: dict,
    submission: Submission,
    limits: dict,
    timer: _Timer | None = None,
    dispatch: Mapping[str, Callable[..., object]] | None = None,
) -> tuple[dict, list]:
    """Run one request with output captured; the reply never raises. ``dispatch``: the probes by name, as bound
    before any student code ran (None: the probe package's table, for callers that run no student code).

    The reply is ``{"ok": True, "value": ..., "output": ...}`` or ``{"ok": False, "failure": {"kind": ...},
    "output": ...}`` with kind ``raised``, ``refused``, ``hung_earlier``, ``too_much_output``, ``too_large``
    or ``unsendable`` (``timed_out`` comes from the timer).
    """
    captured = CappedText(limits["output_chars"], limits["output_limit_chars"])
    if timer is not None:
        timer.captured = captured
    sys.stdout = sys.stderr = captured
    value, failure = None, None
    try:
        _arm_cpu_limit(limits["cpu_per_call_s"])
        if timer is not None:
            timer.arm(request.get("timeout"))
        kind = request["kind"]
        if kind == "import":
            submission.load(request["module"])
        elif kind == "torch":
            import torch  # noqa: F401  slow once; kept out of the timed calls
        elif kind == "call":
            function: Callable = getattr(submission.load(request["module"]), request["function"])
            value = function(*payload["args"], **payload["kwargs"])
        elif kind == "probe":
            table = dispatch if dispatch is not None else probes.PROBES
            value = table[request["probe"]](submission.load, *payload["args"], **payload["kwargs"])
        else:
            raise ValueError(f"unknown request {kind!r}")
    except HungEarlier as caught:
        failure = {"kind": "hung_earlier", "function": str(caught)}
    except policy.SandboxViolation as caught:
        failure = {"kind": "refused", "reason": str(caught)[:MAX_MESSAGE_CHARS]}
    except BaseException as caught:
        failure = _raised(caught, submission.folder)
    finally:
        if timer is not None:
            timer.disarm()
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    arrays: list[np.ndarray] = []
    if failure is None:
        failure, value = _encoded(value, arrays, limits)
    printed = captured.size + captured.dropped
    if printed > limits["output_limit_chars"]:
        failure, arrays = {"kind": "too_much_output", "chars": printed}, []
    reply = {"ok": failure is None, "output": captured.text()}
    if failure is None:
        reply["value"] = value
    else:
        reply["failure"] = failure
        arrays = []
    return reply, arrays


def _encoded(value: object, arrays: list[np.ndarray], limits: dict) -> tuple[dict | None, object]:
    """``(None, tree)`` for a value the grader can receive, else ``(failure, None)``."""
    try:
        tree = encode(value, arrays)
        size = sum(a.nbytes for a in arrays)
        if size > limits["reply_bytes"]:
            return {"kind": "too_large", "bytes": size}, None
        plain = len(json.dumps(tree))
        if plain > MAX_HEADER_BYTES // 2:
            return {
                "kind": "unsendable",
                "detail": f"{plain} bytes of plain numbers and strings; return an array",
            }, None
        return None, tree
    except BaseException as caught:
        return {"kind": "unsendable", "detail": str(caught)[:300]}, None


def _serve(
    requests: io.RawIOBase,
    replies: io.BufferedWriter,
    submission: Submission,
    limits: dict,
    timer: _Timer,
    dispatch: Mapping[str, Callable[..., object]],
    run: Callable[..., tuple[dict, list]] = handle,
    read: Callable[..., tuple[dict, list]] = read_message,
    write: Callable[..., None] = write_message,
    arrays_of: Callable[..., object] = decode,
) -> None:
    """Serve requests until the grader closes the request pipe. Everything the loop calls is bound here, when the
    module is imported (before any student code): student code that rebinds this module's names, or the probe
    package's table, changes nothing the grader asks for (and the audit hook refuses replacing these functions'
    code or defaults). What a probe returns is still only what the student's functions returned: the grader
    compares it with the reference, so nothing computed here decides a verdict on its own."""
    while True:
        try:
            header, raw = read(requests, limits["request_bytes"])
        except EOFError:
            return
        reply, arrays = run(header, arrays_of(header["payload"], raw), submission, limits, timer, dispatch)
        write(replies, reply, arrays)


def main(limits_json: str) -> None:
    """Serve requests until the grader closes the request pipe."""
    limits = json.loads(limits_json)
    work = Path.cwd()
    _set_limits(limits)
    _redirect_output(work / ".sandbox-output.log")
    requests = os.fdopen(limits["request_fd"], "rb", buffering=0)
    replies = os.fdopen(limits["reply_fd"], "wb")
    submission = Submission(work, tuple(limits.get("hung", ())))
    timer = _Timer(limits["reply_fd"], work, CappedText(0, 0))
    dispatch = MappingProxyType(dict(probes.PROBES))  # bound before any student code runs
    if limits.get("torch"):  # its native libraries load now: once student code runs, no library loads at all
        import torch.nn.functional  # noqa: F401
    if limits.get("audit_hook", True):
        served = (_serve, handle, _encoded, _raised, *dispatch.values())
        policy.install(
            work,
            allowed_callers=(_arm_cpu_limit.__code__,),
            writable=tuple(limits.get("writable", ())),
            protected=tuple(function.__code__ for function in served),
        )
    _serve(requests, replies, submission, limits, timer, dispatch)


if __name__ == "__main__":
    main(sys.argv[1])
