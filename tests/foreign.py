"""Implementations in the styles of public transformer code, wrapped to the lab's contract.

Each is written here in our own words, after the patterns that public projects
(numerical libraries, transformer codebases, course solutions, tutorials) use
or once got wrong: float32 internals, torch tensors returned, table-based RoPE
indexed by integer positions, the mask filled after the softmax, an unstable
``exp / sum``, a square causal mask used against a cache, RoPE positions that
start at the wrong offset, a post-norm block, a cache that attends before it
appends. A :class:`Foreign` replaces whole top-level functions (or classes) of
the reference by name, so the rest of the submission stays the reference's.
"""

from __future__ import annotations

import ast
import shutil
from dataclasses import dataclass
from pathlib import Path

from tests import kit


@dataclass(frozen=True)
class Replace:
    """Replace the top-level ``def``/``class`` called ``name`` in ``module``.py by ``source``."""

    module: str
    name: str
    source: str


@dataclass(frozen=True)
class Foreign:
    """A submission: the reference with some definitions replaced.

    ``correct``: it must score full on every step. Otherwise it must lose points
    on ``step`` and be explained there: by the mistake ``mistake`` or, when that
    is None, by a failed check whose message contains ``sentence``.
    """

    name: str
    step: str
    replacements: tuple[Replace, ...]
    correct: bool
    mistake: str | None = None
    sentence: str | None = None

    def build(self, into: Path) -> Path:
        folder = into / self.name
        shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__"))
        for replacement in self.replacements:
            path = folder / f"{replacement.module}.py"
            path.write_text(replaced(path.read_text(encoding="utf-8"), replacement), encoding="utf-8")
        return folder


def replaced(text: str, replacement: Replace) -> str:
    """``text`` with the definition ``replacement.name`` swapped for ``replacement.source``."""
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == replacement.name:
            lines = text.splitlines(keepends=True)
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            return "".join(lines[:start]) + replacement.source.strip("\n") + "\n" + "".join(lines[node.end_lineno :])
    raise AssertionError(f"{replacement.module}.py has no top-level {replacement.name!r}")


# -- correct code in other styles -------------------------------------------------------------------------------

ROPE_FLOAT32_TABLE = '''
def rope(x, positions, base=10000.0):
    """Cached cos/sin tables in float32, looked up by integer position; the result goes back to float64."""
    import torch

    x = torch.as_tensor(np.asarray(x), dtype=torch.float32)
    positions = torch.as_tensor(np.asarray(positions))
    half = x.shape[-1] // 2
    inv_freq = 1.0 / (base ** (torch.arange(0, 2 * half, 2, dtype=torch.float32) / (2 * half)))
    table = torch.outer(torch.arange(int(positions.max()) + 1, dtype=torch.float32), inv_freq)  # (p_max + 1, d/2)
    cos, sin = table.cos()[positions], table.sin()[positions]  # integer positions index the table
    pairs = x.reshape(*x.shape[:-1], half, 2)
    first, second = pairs[..., 0], pairs[..., 1]
    turned = torch.stack([first * cos - second * sin, first * sin + second * cos], dim=-1)
    return turned.reshape(x.shape).double().numpy()
'''

ROPE_COMPLEX_TABLE = '''
def rope(x, positions, base=10000.0):
    """Pairs as complex numbers, multiplied by a table of unit phasors indexed by position."""
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    positions = np.asarray(positions)
    freqs = base ** (-np.arange(0, d, 2) / d)
    phasors = np.exp(1j * np.outer(np.arange(positions.max() + 1), freqs))  # (p_max + 1, d/2)
    z = x[..., 0::2] + 1j * x[..., 1::2]
    z = z * phasors[positions]
    return np.stack([z.real, z.imag], axis=-1).reshape(x.shape)
'''

ATTENTION_FLOAT32_INSIDE = '''
def attention(Q, K, V, mask=None):
    """Computed in float32 like most GPU code, handed back as float64."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    _check_shapes(Q, K, V)
    q, k, v = (a.astype(np.float32) for a in (Q, K, V))
    S = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), S, np.float32(-np.inf))
    S = S - S.max(axis=-1, keepdims=True)
    weights = np.exp(S)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return (weights @ v).astype(np.float64), weights.astype(np.float64)
'''

