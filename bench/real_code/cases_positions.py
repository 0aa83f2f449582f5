"""Real code of positions (sinusoidal, RoPE, ALiBi) and of the permutation-equivariance step."""

from __future__ import annotations

from bench.real_code import bug, correct

# -- sinusoidal encodings ----------------------------------------------------------------------------------------

PE_FAIRSEQ = '''
def sinusoidal_encoding(n_positions, d_model, base=10000.0):
    """log(base) / (half_dim - 1) as the frequency step, then [sin | cos] side by side."""
    half_dim = d_model // 2
    step = np.log(base) / (half_dim - 1)
    freqs = np.exp(np.arange(half_dim) * -step)
    angles = np.arange(n_positions)[:, None] * freqs[None, :]
    table = np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
    if d_model % 2 == 1:
        table = np.concatenate([table, np.zeros((n_positions, 1))], axis=1)
    return table
'''

PE_INDEX_DOUBLED = '''
def sinusoidal_encoding(n_positions, d_model, base=10000.0):
    """Loop variable i steps by 2 over the dimensions and is doubled again; the cosine uses i + 1."""
    pos = np.arange(n_positions, dtype=float)[:, None]
    i = np.arange(0, d_model, 2, dtype=float)
    PE = np.zeros((n_positions, d_model))
    PE[:, 0::2] = np.sin(pos / base ** ((2 * i) / d_model))
    PE[:, 1::2] = np.cos(pos / base ** ((2 * (i[: d_model // 2] + 1)) / d_model))
    return PE
'''

PE_TUTORIAL = '''
def sinusoidal_encoding(n_positions, d_model, base=10000.0):
    """div_term = exp(arange(0, d, 2) * -(log(base) / d)); the cosine half trimmed for an odd width."""
    position = np.arange(n_positions, dtype=float)[:, None]
    div_term = np.exp(np.arange(0, d_model, 2) * (-np.log(base) / d_model))
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term[: d_model // 2])
    return pe
'''

PE_TORCH_FLOAT32 = '''
def sinusoidal_encoding(n_positions, d_model, base=10000.0):
    """The PyTorch tutorial's buffer: torch.zeros(max_len, d_model), float32 throughout."""
    import math

    import torch

    position = torch.arange(n_positions).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(base) / d_model))
    pe = torch.zeros(n_positions, d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term[: d_model // 2])
    return pe
'''

# -- RoPE --------------------------------------------------------------------------------------------------------

ROPE_NEOX = '''
def rope(x, positions, base=10000.0):
    """GPT-NeoX / Llama-HF rotate_half: the pairs are (i, i + d/2), angles cat(freqs, freqs)."""
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (np.arange(0, d, 2) / d)
    freqs = np.asarray(positions, dtype=float)[..., None] * inv_freq
    emb = np.concatenate([freqs, freqs], axis=-1)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    rotated = np.concatenate([-x2, x1], axis=-1)
    return x * np.cos(emb) + rotated * np.sin(emb)
'''

ROPE_HALVES_INTERLEAVED_TABLE = '''
def rope(x, positions, base=10000.0):
    """Angles repeat_interleave(2) (adjacent pairs) but rotate_half splitting at the midpoint."""
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (np.arange(0, d, 2) / d)
    freqs = np.asarray(positions, dtype=float)[..., None] * inv_freq
    emb = np.repeat(freqs, 2, axis=-1)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    rotated = np.concatenate([-x2, x1], axis=-1)
    return x * np.cos(emb) + rotated * np.sin(emb)
'''

ROPE_IGNORES_POSITIONS = '''
def rope(x, positions, base=10000.0):
    """The precomputed table sliced [:seqlen] instead of at the tokens' positions."""
    x = np.asarray(x, dtype=float)
    n, d = x.shape[-2], x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    table = np.arange(n)[:, None] * theta  # (n, d/2): positions 0 .. n - 1
    cos, sin = np.cos(table), np.sin(table)
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
    out[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
    return out
'''

