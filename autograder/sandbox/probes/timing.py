"""Probes of the timing step: describe the machine the child measures on.

Trusted code; it calls no student function. torch is imported inside the
probe (the child imports this module before any student code, and most steps
never need torch).
"""

from __future__ import annotations

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
