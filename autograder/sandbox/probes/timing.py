"""Probes of the timing step: describe the machine the child measures on.

Trusted code; it calls no student function. torch is imported inside the
probe (the child imports this module before any student code, and most steps
never need torch).
"""

from __future__ import annotations

import platform
import time
from typing import Any

from autograder.sandbox.probes import Load, probe


def _cpu_name() -> str:
    """The CPU's model name from ``/proc/cpuinfo``, else what :mod:`platform` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()[:120]
    except OSError:
        pass
    return (platform.processor() or platform.machine() or "unknown CPU")[:120]


def _sdpa_backend(torch: Any, device: str, d: int) -> str:
    """The kernel ``scaled_dot_product_attention`` uses for one ``(1, 1, n, d)`` float32 head here."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:  # torch < 2.3
        return "unknown"
    import warnings

    q = torch.zeros(1, 1, 256, d, device=device)
    kernels = {
        "flash": SDPBackend.FLASH_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
        "math": SDPBackend.MATH,
    }
    for name, backend in kernels.items():
        try:
            with warnings.catch_warnings(), sdpa_kernel(backend):
                warnings.simplefilter("ignore")
                torch.nn.functional.scaled_dot_product_attention(q, q, q)
            return name
        except RuntimeError:
            continue
    return "unknown"


@probe
def timing_environment(load: Load, device: str | None, d: int = 64) -> dict:
    """The device ``device`` resolves to here (None: CUDA when available), its name, torch, and SDPA's kernel."""
    import torch

    cuda = bool(torch.cuda.is_available())
    resolved = device or ("cuda" if cuda else "cpu")
    on_cuda = resolved.startswith("cuda")
    if on_cuda and not cuda:
        return {"device": resolved, "cuda_available": False, "device_name": "", "torch": torch.__version__}
    return {
        "device": resolved,
        "cuda_available": cuda,
        "device_name": (torch.cuda.get_device_name(resolved) if on_cuda else _cpu_name())[:120],
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform()[:120],
        "threads": int(torch.get_num_threads()),
        "sdpa_backend": _sdpa_backend(torch, resolved, d),
    }


# -- the grader's harness: one kernel call per request ------------------------------------------------------
# The grader times each kernel request with the CPU clock the child's keeper reads from the kernel's accounting
# (:meth:`autograder.sandbox.client.Sandbox.child_cpu_ns`), bounded by its own wall clock, and checks every
# result; these probes only hold the grader's inputs between requests and run the kernels. The CPU nanoseconds
# they return (the calling thread's, from a reference to the clock taken when this module was imported) are
# what the child says of itself: student code in this process can change them, so the grader trusts them for
# nothing.
_CPU_NS = time.thread_time_ns
_STATE: dict[str, Any] = {}
KIT_DECODER = {"vocab": 256, "d_model": 64, "n_heads": 4, "n_layers": 2, "seed": 16, "start": 0}


@probe
def timing_noop(load: Load) -> None:
    """Nothing: the grader's measure of one request's round trip."""
    return None


@probe
def timing_prepare(load: Load, n: int, d: int, seed: int) -> None:
    """Make the grader's inputs (``numpy.random.default_rng(seed)``, float32, ``Q``, ``K``, ``V`` in that order)."""
    import numpy as np
    import torch

    rng = np.random.default_rng(seed)
    _STATE["prepared"] = tuple(torch.from_numpy(rng.standard_normal((1, 1, n, d), dtype=np.float32)) for _ in range(3))
    _STATE["inputs"] = _STATE["prepared"]
    _STATE.pop("output", None)
    torch.set_num_threads(1)  # the measurement is of one thread, as the handout's timing functions take it


@probe
def timing_shift(load: Load, q_shift: float, v_shift: float) -> None:
    """The next call's inputs: the prepared ``Q + q_shift``, ``K``, ``V + v_shift`` (float32, made here, before
    the timed request), so that no call sees inputs an earlier one saw and a remembered answer is wrong."""
    Q, K, V = _STATE["prepared"]
    _STATE["inputs"] = (Q + q_shift, K, V + v_shift)
    _STATE.pop("output", None)


@probe
def timing_run(load: Load, kernel: str) -> int:
    """One forward pass of ``kernel`` (``naive``, ``causal_naive``: the student's ``naive_attention``; ``sdpa``:
    torch's) on the current inputs; the output is kept for :func:`timing_output`. Returns the calling thread's
    CPU nanoseconds (untrusted: the grader times the request with the keeper's clock)."""
    import torch

    Q, K, V = _STATE["inputs"]
    started = _CPU_NS()
    with torch.inference_mode():
        if kernel == "sdpa":
            output = torch.nn.functional.scaled_dot_product_attention(Q, K, V)
        else:
            output = load("timing").naive_attention(Q, K, V, kernel == "causal_naive")
    _STATE["output"] = output
    return _CPU_NS() - started