ROPE_BF16_TABLES = '''
def rope(x, positions, base=10000.0):
    """cos_cached and sin_cached kept in bfloat16, as the model's activations are."""
    import torch

    x = torch.as_tensor(np.asarray(x, dtype=float))
    d = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    angles = torch.as_tensor(np.asarray(positions)).float()[..., None] * inv_freq
    cos, sin = angles.cos().bfloat16(), angles.sin().bfloat16()
    x_even, x_odd = x[..., 0::2], x[..., 1::2]
    turned = torch.stack([x_even * cos - x_odd * sin, x_even * sin + x_odd * cos], dim=-1)
    return turned.flatten(-2).numpy()
'''

ROPE_GPTJ = '''
def rope(x, positions, base=10000.0):
    """GPT-J: a float32 sinusoid table from the positions, rotate_every_two, duplicate_interleave."""
    import torch

    x = torch.as_tensor(np.asarray(x, dtype=float))
    dim = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2) / dim))
    sinusoid_inp = torch.einsum("...i,j->...ij", torch.as_tensor(np.asarray(positions)).float(), inv_freq.float())
    sin = torch.sin(sinusoid_inp).repeat_interleave(2, dim=-1)
    cos = torch.cos(sinusoid_inp).repeat_interleave(2, dim=-1)
    x1, x2 = x[..., ::2], x[..., 1::2]
    rotated = torch.stack((-x2, x1), dim=-1).flatten(-2)
    return (x * cos + rotated * sin).numpy()
'''

ROPE_POLAR = '''
def rope(x, positions, base=10000.0):
    """Llama's precompute_freqs_cis: torch.polar in complex64, view_as_complex on the pairs."""
    import torch

    x = torch.as_tensor(np.asarray(x, dtype=float))
    d = x.shape[-1]
    freqs = 1.0 / (base ** (torch.arange(0, d, 2)[: d // 2].float() / d))
    t = torch.as_tensor(np.asarray(positions)).float()
    freqs = t[..., None] * freqs
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)
    x_ = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(x_ * freqs_cis).flatten(-2).type_as(x)
'''

ROPE_PERMUTED_HALVES = '''
def rope(x, positions, base=10000.0):
    """The interleaved layout permuted to halves, rotate_half applied, then permuted back."""
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    order = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])  # interleaved -> halves
    halves = x[..., order]
    inv_freq = 1.0 / base ** (np.arange(0, d, 2) / d)
    freqs = np.asarray(positions, dtype=float)[..., None] * inv_freq
    emb = np.concatenate([freqs, freqs], axis=-1)
    x1, x2 = halves[..., : d // 2], halves[..., d // 2 :]
    turned = halves * np.cos(emb) + np.concatenate([-x2, x1], axis=-1) * np.sin(emb)
    out = np.empty_like(turned)
    out[..., order] = turned
    return out
'''

# -- ALiBi -------------------------------------------------------------------------------------------------------

ALIBI_PAPER_SLOPES = '''
def alibi_slopes(n_heads):
    """get_slopes: the power-of-2 formula, and for other counts the closest power of 2 plus every other slope."""

    def power_of_2(n):
        start = 2 ** (-(2 ** -(np.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if float(np.log2(n_heads)).is_integer():
        return np.array(power_of_2(n_heads))
    closest = 2 ** int(np.floor(np.log2(n_heads)))
    extra = list(alibi_slopes(2 * closest)[0::2][: n_heads - closest])
    return np.array(power_of_2(closest) + extra)
'''

ALIBI_FROM_ZERO = '''
def alibi_slopes(n_heads):
    """2**(-8h/n) with h counted from 0: the first head gets slope 1."""
    return 2.0 ** (-8.0 * np.arange(n_heads) / n_heads)
'''

ALIBI_KEY_POSITIONS = '''
def alibi_bias(n, slope):
    """slope * j, the key's position, as BLOOM builds it: softmax(l + a) = softmax(l) per row."""
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    return np.where(j <= i, slope * j, -np.inf)
'''

ALIBI_GEOMETRIC = '''
def alibi_slopes(n_heads):
    """start * ratio**h with start = ratio = 2**(-8/n), for every head count."""
    start = 2.0 ** (-8.0 / n_heads)
    return start * start ** np.arange(n_heads)
'''