SOFTMAX_TORCH = '''
def softmax(x, axis=-1):
    """torch's softmax, returned as a tensor (the contract allows a tensor wherever an array is returned)."""
    import torch

    return torch.softmax(torch.as_tensor(np.asarray(x, dtype=float)), dim=axis)
'''

ATTENTION_TORCH = '''
def attention(Q, K, V, mask=None):
    """The head in torch, returning tensors."""
    import torch

    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    _check_shapes(Q, K, V)
    q, k, v = (torch.from_numpy(a) for a in (Q, K, V))
    S = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    if mask is not None:
        S = S.masked_fill(~torch.as_tensor(np.asarray(mask, dtype=bool)), float("-inf"))
    weights = torch.softmax(S, dim=-1)
    return weights @ v, weights
'''

PROJECT_TORCH = '''
def project(X, W_Q, W_K, W_V):
    """Projections as torch tensors."""
    import torch

    X = torch.as_tensor(np.asarray(X, dtype=float))
    return tuple(X @ torch.as_tensor(np.asarray(W, dtype=float)) for W in (W_Q, W_K, W_V))
'''

CAUSAL_MASK_TORCH = '''
def causal_mask(n_q, n_k=None):
    """A torch bool mask."""
    import torch

    n_k = n_q if n_k is None else n_k
    if n_q < 0 or n_k < n_q:
        raise ValueError(f"causal_mask needs 0 <= n_q <= n_k, got n_q={n_q}, n_k={n_k}")
    return torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=n_k - n_q)
'''

DECODE_FLOAT32_SOFTMAX = '''
def decode_step(x_t, W_Q, W_K, W_V, cache):
    """The softmax runs in float32 and is cast back to the inputs' dtype, as many inference codebases do."""
    x_t = torch.as_tensor(x_t).unsqueeze(-2)
    q, k, v = x_t @ W_Q, x_t @ W_K, x_t @ W_V
    cache.append(k, v)
    scores = q @ cache.keys.transpose(-1, -2) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores.float(), dim=-1).to(q.dtype)
    return (weights @ cache.values).squeeze(-2)
'''

# -- real bugs, in our own code ---------------------------------------------------------------------------------

ATTENTION_MASK_AFTER_SOFTMAX_INF = '''
def attention(Q, K, V, mask=None):
    """The weights are masked after the softmax, with -inf."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    _check_shapes(Q, K, V)
    weights = softmax(scaled_scores(Q, K), axis=-1)
    if mask is not None:
        weights = np.where(np.asarray(mask, dtype=bool), weights, -np.inf)
    with np.errstate(invalid="ignore"):
        return weights @ V, weights
'''

ATTENTION_RAW_EXP = '''
def attention(Q, K, V, mask=None):
    """exp(s) / sum(exp(s)) on the raw scores: neither the max shift nor 1/sqrt(d_k)."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    _check_shapes(Q, K, V)
    S = scores(Q, K)
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(S)
        weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights
'''

CAUSAL_MASK_SQUARE = '''
def causal_mask(n_q, n_k=None):
    """Always the square n_k x n_k lower triangle, even when fewer queries than keys are asked for."""
    n = n_q if n_k is None else n_k
    return np.tril(np.ones((n, n), dtype=bool))
'''

ROPE_ARANGE = '''
def rope(x, positions, base=10000.0):
    """Rotates by the token's index in x (0, 1, 2, ...), whatever positions it was given."""
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    angles = np.arange(x.shape[-2])[:, None] * theta
    cos, sin = np.cos(angles), np.sin(angles)
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
    out[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
    return out
'''

ROPE_ONE_BASED = '''
def rope(x, positions, base=10000.0):
    """A table for positions 1 .. p_max + 1: the first token is treated as position 1."""
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    positions = np.asarray(positions)
    theta = base ** (-np.arange(0, d, 2) / d)
    table = np.arange(1, positions.max() + 2)[:, None] * theta  # row p holds the angles of position p + 1
    cos, sin = np.cos(table[positions]), np.sin(table[positions])
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
    out[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
    return out
'''

BLOCK_POST_NORM = '''
def block(X, heads, W_O, W1, b1, W2, b2):
    """The original Transformer's post-norm order: normalise after each residual add."""
    X = np.asarray(X, dtype=float)
    x = layer_norm(X + multi_head(X, heads, W_O))
    return layer_norm(x + feed_forward(x, W1, b1, W2, b2))
'''