@probe
def timing_output(load: Load, rows: list) -> Any:
    """The kept output's ``rows`` (of the last two axes' first), as float32 numbers, for the grader's comparison."""
    import numpy as np
    import torch

    output = _STATE.get("output")
    if not isinstance(output, torch.Tensor):
        return None
    return np.asarray(output.detach().reshape(-1, output.shape[-1])[rows].to(torch.float32).cpu().numpy())


@probe
def timing_decode_start(load: Load, n_ctx: int) -> None:
    """A fresh greedy decoding with the kit's decoder (the student's ``toy_gpt``): the start token, an empty cache."""
    import torch

    gpt = load("toy_gpt")
    k = KIT_DECODER
    weights = gpt.random_weights(
        k["vocab"], k["d_model"], k["n_heads"], k["n_layers"], n_ctx=n_ctx, seed=k["seed"], dtype=torch.float32
    )
    _STATE["decode"] = {"weights": weights, "tokens": [k["start"]], "cache": gpt.new_cache(weights)}
    torch.set_num_threads(1)


def _step(load: Load) -> int:
    gpt, run = load("toy_gpt"), _STATE["decode"]
    tokens = run["tokens"]
    token = int(gpt.gpt_step(run["weights"], tokens[-1], len(tokens) - 1, run["cache"]).argmax())
    tokens.append(token)
    return token


@probe
def timing_decode_fill(load: Load, length: int) -> int:
    """Generate with the cache (untimed) until the decoding holds ``length`` tokens; how many it holds."""
    import torch

    with torch.inference_mode():
        while len(_STATE["decode"]["tokens"]) < length:
            _step(load)
    return len(_STATE["decode"]["tokens"])


@probe
def timing_decode_step(load: Load) -> tuple[int, int]:
    """One new token with the KV cache (``gpt_step`` at the next position), appended; ``(its id, CPU ns)`` (the
    nanoseconds are untrusted, as :func:`timing_run`'s)."""
    import torch

    started = _CPU_NS()
    with torch.inference_mode():
        token = _step(load)
    return token, _CPU_NS() - started


@probe
def timing_decode_forward(load: Load) -> tuple[int, int]:
    """The next token without a cache (``gpt_forward`` over the whole prefix), not appended; ``(its id, CPU ns)``
    (the nanoseconds are untrusted, as :func:`timing_run`'s)."""
    import torch

    gpt, run = load("toy_gpt"), _STATE["decode"]
    started = _CPU_NS()
    with torch.inference_mode():
        token = int(gpt.gpt_forward(run["weights"], torch.tensor(run["tokens"]))[-1].argmax())
    return token, _CPU_NS() - started


class _Slowed:
    """A kernel the grader made ``factor`` times as much work (it runs ``factor`` times), counting its calls."""

    def __init__(self, function: Any, factor: int) -> None:
        self.function, self.factor, self.calls = function, factor, 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        for _ in range(self.factor - 1):
            self.function(*args, **kwargs)
        return self.function(*args, **kwargs)


@probe
def timing_student_timer(load: Load, function: str, args: list, kwargs: dict, factor: int) -> dict:
    """Call the student's ``time_attention`` or ``time_decoding`` with the kernels it times made ``factor`` times
    the work (1: unchanged), counting the kernel calls; the kernels are put back afterwards.

    Returns ``{"value": what it returned, "calls": kernel calls}``.
    """
    import torch

    module = load("timing")
    if function == "time_attention":
        names = (
            [(torch.nn.functional, "scaled_dot_product_attention")]
            if kwargs.get("kind") == "sdpa"
            else [(module, "naive_attention")]
        )
    else:
        names = [(module, "gpt_step" if kwargs.get("use_cache", True) else "gpt_forward")]
    slowed = [(owner, name, _Slowed(getattr(owner, name), factor)) for owner, name in names]
    for owner, name, wrapper in slowed:
        setattr(owner, name, wrapper)
    try:
        value = getattr(module, function)(*args, **kwargs)
    finally:
        for owner, name, wrapper in slowed:
            setattr(owner, name, wrapper.function)
    if isinstance(value, tuple):
        value = list(value)
    return {"value": value, "calls": sum(wrapper.calls for _, _, wrapper in slowed)}
