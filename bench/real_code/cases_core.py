"""Real code of the first three steps: softmax, scaled dot-product attention, the causal mask."""

from __future__ import annotations

from bench.real_code import bug, correct

# -- softmax ------------------------------------------------------------------------------------------------------

SOFTMAX_DIM0 = '''
def softmax(x, axis=-1):
    """nn.Softmax(dim=0): the first axis, whatever the caller asked for."""
    x = np.asarray(x, dtype=float)
    e = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e / np.sum(e, axis=0, keepdims=True)
'''

SOFTMAX_RAW_EXP = '''
def softmax(x, axis=-1):
    """exp of the raw input divided by its sum: no shift by the maximum."""
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x)
        return e / np.sum(e, axis=axis, keepdims=True)
'''

SOFTMAX_NO_KEEPDIMS = '''
def softmax(x, axis=-1):
    """The max and the sum reduce without keeping their axis, then broadcast against x."""
    x = np.asarray(x, dtype=float)
    e = np.exp(x - np.max(x, axis=axis))
    return e / np.sum(e, axis=axis)
'''

SOFTMAX_SCIPY = '''
def softmax(x, axis=-1):
    """SciPy's softmax."""
    from scipy.special import softmax as scipy_softmax

    return scipy_softmax(np.asarray(x, dtype=float), axis=axis)
'''

SOFTMAX_LOGSUMEXP = '''
def softmax(x, axis=-1):
    """exp(x - logsumexp(x)): the log-domain form."""
    from scipy.special import logsumexp

    x = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.exp(x - logsumexp(x, axis=axis, keepdims=True))
'''

SOFTMAX_TORCH_FLOAT32 = '''
def softmax(x, axis=-1):
    """torch.softmax upcast to float32, returned as a float32 tensor."""
    import torch

    return torch.softmax(torch.as_tensor(np.asarray(x, dtype=float)), dim=axis, dtype=torch.float32)
'''

# -- scaled dot-product attention --------------------------------------------------------------------------------

ATTENTION_UNSCALED = '''
def attention(Q, K, V, mask=None):
    """The fallback path: scale factor left at its default of 1."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    _check_shapes(Q, K, V)
    sm_scale = 1.0
    S = scores(Q, K) * sm_scale
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)
    weights = np.asarray(softmax(S, axis=-1))
    return weights @ V, weights
'''

ATTENTION_SOFTMAX_DIM_MINUS2 = '''
def attention(Q, K, V, mask=None):
    """einsum puts the keys on the last axis, but the softmax runs over the one before it."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    _check_shapes(Q, K, V)
    S = np.einsum("...id,...jd->...ij", Q, K) / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)
    weights = np.asarray(softmax(S, axis=-2))
    return np.einsum("...ij,...jd->...id", weights, V), weights
'''

ATTENTION_SOFTMAX_DIM2 = '''
def attention(Q, K, V, mask=None):
    """Written for (batch, n_q, n_k) scores: softmax over axis 2, which is the query axis of 4-d scores."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    _check_shapes(Q, K, V)
    S = scaled_scores(Q, K)
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)
    weights = np.asarray(softmax(S, axis=2 if S.ndim > 2 else -1))
    return weights @ V, weights
'''

ATTENTION_GPTJ = '''
def attention(Q, K, V, mask=None):
    """GPT-J's _attn: float32 scores, masked with the dtype's minimum, divided by sqrt(d_k) after masking."""
    import torch

    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    _check_shapes(Q, K, V)
    query, key, value = (torch.as_tensor(a).to(torch.float32) for a in (Q, K, V))
    attn_weights = torch.matmul(query, key.transpose(-1, -2))
    if mask is not None:
        mask_value = torch.tensor(torch.finfo(attn_weights.dtype).min, dtype=attn_weights.dtype)
        attn_weights = torch.where(torch.as_tensor(np.asarray(mask, dtype=bool)), attn_weights, mask_value)
    attn_weights = attn_weights / torch.sqrt(torch.tensor(float(Q.shape[-1])))
    attn_weights = torch.nn.functional.softmax(attn_weights, dim=-1)
    return torch.matmul(attn_weights, value), attn_weights
'''

ATTENTION_ANNOTATED = '''
def attention(Q, K, V, mask=None):
    """The annotated transformer's attention(): no input checks, masked scores filled with -1e9."""
    import math

    import torch

    query, key, value = (torch.as_tensor(np.asarray(a, dtype=float)) for a in (Q, K, V))
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(torch.as_tensor(np.asarray(mask)) == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    return torch.matmul(p_attn, value), p_attn
'''

ATTENTION_EINSUM = '''
def attention(Q, K, V, mask=None):
    """einsum for both products, scipy's softmax."""
    from scipy.special import softmax as scipy_softmax

    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    _check_shapes(Q, K, V)
    S = np.einsum("...qd,...kd->...qk", Q, K) * Q.shape[-1] ** -0.5
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)
    weights = scipy_softmax(S, axis=-1)
    return np.einsum("...qk,...kv->...qv", weights, V), weights
'''


