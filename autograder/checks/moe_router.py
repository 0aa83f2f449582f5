"""What step 6's public and hidden graders expect of the experts a layer calls, whatever the inputs."""

from __future__ import annotations

import numpy as np

from autograder.checking import Got, describe, expect_that
from autograder.diagnose.answers import Answers
from autograder.diagnose.moe_router import calls_variants, routing_problems
from autograder.i18n import _, ngettext


def expect_routed_rows(rows: Got, x: np.ndarray, indices: np.ndarray, n_experts: int) -> None:
    """Every expert received the tokens routed to it and no other row."""
    received = rows.value
    if not isinstance(received, list) or len(received) != n_experts:
        rows.fail(
            ngettext(
                "the rows each of the {count} expert received",
                "the rows each of the {count} experts received",
                n_experts,
            ).format(count=n_experts),
            _("{value} (the experts could not be recorded)").format(value=describe(received)),
        )
    problems = routing_problems(received, x, indices)
    counts = np.array([len(r) for r in received])
    expect_that(
        rows,
        not problems,
        _("each expert to receive only the tokens routed to it"),
        "; ".join(problems[:3]),
        value=counts,
        wrong=Answers.of_call(
            rows.source.args if rows.source is not None else (), {}, lambda a, k: calls_variants(len(x), n_experts)
        ).measured(lambda received: np.array([len(r) for r in received]) if isinstance(received, list) else None),
    )
