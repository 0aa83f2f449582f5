"""What step 3's public and hidden graders expect of ``prefix_change``, whatever the tokens."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from autograder.i18n import N_
from autograder.judge.checking import Got, Lab, expect_rounding

OLD_POSITIONS = N_("a change of the outputs at the old positions")
MASKED_CALL = "prefix_change(X, W_Q, W_K, W_V, x_next)"
UNMASKED_CALL = "prefix_change(..., causal=False)"


def expect_prefix_unchanged(
    lab: Lab,
    X: np.ndarray,  # [n, d_model]
    W_Q: np.ndarray,  # [d_model, d_k]
    W_K: np.ndarray,  # [d_model, d_k]
    W_V: np.ndarray,  # [d_model, d_v]
    x_next: np.ndarray,  # [d_model]
    *,
    text: Callable[[str], str],
) -> Got:
    """With the causal mask, appending ``x_next`` leaves the old positions' outputs as they were (rounding noise
    on outputs of size ``|X W_V|``); returns the call without the mask, which the caller judges.

    ``text`` words a call (``MASKED_CALL`` or ``UNMASKED_CALL``) with the inputs of this check.
    """
    got = lab.call("prefix_change", X, W_Q, W_K, W_V, x_next, text=text(MASKED_CALL))
    expect_rounding(got, got.number(), OLD_POSITIONS, scale=float(np.abs(X @ W_V).max()))
    return lab.call("prefix_change", X, W_Q, W_K, W_V, x_next, causal=False, text=text(UNMASKED_CALL))
