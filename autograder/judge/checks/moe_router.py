"""What step 6's public and hidden graders expect of the experts a layer calls, whatever the inputs.

A layer must call each expert only with the tokens routed to it. The grader cannot watch the calls (they happen
in the student's process, where anything can be changed), so it makes them show in the value: the experts the
probe ``gated_moe_layer`` hands the layer answer only the tokens the grader's router sends them and raise
``UnroutedRow`` for any other, and the layer's output must then be the reference's.
"""

from __future__ import annotations

import numpy as np

from autograder.i18n import _
from autograder.judge.checking import Got, Lab, expect_close
from autograder.judge.diagnose.moe_router import routed_tokens
from autograder.sandbox import outcome as outcomes

UNROUTED = "UnroutedRow"  # the exception class of autograder.sandbox.probes.moe_router


def expect_routed_calls(
    lab: Lab,
    x: np.ndarray,
    W_r: np.ndarray,
    A: np.ndarray,
    b: np.ndarray,
    k: int,
    indices: np.ndarray,
    expected: np.ndarray,
    text: str,
) -> None:
    """``moe_layer`` with experts that answer only the tokens routed to them (by ``indices``, the reference's
    routing of ``x``) gives the reference's ``expected`` output."""
    tokens = np.asarray(x).reshape(-1, np.shape(x)[-1])
    routed = [r.tolist() for r in routed_tokens(np.asarray(indices).reshape(len(tokens), -1), len(A))]
    outcome = lab.sandbox.run_probe("gated_moe_layer", lab.step.module, x, W_r, A, b, k, routed)
    got = Got(lab.step, text, None)
    if isinstance(outcome, outcomes.Raised) and outcome.raised_as(UNROUTED):
        got.fail(
            _("each expert called only with the tokens routed to it"),
            _("a call of an expert with a token the router did not send to it ({detail})").format(
                detail=outcome.message[:200]
            ),
            "every_expert_called",
        )
    if not isinstance(outcome, outcomes.Returned):
        got.no_result(outcome, "moe_layer", "moe_router.moe_layer")
    expect_close(Got(lab.step, text, outcome.value, outcome.output), expected)
