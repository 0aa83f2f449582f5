"""The graders of step 10 (gradients): full marks, zero, each known mistake diagnosed, the probes, valid
alternatives."""

from __future__ import annotations

import numpy as np

from autograder.base import chapter
from autograder.judge.diagnose import gradients as gradient_mistakes
from autograder.sandbox.client import Sandbox
from autograder.sandbox.probes.gradients import head_loss, smooth_function, smooth_gradient
from tests import kit
from tests.kit import Variant

STEP = "gradients"
SCALED = "dQ = dS @ K / np.sqrt(d_k)  # (n_q, d_k)\n    dK = np.swapaxes(dS, -1, -2) @ Q / np.sqrt(d_k)"
LOOP = """    for index in np.ndindex(x.shape):
        saved = x[index]
        x[index] = saved + h
        f_plus = float(f(x))
        x[index] = saved - h
        f_minus = float(f(x))
        x[index] = saved
        grad[index] = (f_plus - f_minus) / (2 * h)
"""

VARIANTS = (
    Variant(
        "grad_dv_not_transposed",
        STEP,
        STEP,
        "dV = np.swapaxes(A, -1, -2) @ dO",
        "dV = A @ dO",
        "grad_dv_not_transposed",
    ),
    Variant(
        "grad_missing_scale",
        STEP,
        STEP,
        SCALED,
        "dQ = dS @ K\n    dK = np.swapaxes(dS, -1, -2) @ Q",
        "grad_missing_scale",
    ),
    Variant(
        "grad_softmax_no_rowsum",
        STEP,
        STEP,
        "dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))",
        "dS = A * dA",
        "grad_softmax_no_rowsum",
    ),
    Variant(
        "grad_dk_not_transposed",
        STEP,
        STEP,
        "dK = np.swapaxes(dS, -1, -2) @ Q",
        "dK = dS @ Q",
        "grad_dk_not_transposed",
    ),
    Variant("grad_dq_dk_swapped", STEP, STEP, "return dQ, dK, dV", "return dK, dQ, dV", "grad_dq_dk_swapped"),
    Variant(
        "central_forward_difference",
        STEP,
        STEP,
        LOOP,
        LOOP.replace("saved - h", "saved").replace("/ (2 * h)", "/ h"),
        "central_forward_difference",
    ),
    Variant(
        "central_no_half",
        STEP,
        STEP,
        "grad[index] = (f_plus - f_minus) / (2 * h)",
        "grad[index] = (f_plus - f_minus) / h",
        "central_no_half",
    ),
    Variant(
        "central_all_at_once",
        STEP,
        STEP,
        LOOP,
        "    grad[...] = (float(f(x + h)) - float(f(x - h))) / (2 * h)\n",
        "central_all_at_once",
    ),
    Variant(
        "central_not_restored",
        STEP,
        STEP,
        "        x[index] = saved\n        grad[index]",
        "        grad[index]",
        "central_not_restored",
    ),
    Variant(
        "softmax_backward_skipped",
        "gradients",
        "gradients",
        "    dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))  # (n_q, n_k), softmax backward row by row\n",
        "    dS = dA\n",
        "grad_softmax_skipped",
    ),
    Variant(
        "softmax_backward_column_sums",
        "gradients",
        "gradients",
        "    dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))  # (n_q, n_k), softmax backward row by row\n",
        "    dS = A * (dA - np.sum(A * dA, axis=-2, keepdims=True))\n",
        "grad_softmax_column_sum",
    ),
    Variant(
        "grad_scaled_twice",
        "gradients",
        "gradients",
        (
            "    dQ = dS @ K / np.sqrt(d_k)  # (n_q, d_k)\n"
            "    dK = np.swapaxes(dS, -1, -2) @ Q / np.sqrt(d_k)  # (n_k, d_k)\n"
        ),
        "    dQ = dS @ K / d_k\n    dK = np.swapaxes(dS, -1, -2) @ Q / d_k\n",
        "grad_scale_twice",
    ),
    Variant(
        "difference_in_place",
        "gradients",
        "gradients",
        "    x = np.array(x, dtype=float)  # a copy: the caller's array is never changed\n",
        "    x = np.asarray(x, dtype=float)\n    x += 0.0 * x + 1e-13\n",
        "central_modifies_input",
    ),
    Variant(
        "backward_difference",
        "gradients",
        "gradients",
        "        grad[index] = (f_plus - f_minus) / (2 * h)\n",
        "        grad[index] = (float(f(x)) - f_minus) / h\n",
        "central_backward_difference",
    ),
)

