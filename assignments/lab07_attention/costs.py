"""Step 11, the chapter's arithmetic: parameters, memory and FLOPs (handout section `costs`).

The chapter's rules of thumb, as functions. A block of width ``d`` holds
``4 d^2`` attention weights (W_Q, W_K, W_V, W_O) and ``8 d^2`` FFN weights
(d_ff = 4d), so ``12 d^2`` in all; biases and norms add only ``O(d)``. One
forward pass through a block over ``n`` tokens costs ``24 n d^2`` FLOPs in the
projections and the FFN and ``4 n^2 d`` in ``Q K^T`` and ``A V``. Units: a
multiply-add is 2 FLOPs; GB = 1e9 bytes, GiB = 2**30 bytes; fp16 = 2 bytes.
"""

from __future__ import annotations

# GPT-2 small (the chapter's section 7.3.10)
GPT2_VOCAB, GPT2_CONTEXT, GPT2_D_MODEL, GPT2_LAYERS = 50_257, 1_024, 768, 12
GB, GIB = 10**9, 2**30


def attention_params(d_model: int, d_kv: int | None = None) -> int:
    """Weights of one attention sublayer, biases excluded.

    Args:
        d_model: model width ``d``.
        d_kv: width of the keys and values (``n_kv_heads * d_head``); defaults to
            ``d_model`` (every head has its own keys and values). Grouped-query
            attention shares keys and values between heads, so ``d_kv < d_model``.

    Returns:
        ``2 d^2 + 2 d d_kv``: W_Q and W_O are ``d x d``, W_K and W_V ``d x d_kv``;
        ``4 d^2`` by default.
    """
    raise NotImplementedError(
        "Lab 7 step 'costs', task attention_params: not implemented yet (handout: handouts/lab07_attention.md#costs)"
    )


def ffn_params(d_model: int, d_ff: int | None = None, gated: bool = False) -> int:
    """Weights of one feed-forward sublayer, biases excluded.

    Args:
        d_model: model width ``d``.
        d_ff: hidden width; defaults to ``4 d``.
        gated: a gated FFN (SwiGLU, as in Llama) has three ``d x d_ff`` matrices
            (gate, up, down) instead of two.

    Returns:
        ``2 d d_ff`` (``8 d^2`` by default), or ``3 d d_ff`` when gated.
    """
    raise NotImplementedError(
        "Lab 7 step 'costs', task ffn_params: not implemented yet (handout: handouts/lab07_attention.md#costs)"
    )


def gated_ffn_width(d_model: int, multiple: int = 256) -> int:
    """The hidden width Llama gives its gated FFN: ``8/3 d`` rounded up to a multiple.

    Three matrices of ``d x 8/3 d`` hold as many weights as two of ``d x 4d``.

    Args:
        d_model: model width ``d``.
        multiple: round up to a multiple of this.

    Returns:
        The width, e.g. 11008 for ``d = 4096``.
    """
    raise NotImplementedError(
        "Lab 7 step 'costs', task gated_ffn_width: not implemented yet (handout: handouts/lab07_attention.md#costs)"
    )


def block_params(d_model: int, d_ff: int | None = None) -> int:
    """Weights of one transformer block (attention plus FFN), biases and norms excluded.

    Args:
        d_model: model width ``d``.
        d_ff: the FFN's hidden width; defaults to ``4 d``.

    Returns:
        ``4 d^2 + 2 d d_ff``: ``12 d^2`` with the default width.
    """
    raise NotImplementedError(
        "Lab 7 step 'costs', task block_params: not implemented yet (handout: handouts/lab07_attention.md#costs)"
    )


def qk_params(d_model: int, d_k: int, n_heads: int = 1, factored: bool = True) -> int:
    """Weights that decide the attention scores of ``n_heads`` heads.

    A head's scores are ``x W_Q (y W_K)^T = x M y^T`` with ``M = W_Q W_K^T``.

    Args:
        d_model: model width ``d``.
        d_k: query/key width of one head.
        n_heads: number of heads.
        factored: count each head's ``W_Q`` and ``W_K`` (``2 d d_k``); if False,
            count one full ``d x d`` matrix ``M`` per head instead.

    Returns:
        ``n_heads * 2 d d_k`` (factored) or ``n_heads * d^2``.
    """
    raise NotImplementedError(
        "Lab 7 step 'costs', task qk_params: not implemented yet (handout: handouts/lab07_attention.md#costs)"
    )


