"""Wrong ways to compare with PyTorch, what they report, and the trusted PyTorch side of the checks.

The graders compute ``scaled_dot_product_attention`` themselves, in the grading
process, on the inputs they send: the difference ``compare_with_torch`` reports
must be the one the grader finds between the student's ``attention`` output and
PyTorch's. torch is imported inside the functions, so grading other steps never
loads it.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike

from autograder.diagnose import Mistake

MISTAKES = {
    m.id: m
    for m in (
        Mistake(
            "sdpa_float_mask",
            "the mask reached scaled_dot_product_attention as numbers: a float mask is added to the "
            "scores (0 or 1) and blocks nothing; pass the bool mask, True = may attend",
        ),
        Mistake(
            "compare_mean_not_max",
            "the differences are averaged; compare_with_torch must return the largest absolute difference",
        ),
    )
}
KERNELS = ("flash", "efficient", "cudnn", "math", "overrideable")  # names a backend may contain
AGREE = 1e-5  # a correct float64 attention against float32 SDPA lands near 1e-7


def same_difference(reported: float, actual: float) -> bool:
    """Whether a reported ``max_abs_diff`` is the one the grader found (up to float32 rounding and kernel choice)."""
    return bool(abs(reported - actual) <= 1e-6 + 1e-3 * abs(actual))


def sdpa(
    Q: ArrayLike, K: ArrayLike, V: ArrayLike, mask: ArrayLike | None = None, float_mask: bool = False
) -> np.ndarray:
    """PyTorch's attention output (float32, default kernel) as a float64 array.

    ``float_mask``: pass the mask as 0/1 floats, the way the ``sdpa_float_mask`` mistake does.
    """
    import torch
    import torch.nn.functional as F

    q, k, v = (torch.as_tensor(np.asarray(a), dtype=torch.float32) for a in (Q, K, V))
    attn_mask = None if mask is None else torch.as_tensor(np.asarray(mask, dtype=bool))
    if attn_mask is not None and float_mask:
        attn_mask = attn_mask.to(torch.float32)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=0.0).double().numpy()


def possible_kernels(Q: ArrayLike, K: ArrayLike, V: ArrayLike, mask: ArrayLike | None = None) -> set[str]:
    """The SDPA kernels that could have computed these inputs.

    Without a GPU in the grading process: the kernels that run the inputs here as
    CPU float32 tensors (each tried alone with ``sdpa_kernel``); "flash" only where
    the CPU flash kernel accepts them, "math" always. With a GPU the student's
    code may have used it, so every kernel is possible.
    """
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    if torch.cuda.is_available():
        return set(KERNELS)
    q, k, v = (torch.as_tensor(np.asarray(a), dtype=torch.float32) for a in (Q, K, V))
    attn_mask = None if mask is None else torch.as_tensor(np.asarray(mask, dtype=bool))
    names = {
        SDPBackend.FLASH_ATTENTION: "flash",
        SDPBackend.EFFICIENT_ATTENTION: "efficient",
        SDPBackend.CUDNN_ATTENTION: "cudnn",
        SDPBackend.MATH: "math",
    }
    found = set()
    for backend, name in names.items():
        try:
            with torch.no_grad(), warnings.catch_warnings(), sdpa_kernel(backend):
                warnings.simplefilter("ignore")
                F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
            found.add(name)
        except RuntimeError:
            continue
    return found


def compare_variants(
    output: np.ndarray, Q: ArrayLike, K: ArrayLike, V: ArrayLike, mask: ArrayLike | None = None
) -> dict[str, np.ndarray]:
    """What each mistake reports as ``max_abs_diff`` when the student's attention returned ``output``."""
    output = np.asarray(output, dtype=float)
    gap = np.abs(output - sdpa(Q, K, V, mask))
    out = {"compare_mean_not_max": np.asarray(gap.mean())}
    if mask is not None and not np.asarray(mask, dtype=bool).all():
        out["sdpa_float_mask"] = np.asarray(np.max(np.abs(output - sdpa(Q, K, V, mask, float_mask=True))))
    return out