BACKWARD_BODY = """    A = np.asarray(attention(Q, K, V)[1])  # (n_q, n_k); a tensor from step 2 is fine too
    dV = np.swapaxes(A, -1, -2) @ dO  # (n_k, d_v)
    dA = dO @ np.swapaxes(V, -1, -2)  # (n_q, n_k)
    dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))  # (n_q, n_k), softmax backward row by row
"""
ALTERNATIVES = (
    Variant(
        "torch_autograd_float32",
        STEP,
        STEP,
        "    Q, K, V, dO = (np.asarray(a, dtype=float) for a in (Q, K, V, dO))\n",
        "    import torch\n"
        "    q, k, v = (torch.tensor(np.asarray(a), dtype=torch.float32, requires_grad=True) for a in (Q, K, V))\n"
        "    (torch.softmax(q @ k.T / q.shape[-1] ** 0.5, dim=-1) @ "
        "v).backward(torch.tensor(np.asarray(dO), dtype=torch.float32))\n"
        "    return q.grad, k.grad, v.grad\n",
        "",
    ),
    Variant(
        "softmax_jacobian",
        STEP,
        STEP,
        BACKWARD_BODY,
        BACKWARD_BODY.replace(
            "dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))",
            "dS = np.stack([(np.diag(a) - np.outer(a, a)) @ g for a, g in zip(A, dA)])",
        ),
        "",
    ),
    Variant(
        "flat_central_difference",
        STEP,
        STEP,
        LOOP,
        "    flat = x.reshape(-1)\n"
        "    for i in range(flat.size):\n"
        "        e = np.zeros_like(flat)\n"
        "        e[i] = h\n"
        "        grad.reshape(-1)[i] = (f((flat + e).reshape(x.shape)) - f((flat - e).reshape(x.shape))) / (2 * h)\n",
        "",
    ),
)


test_known_mistake_is_diagnosed, test_valid_alternative_scores_full_marks = kit.variant_tests(VARIANTS, ALTERNATIVES)


def test_every_mistake_has_a_variant() -> None:
    assert {v.mistake for v in VARIANTS} >= set(gradient_mistakes.MISTAKES)


def test_smooth_function_gradient_is_exact() -> None:
    rng = np.random.default_rng(3)
    x, w, u = rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    f, h = smooth_function(w, u), 1e-5
    numeric = np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(6).reshape(6, 2, 3)]).reshape(2, 3)
    np.testing.assert_allclose(numeric, smooth_gradient(x, w, u), atol=1e-8)


def test_head_loss_is_the_chapter_loss() -> None:
    Q, K, V, dO = (chapter.inputs(n) for n in ("RU_Q", "RU_K", "RU_V", "RU_dO"))
    assert abs(head_loss(Q, K, V, dO, "Q")(Q) - chapter.value("RU-L")) < 1e-12


def test_probes_hand_the_function_to_student_code() -> None:
    """The probes run the reference's central_difference in the child on the functions built there."""
    rng = np.random.default_rng(5)
    x, w, u = rng.normal(size=(2, 2)), rng.normal(size=(2, 2)), rng.normal(size=(2, 2))
    Q, K, V, dO = (chapter.inputs(n) for n in ("RU_Q", "RU_K", "RU_V", "RU_dO"))
    with Sandbox(kit.SOLUTIONS) as sandbox:
        grad, x_after = sandbox.probe("numerical_gradient", STEP, x, w, u, 1e-4)
        numeric = sandbox.probe("head_gradcheck", STEP, Q, K, V, dO)
    np.testing.assert_allclose(grad, smooth_gradient(x, w, u), atol=1e-7)
    np.testing.assert_array_equal(x_after, x)
    for got, entry in zip(numeric, ("RU-dQ", "RU-dK", "RU-dV")):
        np.testing.assert_allclose(got, chapter.value(entry), atol=2e-6)