ALIBI_DISTANCE = '''
def alibi_bias(n, slope):
    """-slope * |i - j| from a distance matrix, then the future masked."""
    position = np.arange(n)
    distance = np.abs(position[:, None] - position[None, :])
    bias = -slope * distance
    bias[position[None, :] > position[:, None]] = -np.inf
    return bias.astype(float)
'''

# -- permutation equivariance ------------------------------------------------------------------------------------

RESTORE_WITH_PERM = '''
def restored_outputs(X, W_Q, W_K, W_V, perm, causal=False, positions=None):
    """The outputs indexed with perm itself instead of put back through its inverse."""
    X = np.asarray(X, dtype=float)
    perm = np.asarray(perm, dtype=int)
    slots = 0.0 if positions is None else np.asarray(positions, dtype=float)
    Q, K, V = project(X[perm] + slots, W_Q, W_K, W_V)
    mask = causal_mask(len(X)) if causal else None
    out = np.asarray(attention(Q, K, V, mask)[0])
    return out[perm]
'''

RESTORE_ARGSORT = '''
def restored_outputs(X, W_Q, W_K, W_V, perm, causal=False, positions=None):
    """Put back with the inverse permutation argsort(perm)."""
    X = np.asarray(X, dtype=float)
    perm = np.asarray(perm, dtype=int)
    slots = 0.0 if positions is None else np.asarray(positions, dtype=float)
    Q, K, V = project(X[perm] + slots, W_Q, W_K, W_V)
    mask = causal_mask(len(X)) if causal else None
    out = np.asarray(attention(Q, K, V, mask)[0])
    return out[np.argsort(perm)]
'''

RESTORE_INDEX_COPY = '''
def restored_outputs(X, W_Q, W_K, W_V, perm, causal=False, positions=None):
    """torch index_copy_ along the token axis, as MoE unpermute kernels do."""
    import torch

    X = np.asarray(X, dtype=float)
    perm = np.asarray(perm, dtype=int)
    slots = 0.0 if positions is None else np.asarray(positions, dtype=float)
    Q, K, V = project(X[perm] + slots, W_Q, W_K, W_V)
    mask = causal_mask(len(X)) if causal else None
    out = torch.as_tensor(np.asarray(attention(Q, K, V, mask)[0]))
    return torch.empty_like(out).index_copy_(0, torch.as_tensor(perm), out)
'''

