"""Real code collected for issue 32: bugs whose classes earlier rounds did not describe, and more correct code.

The issue's categories (KV caches, pre-norm blocks, value projections, softmax backward, masks, scale factors,
top-k routing, decoding offsets, parameter counts), each case our own minimal reproduction of a fix commit, an
issue thread or a review comment in public model code, with one line of provenance. Collected, and the held-out
third drawn (``split.py``, the second draw), before the diagnosis that follows the student's computation was built.

A bug names what a diagnosis must say, as mistake ids: a catalogue id where the catalogue has the class, and
otherwise the traced diagnosis's id ``trace.<kind>.<op>``: where the student's computation first parts from the
reference's (``kind``: ``axis``, ``param``, ``constant``, ``operand``, ``missing``, ``extra``, ``op``, ``dtype``)
at which of the reference's operations (``op``: ``add``, ``matmul``, ``cat``, ``softmax``, a lab function's
name, ...). ``|`` separates alternatives and ``*`` matches any run of characters (``trace.*`` accepts any
departure the grader located and verified).
"""

from __future__ import annotations

from bench.real_code import bug, correct

# -- KV caches ---------------------------------------------------------------------------------------------------

DECODE_VALUES_ARE_KEYS = '''
def decode_step(x_t, W_Q, W_K, W_V, cache):
    """The new token's key appended twice: as its key and as its value."""
    x_t = torch.as_tensor(x_t).unsqueeze(-2)
    q_t, k_t, v_t = x_t @ W_Q, x_t @ W_K, x_t @ W_V
    cache.append(k_t, k_t)
    K, V = cache.keys, cache.values
    scores = q_t @ K.transpose(-1, -2) / math.sqrt(q_t.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return (weights @ V).squeeze(-2)
'''

INCREMENTAL_CACHE_PER_TOKEN = '''
def incremental_attention(X, W_Q, W_K, W_V):
    """A fresh cache for every step: the past keys and values are dropped each time."""
    X = torch.as_tensor(X)
    outputs = []
    for t in range(X.shape[-2]):
        cache = KVCache()
        outputs.append(decode_step(X[..., t, :], W_Q, W_K, W_V, cache))
    return torch.stack(outputs, dim=-2)
'''

KV_BYTES_NO_BATCH = '''
def kv_cache_bytes(n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value=2, batch=1):
    """Sized for one sequence whatever the batch: the batch argument is never used."""
    per_token = 2 * n_layers * n_kv_heads * d_head * bytes_per_value
    return int(per_token * n_tokens)
'''

DECODE_UNSCALED = '''
def decode_step(x_t, W_Q, W_K, W_V, cache):
    """The cached decoding path computes its scores without the 1/sqrt(d) of the full path."""
    x_t = torch.as_tensor(x_t).unsqueeze(-2)
    q_t, k_t, v_t = x_t @ W_Q, x_t @ W_K, x_t @ W_V
    cache.append(k_t, v_t)
    weights = torch.softmax(q_t @ cache.keys.transpose(-1, -2), dim=-1)
    return (weights @ cache.values).squeeze(-2)
'''

CACHE_CHUNK_LIST = '''
class KVCache:
    """The cached keys and values kept as lists of chunks, concatenated when read (a DynamicCache-like layout)."""

    def __init__(self):
        self._key_chunks = []
        self._value_chunks = []

    def append(self, k, v):
        self._key_chunks.append(k)
        self._value_chunks.append(v)

    @property
    def keys(self):
        return torch.cat(self._key_chunks, dim=-2) if self._key_chunks else None

    @property
    def values(self):
        return torch.cat(self._value_chunks, dim=-2) if self._value_chunks else None

    def __len__(self):
        return sum(chunk.shape[-2] for chunk in self._key_chunks)
'''

# -- pre-norm blocks ---------------------------------------------------------------------------------------------

GPT_RESIDUAL_FROM_NORMED = '''
def gpt_forward(weights, tokens):
    """norm_x = norm(x); x = norm_x + attn(norm_x): the residual carries the normalised stream."""
    wte, wpe = weights["wte"], weights["wpe"]
    tokens = torch.as_tensor(tokens, device=wte.device)
    x = wte[tokens] + wpe[: len(tokens)]
    for block in weights["blocks"]:
        norm_x = layer_norm(x, block["ln1_g"], block["ln1_b"])
        x = norm_x + causal_self_attention(norm_x, block, weights["n_heads"])
        x = x + mlp(layer_norm(x, block["ln2_g"], block["ln2_b"]), block)
    return layer_norm(x, weights["lnf_g"], weights["lnf_b"]) @ wte.T
'''

