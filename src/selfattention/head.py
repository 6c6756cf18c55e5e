r"""The hand-engineered attention head that smooths a signal.

Tokens carry a signal value ``s`` and a position ``p``. Augmenting each token
to ``x = [s, p, p**2, 1]`` lets fixed projections make the query-key dot
product equal

.. math:: q_i \cdot k_j = -(p_i - p_j)^2 = -p_i^2 + 2 p_i p_j - p_j^2,

so that, after the softmax, token ``i`` attends to its neighbours with
Gaussian weights ``exp(-(p_i - p_j)^2 / tau)`` and the head returns a local
average of the signal.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_array, as_positive_scalar, same_length
from .core import attention


def positional_features(signal, positions) -> np.ndarray:
    """Augment a 1-D signal with quadratic position features.

    Parameters
    ----------
    signal : array_like, shape (n,)
    positions : array_like, shape (n,)

    Returns
    -------
    X : ndarray, shape (n, 4)
        Columns ``[signal, p, p**2, 1]``.
    """
    s = as_array(signal, "signal", ndim=1)
    p = as_array(positions, "positions", ndim=1)
    same_length(s, p, "signal", "positions")
    if s.size == 0:
        raise ValueError("signal must hold at least one value")
    return np.column_stack([s, p, p**2, np.ones_like(p)])  # (n, 4)


def gaussian_head_weights(d_k=3):
    """The fixed projections of the engineered head.

    With ``d_k = 3`` each of the three terms of ``-(p_i - p_j)**2`` gets its
    own dimension::

        q_i = [sqrt(2) p_i, -p_i**2, 1]
        k_j = [sqrt(2) p_j, 1, -p_j**2]
        q_i . k_j = 2 p_i p_j - p_i**2 - p_j**2 = -(p_i - p_j)**2

    With ``d_k = 2`` the middle dimension is dropped, and ``q_i . k_j =
    2 p_i p_j - p_j**2 = -(p_i - p_j)**2 + p_i**2``. The extra ``p_i**2`` is
    the same for every key of row ``i``, and the softmax of a row does not
    change when one number is added to all its scores: the weights are the
    same.

    Parameters
    ----------
    d_k : {3, 2}
        The dimension of the queries and keys.

    Returns
    -------
    W_Q : ndarray, shape (4, d_k)
    W_K : ndarray, shape (4, d_k)
    W_V : ndarray, shape (4, 1)
        ``W_V`` copies the signal column, so the head averages the signal.
    """
    if isinstance(d_k, bool) or not isinstance(d_k, int | np.integer) or d_k not in (2, 3):
        raise ValueError(f"d_k must be 3 or 2, got {d_k!r}")
    r2 = np.sqrt(2.0)
    W_Q = np.array([[0, 0, 0], [r2, 0, 0], [0, -1, 0], [0, 0, 1]], dtype=float)
    W_K = np.array([[0, 0, 0], [r2, 0, 0], [0, 0, -1], [0, 1, 0]], dtype=float)
    W_V = np.array([[1], [0], [0], [0]], dtype=float)
    keep = [0, 1, 2] if d_k == 3 else [0, 2]  # d_k = 2: drop the term -p_i**2 of the query alone
    return W_Q[:, keep], W_K[:, keep], W_V


def fixed_divisor_weights(temperature):
    r"""Projections that give the head at ``temperature`` when the scores are divided by ``sqrt(d_k)``.

    A transformer always divides the scores by ``sqrt(d_k)``; it has no
    temperature knob. Scaling ``W_Q`` by ``sqrt(d_k) / tau`` gives the same
    weights as the book's head at temperature ``tau``:

    .. math:: \frac{(X W_Q \tfrac{\sqrt{d_k}}{\tau})(X W_K)^\top}{\sqrt{d_k}}
        = \frac{Q K^\top}{\tau}.

    Parameters
    ----------
    temperature : float
        The book's ``tau > 0``.

    Returns
    -------
    W_Q : ndarray, shape (4, 3)
        :func:`gaussian_head_weights`'s ``W_Q`` times ``sqrt(3) / tau``.
    W_K : ndarray, shape (4, 3)
    W_V : ndarray, shape (4, 1)
    """
    tau = as_positive_scalar(temperature, "temperature")
    W_Q, W_K, W_V = gaussian_head_weights()
    return W_Q * (np.sqrt(W_Q.shape[1]) / tau), W_K, W_V


def gaussian_head(signal, positions, temperature, *, mask=None):
    r"""Run the engineered head on a signal: a Gaussian smoother.

    .. math:: \text{output}_i = \sum_j a_{ij} s_j, \qquad
        a_{ij} = \frac{\exp(-(p_i - p_j)^2 / \tau)}{\sum_l \exp(-(p_i - p_l)^2 / \tau)}

    Parameters
    ----------
    signal : array_like, shape (n,)
    positions : array_like, shape (n,)
    temperature : float
        ``tau > 0``; the kernel's bandwidth is ``sqrt(tau / 2)``.
    mask : array_like of bool, shape (n, n), optional
        Passed to :func:`attention`; ``False`` entries get weight 0.

    Returns
    -------
    output : ndarray, shape (n,)
    weights : ndarray, shape (n, n)
    """
    tau = as_positive_scalar(temperature, "temperature")
    X = positional_features(signal, positions)  # (n, 4)
    W_Q, W_K, W_V = gaussian_head_weights()
    output, weights = attention(X @ W_Q, X @ W_K, X @ W_V, tau, mask=mask)
    return output[:, 0], weights  # (n,), (n, n)