def gpt2_small_parts(exact: bool = False) -> dict[str, int]:
    """GPT-2 small's parameters by part (vocabulary 50257, context 1024, d 768, 12 blocks).

    The output layer is tied to the token embeddings, so it adds nothing.

    Args:
        exact: also count the ``O(d)`` terms the rule of thumb drops.

    Returns:
        A dict with ``"token_embeddings"``, ``"position_embeddings"`` and
        ``"blocks"`` (12 blocks of ``12 d^2``); with ``exact`` also
        ``"attention_biases"`` (``3d + d`` per block), ``"ffn_biases"``
        (``4d + d`` per block) and ``"layer_norms"`` (gamma and beta of two
        norms per block, plus the final norm).
    """
    raise NotImplementedError(
        "Lab 7 step 'costs', task gpt2_small_parts: not implemented yet (handout: handouts/lab07_attention.md#costs)"
    )


def gpt2_small_params(exact: bool = False) -> int:
    """GPT-2 small's parameter count.

    Args:
        exact: include biases and norms (124,439,808); otherwise the rule of
            thumb, embeddings plus ``12 d^2`` per block (124,318,464).

    Returns:
        The count.
    """
    raise NotImplementedError(
        "Lab 7 step 'costs', task gpt2_small_params: not implemented yet (handout: handouts/lab07_attention.md#costs)"
    )


def score_entries(n: int, n_heads: int = 1) -> int:
    """Entries of the score tensor ``Q K^T`` of ``n`` tokens: one ``n x n`` matrix per head.

    Args:
        n: sequence length.
        n_heads: number of heads.

    Returns:
        ``n_heads * n^2``.
    """
    raise NotImplementedError(
        "Lab 7 step 'costs', task score_entries: not implemented yet (handout: handouts/lab07_attention.md#costs)"
    )


def score_matrix_bytes(n: int, bytes_per_value: int = 2) -> int:
    """Bytes of one head's ``n x n`` score matrix.

    Args:
        n: sequence length.
        bytes_per_value: 2 for fp16/bf16, 4 for fp32.

    Returns:
        ``n^2 * bytes_per_value``.
    """
    raise NotImplementedError(
        "Lab 7 step 'costs', task score_matrix_bytes: not implemented yet (handout: handouts/lab07_attention.md#costs)"
    )


def score_matrix_gib(n: int, bytes_per_value: int = 2) -> float:
    """One head's score matrix in GiB (``2**30`` bytes), the unit of the chapter's table.

    Args:
        n: sequence length.
        bytes_per_value: 2 for fp16/bf16, 4 for fp32.

    Returns:
        The size in GiB, e.g. 2.0 for ``n = 32768`` in fp16.
    """
    raise NotImplementedError(
        "Lab 7 step 'costs', task score_matrix_gib: not implemented yet (handout: handouts/lab07_attention.md#costs)"
    )


def weight_memory_gb(n_params: float, bytes_per_value: float = 2) -> float:
    """Memory of ``n_params`` weights in GB (``1e9`` bytes), the unit GPU makers use.

    Args:
        n_params: number of weights.
        bytes_per_value: 2 for fp16/bf16, 1 for int8, 0.5 for 4-bit.

    Returns:
        The size in GB, e.g. 14.0 for 7e9 weights in fp16.
    """
    raise NotImplementedError(
        "Lab 7 step 'costs', task weight_memory_gb: not implemented yet (handout: handouts/lab07_attention.md#costs)"
    )


def block_flops(n: int, d_model: int) -> tuple[int, int]:
    """FLOPs of one block's forward pass over ``n`` tokens (a multiply-add is 2 FLOPs).

    Args:
        n: sequence length.
        d_model: model width ``d`` (FFN width ``4 d``).

    Returns:
        ``(linear, quadratic)``: ``24 n d^2`` for the projections and the FFN
        (every weight does one multiply-add per token), and ``4 n^2 d`` for
        ``Q K^T`` and ``A V`` (``n^2 d`` multiply-adds each, over all heads).
    """
    raise NotImplementedError(
        "Lab 7 step 'costs', task block_flops: not implemented yet (handout: handouts/lab07_attention.md#costs)"
    )


def attention_flop_share(n: int, d_model: int) -> float:
    """The share of a block's FLOPs spent in ``Q K^T`` and ``A V``.

    Args:
        n: sequence length.
        d_model: model width ``d``.

    Returns:
        ``4 n^2 d / (24 n d^2 + 4 n^2 d) = n / (n + 6 d)``, a fraction in [0, 1].
    """
    raise NotImplementedError(
        "Lab 7 step 'costs', task attention_flop_share: not implemented yet "
        "(handout: handouts/lab07_attention.md#costs)"
    )


def crossover_length(d_model: int) -> int:
    """The sequence length at which ``Q K^T`` and ``A V`` cost as much as the rest of the block.

    Args:
        d_model: model width ``d``.

    Returns:
        ``n`` with ``24 n d^2 = 4 n^2 d``, that is ``6 d``.
    """
    raise NotImplementedError(
        "Lab 7 step 'costs', task crossover_length: not implemented yet (handout: handouts/lab07_attention.md#costs)"
    )