BLOCK_NORM_OVERWRITES_RESIDUAL = '''
def block(X, heads, W_O, W1, b1, W2, b2):
    """x = norm(x) keeps no copy of the residual, so the FFN output is added to the normalised rows."""
    X = np.asarray(X, dtype=float)
    x = X + multi_head(X, heads, W_O)
    x = layer_norm(x)
    return x + feed_forward(x, W1, b1, W2, b2)
'''

GPT_MLP_READS_RAW = '''
def gpt_forward(weights, tokens):
    """A bad merge: the feed-forward network reads the raw residual, ln_2 is computed nowhere."""
    wte, wpe = weights["wte"], weights["wpe"]
    tokens = torch.as_tensor(tokens, device=wte.device)
    x = wte[tokens] + wpe[: len(tokens)]
    for block in weights["blocks"]:
        x = x + causal_self_attention(layer_norm(x, block["ln1_g"], block["ln1_b"]), block, weights["n_heads"])
        x = x + mlp(x, block)
    return layer_norm(x, weights["lnf_g"], weights["lnf_b"]) @ wte.T
'''

GPT_NO_FINAL_NORM = '''
def gpt_forward(weights, tokens):
    """The final LayerNorm ln_f is left out: the last residual goes straight to the tied head."""
    wte, wpe = weights["wte"], weights["wpe"]
    tokens = torch.as_tensor(tokens, device=wte.device)
    x = wte[tokens] + wpe[: len(tokens)]
    for block in weights["blocks"]:
        x = x + causal_self_attention(layer_norm(x, block["ln1_g"], block["ln1_b"]), block, weights["n_heads"])
        x = x + mlp(layer_norm(x, block["ln2_g"], block["ln2_b"]), block)
    return x @ wte.T
'''

BLOCK_RESIDUAL_COPY = '''
def block(X, heads, W_O, W1, b1, W2, b2):
    """ESPnet's order: residual = x, then x = norm(x), the sublayer, and x = residual + sublayer."""
    X = np.asarray(X, dtype=float)
    x = X + multi_head(X, heads, W_O)
    residual = x
    x = layer_norm(x)
    x = feed_forward(x, W1, b1, W2, b2)
    return residual + x
'''

# -- value projections -------------------------------------------------------------------------------------------

PROJECT_VALUE_WITH_KEY = '''
def project(X, W_Q, W_K, W_V):
    """The key projection's weights reused for the values."""
    X = np.asarray(X, dtype=float)
    return X @ np.asarray(W_Q, dtype=float), X @ np.asarray(W_K, dtype=float), X @ np.asarray(W_K, dtype=float)
'''

MULTI_HEAD_RAW_VALUES = '''
def multi_head(X, heads, W_O):
    """The value is not mapped by any linear layer: the heads mix the raw token vectors."""
    X = np.asarray(X, dtype=float)
    outputs = []
    for W_Q, W_K, _W_V in heads:
        Q, K = X @ np.asarray(W_Q, dtype=float), X @ np.asarray(W_K, dtype=float)
        outputs.append(np.asarray(attention(Q, K, X)[0]))
    return np.concatenate(outputs, axis=-1) @ np.asarray(W_O, dtype=float)
'''

GPT_VALUES_FROM_QUERY_WEIGHTS = '''
def causal_self_attention(x, block, n_heads):
    """q and v both projected with W_Q (a copy-paste of the query line)."""
    n, d = x.shape[-2], x.shape[-1]

    def heads(W):
        return (x @ W).unflatten(-1, (n_heads, d // n_heads)).transpose(-2, -3)

    q, k, v = heads(block["W_Q"]), heads(block["W_K"]), heads(block["W_Q"])
    scores = q @ k.transpose(-1, -2) / math.sqrt(d // n_heads)
    allowed = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return (weights @ v).transpose(-2, -3).flatten(-2) @ block["W_O"]
'''

PROJECT_EINSUM = '''
def project(X, W_Q, W_K, W_V):
    """einsum('...nd,dk->...nk') for each projection."""
    X = np.asarray(X, dtype=float)
    return tuple(np.einsum("...nd,dk->...nk", X, np.asarray(W, dtype=float)) for W in (W_Q, W_K, W_V))
'''

# -- softmax backward --------------------------------------------------------------------------------------------

