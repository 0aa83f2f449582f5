"""Probes of the timing step: describe the machine the child measures on, and the grader's timing harness.

torch is imported inside each probe (the child imports this module before any student code, and most steps never
need torch).
"""

from __future__ import annotations

import math
import platform
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
# These probes only hold the grader's inputs between requests, call the student's kernels on them and hand back
# what the kernels returned. The grader times each kernel request from outside the child (the keeper's reading of
# the child's CPU clocks, bounded by the grader's own wall clock around the request; on a GPU that wall clock,
# with the CUDA events recorded here around the call accepted only where they agree with it) and compares every
# result with the reference: nothing this module computes or returns decides a verdict on its own, so student
# code that replaced it could only hand back other results, which the grader checks.
_STATE: dict[str, Any] = {}


def _device(torch: Any, device: str) -> Any:
    """The torch device of the harness (``"cpu"`` or a CUDA device)."""
    return torch.device(device)


def _sync(torch: Any, device: Any) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _events(torch: Any, device: Any) -> tuple[Any, Any] | None:
    """A started pair of CUDA events on ``device`` (None on a CPU)."""
    if device.type != "cuda":
        return None
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    return start, end


def _elapsed(events: tuple[Any, Any] | None) -> float | None:
    """Seconds between the pair's two records (the second is recorded now), after both happened; None on a CPU."""
    if events is None:
        return None
    start, end = events
    end.record()
    end.synchronize()
    return float(start.elapsed_time(end)) / 1e3


@probe
def timing_noop(load: Load, device: str = "cpu") -> None:
    """Nothing but what every timed request also does (on a GPU, a synchronisation): the grader's round trip."""
    import torch

    if device != "cpu":
        _sync(torch, _device(torch, device))


@probe
def timing_prepare(load: Load, device: str = "cpu") -> None:
    """Get ready to time on ``device``: one torch thread (the measurement is of one thread, as the handout's timing
    functions take it), no output kept."""
    import torch

    _STATE["device"] = _device(torch, device)
    _STATE.pop("output", None)
    torch.set_num_threads(1)
    _sync(torch, _STATE["device"])


def timing_inputs(seed: int, n: int, d: int) -> tuple[Any, Any, Any]:
    """The timing harness's ``Q``, ``K``, ``V`` ``(1, 1, n, d)`` for ``seed``: float32, uniform on
    ``[-sqrt(3), sqrt(3))`` (unit variance), drawn in that order from ``numpy.random.default_rng(seed)``.

    The child makes them inside a timed request (:func:`timing_call`) and the grader makes the same ones to check
    what came back (:mod:`autograder.judge.timing.verified`). Uniform numbers cost 40% of normal ones (1.0 ms
    against 2.6 ms for the three at n = 1024), paid on both sides of about 60 requests a grading.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    made = []
    for _ in range(3):
        x = rng.random((1, 1, n, d), dtype=np.float32)  # [0, 1)
        x -= np.float32(0.5)
        x *= np.float32(2 * math.sqrt(3))
        made.append(x)
    return made[0], made[1], made[2]


@probe
def timing_call(load: Load, kernel: str, seed: int, n: int, d: int, r: Any) -> tuple[Any, float | None]:
    """One forward pass of ``kernel`` on new inputs made inside the request, and the output's rows projected on
    the grader's random vector ``r`` ``[d]``: ``(projection [n], CUDA seconds or None)``.

    The inputs are :func:`timing_inputs`'s for ``seed`` (the grader makes the same ones): every call has inputs of
    its own, drawn from a seed it learns only with the request, so nothing can be remembered, prepared or carried
    over from another call. ``kernel``: ``naive`` or ``causal_naive`` (the student's ``naive_attention``), ``sdpa``
    (torch's), or ``none`` (no attention: the output is ``V``; the grader's baseline, which costs all the rest of a
    request). The projection needs every output row,
    so a kernel whose work is put off until it is read is charged for it here; the output is kept for
    :func:`timing_output`, which the grader asks for rows it picks afterwards.
    """
    import torch

    _STATE.pop("output", None)  # freed before the call, as a timing loop frees its last output
    where = _STATE["device"]
    Q, K, V = (torch.from_numpy(x).to(where) for x in timing_inputs(seed, n, d))
    direction = torch.as_tensor(r, dtype=torch.float32).to(where)
    _sync(torch, where)
    events = _events(torch, where)
    with torch.inference_mode():
        if kernel == "none":
            output = V
        elif kernel == "sdpa":
            output = torch.nn.functional.scaled_dot_product_attention(Q, K, V)
        else:
            output = load("timing").naive_attention(Q, K, V, kernel == "causal_naive")
        projection = output.reshape(-1, output.shape[-1]).to(torch.float32) @ direction  # (n,)
    seconds = _elapsed(events)
    _STATE["output"] = output
    return projection.cpu(), seconds


@probe
def timing_output(load: Load, rows: list) -> Any:
    """The kept output's ``rows`` (of the last two axes' first), as float32 numbers, for the grader's comparison."""
    import numpy as np
    import torch

    output = _STATE.get("output")
    if not isinstance(output, torch.Tensor):
        return None
    return np.asarray(output.detach().reshape(-1, output.shape[-1])[rows].to(torch.float32).cpu().numpy())