DECODE_ATTEND_BEFORE_APPEND = '''
def decode_step(x_t, W_Q, W_K, W_V, cache):
    """Reads the cache before adding the new token; the very first token falls back to its own value."""
    x_t = torch.as_tensor(x_t).unsqueeze(-2)
    q, k, v = x_t @ W_Q, x_t @ W_K, x_t @ W_V
    if len(cache) == 0:
        cache.append(k, v)
        return v.squeeze(-2)
    K, V = cache.keys, cache.values
    weights = torch.softmax(q @ K.transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1)
    cache.append(k, v)
    return (weights @ V).squeeze(-2)
'''

ATTENTION_SOFTMAX_PLUS_ONE = '''
def attention(Q, K, V, mask=None):
    """A softmax with an extra 1 in the denominator (weights may sum to less than 1): not the lab's softmax."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    _check_shapes(Q, K, V)
    S = scaled_scores(Q, K)
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)
    top = np.maximum(S.max(axis=-1, keepdims=True), 0.0)
    e = np.exp(S - top)
    weights = e / (np.exp(-top) + e.sum(axis=-1, keepdims=True))
    return weights @ V, weights
'''

CAUSAL_MASK_ALL_TRUE = '''
def causal_mask(n_q, n_k=None):
    """Every key allowed: the shape is right, the rule is missing."""
    return np.ones((n_q, n_q if n_k is None else n_k), dtype=bool)
'''


def correct(name: str, step: str, *replacements: tuple[str, str, str]) -> Foreign:
    """Correct code: ``(module, definition, source)`` replacements that must score full everywhere."""
    return Foreign(name, step, tuple(Replace(*r) for r in replacements), True)


def bug(name: str, step: str, module: str, definition: str, source: str, explained_by: str) -> Foreign:
    """A real bug in one definition, explained on ``step`` by a mistake id or, with spaces, a property sentence."""
    mistake, sentence = (None, explained_by) if " " in explained_by else (explained_by, None)
    return Foreign(name, step, (Replace(module, definition, source),), False, mistake, sentence)


FOREIGN = (
    correct("rope_float32_table", "positions", ("positions", "rope", ROPE_FLOAT32_TABLE)),
    correct("rope_complex_table", "positions", ("positions", "rope", ROPE_COMPLEX_TABLE)),
    correct("attention_float32_inside", "equivariance", ("scaling", "attention", ATTENTION_FLOAT32_INSIDE)),
    correct("softmax_returns_tensor", "softmax", ("softmax", "softmax", SOFTMAX_TORCH)),
    correct(
        "torch_head",
        "scaling",
        ("scaling", "attention", ATTENTION_TORCH),
        ("scaling", "project", PROJECT_TORCH),
        ("mask", "causal_mask", CAUSAL_MASK_TORCH),
    ),
    correct("decode_float32_softmax", "kv_cache", ("kv_cache", "decode_step", DECODE_FLOAT32_SOFTMAX)),
    bug(
        "mask_after_softmax_inf", "mask", "scaling", "attention", ATTENTION_MASK_AFTER_SOFTMAX_INF, "mask_after_softmax"
    ),
    bug("raw_exp_attention", "scaling", "scaling", "attention", ATTENTION_RAW_EXP, "missing_scale"),
    bug("square_mask_with_cache", "mask", "mask", "causal_mask", CAUSAL_MASK_SQUARE, "mask_square"),
    bug("rope_index_positions", "positions", "positions", "rope", ROPE_ARANGE, "rope_position_offset"),
    bug("rope_one_based", "positions", "positions", "rope", ROPE_ONE_BASED, "rope_position_offset"),
    bug("post_norm_block", "block", "block", "block", BLOCK_POST_NORM, "block_post_norm"),
    bug("softmax_plus_one", "scaling", "scaling", "attention", ATTENTION_SOFTMAX_PLUS_ONE, "rows that do not sum to 1"),
    bug("causal_mask_all_true", "mask", "mask", "causal_mask", CAUSAL_MASK_ALL_TRUE, "mask_allows_everything"),
    bug(
        "attend_before_append",
        "kv_cache",
        "kv_cache",
        "decode_step",
        DECODE_ATTEND_BEFORE_APPEND,
        "attend_before_append",
    ),
)