BACKWARD_DIAGONAL_JACOBIAN = '''
def attention_backward(Q, K, V, dO):
    """The softmax derivative as output * (1 - output): the diagonal of the Jacobian only."""
    Q, K, V, dO = (np.asarray(a, dtype=float) for a in (Q, K, V, dO))
    d_k = Q.shape[-1]
    A = np.asarray(attention(Q, K, V)[1])
    dV = A.T @ dO
    dA = dO @ V.T
    dS = A * (1 - A) * dA
    return dS @ K / np.sqrt(d_k), dS.T @ Q / np.sqrt(d_k), dV
'''

BACKWARD_ROWSUM_OF_DA = '''
def attention_backward(Q, K, V, dO):
    """The row term subtracts sum(dA) where the Jacobian needs the dot product sum(A * dA)."""
    Q, K, V, dO = (np.asarray(a, dtype=float) for a in (Q, K, V, dO))
    d_k = Q.shape[-1]
    A = np.asarray(attention(Q, K, V)[1])
    dV = A.T @ dO
    dA = dO @ V.T
    dS = A * (dA - np.sum(dA, axis=-1, keepdims=True))
    return dS @ K / np.sqrt(d_k), dS.T @ Q / np.sqrt(d_k), dV
'''

BACKWARD_DV_SCALED = '''
def attention_backward(Q, K, V, dO):
    """The 1/sqrt(d_k) of the scores applied to every gradient, dV included."""
    Q, K, V, dO = (np.asarray(a, dtype=float) for a in (Q, K, V, dO))
    scale = 1 / np.sqrt(Q.shape[-1])
    A = np.asarray(attention(Q, K, V)[1])
    dA = dO @ V.T
    dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))
    return dS @ K * scale, dS.T @ Q * scale, A.T @ dO * scale
'''

BACKWARD_EINSUM = '''
def attention_backward(Q, K, V, dO):
    """Every product written with einsum, the row term as einsum('ij,ij->i')."""
    Q, K, V, dO = (np.asarray(a, dtype=float) for a in (Q, K, V, dO))
    scale = Q.shape[-1] ** -0.5
    S = np.einsum("id,jd->ij", Q, K) * scale
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dP = np.einsum("id,jd->ij", dO, V)
    dS = P * (dP - np.einsum("ij,ij->i", P, dP)[:, None])
    return np.einsum("ij,jd->id", dS, K) * scale, np.einsum("ij,id->jd", dS, Q) * scale, np.einsum("ij,id->jd", P, dO)
'''

# -- masks -------------------------------------------------------------------------------------------------------

APPLY_MASK_TRANSPOSED = '''
def apply_mask(scores, mask):
    """The expanded mask transposed before it is applied: rows and columns of the mask swapped."""
    return np.where(np.swapaxes(np.asarray(mask, dtype=bool), -1, -2), np.asarray(scores, dtype=float), -np.inf)
'''

CAUSAL_OFFSET_REVERSED = '''
def causal_mask(n_q, n_k=None):
    """The cache offset applied the wrong way round: j <= i + (n_q - n_k)."""
    n_k = n_q if n_k is None else n_k
    if n_q < 0 or n_k < n_q:
        raise ValueError(f"causal_mask needs 0 <= n_q <= n_k, got n_q={n_q}, n_k={n_k}")
    i = np.arange(n_q)[:, None]
    j = np.arange(n_k)[None, :]
    return j <= i + (n_q - n_k)
'''

ATTENTION_ADDITIVE_BOOL_MASK = '''
def attention(Q, K, V, mask=None):
    """The boolean mask added to the scores as numbers, as if it were an additive float mask."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    _check_shapes(Q, K, V)
    S = scaled_scores(Q, K)
    if mask is not None:
        S = S + np.asarray(mask, dtype=float)
    weights = np.asarray(softmax(S, axis=-1))
    return weights @ V, weights
'''

CAUSAL_TRIU_NEGATED = '''
def causal_mask(n_q, n_k=None):
    """The blocked entries from triu above the shifted diagonal, negated."""
    n_k = n_q if n_k is None else n_k
    if n_q < 0 or n_k < n_q:
        raise ValueError(f"causal_mask needs 0 <= n_q <= n_k, got n_q={n_q}, n_k={n_k}")
    return ~np.triu(np.ones((n_q, n_k), dtype=bool), k=1 + n_k - n_q)
'''

# -- scale factors -----------------------------------------------------------------------------------------------

SCALED_BY_KEY_COUNT = '''
def scaled_scores(Q, K):
    """shape[-2] where shape[-1] was meant: the scores divided by the square root of the number of keys."""
    return scores(Q, K) / np.sqrt(np.shape(K)[-2])
'''

