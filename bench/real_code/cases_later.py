"""Real code of the later steps: MoE routing, the KV cache, the block, gradients, costs, the toy GPT."""

from __future__ import annotations

from bench.real_code import bug, correct

# -- mixture-of-experts routing ----------------------------------------------------------------------------------

ROUTE_NO_RENORM = '''
def route(x, W_r, k):
    """Softmax over every expert, then top-k, the k probabilities used as they are (norm_topk_prob off)."""
    s = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)
    if not 1 <= k <= s.shape[-1]:
        raise ValueError(f"k must be between 1 and n_experts = {s.shape[-1]}, got {k}")
    probs = np.asarray(softmax(s, axis=-1))
    indices = np.argsort(-probs, axis=-1, kind="stable")[..., :k]
    return indices, np.take_along_axis(probs, indices, axis=-1)
'''

ROUTE_TOP1_MAX = '''
def route(x, W_r, k):
    """For k = 1 the top-k is scores.max(-1), which drops the k axis; the weights are then p=1 normalised."""
    s = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)
    if not 1 <= k <= s.shape[-1]:
        raise ValueError(f"k must be between 1 and n_experts = {s.shape[-1]}, got {k}")
    probs = np.asarray(softmax(s, axis=-1))
    if k == 1:
        weights, indices = probs.max(axis=-1), probs.argmax(axis=-1)
    else:
        indices = np.argsort(-probs, axis=-1, kind="stable")[..., :k]
        weights = np.take_along_axis(probs, indices, axis=-1)
    return indices, weights / np.sum(np.abs(weights), axis=-1, keepdims=True)
'''

ROUTE_ARGPARTITION = '''
def route(x, W_r, k):
    """argpartition(-s, kth=k - 1)[..., :k]: the k best experts, in no particular order."""
    s = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)
    if not 1 <= k <= s.shape[-1]:
        raise ValueError(f"k must be between 1 and n_experts = {s.shape[-1]}, got {k}")
    indices = np.argpartition(-s, kth=k - 1, axis=-1)[..., :k]
    return indices, softmax(np.take_along_axis(s, indices, axis=-1), axis=-1)
'''

LOAD_PER_TOKEN = '''
def expert_load(indices, n_experts):
    """The one-hot expert mask averaged over tokens (per slot), then summed over the k slots."""
    indices = np.asarray(indices, dtype=int)
    expert_mask = np.eye(n_experts)[indices].reshape(-1, indices.shape[-1], n_experts)  # (tokens, k, experts)
    tokens_per_expert = expert_mask.mean(axis=0)  # (k, experts)
    return tokens_per_expert.sum(axis=0)
'''

ROUTE_MIXTRAL = '''
def route(x, W_r, k):
    """Mixtral: softmax over every expert, top-k, then the k weights divided by their sum."""
    s = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)
    if not 1 <= k <= s.shape[-1]:
        raise ValueError(f"k must be between 1 and n_experts = {s.shape[-1]}, got {k}")
    routing_weights = np.asarray(softmax(s, axis=-1))
    selected = np.argsort(-routing_weights, axis=-1, kind="stable")[..., :k]
    weights = np.take_along_axis(routing_weights, selected, axis=-1)
    return selected, weights / weights.sum(axis=-1, keepdims=True)
'''

MOE_INDEX_ADD = '''
def moe_layer(x, W_r, experts, k):
    """Mixtral's expert loop: the one-hot mask per expert, index_add_ of its weighted outputs."""
    import torch

    x = np.asarray(x, dtype=float)
    indices, gates = (np.asarray(a) for a in route(x, W_r, k))
    final = torch.zeros(x.shape, dtype=torch.float64)
    expert_mask = np.eye(len(experts), dtype=bool)[indices]  # (tokens, k, experts)
    for expert_idx, expert in enumerate(experts):
        top_x, idx = np.nonzero(expert_mask[:, :, expert_idx])
        if top_x.size == 0:
            continue
        current = np.asarray(expert(x[top_x]), dtype=float) * gates[top_x, idx, None]
        final.index_add_(0, torch.as_tensor(top_x), torch.as_tensor(current))
    return final
'''