# -- the causal mask ---------------------------------------------------------------------------------------------

ATTENTION_FILL_TINY = '''
def attention(Q, K, V, mask=None):
    """masked_fill(mask == 0, -e) with e = 1e-12: the masked scores become (almost) 0."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    _check_shapes(Q, K, V)
    e = 1e-12
    S = scaled_scores(Q, K)
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), S, -e)
    weights = np.asarray(softmax(S, axis=-1))
    return weights @ V, weights
'''

APPLY_MASK_MULTIPLY = '''
def apply_mask(scores, mask):
    """The mask multiplies the scores: masked entries become 0, which the softmax still weighs."""
    return np.asarray(scores, dtype=float) * np.asarray(mask, dtype=bool)
'''

ATTENTION_MASK_INVERTED = '''
def attention(Q, K, V, mask=None):
    """masked_fill(mask, -inf) with a mask whose True means 'valid': the allowed keys are the ones removed."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    _check_shapes(Q, K, V)
    S = scaled_scores(Q, K)
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), -np.inf, S)
    with np.errstate(invalid="ignore"):
        weights = np.asarray(softmax(S, axis=-1))
    return weights @ V, weights
'''

CAUSAL_TRIU_OFFSET0 = '''
def causal_mask(n_q, n_k=None):
    """Blocked entries from triu with offset 0: the diagonal is blocked too."""
    n_k = n_q if n_k is None else n_k
    if n_q < 0 or n_k < n_q:
        raise ValueError(f"causal_mask needs 0 <= n_q <= n_k, got n_q={n_q}, n_k={n_k}")
    blocked = np.triu(np.ones((n_q, n_k), dtype=bool), k=n_k - n_q)
    return ~blocked
'''

CAUSAL_UPPER_LEFT = '''
def causal_mask(n_q, n_k=None):
    """Aligned to the upper left corner, as SDPA's is_causal is: query i sees keys 0..i whatever n_k is."""
    n_k = n_q if n_k is None else n_k
    if n_q < 0 or n_k < n_q:
        raise ValueError(f"causal_mask needs 0 <= n_q <= n_k, got n_q={n_q}, n_k={n_k}")
    return np.tril(np.ones((n_q, n_k), dtype=bool))
'''

ATTENTION_MASK_AFTER = '''
def attention(Q, K, V, mask=None):
    """The weights times the triangular mask, without renormalising the rows."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    _check_shapes(Q, K, V)
    weights = np.asarray(softmax(scaled_scores(Q, K), axis=-1))
    if mask is not None:
        weights = weights * np.asarray(mask, dtype=float)
    return weights @ V, weights
'''

CAUSAL_ALL_ONES = '''
def causal_mask(n_q, n_k=None):
    """A mask initialised with ones everywhere and never filled in."""
    n_k = n_q if n_k is None else n_k
    return np.ones((n_q, n_k), dtype=bool)
'''

CAUSAL_SLICED = '''
def causal_mask(n_q, n_k=None):
    """GPT-2's buffer sliced to the last n_q rows: bias[k - q : k, :k]; no check of the sizes."""
    n_k = n_q if n_k is None else n_k
    bias = np.tril(np.ones((n_k, n_k), dtype=bool))
    return bias[n_k - n_q : n_k, :n_k]
'''

APPLY_MASK_FINFO = '''
def apply_mask(scores, mask):
    """masked_fill with the dtype's most negative number instead of -inf."""
    scores = np.asarray(scores, dtype=float)
    return np.where(np.asarray(mask, dtype=bool), scores, np.finfo(scores.dtype).min)
'''