SCALE_POWER_DIVIDED = '''
def attention(Q, K, V, mask=None):
    """scale = d_k ** -0.5, then the scores divided by the scale instead of multiplied by it."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    _check_shapes(Q, K, V)
    scale = Q.shape[-1] ** -0.5
    S = scores(Q, K) / scale
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)
    weights = np.asarray(softmax(S, axis=-1))
    return weights @ V, weights
'''

GPT_SCALED_TWICE = '''
def causal_self_attention(x, block, n_heads):
    """q pre-scaled by 1/sqrt(d_head) in the projection, and the scores divided by sqrt(d_head) again."""
    n, d = x.shape[-2], x.shape[-1]
    d_head = d // n_heads

    def heads(W):
        return (x @ W).unflatten(-1, (n_heads, d_head)).transpose(-2, -3)

    q = heads(block["W_Q"]) * d_head**-0.5
    k, v = heads(block["W_K"]), heads(block["W_V"])
    scores = q @ k.transpose(-1, -2) / math.sqrt(d_head)
    allowed = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return (weights @ v).transpose(-2, -3).flatten(-2) @ block["W_O"]
'''

ATTENTION_PRESCALED_QUERY = '''
def attention(Q, K, V, mask=None):
    """The queries scaled by d_k ** -0.5 before the product, as fused kernels do."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    _check_shapes(Q, K, V)
    S = (Q * Q.shape[-1] ** -0.5) @ np.swapaxes(K, -1, -2)
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)
    S = S - S.max(axis=-1, keepdims=True, initial=-np.inf, where=np.isfinite(S))
    weights = np.exp(S)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights
'''

# -- top-k routing -----------------------------------------------------------------------------------------------

ROUTE_TOPK_FIXED = '''
def route(x, W_r, k):
    """The number of experts per token left at a hard-coded 2 from an ablation, whatever k is."""
    s = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)
    if not 1 <= k <= s.shape[-1]:
        raise ValueError(f"k must be between 1 and n_experts = {s.shape[-1]}, got {k}")
    indices = np.argsort(-s, axis=-1, kind="stable")[..., :2]
    chosen = np.take_along_axis(s, indices, axis=-1)
    return indices, softmax(chosen, axis=-1)
'''

ROUTE_GATES_FROM_LOGITS = '''
def route(x, W_r, k):
    """The chosen logits divided by their sum, where the gates are probabilities (a softmax over them)."""
    s = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)
    if not 1 <= k <= s.shape[-1]:
        raise ValueError(f"k must be between 1 and n_experts = {s.shape[-1]}, got {k}")
    indices = np.argsort(-s, axis=-1, kind="stable")[..., :k]
    chosen = np.take_along_axis(s, indices, axis=-1)
    return indices, chosen / chosen.sum(axis=-1, keepdims=True)
'''

ROUTE_TOPK_OVER_TOKENS = '''
def route(x, W_r, k):
    """The top k taken along the token axis: for each expert, its k best tokens."""
    s = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)
    if not 1 <= k <= s.shape[-1]:
        raise ValueError(f"k must be between 1 and n_experts = {s.shape[-1]}, got {k}")
    indices = np.argsort(-s, axis=0, kind="stable")[:k]
    chosen = np.take_along_axis(s, indices, axis=0)
    return indices, softmax(chosen, axis=-1)
'''

MOE_FIRST_SLOT_GATE = '''
def moe_layer(x, W_r, experts, k):
    """Each expert's output weighted with the token's first gate, whatever slot chose the expert."""
    x = np.asarray(x, dtype=float)
    indices, gates = (np.asarray(a) for a in route(x, W_r, k))
    out = np.zeros_like(x)
    for e, expert in enumerate(experts):
        tokens, _slot = np.nonzero(indices == e)
        if len(tokens):
            out[tokens] += gates[tokens, 0, None] * np.asarray(expert(x[tokens]), dtype=float)
    return out
'''

ROUTE_TORCH_TOPK = '''
def route(x, W_r, k):
    """torch.topk (sorted) on the router logits, then softmax over the k chosen, returned as tensors."""
    import torch

    s = torch.as_tensor(np.asarray(x, dtype=float)) @ torch.as_tensor(np.asarray(W_r, dtype=float))
    if not 1 <= k <= s.shape[-1]:
        raise ValueError(f"k must be between 1 and n_experts = {s.shape[-1]}, got {k}")
    top, indices = torch.topk(s, k, dim=-1, sorted=True)
    return indices, torch.softmax(top, dim=-1)
'''

