"""The one-dimensional attention head, and why it cannot smooth a signal.

When each token is a single number ``x_i`` (the signal value), the
projections ``W_Q``, ``W_K`` and ``W_V`` are 1x1 matrices ``w_q``, ``w_k``,
``w_v`` and the scaled score of a pair is

.. math:: \\frac{q_i k_j}{\\tau} = \\frac{w_q w_k}{\\tau}\\, x_i x_j = c\\, x_i x_j,

a *product* of the two values, not a function of their distance. The single
number ``c = w_q w_k / tau`` (the score strength) is all that the choice of
``W_Q``, ``W_K`` and ``tau`` can change. Row ``i`` of the attention matrix,
``softmax_j(c x_i x_j)``, therefore depends on token ``i`` only through its
own value ``x_i``: the head is blind to positions.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_array, as_nonnegative_scalar, as_positive_scalar, same_length
from .core import attention
from .knobs import rmse


def _as_weight(x, name: str) -> float:
    value = as_array(x, name, ndim=0)
    return float(value)


def onedim_head(signal, w_q=1.0, w_k=1.0, w_v=1.0, temperature=None):
    """Attention on one-dimensional tokens with 1x1 projections.

    .. math:: w_{ij} = \\operatorname{softmax}_j\\!\\left(
        \\frac{w_q w_k\\, x_i x_j}{\\tau}\\right), \\qquad
        \\text{output}_i = \\sum_j w_{ij}\\, w_v x_j

    Parameters
    ----------
    signal : array_like, shape (n,)
        The token values ``x``.
    w_q, w_k, w_v : float
        The entries of the 1x1 matrices ``W_Q``, ``W_K``, ``W_V``.
    temperature : float, optional
        The divisor ``tau``; ``sqrt(d_k) = 1`` when omitted.

    Returns
    -------
    output : ndarray, shape (n,)
    weights : ndarray, shape (n, n)
        Row ``i`` holds how much token ``i`` attends to each token.
    """
    x = as_array(signal, "signal", ndim=1)
    if x.size == 0:
        raise ValueError("signal must hold at least one value")
    X = x[:, None]  # (n, 1): each token is one number
    W_Q = np.array([[_as_weight(w_q, "w_q")]])  # (1, 1)
    W_K = np.array([[_as_weight(w_k, "w_k")]])  # (1, 1)
    W_V = np.array([[_as_weight(w_v, "w_v")]])  # (1, 1)
    output, weights = attention(X @ W_Q, X @ W_K, X @ W_V, temperature)
    return output[:, 0], weights  # (n,), (n, n)


def score_strength(w_q=1.0, w_k=1.0, temperature=1.0) -> float:
    """The one number ``c = w_q w_k / tau`` that sets every 1-D score ``c x_i x_j``."""
    tau = as_positive_scalar(temperature, "temperature")
    return _as_weight(w_q, "w_q") * _as_weight(w_k, "w_k") / tau


def most_attended(weights) -> np.ndarray:
    """Index of the key each query gives its largest weight.

    Parameters
    ----------
    weights : array_like, shape (n_queries, n_keys)

    Returns
    -------
    ndarray of int, shape (n_queries,)
    """
    return np.argmax(as_array(weights, "weights", ndim=2), axis=1)


def strength_sweep(signal, clean, strengths):
    """Root-mean-square error of the 1-D head's output for each strength ``c``.

    Each strength is realised as ``w_q = c``, ``w_k = w_v = 1``, ``tau = 1``;
    any other ``W_Q``, ``W_K``, ``tau`` with the same ``c`` gives the same
    attention matrix.

    Parameters
    ----------
    signal : array_like, shape (n,)
        The noisy token values.
    clean : array_like, shape (n,)
        The ground truth to compare the outputs with.
    strengths : array_like, shape (m,)

    Returns
    -------
    ndarray, shape (m,)
        ``RMSE(output, clean)`` for each strength (see :func:`selfattention.knobs.rmse`).
    """
    cs = as_array(strengths, "strengths", ndim=1)
    errors = [rmse(onedim_head(signal, w_q=c)[0], clean) for c in cs]
    return np.array(errors)  # (m,)


def local_share(weights, positions, radius) -> float:
    """Mean share of each row's attention that lands within ``radius`` of the query.

    .. math:: \\frac{1}{n} \\sum_i \\sum_{j:\\, |p_i - p_j| \\le r} w_{ij}

    A head that smooths puts most of its weight near the query; a uniform
    average puts there only the fraction of tokens that lie within ``r``.

    Parameters
    ----------
    weights : array_like, shape (n, n)
    positions : array_like, shape (n,)
    radius : float
        The neighbourhood half-width ``r >= 0``, in position units.

    Returns
    -------
    float, between 0 and 1
    """
    w = as_array(weights, "weights", ndim=2)
    p = as_array(positions, "positions", ndim=1)
    if w.shape != (p.size, p.size):
        raise ValueError(f"weights must have shape (n, n) = {(p.size, p.size)}, got {w.shape}")
    r = as_nonnegative_scalar(radius, "radius")
    near = np.abs(p[:, None] - p[None, :]) <= r  # (n, n)
    return float(np.mean(np.sum(np.where(near, w, 0.0), axis=1)))
