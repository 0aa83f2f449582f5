"""What the timing graders tell a student, as constants (the kit's tests import them).

Each is English marked for the catalogs; the graders translate it where it is shown.

The story is the handout's: on a CPU the naive head's slope sits above 2
because its n x n temporaries are too big for the allocator to reuse, so every
call page-faults them in again; SDPA never holds the score matrix and stays
near 2. A GPU at d = 64 is launch-bound: a call costs about the same until n
is large, so its slopes stay low over small sizes.
"""

from __future__ import annotations

from autograder.i18n import N_

RUN_COMMAND = N_(
    "the report of `attnlab timing` (run `attnlab timing <your folder>` in a terminal: it times your timing.py "
    "in the sandbox and writes reports/timing.json and three plots; then grade again)"
)
NO_REPORT = N_("no report")
NO_REPORT_YET = N_("no reports/timing.json yet: run `attnlab timing` in your lab folder")  # not started
BAD_REPORT = N_("a report that cannot be graded: {problem}")

NAIVE_HIGH = N_(
    "; on a CPU the naive head's slope sits a little above 2 (its n x n temporaries are too "
    "big for the allocator to reuse, "
    "so every call page-faults them in again), but not this far: does the timed region hold more than one forward pass "
    "(building the inputs, a Python loop), or was the machine busy? Time only the forward "
    "pass, pin one thread, and run "
    "`attnlab timing` again on a quiet machine"
)
NAIVE_LOW = N_(
    "; below 2 the n^2 work does not dominate: does the timed region hold the whole forward "
    "pass, Q K^T, the softmax and "
    "the product with V, with the full n x n score matrix, after a warm-up run?"
)
SDPA_HIGH = N_(
    "; SDPA never holds the n x n score matrix, so on a CPU its slope stays near 2; a higher one usually means a busy "
    "machine or something else in the timed region: pin one thread and run `attnlab timing` again"
)
SDPA_LOW = N_(
    "; SDPA still does n^2 work, so its slope stays near 2: does time_attention(kind='sdpa') "
    "call torch.nn.functional.scaled_dot_product_attention on all n tokens?"
)
CAUSAL_OFF = N_(
    "; the causal mask removes half of the scores' use but none of the n x n work and memory "
    "of the naive head, so its slope stays near the plain naive head's"
)
RATIO_LOW = N_(
    "; the naive head writes and reads the n x n score matrix (and page-faults it in on a "
    "CPU), SDPA never holds it, so "
    "at the largest n the naive head is several times slower; is time_attention(kind='naive') "
    "timing your naive_attention?"
)
NO_CACHE_OFF = N_(
    "; without a cache token t reruns the whole prefix: about t d^2 work for the projections "
    "and t^2 d for attention, so its latency grows about linearly or faster"
)
CACHE_OFF = N_(
    "; with a cache each token projects only itself and attends over the cached keys, so its "
    "latency hardly grows with t"
)
SPEEDUP_LOW = N_("; at token 512 a cached step does a few hundredths of the uncached one's work")
TOKENS_DIFFER = N_(
    "; the cache must change the speed, never the result: do gpt_step and gpt_forward in "
    "toy_gpt.py give the same logits "
    "(attnlab grade --step toy_gpt checks it), and does time_decoding give gpt_step each new token at its own position?"
)
MEMORY_LOW = N_(
    "; the naive head must hold the whole n x n float32 score matrix, 4 n^2 bytes; less means "
    "the peak was not measured during the pass, or not in bytes"
)
MEMORY_SDPA = N_(
    "; SDPA computes attention in tiles and never holds the n x n matrix, so its peak stays far below the naive head's"
)
NOT_MEASURED_HERE = N_(
    "the grading machine cannot measure on {device} (its sandbox has no usable CUDA device), "
    "so the report's times could not be re-measured and compared"
)
NOTHING_TO_REVIEW = N_("nothing that needs a person's review (this check is worth 0 points; it only informs)")

# -- the grader's own measurement (autograder.judge.timing.verified) -------------------------------------------------
NOT_EVIDENCE_EXPECTED = N_(
    "a report backed by timing functions that measure (the grader checks yours on its own device)"
)
NOT_EVIDENCE = N_(
    "timing functions that did not measure the grader's kernels ({functions}), so the report's numbers count for "
    "nothing: see the check of your timing functions"
)
REVIEW_EXPECTED = N_("times the grader can re-measure on its own device")
DEVICE_REVIEW = N_(
    "a report made on {device}, which this grader lacks: these points wait for an instructor or a grader with "
    "that device (0 until then); your kernels, analysis functions and the report's consistency are graded here"
)
CUDA_UNCALIBRATED_REVIEW = N_(
    "a report made on {device}: the CUDA windows are not calibrated yet, so these points wait for an "
    "instructor's review (0 until then)"
)
REPORT_DISAGREES = N_(
    "; the grader timed the same kernel itself just now, so a report from your own timing functions lands near "
    "its measurement: run `attnlab timing` again and hand in its report"
)
NOT_MEASURING = {
    "not_numbers": N_("a positive number of seconds (time_attention), a list of one per token (time_decoding)"),
    "not_running": N_(
        "a call that runs the kernel it times, a warm-up and then one call per repeat (or per token): the "
        "grader's clock, outside your code, saw it spend less than {share} of that work"
    ),
    "disagrees": N_(
        "the time the grader measured for the same kernel at the same size: at least 1/{below} of it and at most "
        "{factor} times it (more only when the machine was busy and your timer reads the wall clock)"
    ),
    "ignores_n": N_("times that follow n as the grader's measurement of the same kernel does"),
}
WRONG_LOGITS = N_(
    "; the grader decodes with its own weights and tokens and compares every timed token's logits with the "
    "reference's: gpt_step (with the cache) and gpt_forward must both compute the model"
)
HARNESS_UNCALIBRATED = N_(
    "the grader's windows for its own measurement on {device} are not calibrated yet, so these numbers wait for "
    "an instructor's review (0 until then)"
)
WRONG_RESULT = N_(
    "; the grader compares every timed call with the reference on the same inputs: a kernel must compute "
    "attention, not return a stored or made-up answer"
)