def _on(torch: Any, weights: dict, where: Any) -> dict:
    """The grader's decoder weights (tensors from the protocol) on the harness's device."""

    def move(value: Any) -> Any:
        return value.to(where) if isinstance(value, torch.Tensor) else value

    return {
        **{key: move(value) for key, value in weights.items() if key != "blocks"},
        "blocks": [{key: move(value) for key, value in block.items()} for block in weights["blocks"]],
    }


@probe
def timing_decode_start(load: Load, weights: dict, device: str = "cpu") -> None:
    """A fresh decoding with the grader's ``weights`` (float32 tensors) and the student's ``toy_gpt``: an empty
    ``new_cache(weights)`` at position 0."""
    import torch

    where = _device(torch, device)
    on = _on(torch, weights, where)
    _STATE["decode"] = {"weights": on, "cache": load("toy_gpt").new_cache(on), "position": 0, "device": where}
    torch.set_num_threads(1)


def _logits_row(torch: Any, logits: Any) -> Any:
    """A returned logits tensor's last row ``[V]`` as float32 on the CPU (what the grader compares)."""
    return logits.reshape(-1, logits.shape[-1])[-1].to(torch.float32).cpu()


@probe
def timing_decode_fill(load: Load, tokens: list) -> int:
    """``gpt_step`` with the cache for each of the grader's ``tokens`` (untimed); how many tokens it holds then."""
    import torch

    run, gpt = _STATE["decode"], load("toy_gpt")
    with torch.inference_mode():
        for token in tokens:
            gpt.gpt_step(run["weights"], int(token), run["position"], run["cache"])
            run["position"] += 1
    return int(run["position"])


@probe
def timing_decode_step(load: Load, token: int) -> tuple[Any, float | None]:
    """``gpt_step`` for the grader's ``token`` at the next position, with the cache: ``(its logits [V], CUDA
    seconds or None)``."""
    import torch

    run, gpt = _STATE["decode"], load("toy_gpt")
    _sync(torch, run["device"])
    events = _events(torch, run["device"])
    with torch.inference_mode():
        row = _logits_row(torch, gpt.gpt_step(run["weights"], int(token), run["position"], run["cache"]))
    seconds = _elapsed(events)
    run["position"] += 1
    return row, seconds


@probe
def timing_decode_forward(load: Load, tokens: list) -> tuple[Any, float | None]:
    """``gpt_forward`` over the grader's whole prefix ``tokens``, no cache: ``(the last position's logits [V],
    CUDA seconds or None)``."""
    import torch

    run, gpt = _STATE["decode"], load("toy_gpt")
    prefix = torch.tensor([int(t) for t in tokens], device=run["device"])
    _sync(torch, run["device"])
    events = _events(torch, run["device"])
    with torch.inference_mode():
        row = _logits_row(torch, gpt.gpt_forward(run["weights"], prefix))
    return row, _elapsed(events)
