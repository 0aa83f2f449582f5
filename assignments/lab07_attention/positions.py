"""Step 4, positions: telling attention where each token stands (handout section `positions`).

Attention alone does not see word order (step 5 proves it). Three ways to add it:

- The sinusoidal encoding: a fixed vector per position, added to the token
  vectors before the projections. Pair ``i`` (dimensions ``2i`` and ``2i+1``)
  holds ``sin`` and ``cos`` of ``p / base**(2i/d)``, so ``PE_p . PE_{p+k}`` is
  ``sum_i cos(k w_i)``: it depends on the offset ``k`` only.
- RoPE: rotate each pair ``(2i, 2i+1)`` of a query or key by the angle
  ``p * base**(-2i/d)``. Rotations keep lengths, and the score of a query at
  ``m`` with a key at ``n`` depends only on ``n - m``.
- ALiBi: no position vectors at all; each head adds ``-m (i - j)`` to its
  scaled scores, a penalty that grows with the distance to the key.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def sinusoidal_encoding(n_positions: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """The sinusoidal position vectors of positions ``0 .. n_positions - 1``.

    Args:
        n_positions: how many positions (rows).
        d_model: the width of a position vector (the token width).
        base: the base of the frequencies (10000 in the chapter).

    Returns:
        ``PE`` of shape ``[n_positions, d_model]`` with, interleaved,
        ``PE[p, 2i] = sin(p / base**(2i/d_model))`` and
        ``PE[p, 2i+1] = cos(p / base**(2i/d_model))``.

    Example:
        >>> sinusoidal_encoding(3, 4).round(4)[1]
        array([0.8415, 0.5403, 0.01  , 1.    ])
    """
    raise NotImplementedError(
        "Lab 7 step 'positions', task sinusoidal_encoding: not implemented yet "
        "(handout: handouts/lab07_attention.md#positions)"
    )


def rope(x: ArrayLike, positions: ArrayLike, base: float = 10000.0) -> np.ndarray:
    """Rotary position embedding: turn each pair ``(2i, 2i+1)`` of ``x`` by its position's angle.

    Args:
        x: queries or keys, ``[..., n, d]`` with ``d`` even.
        positions: the integer position of each of the ``n`` tokens, ``[n]``
            (or broadcastable to ``[..., n]``); integers, so a table of angles
            may be indexed with them.
        base: the base of the frequencies (10000 in the chapter).

    Returns:
        An array shaped like ``x``; the pair ``(x[2i], x[2i+1])`` of the token at
        position ``p`` is rotated counterclockwise by ``p * base**(-2i/d)``.

    Example:
        >>> rope(np.array([[1.0, 0.0]]), [1]).round(6)  # d = 2: one pair, turned by 1 radian
        array([[0.540302, 0.841471]])
    """
    raise NotImplementedError(
        "Lab 7 step 'positions', task rope: not implemented yet (handout: handouts/lab07_attention.md#positions)"
    )


def alibi_slopes(n_heads: int) -> np.ndarray:
    """The ALiBi slope of each head: the geometric sequence ``2**(-8h/n_heads)``, ``h = 1 .. n_heads``.

    Args:
        n_heads: the number of heads.

    Returns:
        ``[n_heads]``; for 8 heads ``1/2, 1/4, ..., 1/256``.
    """
    raise NotImplementedError(
        "Lab 7 step 'positions', task alibi_slopes: not implemented yet "
        "(handout: handouts/lab07_attention.md#positions)"
    )


def alibi_bias(n: int, slope: float) -> np.ndarray:
    """The bias one ALiBi head adds to its scaled scores (causal).

    Args:
        n: the number of tokens (queries and keys).
        slope: the head's slope ``m``.

    Returns:
        ``[n, n]`` with ``-slope * (i - j)`` where key ``j <= i`` (0 on the
        diagonal, more negative the farther back the key) and ``-inf`` above
        the diagonal.
    """
    raise NotImplementedError(
        "Lab 7 step 'positions', task alibi_bias: not implemented yet (handout: handouts/lab07_attention.md#positions)"
    )