LOAD_ONE_HOT = '''
def expert_load(indices, n_experts):
    """The Switch Transformer's fraction of routed pairs: the mean of the one-hot expert mask."""
    indices = np.asarray(indices, dtype=int)
    return np.eye(n_experts)[indices].reshape(-1, n_experts).mean(axis=0)
'''

# -- the KV cache ------------------------------------------------------------------------------------------------

APPEND_DIM0 = '''
    def append(self, k, v):
        """The new keys and values concatenated along dim 0."""
        if self._keys is None:
            self._keys, self._values = k, v
        else:
            self._keys = torch.cat([self._keys, k], dim=0)
            self._values = torch.cat([self._values, v], dim=0)
'''

BYTES_HIDDEN = '''
def kv_cache_bytes(n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value=2, batch=1):
    """2 * layers * heads * hidden_size per token: the heads counted twice (hidden_size = heads * d_head)."""
    hidden_size = n_kv_heads * d_head
    per_token = 2 * n_layers * n_kv_heads * hidden_size * bytes_per_value
    return int(per_token * n_tokens * batch)
'''

PREALLOCATED_CACHE = '''
class KVCache:
    """A preallocated buffer written in place at [length, length + t), doubled when full."""

    def __init__(self):
        self._k = None
        self._v = None
        self._length = 0

    def append(self, k, v):
        t = k.shape[-2]
        if self._k is None:
            room = max(16, t)
            self._k = k.new_zeros(*k.shape[:-2], room, k.shape[-1])
            self._v = v.new_zeros(*v.shape[:-2], room, v.shape[-1])
        needed = self._length + t
        if needed > self._k.shape[-2]:
            room = max(needed, 2 * self._k.shape[-2])
            grown_k = self._k.new_zeros(*self._k.shape[:-2], room, self._k.shape[-1])
            grown_v = self._v.new_zeros(*self._v.shape[:-2], room, self._v.shape[-1])
            grown_k[..., : self._length, :] = self._k[..., : self._length, :]
            grown_v[..., : self._length, :] = self._v[..., : self._length, :]
            self._k, self._v = grown_k, grown_v
        self._k[..., self._length : needed, :] = k
        self._v[..., self._length : needed, :] = v
        self._length = needed

    @property
    def keys(self):
        return None if self._k is None else self._k[..., : self._length, :]

    @property
    def values(self):
        return None if self._v is None else self._v[..., : self._length, :]

    def __len__(self):
        return self._length
'''

DECODE_SDPA = '''
def decode_step(x_t, W_Q, W_K, W_V, cache):
    """torch's scaled_dot_product_attention for the one new query over the whole cache."""
    x_t = torch.as_tensor(x_t).unsqueeze(-2)
    q, k, v = x_t @ W_Q, x_t @ W_K, x_t @ W_V
    cache.append(k, v)
    out = torch.nn.functional.scaled_dot_product_attention(q, cache.keys, cache.values)
    return out.squeeze(-2)
'''

BYTES_FORMULA = '''
def kv_cache_bytes(n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value=2, batch=1):
    """2 (K and V) * layers * kv heads * head_dim * bytes, times tokens and sequences."""
    elements_per_token = 2 * n_layers * n_kv_heads * d_head
    return int(batch * n_tokens * elements_per_token * bytes_per_value)
'''

# -- the block ---------------------------------------------------------------------------------------------------

LAYER_NORM_ANNOTATED = '''
def layer_norm(x, eps=1e-5):
    """(x - mean) / (std + eps) with torch's default, unbiased std."""
    x = np.asarray(x, dtype=float)
    mean = x.mean(axis=-1, keepdims=True)
    std = x.std(axis=-1, ddof=1, keepdims=True)
    return (x - mean) / (std + eps)
'''

