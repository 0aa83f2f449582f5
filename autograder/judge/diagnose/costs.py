"""Wrong ways to do the chapter's arithmetic, and what they return."""

from __future__ import annotations

from autograder.judge.diagnose import Mistake, search

MISTAKES = {
    m.id: m
    for m in (
        Mistake(
            "d_ff_ignored",
            "d_ff is ignored: the FFN has 2 d d_ff weights (3 d d_ff when gated), and d_ff is 4d only "
            "when none is given",
        ),
        Mistake("gated_ffn_two_matrices", "a gated FFN (SwiGLU) has three d x d_ff matrices (gate, up, down), not two"),
        Mistake(
            "gpt2_untied_embeddings",
            "the output layer is counted again; GPT-2 ties it to the token embeddings, so it adds no weights",
        ),
        Mistake("gpt2_no_final_norm", "the final LayerNorm after the last block (gamma and beta, 2d) is missing"),
        Mistake("heads_ignored", "n_heads is ignored: every head has its own n x n score matrix"),
        Mistake("gb_not_gib", "the size is in GB (1e9 bytes); the table is in GiB (2**30 bytes)"),
        Mistake("gib_not_gb", "the size is in GiB (2**30 bytes); this answer is in GB (1e9 bytes)"),
        Mistake(
            "mac_as_one_flop",
            "a multiply-add is counted as 1 FLOP; the chapter counts 2 (a multiply and an add), for "
            "the n^2 terms as for the weights",
        ),
        Mistake(
            "projections_in_attention_share",
            "the Q, K, V and O projections are counted as attention; the share counts only Q K^T and A "
            "V, the terms that grow with n^2",
        ),
        Mistake("share_as_percent", "the share is in percent; return a fraction between 0 and 1"),
    )
}


def ffn_params_variants(ref, d_model: int, d_ff: int | None = None, gated: bool = False) -> dict[str, int]:
    """What each mistake returns for ``ffn_params(d_model, d_ff, gated)``."""
    out = {"d_ff_ignored": ref.costs.ffn_params(d_model, None, gated)}
    if gated:
        out["gated_ffn_two_matrices"] = ref.costs.ffn_params(d_model, d_ff)
    return out


def block_params_variants(ref, d_model: int, d_ff: int | None = None) -> dict[str, int]:
    """What each mistake returns for ``block_params(d_model, d_ff)``."""
    return {"d_ff_ignored": ref.costs.block_params(d_model)}


def gpt2_params_variants(ref, exact: bool = False) -> dict[str, int]:
    """What each mistake returns for ``gpt2_small_params(exact)``."""
    total, parts = ref.costs.gpt2_small_params(exact), ref.costs.gpt2_small_parts(exact)
    out = {"gpt2_untied_embeddings": total + parts["token_embeddings"]}
    # without ``exact`` no norm is counted, so leaving the final one out changes nothing: the same answer
    out["gpt2_no_final_norm"] = total - 2 * ref.costs.GPT2_D_MODEL if exact else total
    if not exact and not search.EVERY_VARIANT.get():
        del out["gpt2_no_final_norm"]  # on the check's own input it would name a right answer
    return out


def score_entries_variants(ref, n: int, n_heads: int = 1) -> dict[str, int]:
    """What each mistake returns for ``score_entries(n, n_heads)``."""
    return {"heads_ignored": ref.costs.score_entries(n)} if n_heads != 1 else {}


def score_matrix_gib_variants(ref, n: int, bytes_per_value: int = 2) -> dict[str, float]:
    """What each mistake returns for ``score_matrix_gib(n, bytes_per_value)``."""
    return {"gb_not_gib": ref.costs.score_matrix_bytes(n, bytes_per_value) / ref.costs.GB}


def weight_memory_gb_variants(ref, n_params: float, bytes_per_value: float = 2) -> dict[str, float]:
    """What each mistake returns for ``weight_memory_gb(n_params, bytes_per_value)``."""
    return {"gib_not_gb": ref.costs.weight_memory_gb(n_params, bytes_per_value) * ref.costs.GB / ref.costs.GIB}


def block_flops_variants(ref, n: int, d_model: int) -> dict[str, tuple[float, float]]:
    """What each mistake returns as ``(linear, quadratic)`` for ``block_flops(n, d_model)``."""
    linear, quadratic = ref.costs.block_flops(n, d_model)
    return {"mac_as_one_flop": (linear / 2, quadratic / 2)}


def attention_flop_share_variants(ref, n: int, d_model: int) -> dict[str, float]:
    """What each mistake returns for ``attention_flop_share(n, d_model)``."""
    linear, quadratic = ref.costs.block_flops(n, d_model)
    projections = 2 * n * ref.costs.attention_params(d_model)
    return {
        "share_as_percent": 100 * ref.costs.attention_flop_share(n, d_model),
        "projections_in_attention_share": (projections + quadratic) / (linear + quadratic),
        "mac_as_one_flop": (quadratic / 2) / (linear + quadratic / 2),  # n^2 terms in multiply-adds, the rest in FLOPs
    }


def crossover_length_variants(ref, d_model: int) -> dict[str, int]:
    """What each mistake returns for ``crossover_length(d_model)``."""
    n = ref.costs.crossover_length(d_model)
    return {"mac_as_one_flop": 2 * n, "projections_in_attention_share": 2 * n // 3}
