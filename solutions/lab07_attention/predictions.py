"""Predict first, then test (handout section `predictions`).

Before you run a step's code, write down what you expect it to give: replace
each ``None`` below with your prediction, as a plain literal (a number, a
string, a list or a tuple). Fill the entries in as you reach their steps; the
full questions, with their inputs, are in the handout section "Predict first,
then check". Then test it: run your function on the question's inputs and see.
A wrong prediction that you then understand is the point of the exercise, so
do not copy your code's output into the dict.

How it is graded (each question's points are split in two halves):

- ``attnlab grade`` (on your computer) runs your own functions on each
  question's inputs, in the sandbox, and checks that your prediction agrees
  with what your code computes. That half is the only one you can earn
  locally, and your local grade shows it: the kit you have holds no expected
  answers, so it cannot tell you whether your code and your prediction are
  both right or both wrong.
- Your instructor's grader (Gradescope, nbgrader or the class batch) also
  checks that what your own code computes for the question is what the
  reference solution computes: your code and your prediction agreeing with
  each other proves nothing if both are wrong, so there the first half needs
  your code to be right too. And it compares each prediction with the
  reference's value: that is the other half. A prediction that agrees with a
  wrong function earns neither half, and the feedback names the likely
  misconception.

An entry left at ``None`` just says "no prediction yet" in both.
"""

from __future__ import annotations

from typing import Any

PREDICTIONS: dict[str, Any] = {
    # Scaled dot-product attention
    # Which key each query favours, for Q = [[0, 3], [2, -1]], K = [[3, 0], [-1, 2]] (a list of key indices, one per
    # query)
    "favoured_keys": [1, 0],  # ANSWER
    # The output shape for Q, K of shape (4, 7, 3) and V of shape (4, 7, 5) (a tuple of ints)
    "output_shape": (4, 7, 5),  # ANSWER
    # The weights q = [1, 2] gives two identical keys k_0 = k_1 = [3, -1] (a list of 2 numbers)
    "equal_keys_weights": [0.5, 0.5],  # ANSWER
    # The weight of a single token, q = [1, -1], k = [2, 0.5], v = [5, -2] (a number)
    "single_token_weight": 1.0,  # ANSWER
    # The output of that single token (a list of 2 numbers)
    "single_token_output": [5.0, -2.0],  # ANSWER
    # Causal mask
    # The first row of the causal weights of 4 tokens with equal scores (a list of 4 numbers)
    "causal_first_row": [1.0, 0.0, 0.0, 0.0],  # ANSWER
    # Permutation equivariance
    # What swapping two tokens in Q, K and V together does to the output ("swapped", "unchanged" or "different")
    "permuted_inputs": "swapped",  # ANSWER
    # KV cache
    # The KV cache of a 70B-class model: 80 layers, 8 KV heads of width 128, fp16, 8,192 tokens (a number of GB)
    "kv_cache_gb": 2.68,  # ANSWER
}
