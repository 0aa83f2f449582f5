"""The warm grading server: imports the grader once, then forks one worker per request, several at a time.

``nbgrader autograde`` runs one notebook after another and ``attnlab
grade-batch`` many students at once; a fresh grader process per student
imports Python, pytest, numpy and torch again and starts a new sandbox fork
server (about 4 s of the 8 s a student's grading took on 2 cores). The first
request for a handler starts this server instead (detached, so it outlives the
notebook kernel or Dask worker that started it): it imports the handler, the
engine and torch, starts the sandbox fork server, and forks a worker per
request. A worker is a fresh copy of the warm process (it opens its own
channel to the shared fork server, so no two workers share a conversation);
it grades one request, writes the report to the connection and exits, so
nothing of one student's run reaches the next. At most :data:`MAX_WORKERS` workers run at once; the server exits after
:data:`IDLE_S` seconds without a request, or when asked to stop (``grade-batch`` asks when it ends): it then takes
no new request and exits as soon as the workers it has running have ended (a concurrent batch's gradings finish
on the fork server they started with).

Written by hand: no library forks a pre-imported Python per request with its
own session and returns the child's pid to the caller.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import json
import os
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from autograder.base import threads
from autograder.deliver.warm import address

ENV_WORKERS = "ATTNLAB_WARM_WORKERS"  # the most workers at once (default: the machine's cores, at least 2)
IDLE_S = 120.0
POLL_S = 0.2
EXIT_INTERNAL = 3
MAX_WORKERS = int(os.environ.get(ENV_WORKERS) or max(2, os.cpu_count() or 2))
# What the graders import while they are collected, loaded once here instead of in every worker (about 0.4 s a
# student on 2 cores): the packages' every module, and these modules.
PRELOADED_PACKAGES = (
    "autograder.judge.cases",
    "autograder.judge.checks",
    "autograder.judge.diagnose",
    "autograder.sandbox.probes",
)
PRELOADED = ("autograder.judge.predictions", "autograder.judge.timing.analysis", "autograder.judge.timing.explain")


def serve(path: str, handler: str) -> None:
    """Import the grader once, then fork a worker per connection until idle for :data:`IDLE_S` seconds."""
    # One thread of NumPy's BLAS and torch per worker: the workers are the parallelism, and the graders' own arrays
    # are small (the toy GPT, kv_cache and gradients steps of the reference graded in 0.9 s on one thread, 1.1-1.6 s
    # on two).
    threads.one_thread()  # before NumPy and torch load
    os.environ["ATTNLAB_LANES"] = "0"  # several students at once: their timing steps cannot share one reserved CPU
    from autograder.base import sourceonly
    from autograder.grading import (
        engine,
        serialize,  # noqa: F401  the imports every worker shares
    )
    from autograder.judge import oracle
    from autograder.sandbox import client as sandbox
    from autograder.sandbox.isolation import choose

    # The checks' own torch runs in the workers only where the oracle is not a sandbox child of its own (the
    # layers without namespaces); in the namespaces layer no worker imports torch, and this server does not either
    # (1.1 s of CPU less, 60 MiB instead of 288, and each worker a fork of that smaller process).
    level = choose()
    checks_use_torch_here = not oracle.boxed(level)
    if checks_use_torch_here:
        import torch

        torch.set_num_threads(1)
    module = importlib.import_module(handler)
    # the sandbox's fork servers, shared by every worker: the numpy steps' children fork from the one without torch
    # (a third of the CPU of a child forked from the torch one)
    sandbox.prestart(numpy=True, level=level)
    preload()
    if checks_use_torch_here:
        _first_torch_calls()
    sourceonly.compile_ahead([engine.PUBLIC_GRADERS])  # the checks every worker collects, compiled once
    gc.freeze()  # what every worker shares stays out of their collections (and their pages unwritten)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    ours = os.stat(path).st_ino
    listener.listen(64)
    listener.settimeout(POLL_S)
    running: set[int] = set()
    compiled: set[Path] = set()  # the hidden and reference folders compiled here (_compile_trusted)
    last = time.monotonic()
    while True:
        _reap(running, block=len(running) >= MAX_WORKERS)
        if running:
            last = time.monotonic()
        elif time.monotonic() - last > IDLE_S:
            break
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            continue
        with connection:
            try:
                connection.settimeout(10)
                request = json.loads(connection.makefile("rb").readline())
            except (OSError, ValueError):
                continue
            if request.get("stop"):
                break
            _compile_trusted(module, request, compiled)
            pid = _fork_worker(listener, connection, module, request)
            try:
                connection.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            except OSError:
                os.kill(pid, signal.SIGKILL)
        running.add(pid)
        last = time.monotonic()
    listener.close()
    _unlink_if_ours(Path(path), ours)  # from now on a client starts a new server
    while running:  # the workers still grading (another batch's, say) keep the sandbox's fork server they use
        _reap(running, block=True)
    address.remove_if_unused(Path(path))  # unless a new server listens there, or a client is starting one
    address.sweep()  # and what servers that were killed, or older kits' servers, left beside it


def _unlink_if_ours(path: Path, inode: int) -> None:
    """Remove the socket ``path`` unless a newer server has bound it since (another inode)."""
    try:
        if os.stat(path).st_ino == inode:
            path.unlink()
    except OSError:
        pass


def preload() -> None:
    """Import what the graders import (:data:`PRELOADED_PACKAGES`, :data:`PRELOADED`) and read the public checks'
    snapshots, so every worker has them."""
    import pkgutil

    names = list(PRELOADED)
    for package in PRELOADED_PACKAGES:
        folder = importlib.import_module(package).__path__
        names.extend(f"{package}.{info.name}" for info in pkgutil.iter_modules(folder))
    for name in names:
        importlib.import_module(name)
    from autograder.judge import cases

    cases.read_all()  # the public checks' snapshots: the same for every student


def _compile_trusted(module: ModuleType, request: dict, compiled: set[Path]) -> None:
    """Compile the request's hidden graders and reference here, before the worker is forked, unless they are in
    ``compiled`` (the folders this server compiled already, which this adds to), so that this server's later
    workers find them compiled (:func:`autograder.base.sourceonly.compile_ahead`; a file changed since is compiled
    again by the worker that imports it). A request the handler cannot read is left for its worker to report."""
    from autograder.base import sourceonly
    from autograder.grading import engine

    try:
        options = module.options(request)
    except Exception:  # the worker calls it again and reports what went wrong
        return
    roots = {Path(root) for root in engine.trusted_roots(options)[1:] if root is not None} - compiled
    sourceonly.compile_ahead(roots)  # the public graders: once, in serve
    compiled.update(roots)


def _first_torch_calls() -> None:
    """Make once the torch calls whose first use loads more: autograd's first backward from a non-scalar gradient
    (the hidden gradient checks) imports sympy, 0.35 s that every worker would otherwise pay again."""
    import torch

    x = torch.ones(2, 2, dtype=torch.float64, requires_grad=True)
    weights = torch.softmax(x @ x.T, dim=-1)
    weights.backward(torch.ones_like(weights))
    torch.nn.functional.scaled_dot_product_attention(*(torch.ones(1, 2, 2),) * 3)


def _reap(running: set[int], *, block: bool) -> None:
    """Collect the workers that have ended; with ``block``, until one has (all :data:`MAX_WORKERS` are busy).

    Only the workers' own pids are waited for: the fork server is this process's child too.
    """
    before = len(running)
    while True:
        for pid in list(running):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                running.discard(pid)
        if not block or len(running) < before:
            return
        time.sleep(POLL_S / 4)


def _fork_worker(listener: socket.socket, connection: socket.socket, module: ModuleType, request: dict) -> int:
    """Fork the worker of ``request``; its pid."""
    pid = os.fork()
    if pid == 0:
        listener.close()
        _work(connection, module, request)  # never returns
    return pid


def _work(connection: socket.socket, module: ModuleType, request: dict) -> None:
    """One worker: grade ``request``, write the reply, exit."""
    code = 70
    try:
        os.setsid()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        connection.settimeout(None)
        with tempfile.TemporaryDirectory(prefix="attnlab-grade-") as work:  # pytest's plugins may write into the cwd
            os.chdir(work)
            reply = graded(module, request)
        connection.sendall(json.dumps(reply).encode() + b"\n")
        code = 0
    except BaseException:
        pass
    finally:
        os._exit(code)


def graded(module: ModuleType, request: dict) -> dict[str, Any]:
    """``{"report": <report document>}``, ``{"refused": <why the hand-in was not graded>}`` (the student's reason),
    or ``{"error": <the graders' failure>}``: the handler's ``prepare(request)`` (if it has one), then the engine on
    its ``options(request)``."""
    from autograder.grading import engine, serialize
    from autograder.judge import messages

    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            if hasattr(module, "prepare"):  # e.g. the feedback's language
                module.prepare(request)
            report = engine.grade(module.options(request))
    except engine.HandInRefused as refused:
        return {"refused": messages.hand_in_refused(refused)}
    except (
        engine.GradingError,
        engine.IsolationRefused,
        OSError,
        ValueError,
        KeyError,
        TypeError,
        RuntimeError,
    ) as error:
        return {"error": f"{type(error).__name__}: {error}"}
    return {"report": serialize.report_dict(report)}


def grade_once(handler: str) -> int:
    """A fresh grader process: grade the request on standard input, print the reply as JSON; exit 0 (a refused
    hand-in included), or 3 when the graders failed."""
    threads.one_thread()  # before the handler loads NumPy (see autograder.base.threads)
    reply = graded(importlib.import_module(handler), json.loads(sys.stdin.buffer.read()))
    print(json.dumps(reply))
    return EXIT_INTERNAL if "error" in reply else 0