RMS_NORM_OLMO = '''
def rms_norm(x, eps=1e-5):
    """The 2-norm scaled to an RMS, eps added to the RMS rather than to the mean square."""
    x = np.asarray(x, dtype=float)
    norm_x = np.linalg.norm(x, ord=2, axis=-1, keepdims=True)
    rms_x = norm_x * x.shape[-1] ** (-1.0 / 2)
    return x / (rms_x + eps)
'''

RMS_NORM_VARIANCE = '''
def rms_norm(x, eps=1e-5):
    """rms_scaling through the variance, which subtracts the mean, instead of the mean of squares."""
    x = np.asarray(x, dtype=float)
    return x / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
'''

BLOCK_POST_NORM = '''
def block(X, heads, W_O, W1, b1, W2, b2):
    """The paper's sublayer: LayerNorm(x + Sublayer(x)) after each residual add."""
    X = np.asarray(X, dtype=float)
    x = layer_norm(X + multi_head(X, heads, W_O))
    return layer_norm(x + feed_forward(x, W1, b1, W2, b2))
'''

LAYER_NORM_TORCH = '''
def layer_norm(x, eps=1e-5):
    """torch.nn.functional.layer_norm over the last axis, in float64."""
    import torch

    x = torch.as_tensor(np.asarray(x, dtype=float))
    return torch.nn.functional.layer_norm(x, x.shape[-1:], eps=eps)
'''

RMS_NORM_LLAMA = '''
def rms_norm(x, eps=1e-5):
    """Llama's RMSNorm: x.float() * rsqrt(mean(x**2) + eps), cast back with type_as."""
    import torch

    x = torch.as_tensor(np.asarray(x, dtype=float))
    h = x.to(torch.float32)
    return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)).type_as(x)
'''

MULTI_HEAD_STACKED = '''
def multi_head(X, heads, W_O):
    """Every head at once: the weights stacked on a head axis, einsum, heads moved next to the features."""
    X = np.asarray(X, dtype=float)
    W_Q, W_K, W_V = (np.stack([np.asarray(head[i], dtype=float) for head in heads]) for i in range(3))
    Q = np.einsum("...nd,hdk->...hnk", X, W_Q)
    K = np.einsum("...nd,hdk->...hnk", X, W_K)
    V = np.einsum("...nd,hdv->...hnv", X, W_V)
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A = A / A.sum(axis=-1, keepdims=True)
    O = np.moveaxis(A @ V, -3, -2)  # (..., n, h, d_v)
    return O.reshape(*O.shape[:-2], -1) @ np.asarray(W_O, dtype=float)
'''

# -- gradients ---------------------------------------------------------------------------------------------------

FORWARD_DIFFERENCE = '''
def central_difference(f, x, h=1e-6):
    """(f(x + h) - f(x)) / h, one coordinate at a time."""
    x = np.array(x, dtype=float)
    grad = np.zeros_like(x)
    f_x = float(f(x))
    for index in np.ndindex(x.shape):
        saved = x[index]
        x[index] = saved + h
        grad[index] = (float(f(x)) - f_x) / h
        x[index] = saved
    return grad
'''

MODIFIES_INPUT = '''
def central_difference(f, x, h=1e-6):
    """Steps made in place on the caller's array: +h, -2h, +h, which rounding does not always undo."""
    x = np.asarray(x, dtype=float)
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        x[index] += h
        f_plus = float(f(x))
        x[index] -= 2 * h
        f_minus = float(f(x))
        x[index] += h
        grad[index] = (f_plus - f_minus) / (2 * h)
    return grad
'''