CASES = (
    bug(
        "softmax_dim0",
        "softmax",
        "PetrochukM/PyTorch-NLP#2: the Attention layer's nn.Softmax(dim=0) normalised over the batch*query axis",
        ("softmax_wrong_axis",),
        ("softmax", "softmax", SOFTMAX_DIM0),
    ),
    bug(
        "softmax_raw_exp",
        "softmax",
        "dwavesystems/dwave-optimization#555 and deeplearning4j-examples#730: exp of the raw input, NaN above ~710",
        ("softmax_no_max_shift",),
        ("softmax", "softmax", SOFTMAX_RAW_EXP),
    ),
    bug(
        "softmax_no_keepdims",
        "softmax",
        "triton-lang/triton#11409 (and DeNA/HandyRL#209): max and sum without keep_dims broadcast along the wrong axis",
        ("softmax_sum_not_kept",),
        ("softmax", "softmax", SOFTMAX_NO_KEEPDIMS),
    ),
    correct(
        "softmax_scipy",
        "softmax",
        "scipy.special.softmax, which dwave-optimization#555 names as the stable reference",
        ("softmax", "softmax", SOFTMAX_SCIPY),
    ),
    correct(
        "softmax_logsumexp",
        "softmax",
        "tensorflow/tensorflow#10142: softmax through reduce_logsumexp, exp(x - logsumexp(x))",
        ("softmax", "softmax", SOFTMAX_LOGSUMEXP),
    ),
    correct(
        "softmax_torch_float32",
        "softmax",
        "huggingface/transformers models: softmax(attn_weights, dim=-1, dtype=torch.float32), a float32 tensor back",
        ("softmax", "softmax", SOFTMAX_TORCH_FLOAT32),
    ),
    bug(
        "attention_unscaled_fallback",
        "scaling",
        "mlc-ai/mlc-llm#3426: the attention fallback path called the kernel with sm_scale=1.0, no 1/sqrt(d)",
        ("missing_scale",),
        ("scaling", "attention", ATTENTION_UNSCALED),
    ),
    bug(
        "attention_softmax_dim1",
        "scaling",
        "labmlai/annotated_deep_learning_paper_implementations#146: attn.softmax(dim=1) where the keys are on dim 2",
        ("softmax_query_axis",),
        ("scaling", "attention", ATTENTION_SOFTMAX_DIM_MINUS2),
    ),
    bug(
        "attention_softmax_dim2",
        "scaling",
        "FudanNLP/fastNLP#254: DotAttention's softmax(dim=2) is right for 3-d scores, wrong for 4-d ones",
        ("softmax_query_axis",),
        ("scaling", "attention", ATTENTION_SOFTMAX_DIM2),
    ),
    correct(
        "attention_gptj",
        "scaling",
        "huggingface/transformers GPT-J _attn: float32 math, torch.finfo(dtype).min as mask value, scale after masking",
        ("scaling", "attention", ATTENTION_GPTJ),
    ),
    correct(
        "attention_annotated",
        "scaling",
        "harvardnlp/annotated-transformer attention(): masked_fill(mask == 0, -1e9), (output, p_attn), no checks",
        ("scaling", "attention", ATTENTION_ANNOTATED),
        rule="scaling/test_bad_shapes_raise",
    ),
    correct(
        "attention_einsum",
        "scaling",
        "lucidrains-style einsum('b h i d, b h j d -> b h i j') attention, written with numpy and scipy",
        ("scaling", "attention", ATTENTION_EINSUM),
    ),
    bug(
        "mask_fill_minus_epsilon",
        "mask",
        "hyunwoongko/transformer#10: score.masked_fill(mask == 0, -e) with e = 1e-12 instead of -inf",
        ("mask_fill_zero",),
        ("scaling", "attention", ATTENTION_FILL_TINY),
    ),
    bug(
        "apply_mask_multiply",
        "mask",
        "georg-wolflein/good-features#1: the attention scores multiplied by the binary mask, so masked ones are 0",
        ("mask_fill_zero",),
        ("mask", "apply_mask", APPLY_MASK_MULTIPLY),
    ),
    bug(
        "mask_inverted_valid",
        "mask",
        "lucidrains/halonet-pytorch#6: masked_fill_(mask, -inf) with True marking valid pixels; fixed with ~mask",
        ("mask_inverted",),
        ("scaling", "attention", ATTENTION_MASK_INVERTED),
    ),
    bug(
        "causal_triu_offset0",
        "mask",
        "pbloem/former#10: the blog's triu_indices(t, t, offset=0) also blocks the diagonal (rows of NaN)",
        ("mask_off_by_one",),
        ("mask", "causal_mask", CAUSAL_TRIU_OFFSET0),
    ),
    bug(
        "causal_upper_left",
        "mask",
        "pytorch/pytorch#108108: SDPA's is_causal aligns the mask to the upper left when n_q < n_k",
        ("mask_ignores_offset",),
        ("mask", "causal_mask", CAUSAL_UPPER_LEFT),
    ),
    bug(
        "mask_weights_times_tril",
        "mask",
        "rasbt/LLMs-from-scratch#279 (section 3.5): attn_weights * tril mask, here without the renormalising step",
        ("mask_after_softmax",),
        ("scaling", "attention", ATTENTION_MASK_AFTER),
    ),
    bug(
        "causal_all_ones",
        "mask",
        "yg211/bert_nli#3: the attention masks were initialised with every value 1 and never set",
        ("mask_allows_everything",),
        ("mask", "causal_mask", CAUSAL_ALL_ONES),
    ),
    correct(
        "causal_gpt2_slice",
        "mask",
        "huggingface/transformers GPT-2: causal_mask = bias[:, :, key_length - query_length : key_length, :key_length]",
        ("mask", "causal_mask", CAUSAL_SLICED),
    ),
    correct(
        "apply_mask_finfo_min",
        "mask",
        "huggingface/transformers#17121 discussion: mask with torch.finfo(dtype).min rather than -inf or -10000",
        ("mask", "apply_mask", APPLY_MASK_FINFO),
    ),
)
