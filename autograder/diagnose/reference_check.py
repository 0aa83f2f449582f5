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

    tensors = [torch.as_tensor(np.asarray(a), dtype=torch.float32) for a in (Q, K, V)]
    given = None if mask is None else torch.as_tensor(np.asarray(mask, dtype=bool))
    if given is not None and float_mask:
        given = given.to(torch.float32)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return F.scaled_dot_product_attention(*tensors, attn_mask=given, dropout_p=0.0).double().numpy()


def _backends() -> dict[str, object]:
    """torch's SDPA backends by the lower-case first word of their enum name ("flash", "math", ...).

    Read from ``SDPBackend`` itself rather than listed by hand, so the kit ships no table of kernels.
    """
    from torch.nn.attention import SDPBackend

    members = SDPBackend.__members__.items()  # a pybind11 enum: its members by name
    return {name.split("_")[0].lower(): backend for name, backend in members if name != "ERROR"}


def runs_alone(kernel: str, Q: ArrayLike, K: ArrayLike, V: ArrayLike, mask: ArrayLike | None = None) -> bool:
    """Whether the SDPA kernel named ``kernel`` ("flash", "math", ...) accepts these inputs here, by itself.

    The grader verifies the one kernel a student named: it asks ``sdpa_kernel`` to allow only that kernel and
    runs the inputs as CPU float32 tensors (a kernel that declines them raises). With a GPU in the grading
    process the student's code may have used it, so every known kernel counts as possible.
    """
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel

    backend = _backends().get(kernel)
    if backend is None:
        return False
    if torch.cuda.is_available():
        return True
    q, k, v = (torch.as_tensor(np.asarray(a), dtype=torch.float32) for a in (Q, K, V))
    bool_mask = None if mask is None else torch.as_tensor(np.asarray(mask, dtype=bool))
    try:
        with torch.no_grad(), warnings.catch_warnings(), sdpa_kernel(backend):
            warnings.simplefilter("ignore")
            F.scaled_dot_product_attention(q, k, v, attn_mask=bool_mask)
    except RuntimeError:
        return False
    return True


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