# -- decoding offsets --------------------------------------------------------------------------------------------

GPT_STEP_POSITION_ZERO = '''
def gpt_step(weights, token, position, cache):
    """Every new token's position embedding taken at 0, ignoring the tokens already in the cache."""
    wte, n_heads = weights["wte"], weights["n_heads"]
    x = wte[token] + weights["wpe"][0]
    d_head = x.shape[-1] // n_heads
    for block, caches in zip(weights["blocks"], cache):
        h = layer_norm(x, block["ln1_g"], block["ln1_b"])
        columns = [slice(i * d_head, (i + 1) * d_head) for i in range(n_heads)]
        outputs = [
            decode_step(h, block["W_Q"][:, c], block["W_K"][:, c], block["W_V"][:, c], head_cache)
            for c, head_cache in zip(columns, caches)
        ]
        x = x + torch.cat(outputs, dim=-1) @ block["W_O"]
        x = x + mlp(layer_norm(x, block["ln2_g"], block["ln2_b"]), block)
    return layer_norm(x, weights["lnf_g"], weights["lnf_b"]) @ wte.T
'''

GENERATE_OFFSET_ONE_AHEAD = '''
def generate(weights, prompt, n_new, use_cache=True):
    """The decode position taken as the number of tokens so far, one past the newest token's own position."""
    tokens = [int(t) for t in prompt]
    cache = new_cache(weights)
    if use_cache:
        for position, token in enumerate(tokens[:-1]):
            gpt_step(weights, token, position, cache)
    chosen_from = []
    for _ in range(n_new):
        if use_cache:
            logits = gpt_step(weights, tokens[-1], min(len(tokens), weights["wpe"].shape[0] - 1), cache)
        else:
            logits = gpt_forward(weights, tokens)[-1]
        tokens.append(int(logits.argmax()))
        chosen_from.append(logits)
    return tokens[len(prompt) :], torch.stack(chosen_from)
'''

ROPE_POSITIONS_FROM_ARANGE = '''
def rope(x, positions, base=10000.0):
    """The rotation angles from arange(n) (the slice start_pos:start_pos + n not taken), whatever positions are."""
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    if d % 2:
        raise ValueError(f"rope needs an even width, got {d}")
    pos = np.arange(x.shape[-2], dtype=float)
    freqs = base ** (-np.arange(0, d, 2) / d)
    angles = pos[:, None] * freqs[None, :]
    cos, sin = np.cos(angles), np.sin(angles)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out
'''

GPT_STEP_SDPA_HEADS = '''
def gpt_step(weights, token, position, cache):
    """All heads at once: one decode_step per head on its slice of the projections, outputs joined with cat."""
    wte = weights["wte"]
    n_heads = weights["n_heads"]
    x = wte[token] + weights["wpe"][position]
    d = x.shape[-1]
    for block, caches in zip(weights["blocks"], cache):
        h = layer_norm(x, block["ln1_g"], block["ln1_b"])
        q_all = block["W_Q"].reshape(d, n_heads, d // n_heads)
        k_all = block["W_K"].reshape(d, n_heads, d // n_heads)
        v_all = block["W_V"].reshape(d, n_heads, d // n_heads)
        outputs = [decode_step(h, q_all[:, i], k_all[:, i], v_all[:, i], caches[i]) for i in range(n_heads)]
        x = x + torch.cat(outputs, dim=-1) @ block["W_O"]
        x = x + mlp(layer_norm(x, block["ln2_g"], block["ln2_b"]), block)
    return layer_norm(x, weights["lnf_g"], weights["lnf_b"]) @ wte.T
'''

# -- parameter counts --------------------------------------------------------------------------------------------

ATTENTION_PARAMS_NO_GQA = '''
def attention_params(d_model, d_kv=None):
    """4 d^2 whatever the key/value width: grouped-query attention's smaller K and V not counted."""
    return 4 * d_model * d_model
'''

MOE_ACTIVE_ALL_EXPERTS = '''
def moe_params(d_model, n_layers, n_experts, top_k):
    """The active count multiplies the expert weights by n_experts too, as the total does."""
    attention, expert = 4 * d_model**2, 8 * d_model**2
    total = n_layers * (attention + n_experts * expert)
    active = n_layers * (attention + n_experts * expert)
    return total, active
'''