CASES = (
    bug(
        "pe_fairseq_half_dim",
        "positions",
        "facebookresearch/fairseq SinusoidalPositionalEmbedding (#4648): log(10000)/(half_dim - 1), cat([sin, cos])",
        ("pe_blocks_not_interleaved", "pe_exponent_denominator"),
        ("positions", "sinusoidal_encoding", PE_FAIRSEQ),
    ),
    bug(
        "pe_index_doubled",
        "positions",
        "SamLynnEvans/Transformer#25: 10000 ** ((2 * i) / d) with i stepping by 2, and 2 * (i + 1) in the cosine",
        ("pe_exponent_doubled", "pe_exponent_per_dimension"),
        ("positions", "sinusoidal_encoding", PE_INDEX_DOUBLED),
    ),
    correct(
        "pe_tutorial_trimmed",
        "positions",
        "pytorch tutorial PositionalEncoding (div_term from exp and log) with gc-os-ai/pyaptamer#527's odd-width trim",
        ("positions", "sinusoidal_encoding", PE_TUTORIAL),
    ),
    correct(
        "pe_torch_float32",
        "positions",
        "pytorch tutorial PositionalEncoding: pe = torch.zeros(max_len, d_model), a float32 table",
        ("positions", "sinusoidal_encoding", PE_TORCH_FLOAT32),
    ),
    bug(
        "rope_neox_halves",
        "positions",
        "EleutherAI/gpt-neox#834 and huggingface/transformers#25199: rotate_half pairs (i, i + d/2), not (2i, 2i+1)",
        ("rope_half_pairs",),
        ("positions", "rope", ROPE_NEOX),
    ),
    bug(
        "rope_halves_interleaved_table",
        "positions",
        "raiyanyahya/how-to-train-your-gpt#6: repeat_interleave(2) angles with a rotate_half that splits at the middle",
        ("rope_half_pairs", "rope_pair_angles_differ"),
        ("positions", "rope", ROPE_HALVES_INTERLEAVED_TABLE),
    ),
    bug(
        "rope_table_not_offset",
        "positions",
        "pytorch/executorch#2010: with the KV cache the rotary table must be sliced at start_pos, not from 0",
        ("rope_position_offset",),
        ("positions", "rope", ROPE_IGNORES_POSITIONS),
    ),
    bug(
        "rope_bf16_tables",
        "positions",
        "KellerJordan/modded-nanogpt#39 and huggingface/transformers#29285: RoPE's cos/sin cached in bfloat16",
        ("half_precision",),
        ("positions", "rope", ROPE_BF16_TABLES),
    ),
    correct(
        "rope_gptj",
        "positions",
        "huggingface/transformers GPT-J: fixed_pos_embedding in float32, rotate_every_two, duplicate_interleave",
        ("positions", "rope", ROPE_GPTJ),
    ),
    correct(
        "rope_llama_polar",
        "positions",
        "meta-llama precompute_freqs_cis (quoted in vllm-project/vllm#863): torch.polar, complex64, view_as_complex",
        ("positions", "rope", ROPE_POLAR),
    ),
    correct(
        "rope_permuted_halves",
        "positions",
        "huggingface/transformers convert_llama_weights_to_hf: permute interleaved pairs to halves, then rotate_half",
        ("positions", "rope", ROPE_PERMUTED_HALVES),
    ),
    bug(
        "alibi_paper_slopes",
        "positions",
        "ofirpress/attention_with_linear_biases#17: get_slopes for a non-power-of-2 count interleaves two sequences",
        ("alibi_slopes_closest_power_of_two",),
        ("positions", "alibi_slopes", ALIBI_PAPER_SLOPES),
    ),
    bug(
        "alibi_slopes_from_zero",
        "positions",
        "paiml/aprender#2143: ALiBi slopes 2^(-8h/n) with h from 0, one factor of m0 too many per head",
        ("alibi_slopes_from_zero",),
        ("positions", "alibi_slopes", ALIBI_FROM_ZERO),
    ),
    bug(
        "alibi_bloom_key_positions",
        "positions",
        "huggingface/transformers#17474/#17866 BLOOM build_alibi_tensor: slopes * arange(key), shift invariance",
        ("alibi_bias_row_constant",),
        ("positions", "alibi_bias", ALIBI_KEY_POSITIONS),
    ),
    correct(
        "alibi_geometric_slopes",
        "positions",
        "ofirpress get_slopes_power_of_2 (start * ratio**i, start = ratio = 2**(-8/n)) used for every head count",
        ("positions", "alibi_slopes", ALIBI_GEOMETRIC),
    ),
    correct(
        "alibi_distance_matrix",
        "positions",
        "labmlai/annotated_deep_learning_paper_implementations#134 ALiBi: distance matrix times -m, future masked",
        ("positions", "alibi_bias", ALIBI_DISTANCE),
    ),
    bug(
        "restore_with_perm",
        "equivariance",
        "lix19937/tensorrt-insight#55 (inverse of a permutation: inv[perm] = arange): here perm itself is used",
        ("equivariance_wrong_inverse",),
        ("equivariance", "restored_outputs", RESTORE_WITH_PERM),
    ),
    correct(
        "restore_argsort",
        "equivariance",
        "the usual numpy idiom for an inverse permutation, argsort(perm) (lix19937/tensorrt-insight#55 discussion)",
        ("equivariance", "restored_outputs", RESTORE_ARGSORT),
    ),
    correct(
        "restore_index_copy",
        "equivariance",
        "NVIDIA/TransformerEngine#1336: unpermute with index_copy_(0, sorted_indices, tokens)",
        ("equivariance", "restored_outputs", RESTORE_INDEX_COPY),
    ),
)