SOFTMAX_PASSTHROUGH = '''
def attention_backward(Q, K, V, dO):
    """The softmax layer's backward copies the gradient of its output to its input: dS = dA."""
    Q, K, V, dO = (np.asarray(a, dtype=float) for a in (Q, K, V, dO))
    d_k = Q.shape[-1]
    A = np.asarray(attention(Q, K, V)[1])
    dV = A.T @ dO
    dA = dO @ V.T
    dS = dA
    return dS @ K / np.sqrt(d_k), dS.T @ Q / np.sqrt(d_k), dV
'''

BACKWARD_FLASH = '''
def attention_backward(Q, K, V, dO):
    """FlashAttention-2's order in float32: D = rowsum(dO * O), dS = P * (dP - D)."""
    Q, K, V, dO = (np.asarray(a, dtype=np.float32) for a in (Q, K, V, dO))
    scale = np.float32(1.0 / np.sqrt(Q.shape[-1]))
    S = Q @ K.T * scale
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P /= P.sum(axis=-1, keepdims=True)
    O = P @ V
    D = np.sum(dO * O, axis=-1, keepdims=True)
    dV = P.T @ dO
    dP = dO @ V.T
    dS = P * (dP - D)
    return dS @ K * scale, dS.T @ Q * scale, dV
'''

BACKWARD_JACOBIAN = '''
def attention_backward(Q, K, V, dO):
    """Each softmax row's full Jacobian diag(a) - a a^T times its upstream row."""
    Q, K, V, dO = (np.asarray(a, dtype=float) for a in (Q, K, V, dO))
    d_k = Q.shape[-1]
    A = np.asarray(attention(Q, K, V)[1])
    dA = dO @ V.T
    dS = np.stack([(np.diag(a) - np.outer(a, a)) @ g for a, g in zip(A, dA)])
    return dS @ K / np.sqrt(d_k), dS.T @ Q / np.sqrt(d_k), A.T @ dO
'''

BACKWARD_AUTOGRAD = '''
def attention_backward(Q, K, V, dO):
    """torch.autograd on the forward pass, in float64."""
    import torch

    q, k, v = (torch.tensor(np.asarray(a, dtype=float), requires_grad=True) for a in (Q, K, V))
    weights = torch.softmax(q @ k.T / q.shape[-1] ** 0.5, dim=-1)
    out = weights @ v
    out.backward(torch.as_tensor(np.asarray(dO, dtype=float)))
    return q.grad, k.grad, v.grad
'''

HALF_STEPS = '''
def central_difference(f, x, h=1e-6):
    """A centred difference of width h: x - h/2 and x + h/2, divided by h."""
    x = np.array(x, dtype=float)
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        saved = x[index]
        x[index] = saved - h / 2
        y1 = float(f(x))
        x[index] = saved + h / 2
        y2 = float(f(x))
        x[index] = saved
        grad[index] = (y2 - y1) / h
    return grad
'''

# -- costs -------------------------------------------------------------------------------------------------------

FLOPS_AS_MACS = '''
def block_flops(n, d_model):
    """Multiply-adds counted as one operation each, as profilers that report MACs as 'FLOPs' do."""
    linear = n * block_params(d_model)
    quadratic = 2 * n * n * d_model
    return linear, quadratic
'''

SCORE_GB = '''
def score_matrix_gib(n, bytes_per_value=2):
    """Bytes divided by 1e9."""
    return score_matrix_bytes(n, bytes_per_value) / 1e9
'''

PARTS_STATE_DICT = '''
def gpt2_small_parts(exact=False):
    """Every tensor of the state dict counted, the tied output head included."""
    d, layers = GPT2_D_MODEL, GPT2_LAYERS
    parts = {
        "token_embeddings": GPT2_VOCAB * d,
        "position_embeddings": GPT2_CONTEXT * d,
        "blocks": layers * block_params(d),
        "lm_head": GPT2_VOCAB * d,
    }
    if exact:
        parts["attention_biases"] = layers * (3 * d + d)
        parts["ffn_biases"] = layers * (4 * d + d)
        parts["layer_norms"] = layers * 2 * (2 * d) + 2 * d
    return parts
'''

