"""Step 8, check your attention against PyTorch's (handout section `reference_check`).

``torch.nn.functional.scaled_dot_product_attention`` (SDPA) computes
``softmax(Q K^T / sqrt(d_k) + mask) V`` with one of several kernels: "flash"
(fused, tiled; on CPU a flash kernel for 4-d inputs whose query, key and value
widths are equal), "efficient" and "cudnn" (GPU only), and "math" (the plain
formula, which runs everywhere). Its bool mask uses your convention: ``True``
means the query may attend to that key.

Which kernel ran: SDPA does not say, so the check runs it inside
``torch.nn.attention.sdpa_kernel(backend)``, which allows only that one kernel
and raises when it cannot take these inputs. Trying the kernels in the order
flash, efficient, cudnn, math reports the first that ran. On a CPU that is
the same kernel SDPA picks by itself ("flash" when the CPU flash kernel
accepts the inputs, "math" otherwise).
"""

from __future__ import annotations

import warnings

import numpy as np
import torch
import torch.nn.functional as F
from numpy.typing import ArrayLike
from scaling import attention
from torch.nn.attention import SDPBackend, sdpa_kernel


def torch_attention(
    Q: ArrayLike, K: ArrayLike, V: ArrayLike, mask: ArrayLike | None = None
) -> tuple[torch.Tensor, str]:
    """PyTorch's attention output in float32, and the name of the kernel that computed it.

    Args:
        Q: queries, ``[..., n_q, d_k]`` (numpy array or tensor).
        K: keys, ``[..., n_k, d_k]``.
        V: values, ``[..., n_k, d_v]``.
        mask: optional bool array broadcastable to ``[..., n_q, n_k]``; ``True`` = may attend.

    Returns:
        ``(output, backend)``: ``output`` is a float32 tensor ``[..., n_q, d_v]``;
        ``backend`` is "flash", "efficient", "cudnn" or "math".
    """
    raise NotImplementedError(
        "Lab 7 step 'reference_check', task torch_attention: not implemented yet "
        "(handout: handouts/lab07_attention.md#reference_check)"
    )


def compare_with_torch(Q: ArrayLike, K: ArrayLike, V: ArrayLike, mask: ArrayLike | None = None) -> tuple[float, str]:
    """How far your ``attention`` (from ``scaling.py``) is from PyTorch's, on the same inputs.

    Both use the same mask, the default scale ``1 / sqrt(d_k)`` and no dropout.

    Args:
        Q: queries, ``[..., n_q, d_k]`` (numpy array).
        K: keys, ``[..., n_k, d_k]``.
        V: values, ``[..., n_k, d_v]``.
        mask: optional bool array broadcastable to ``[..., n_q, n_k]``; ``True`` = may attend.

    Returns:
        ``(max_abs_diff, backend)``: the largest absolute difference between the
        two outputs (about 1e-7 in float32 for a correct ``attention``) and the
        name of the SDPA kernel that ran ("flash", "efficient", "cudnn" or "math").
    """
    raise NotImplementedError(
        "Lab 7 step 'reference_check', task compare_with_torch: not implemented yet "
        "(handout: handouts/lab07_attention.md#reference_check)"
    )
