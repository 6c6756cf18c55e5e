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


def gaussian_head_weights():
    """The fixed projections of the engineered head.

    Each of the three terms of ``-(p_i - p_j)**2`` gets its own dimension::

        Q_i = [sqrt(2) p_i, -p_i**2, 1]
        K_j = [sqrt(2) p_j, 1, -p_j**2]
        Q_i . K_j = 2 p_i p_j - p_i**2 - p_j**2 = -(p_i - p_j)**2

    Returns
    -------
    W_Q : ndarray, shape (4, 3)
    W_K : ndarray, shape (4, 3)
    W_V : ndarray, shape (4, 1)
        ``W_V`` copies the signal column, so the head averages the signal.
    """
    r2 = np.sqrt(2.0)
    W_Q = np.array([[0, 0, 0], [r2, 0, 0], [0, -1, 0], [0, 0, 1]], dtype=float)
    W_K = np.array([[0, 0, 0], [r2, 0, 0], [0, 0, -1], [0, 1, 0]], dtype=float)
    W_V = np.array([[1], [0], [0], [0]], dtype=float)
    return W_Q, W_K, W_V


def gaussian_head(signal, positions, temperature, *, mask=None):
    r"""Run the engineered head on a signal: a Gaussian smoother.

    .. math:: \text{output}_i = \sum_j w_{ij} s_j, \qquad
        w_{ij} = \frac{\exp(-(p_i - p_j)^2 / \tau)}{\sum_k \exp(-(p_i - p_k)^2 / \tau)}

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