FLOPS_BY_MATMUL = '''
def block_flops(n, d_model):
    """2 m k n for every matrix product of the block, written out one by one."""

    def matmul(m, k, n_out):
        return 2 * m * k * n_out

    d = d_model
    projections = 4 * matmul(n, d, d)  # Q, K, V and the output projection
    ffn = matmul(n, d, 4 * d) + matmul(n, 4 * d, d)
    scores_and_mix = matmul(n, d, n) + matmul(n, n, d)  # Q K^T and A V, all heads together
    return projections + ffn, scores_and_mix
'''

# -- the toy GPT -------------------------------------------------------------------------------------------------

ATTENTION_BY_WIDTH = '''
def causal_self_attention(x, block, n_heads):
    """Every head's scores divided by sqrt(C), the embedding width, not by sqrt(head_size)."""
    n, C = x.shape[-2], x.shape[-1]

    def heads(W):
        return (x @ W).unflatten(-1, (n_heads, C // n_heads)).transpose(-2, -3)

    q, k, v = heads(block["W_Q"]), heads(block["W_K"]), heads(block["W_V"])
    wei = q @ k.transpose(-2, -1) * C**-0.5
    tril = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
    wei = torch.softmax(wei.masked_fill(~tril, float("-inf")), dim=-1)
    return (wei @ v).transpose(-2, -3).flatten(-2) @ block["W_O"]
'''

ATTENTION_BY_HEADS = '''
def causal_self_attention(x, block, n_heads):
    """The scores scaled by 1/sqrt(num_heads) although the comment says 1/sqrt(head_dim)."""
    n, d = x.shape[-2], x.shape[-1]

    def heads(W):
        return (x @ W).unflatten(-1, (n_heads, d // n_heads)).transpose(-2, -3)

    q, k, v = heads(block["W_Q"]), heads(block["W_K"]), heads(block["W_V"])
    scores = q @ k.transpose(-1, -2) / math.sqrt(n_heads)
    allowed = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return (weights @ v).transpose(-2, -3).flatten(-2) @ block["W_O"]
'''

GELU_EXACT = '''
def gelu(x):
    """The exact GELU, 0.5 x (1 + erf(x / sqrt 2)), where GPT-2's weights expect the tanh form."""
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
'''

HEADS_VIEW_NO_TRANSPOSE = '''
def causal_self_attention(x, block, n_heads):
    """The heads split by view(n_heads, -1, d_head) straight from (n, d), without the transpose."""
    n, d = x.shape[-2], x.shape[-1]

    def heads(W):
        return (x @ W).reshape(*x.shape[:-2], n_heads, n, d // n_heads)

    q, k, v = heads(block["W_Q"]), heads(block["W_K"]), heads(block["W_V"])
    scores = q @ k.transpose(-1, -2) / math.sqrt(d // n_heads)
    allowed = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return (weights @ v).transpose(-2, -3).flatten(-2) @ block["W_O"]
'''

HEADS_MERGE_NO_PERMUTE = '''
def causal_self_attention(x, block, n_heads):
    """(n_heads, n, d_head) reshaped to (n, d) without moving the head axis next to the features first."""
    n, d = x.shape[-2], x.shape[-1]

    def heads(W):
        return (x @ W).unflatten(-1, (n_heads, d // n_heads)).transpose(-2, -3)

    q, k, v = heads(block["W_Q"]), heads(block["W_K"]), heads(block["W_V"])
    scores = q @ k.transpose(-1, -2) / math.sqrt(d // n_heads)
    allowed = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return (weights @ v).reshape(*x.shape[:-2], n, d) @ block["W_O"]
'''