FFN_PARAMS_BIASES = '''
def ffn_params(d_model, d_ff=None, gated=False):
    """The two matrices and their biases, d_ff + d, counted together."""
    d_ff = 4 * d_model if d_ff is None else d_ff
    n_matrices = 3 if gated else 2
    return n_matrices * d_model * d_ff + d_ff + d_model
'''

MOE_PARAMS_HELPERS = '''
def moe_params(d_model, n_layers, n_experts, top_k):
    """Per layer: 4 d^2 attention, then the experts' 8 d^2 each, written from the per-expert count."""
    per_expert = 2 * d_model * (4 * d_model)
    attention = 4 * d_model * d_model
    return n_layers * (attention + n_experts * per_expert), n_layers * (attention + top_k * per_expert)
'''

BLOCK_PARAMS_EXPLICIT = '''
def block_params(d_model, d_ff=None):
    """W_Q, W_K, W_V, W_O, then W1 and W2, each counted as rows times columns."""
    d_ff = 4 * d_model if d_ff is None else d_ff
    matrices = [(d_model, d_model)] * 4 + [(d_model, d_ff), (d_ff, d_model)]
    return sum(rows * columns for rows, columns in matrices)
'''

CASES = (
    # KV caches
    bug(
        "decode_values_are_keys",
        "kv_cache",
        "ruvnet/agentic-flow#191: the attention mixed the keys where the values belong (V ignored, K returned)",
        ("trace.operand.*",),
        ("kv_cache", "decode_step", DECODE_VALUES_ARE_KEYS),
    ),
    bug(
        "incremental_cache_per_token",
        "kv_cache",
        "alex-hh/profam#168: past_key_values was set to None at every step, so each token saw only itself",
        ("cache_keeps_last_only|trace.missing.cat|trace.*",),
        ("kv_cache", "incremental_attention", INCREMENTAL_CACHE_PER_TOKEN),
    ),
    bug(
        "kv_bytes_no_batch",
        "kv_cache",
        "paiml/aprender#2774: the batched KV cache was sized for a fixed batch regardless of the actual one",
        ("trace.missing.mul|trace.*",),
        ("kv_cache", "kv_cache_bytes", KV_BYTES_NO_BATCH),
    ),
    bug(
        "decode_unscaled",
        "kv_cache",
        "mlc-ai/mlc-llm#3426 (decode path): the cached attention's scores left at sm_scale = 1, no 1/sqrt(d)",
        ("missing_scale|trace.missing.div|trace.constant.div",),
        ("kv_cache", "decode_step", DECODE_UNSCALED),
    ),
    correct(
        "cache_chunk_list",
        "kv_cache",
        "huggingface/transformers DynamicCache-style: per-step chunks kept in lists, torch.cat(dim=-2) when read",
        ("kv_cache", "KVCache", CACHE_CHUNK_LIST),
    ),
    # pre-norm blocks
    bug(
        "gpt_residual_from_normed",
        "toy_gpt",
        "Howuhh/faster-trajectory-transformer#3: norm_x = norm(x); x = norm_x + attn(norm_x) in the pre-norm block",
        ("trace.operand.add|trace.*",),
        ("toy_gpt", "gpt_forward", GPT_RESIDUAL_FROM_NORMED),
    ),
    bug(
        "block_norm_overwrites_residual",
        "block",
        "pytorch/pytorch#61165: norm_first's src = self.norm1(src) kept no copy of the input for the residual",
        ("ffn_added_to_normalised|trace.operand.add",),
        ("block", "block", BLOCK_NORM_OVERWRITES_RESIDUAL),
    ),
    bug(
        "gpt_mlp_reads_raw",
        "toy_gpt",
        "SHI-Labs/Compact-Transformers#25: a bad merge fed the un-normalised src to linear1 (norm1's output unused)",
        ("trace.missing.layer_norm|trace.*",),
        ("toy_gpt", "gpt_forward", GPT_MLP_READS_RAW),
    ),
    bug(
        "gpt_no_final_norm",
        "toy_gpt",
        "ml-explore/mlx-lm#93 review (GPT-2 port): ln_f must run before the tied head; here it is left out",
        ("trace.missing.layer_norm|trace.*",),
        ("toy_gpt", "gpt_forward", GPT_NO_FINAL_NORM),
    ),
    correct(
        "block_residual_copy",
        "block",
        "espnet encoder_layer (quoted in pytorch/pytorch#61165): residual = x before x = norm(x), then residual + x",
        ("block", "block", BLOCK_RESIDUAL_COPY),
    ),
    # value projections
    bug(
        "project_value_with_key",
        "scaling",
        "stevezheng23/reading_comprehension_tf#284: the query/key/value projection matrices reused across them",
        ("trace.operand.matmul|trace.*",),
        ("scaling", "project", PROJECT_VALUE_WITH_KEY),
    ),
    bug(
        "multi_head_raw_values",
        "block",
        "hmdolatabadi/denoising_diffusion#1 (and maoyunyao/JOINT#2): the value never went through its projection",
        ("trace.missing.matmul|trace.missing.project|trace.*",),
        ("block", "multi_head", MULTI_HEAD_RAW_VALUES),
    ),
    bug(
        "gpt_values_from_query_weights",
        "toy_gpt",
        "stevezheng23/sequence_labeling_tf#81: one projection's weights reused for another (here W_Q for the values)",
        ("trace.operand.*|trace.*",),
        ("toy_gpt", "causal_self_attention", GPT_VALUES_FROM_QUERY_WEIGHTS),
    ),
    correct(
        "project_einsum",
        "scaling",
        "lucidrains-style projections: einsum('b n d, d k -> b n k') for each of W_Q, W_K, W_V",
        ("scaling", "project", PROJECT_EINSUM),
    ),
    # softmax backward
    bug(
        "backward_diagonal_jacobian",
        "gradients",
        "deeplearning4j/libnd4j#440: the softmax derivative as output * (1 - output), the Jacobian's diagonal only",
        ("trace.*",),
        ("gradients", "attention_backward", BACKWARD_DIAGONAL_JACOBIAN),
    ),
    bug(
        "backward_rowsum_of_da",
        "gradients",
        "HomericIntelligence/Odyssey#2134: the softmax backward missing the dot product term sum(grad * s)",
        ("trace.missing.mul|trace.*",),
        ("gradients", "attention_backward", BACKWARD_ROWSUM_OF_DA),
    ),
    bug(
        "backward_dv_scaled",
        "gradients",
        "markroxor/fromscratchtoml#65: a gradient off by a constant factor (here dV scaled by 1/sqrt(d_k) too)",
        ("trace.extra.mul|trace.*",),
        ("gradients", "attention_backward", BACKWARD_DV_SCALED),
    ),
    correct(
        "backward_einsum",
        "gradients",
        "FlashAttention-style backward written with einsum (the row term as einsum('ij,ij->i', P, dP))",
        ("gradients", "attention_backward", BACKWARD_EINSUM),
    ),
    # masks
    bug(
        "apply_mask_transposed",
        "mask",
        "huggingface/transformers#26421: the expanded padding mask transposed, rows and columns swapped",
        ("trace.extra.transpose|trace.*",),
        ("mask", "apply_mask", APPLY_MASK_TRANSPOSED),
    ),
    bug(
        "causal_offset_reversed",
        "mask",
        "ml-explore/mlx-lm#1396: the cache offset applied in the wrong direction for the queries' positions",
        ("trace.*",),
        ("mask", "causal_mask", CAUSAL_OFFSET_REVERSED),
    ),
    bug(
        "attention_additive_bool_mask",
        "mask",
        "NVIDIA-NeMo/Automodel#2658 and fairseq#3575: a mask added to the scores as numbers instead of selecting",
        ("trace.op.where|trace.*",),
        ("scaling", "attention", ATTENTION_ADDITIVE_BOOL_MASK),
    ),
    correct(
        "causal_triu_negated",
        "mask",
        "the blocked triangle as triu(ones, k=1 + n_k - n_q), negated (the is_causal mask of decoding kernels)",
        ("mask", "causal_mask", CAUSAL_TRIU_NEGATED),
    ),
    # scale factors
    bug(
        "scaled_by_key_count",
        "scaling",
        "Graylab/DL4Proteins-notebooks#12: the attention scaled with the wrong dimension of the keys",
        ("trace.constant.div|trace.*",),
        ("scaling", "scaled_scores", SCALED_BY_KEY_COUNT),
    ),
    bug(
        "scale_power_divided",
        "scaling",
        "esceptico/perceiver-io#9: self.scale = head_dim ** -0.5, then the scores divided by it instead of multiplied",
        ("scale_multiplied",),
        ("scaling", "attention", SCALE_POWER_DIVIDED),
    ),
    bug(
        "gpt_scaled_twice",
        "toy_gpt",
        "FareedKhan-dev/train-llm-from-scratch#3 review: the attention scaled once in q and again in the scores",
        ("trace.extra.mul|trace.*",),
        ("toy_gpt", "causal_self_attention", GPT_SCALED_TWICE),
    ),
    correct(
        "attention_prescaled_query",
        "scaling",
        "the softmax_scale of flash-attn kernels: q * d ** -0.5 before q k^T, a finite-entries max as the shift",
        ("scaling", "attention", ATTENTION_PRESCALED_QUERY),
    ),
    # top-k routing
    bug(
        "route_topk_fixed",
        "moe_router",
        "JieShibo/MoLE#7: torch.topk(router_logits, 10) left from an ablation where top-2 was meant",
        ("trace.*",),
        ("moe_router", "route", ROUTE_TOPK_FIXED),
    ),
    bug(
        "route_gates_from_logits",
        "moe_router",
        "deepspeedai/DeepSpeed#7986: the top-k weights taken from the logits rather than the probabilities",
        ("trace.op.softmax|trace.*",),
        ("moe_router", "route", ROUTE_GATES_FROM_LOGITS),
    ),
    bug(
        "route_topk_over_tokens",
        "moe_router",
        "deepspeedai/DeepSpeed#7986: the top-k mask taken across the tokens dimension instead of the experts",
        ("trace.axis.*|trace.*",),
        ("moe_router", "route", ROUTE_TOPK_OVER_TOKENS),
    ),
    bug(
        "moe_first_slot_gate",
        "moe_router",
        "lucidrains/st-moe-pytorch#13: the top-n gating reused the first slot's values for the later slots",
        ("trace.*",),
        ("moe_router", "moe_layer", MOE_FIRST_SLOT_GATE),
    ),
    correct(
        "route_torch_topk",
        "moe_router",
        "huggingface/transformers MixtralSparseMoeBlock-style: torch.topk(logits, k, sorted=True), softmax of the top",
        ("moe_router", "route", ROUTE_TORCH_TOPK),
        rule="moe_router/test_route_ties",  # torch.topk orders equal scores its own way; the kit ranks lower first
    ),
    # decoding offsets
    bug(
        "gpt_step_position_zero",
        "toy_gpt",
        "ml-explore/mlx-lm#93: new tokens' position embeddings started at zero, ignoring the tokens in the cache",
        ("trace.*",),
        ("toy_gpt", "gpt_step", GPT_STEP_POSITION_ZERO),
    ),
    bug(
        "generate_offset_one_ahead",
        "toy_gpt",
        "skyzh/tiny-llm#46: the decoding offset advanced past the newest token's own position",
        ("trace.*",),
        ("toy_gpt", "generate", GENERATE_OFFSET_ONE_AHEAD),
    ),
    bug(
        "rope_positions_from_arange",
        "positions",
        "pytorch/executorch#2010: the rotary table not sliced at start_pos, so the positions restart at 0",
        ("rope_position_offset|trace.*",),
        ("positions", "rope", ROPE_POSITIONS_FROM_ARANGE),
    ),
    correct(
        "gpt_step_head_slices",
        "toy_gpt",
        "the heads' columns read through reshape(d, n_heads, d_head) and indexed per head, one cache each",
        ("toy_gpt", "gpt_step", GPT_STEP_SDPA_HEADS),
    ),
    # parameter counts
    bug(
        "attention_params_no_gqa",
        "costs",
        "KolosalAI/model-memory-calculator#2: the K/V width taken from the model width, the KV heads never used",
        ("trace.*",),
        ("costs", "attention_params", ATTENTION_PARAMS_NO_GQA),
    ),
    bug(
        "moe_active_all_experts",
        "moe_router",
        "TransformerLensOrg/TransformerLens#448: n_params counted every expert where only the active ones run",
        ("trace.*",),
        ("moe_router", "moe_params", MOE_ACTIVE_ALL_EXPERTS),
    ),
    bug(
        "ffn_params_biases",
        "costs",
        "dgschwend/netscope#17 (the other way round): the biases counted where the rule of thumb leaves them out",
        ("trace.extra.add|trace.*",),
        ("costs", "ffn_params", FFN_PARAMS_BIASES),
    ),
    correct(
        "moe_params_helpers",
        "moe_router",
        "EleutherAI/cookbook-style counting: per-expert weights 2 d (4 d), attention 4 d^2, per layer",
        ("moe_router", "moe_params", MOE_PARAMS_HELPERS),
    ),
    correct(
        "block_params_explicit",
        "costs",
        "google-research/bert#656 answers: each weight matrix counted as rows times columns and summed",
        ("costs", "block_params", BLOCK_PARAMS_EXPLICIT),
    ),
)
