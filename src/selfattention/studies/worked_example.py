r"""A small worked example of self-attention, every intermediate kept.

Four tokens of dimension ``d_model = 3`` are projected to queries and keys of
dimension ``d_k = 2`` and values of dimension ``d_v = 2``:

.. math:: Q = X W_Q, \quad K = X W_K, \quad V = X W_V, \quad
    A = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right),
    \quad \text{output} = A V.
"""

from __future__ import annotations

import numpy as np

from .. import memory
from .._validation import as_array, finite_result
from ..core import attention


def example_tokens():
    """The inputs of the worked example: small, readable numbers.

    Returns
    -------
    X : ndarray, shape (4, 3)
        Four tokens, one per row.
    W_Q : ndarray, shape (3, 2)
    W_K : ndarray, shape (3, 2)
    W_V : ndarray, shape (3, 2)
    """
    X = np.array([[1.0, 0.0, 1.0], [0.0, 2.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 2.0]])
    W_Q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    W_K = np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    W_V = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    return X, W_Q, W_K, W_V


def attention_steps(X, W_Q, W_K, W_V) -> dict[str, np.ndarray]:
    """Run one attention head and keep every intermediate matrix.

    The weights and the output come from :func:`selfattention.attention`
    itself; only the scores before the softmax are formed here, for display.

    Parameters
    ----------
    X : array_like, shape (n, d_model)
    W_Q : array_like, shape (d_model, d_k)
    W_K : array_like, shape (d_model, d_k)
    W_V : array_like, shape (d_model, d_v)

    Returns
    -------
    dict of str to ndarray
        ``X`` (n, d_model); ``Q``, ``K`` (n, d_k); ``V`` (n, d_v);
        ``scores`` = Q K^T (n, n); ``scaled`` = scores / sqrt(d_k) (n, n);
        ``weights`` = softmax(scaled) by rows (n, n); ``output`` (n, d_v).
    """
    X = as_array(X, "X", ndim=2)
    mats = {name: as_array(w, name, ndim=2) for name, w in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V))}
    for name, w in mats.items():
        if w.shape[0] != X.shape[1]:
            raise ValueError(f"{name} must have {X.shape[1]} rows (d_model), got shape {w.shape}")
    memory.require_matrix(X.shape[0], X.shape[0], "X", count=4)  # scores, scaled, weights, and the peak
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported by name
        Q, K, V = (finite_result(X @ mats[w], f"X and {w}: the product overflows the double range")
                   for w in ("W_Q", "W_K", "W_V"))  # (n, d_k), (n, d_k), (n, d_v)
        scores = finite_result(Q @ K.T, "X, W_Q and W_K: the scores overflow the double range")  # (n, n)
    output, weights = attention(Q, K, V)  # (n, d_v), (n, n)
    scaled = scores / np.sqrt(Q.shape[1])  # (n, n)
    return {"X": X, "Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled,
            "weights": weights, "output": output}
