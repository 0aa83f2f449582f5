"""The graders' trusted torch side: torch's SDPA and autograd, and the reference's torch modules.

These probes compute what a check compares the student's answers with; they never run near student code. The
grader runs them through :mod:`autograder.judge.oracle`: in a sandbox child of their own whose working copy is the
reference (forked from the fork server that has torch already, so the grader never imports torch), or, where
children do not get namespaces of their own, here in the grader with ``load`` importing the reference's
modules. Either way the same functions compute, and their values cross the same encoding.

torch is imported inside each probe: the fork server imports this package before any child exists.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from autograder.sandbox.probes import Load, probe

GPT = "toy_gpt"  # the reference module the toy-GPT probes use


@probe
def oracle_sdpa(
    load: Load, Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: np.ndarray | None, float_mask: bool = False
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


# SDPA's fused kernels, by the autograd node each leaves on its output (the operator that ran, e.g.
# ``ScaledDotProductFlashAttentionForCpuBackward0``); the "math" kernel is the formula in plain operators, whose
# last node is an ordinary one (``MmBackward0``, ``UnsafeViewBackward0``).
FUSED_KERNELS = {
    "flash": "ScaledDotProductFlashAttention",
    "efficient": "ScaledDotProductEfficientAttention",
    "cudnn": "ScaledDotProductCudnnAttention",
}


@probe
def oracle_sdpa_kernel(load: Load, Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: np.ndarray | None) -> str:
    """The kernel ``scaled_dot_product_attention`` picks by itself for these inputs as CPU float32 tensors (the
    contract's ``torch_attention``): "flash", "efficient" or "cudnn" when the operator of that fused kernel ran,
    else "math" (the plain formula, which runs as ordinary operators).

    Observed from the operator that ran: the autograd node it leaves on the output names it. The CPU kernel
    choice does not depend on whether gradients are wanted, and a node costs nothing to read, where a
    ``TorchDispatchMode`` (or torch's profiler) imports ``torch._dynamo`` on first use, a second per grade.
    """
    import torch
    import torch.nn.functional as F

    q, k, v = (torch.tensor(np.asarray(a), dtype=torch.float32, requires_grad=True) for a in (Q, K, V))
    bool_mask = None if mask is None else torch.as_tensor(np.asarray(mask, dtype=bool))
    with torch.enable_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        node = F.scaled_dot_product_attention(q, k, v, attn_mask=bool_mask, dropout_p=0.0).grad_fn
    ran = "" if node is None else node.name()
    for kernel, prefix in FUSED_KERNELS.items():
        if ran.startswith(prefix):
            return kernel
    return "math"


@probe
def oracle_head_gradients(
    load: Load, Q: np.ndarray, K: np.ndarray, V: np.ndarray, dO: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """dQ, dK, dV of one head ``O = softmax(Q K^T / sqrt(d_k)) V`` for the upstream gradient dO: torch autograd
    in float64.

    The gradients of the scalar L = sum(O * dO), which are those of O for dO: a backward from a scalar, because
    torch's first backward with a given gradient imports sympy (0.8 s).
    """
    import torch

    q, k, v = (torch.tensor(np.asarray(a), dtype=torch.float64, requires_grad=True) for a in (Q, K, V))
    weights = torch.softmax(q @ k.T / np.sqrt(np.shape(Q)[-1]), dim=-1)
    ((weights @ v) * torch.tensor(np.asarray(dO), dtype=torch.float64)).sum().backward()
    return q.grad.numpy(), k.grad.numpy(), v.grad.numpy()


@probe
def oracle_gpt_weights(
    load: Load, n_vocab: int, d_model: int, n_heads: int, n_layers: int, n_ctx: int, seed: int
) -> dict[str, Any]:
    """The reference's ``random_weights`` (float64), as NumPy arrays."""
    return load(GPT).random_weights(n_vocab, d_model, n_heads, n_layers, n_ctx, seed=seed)


@probe
def oracle_gpt_logits(load: Load, weights: dict[str, Any], tokens: list[int]) -> np.ndarray:
    """The reference's ``gpt_forward`` logits ``[n, V]`` (float64) for NumPy ``weights``."""
    gpt = load(GPT)
    return gpt.gpt_forward(gpt.as_tensors(weights), [int(t) for t in tokens])


@probe
def oracle_gpt_generate(
    load: Load, weights: dict[str, Any], prompt: list[int], n_new: int
) -> tuple[np.ndarray, np.ndarray]:
    """The reference's greedy ``generate``: the ``n_new`` tokens and the ``[n_new, V]`` logits they came from."""
    gpt = load(GPT)
    tokens, logits = gpt.generate(gpt.as_tensors(weights), [int(t) for t in prompt], int(n_new))
    return np.asarray(tokens), logits
