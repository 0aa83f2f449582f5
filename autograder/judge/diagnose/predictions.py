"""Typical wrong predictions of the predict-first questions.

The wrong answers themselves are data: each question of
``data/predictions.toml`` lists its typical wrong values under
``[[question.wrong]]`` with the ``mistake`` id they reveal, and every id used
there is defined here (a kit test checks both directions). An instructor who
adds a question with a new typical mistake adds its sentence here.
"""

from __future__ import annotations

from autograder.judge.diagnose import Mistake

MISTAKES = {
    m.id: m
    for m in (
        Mistake(
            "predicted_own_position",
            "each query was taken to favour its own position; the weights follow the scores q_i . k_j, "
            "and here each query's largest score is with the other key",
        ),
        Mistake(
            "predicted_width_of_keys",
            "the output takes its width from V (d_v), not from Q and K (d_k): each output row is a "
            "weighted sum of value rows",
        ),
        Mistake(
            "predicted_weights_shape",
            "that is the shape of the weights (n_q, n_k); the output has one row of width d_v per query",
        ),
        Mistake(
            "predicted_batch_dropped",
            "leading axes are batch axes and stay in the output: one (n_q, d_v) result per batch entry",
        ),
        Mistake("predicted_hard_max", "the softmax is not a hard maximum: equal scores get equal weights"),
        Mistake(
            "predicted_unnormalised",
            "the weights of a row are normalised to sum to 1, so equal scores share the weight",
        ),
        Mistake(
            "predicted_score_as_weight",
            "the weight is the softmax of the scores, not the score itself: a row with a single key "
            "gives it weight 1 whatever q . k is",
        ),
        Mistake(
            "predicted_permutation_invariant",
            "attention is permutation-equivariant, not invariant: each output row follows its token, "
            "so swapping tokens swaps the output rows",
        ),
        Mistake(
            "predicted_order_sensitive",
            "without positions or a mask attention cannot see token order: swapping tokens in Q, K and "
            "V together only swaps the output rows",
        ),
        Mistake(
            "predicted_wrong_triangle",
            "the first token may only attend to itself (key j <= i), so its row is [1, 0, 0, 0]; "
            "spreading its weight over every key keeps the wrong triangle (or no mask)",
        ),
        Mistake(
            "predicted_mask_inverted",
            "True in the causal mask means 'may attend' (j <= i): the first token keeps itself and is "
            "blocked from the later keys, not the other way round",
        ),
        Mistake(
            "predicted_kv_without_factor_two",
            "the factor 2 for K and V is missing: every token stores a key and a value vector per KV head and layer",
        ),
        Mistake("predicted_kv_in_gib", "that is the size in GiB (2**30 bytes); the question asks for GB (1e9 bytes)"),
        Mistake(
            "predicted_kv_query_heads",
            "only the KV heads are cached: with grouped-query attention the 64 query heads share 8 KV heads",
        ),
        Mistake("predicted_kv_four_bytes", "fp16 stores 2 bytes per value, not 4"),
    )
}