ATTENTION_NANOGPT = '''
def causal_self_attention(x, block, n_heads):
    """nanoGPT: one fused projection split in three, view and transpose, SDPA with is_causal=True."""
    T, C = x.shape[-2], x.shape[-1]
    c_attn = torch.cat([block["W_Q"], block["W_K"], block["W_V"]], dim=1)
    q, k, v = (x @ c_attn).split(C, dim=-1)
    q, k, v = (t.view(T, n_heads, C // n_heads).transpose(0, 1) for t in (q, k, v))
    y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    y = y.transpose(0, 1).contiguous().view(T, C)
    return y @ block["W_O"]
'''

GELU_TANH_TORCH = '''
def gelu(x):
    """torch's GELU with approximate='tanh'."""
    return torch.nn.functional.gelu(x, approximate="tanh")
'''

CASES = (
    bug(
        "route_no_renorm",
        "moe_router",
        "pytorch/torchtitan#1448 (and OLMoE's norm_topk_prob=False): the top-k router probabilities not renormalised",
        ("gates_over_all_experts",),
        ("moe_router", "route", ROUTE_NO_RENORM),
    ),
    bug(
        "route_top1_max",
        "moe_router",
        "databricks/megablocks#87: for top_k = 1 scores.max(dim=-1) drops the k axis, so the weights shape is [S]",
        ("topk_axis_dropped",),
        ("moe_router", "route", ROUTE_TOP1_MAX),
    ),
    bug(
        "route_argpartition",
        "moe_router",
        "ml-explore mlx-lm OLMoE (quoted in lablup/mlxcel#391): argpartition(-w, kth=k-1)[..., :k], unsorted top-k",
        ("topk_unsorted",),
        ("moe_router", "route", ROUTE_ARGPARTITION),
    ),
    bug(
        "load_mean_over_tokens",
        "moe_router",
        "huggingface/transformers#28255 (#28256): Mixtral's tokens_per_expert, a mean over tokens per top-k slot",
        ("load_per_token",),
        ("moe_router", "expert_load", LOAD_PER_TOKEN),
    ),
    correct(
        "route_mixtral",
        "moe_router",
        "NVIDIA/TensorRT-LLM#2752: Mixtral's softmax, topk, then routing_weights /= sum equals softmax of the top k",
        ("moe_router", "route", ROUTE_MIXTRAL),
    ),
    correct(
        "moe_layer_index_add",
        "moe_router",
        "huggingface/transformers MixtralSparseMoeBlock: one_hot expert mask, torch.where per expert, index_add_",
        ("moe_router", "moe_layer", MOE_INDEX_ADD),
    ),
    correct(
        "load_one_hot_mean",
        "moe_router",
        "labmlai Switch Transformer (issue #91): the fraction of routed tokens from the one-hot routes",
        ("moe_router", "expert_load", LOAD_ONE_HOT),
    ),
    bug(
        "cache_cat_dim0",
        "kv_cache",
        "deepspeedai/Megatron-DeepSpeed#112: past_key concatenated with key_layer on dim 0 instead of the token dim",
        ("cache_wrong_axis",),
        ("kv_cache", "KVCache.append", APPEND_DIM0),
    ),
    bug(
        "cache_bytes_heads_twice",
        "kv_cache",
        "jranaraki/vllm-fit#2: 2 * layers * num_attention_heads * hidden_size per token, the heads counted twice",
        ("kv_bytes_extra_heads_factor",),
        ("kv_cache", "kv_cache_bytes", BYTES_HIDDEN),
    ),
    correct(
        "cache_preallocated",
        "kv_cache",
        "karpathy/nanochat#345 and FunAudioLLM/CosyVoice#220: a preallocated KV buffer filled in place at [t0, t1)",
        ("kv_cache", "KVCache", PREALLOCATED_CACHE),
    ),
    correct(
        "decode_sdpa",
        "kv_cache",
        "karpathy/nanoGPT#694: cached decode through scaled_dot_product_attention with is_causal=False",
        ("kv_cache", "decode_step", DECODE_SDPA),
    ),
    correct(
        "cache_bytes_vllm",
        "kv_cache",
        "vllm-project/vllm#29736 review: 2 * num_key_value_heads * head_size * layers * dtype bytes per token",
        ("kv_cache", "kv_cache_bytes", BYTES_FORMULA),
    ),
    bug(
        "layer_norm_annotated",
        "block",
        "harvardnlp/annotated-transformer#119/#122 (codertimo/BERT-pytorch#30): unbiased x.std(-1), eps added to std",
        ("layernorm_sample_variance", "layernorm_eps_outside_sqrt"),
        ("block", "layer_norm", LAYER_NORM_ANNOTATED),
    ),
    bug(
        "rms_norm_olmo",
        "block",
        "allenai/OLMo#281 (and EleutherAI/gpt-neox#1342): x / (rms(x) + eps) instead of x * rsqrt(mean(x^2) + eps)",
        ("rmsnorm_eps_outside_sqrt",),
        ("block", "rms_norm", RMS_NORM_OLMO),
    ),
    bug(
        "rms_norm_variance",
        "block",
        "keras-team/keras#22393: LayerNormalization(rms_scaling=True) divided by sqrt(var(x) + eps), not mean(x^2)",
        ("rmsnorm_uses_variance",),
        ("block", "rms_norm", RMS_NORM_VARIANCE),
    ),
    bug(
        "block_post_norm_paper",
        "block",
        "harvardnlp/annotated-transformer#1: the paper's LayerNorm(x + Sublayer(x)), after each residual add",
        ("block_post_norm",),
        ("block", "block", BLOCK_POST_NORM),
    ),
    correct(
        "layer_norm_torch",
        "block",
        "allenai/allennlp#953 review: match nn.LayerNorm (biased variance); here torch.nn.functional.layer_norm itself",
        ("block", "layer_norm", LAYER_NORM_TORCH),
    ),
    correct(
        "rms_norm_llama_float32",
        "block",
        "jingyaogong/minimind#301 (llama3 reference): RMSNorm computed on x.float(), then type_as(x)",
        ("block", "rms_norm", RMS_NORM_LLAMA),
    ),
    correct(
        "multi_head_stacked",
        "block",
        "the fused multi-head form (reczoo/FuxiCTR#30's correct view + transpose): every head at once on a head axis",
        ("block", "multi_head", MULTI_HEAD_STACKED),
    ),
    bug(
        "forward_difference_gradcheck",
        "gradients",
        "apache/mxnet#3693: the numerical gradient checker used (f(x + h) - f(x)) / h instead of a central difference",
        ("central_forward_difference",),
        ("gradients", "central_difference", FORWARD_DIFFERENCE),
    ),
    bug(
        "difference_modifies_input",
        "gradients",
        "microsoft/ADBench#68/#71: the finite differences modified their input instead of working on a copy",
        ("central_modifies_input",),
        ("gradients", "central_difference", MODIFIES_INPUT),
    ),
    bug(
        "softmax_backward_passthrough",
        "gradients",
        "pjreddie/darknet#96: the softmax layer's backward copied the gradient w.r.t. its output to its input",
        ("grad_softmax_skipped",),
        ("gradients", "attention_backward", SOFTMAX_PASSTHROUGH),
    ),
    correct(
        "backward_flash_order",
        "gradients",
        "huggingface/picotron#37 and FlashAttention-2: dS = P * (dP - rowsum(dO * O)), computed in float32",
        ("gradients", "attention_backward", BACKWARD_FLASH),
    ),
    correct(
        "backward_row_jacobian",
        "gradients",
        "huggingface/candle#3724: the softmax Jacobian-vector product, here as the full diag(a) - a a^T per row",
        ("gradients", "attention_backward", BACKWARD_JACOBIAN),
    ),
    correct(
        "backward_autograd",
        "gradients",
        "torch.autograd on the forward pass, as the kit's hidden grader and most gradient checks do",
        ("gradients", "attention_backward", BACKWARD_AUTOGRAD),
    ),
    correct(
        "difference_half_steps",
        "gradients",
        "FluxML/Zygote.jl#464: ngradient's centred difference x -/+ delta/2 divided by delta",
        ("gradients", "central_difference", HALF_STEPS),
    ),
    bug(
        "flops_counted_as_macs",
        "costs",
        "Lyken17/pytorch-OpCounter#46 and facebookresearch/fvcore#69: one fused multiply-add counted as one FLOP",
        ("mac_as_one_flop",),
        ("costs", "block_flops", FLOPS_AS_MACS),
    ),
    bug(
        "score_memory_in_gb",
        "costs",
        "Lyken17/pytorch-OpCounter#72: decimal 1e3 steps where binary units (1024) were meant, for the GiB table",
        ("gb_not_gib",),
        ("costs", "score_matrix_gib", SCORE_GB),
    ),
    bug(
        "gpt2_state_dict_count",
        "costs",
        "karpathy/llama2.c#378 (and karpathy/nanoGPT#209): counting state-dict tensors counts the tied lm_head again",
        ("gpt2_untied_embeddings",),
        ("costs", "gpt2_small_parts", PARTS_STATE_DICT),
    ),
    correct(
        "flops_by_matmul",
        "costs",
        "ultralytics/yolov5#10042: one MAC is two FLOPs; every matrix product counted as 2 m k n",
        ("costs", "block_flops", FLOPS_BY_MATMUL),
    ),
    bug(
        "gpt_scale_by_width",
        "toy_gpt",
        "karpathy/ng-video-lecture#6: wei = q @ k.transpose(-2, -1) * C**-0.5 with C the embedding width",
        ("attention_scaled_by_width",),
        ("toy_gpt", "causal_self_attention", ATTENTION_BY_WIDTH),
    ),
    bug(
        "gpt_scale_by_heads",
        "toy_gpt",
        "tenstorrent/tt-metal#56789: CLIP attention scaled by 1/sqrt(num_heads) instead of 1/sqrt(head_dim)",
        ("attention_scaled_by_heads",),
        ("toy_gpt", "causal_self_attention", ATTENTION_BY_HEADS),
    ),
    bug(
        "gpt_gelu_exact",
        "toy_gpt",
        "nntile/nntile#370 review and kyutai-labs/pocket-tts#278: exact (erf) GELU where GPT-2 uses the tanh form",
        ("gelu_exact_erf",),
        ("toy_gpt", "gelu", GELU_EXACT),
    ),
    bug(
        "gpt_heads_view_no_transpose",
        "toy_gpt",
        "reczoo/FuxiCTR#30: query.view(batch_size * num_heads, -1, dim) splits the heads without a transpose",
        ("heads_split_without_transpose",),
        ("toy_gpt", "causal_self_attention", HEADS_VIEW_NO_TRANSPOSE),
    ),
    bug(
        "gpt_heads_merge_no_permute",
        "toy_gpt",
        "jsbaan/transformer-from-scratch#6: the missing permute(0, 2, 1, 3) before reshaping the heads back",
        ("heads_merged_without_transpose",),
        ("toy_gpt", "causal_self_attention", HEADS_MERGE_NO_PERMUTE),
    ),
    correct(
        "gpt_nanogpt_attention",
        "toy_gpt",
        "karpathy/nanoGPT CausalSelfAttention: c_attn split, view/transpose, SDPA with is_causal=True",
        ("toy_gpt", "causal_self_attention", ATTENTION_NANOGPT),
    ),
    correct(
        "gpt_gelu_torch_tanh",
        "toy_gpt",
        "karpathy/nanoGPT#274: nn.GELU(approximate='tanh') in place of the hand-written new_gelu",
        ("toy_gpt", "gelu", GELU_TANH_TORCH),
    ),
)
