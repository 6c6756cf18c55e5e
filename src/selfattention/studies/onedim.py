r"""The one-dimensional attention head, and why it cannot smooth a signal.

When each token is a single number ``x_i`` (the signal value), the
projections ``W_Q``, ``W_K`` and ``W_V`` are 1x1 matrices ``w_q``, ``w_k``,
``w_v`` and the scaled score of a pair is

.. math:: \frac{q_i k_j}{\tau} = \frac{w_q w_k}{\tau}\, x_i x_j = c\, x_i x_j,

a *product* of the two values, not a function of their distance. The single
number ``c = w_q w_k / tau`` (the score strength) is all that the choice of
``W_Q``, ``W_K`` and ``tau`` can change. Row ``i`` of the attention matrix,
``softmax_j(c x_i x_j)``, therefore depends on token ``i`` only through its
own value ``x_i``: the head is blind to positions.
"""

from __future__ import annotations

import numpy as np

from .. import memory
from .._validation import as_array, as_real_scalar, as_series, finite_result, naming
from ..core import attention, softmax
from ..metrics import rmse


def onedim_head(signal, w_q=1.0, w_k=1.0, w_v=1.0, temperature=None):
    r"""Attention on one-dimensional tokens with 1x1 projections.

    .. math:: a_{ij} = \operatorname{softmax}_j\!\left(
        \frac{w_q w_k\, x_i x_j}{\tau}\right), \qquad
        \text{output}_i = \sum_j a_{ij}\, w_v x_j

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
    (x,) = as_series(signal=signal)
    X = x[:, None]  # (n, 1): each token is one number
    w_q, w_k, w_v = (as_real_scalar(w, name) for w, name in ((w_q, "w_q"), (w_k, "w_k"), (w_v, "w_v")))
    _check_products(x, w_q, w_k, w_v)
    W_Q, W_K, W_V = np.array([[w_q]]), np.array([[w_k]]), np.array([[w_v]])  # (1, 1) each
    output, weights = attention(X @ W_Q, X @ W_K, X @ W_V, temperature)
    return output[:, 0], weights  # (n,), (n, n)


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
        ``RMSE(output, clean)`` for each strength (see :func:`selfattention.metrics.rmse`).
    """
    x, truth = as_series(signal=signal, clean=clean)
    cs = as_array(strengths, "strengths", ndim=1)
    if _overflows(np.abs(cs).max(initial=0.0), np.abs(x).max(), np.abs(x).max()):
        raise ValueError("strengths and signal: a score c x_i x_j overflows the double range")
    with naming("signal and clean", "estimate and truth"):  # the outputs, from signal, against clean
        errors = [rmse(onedim_head(x, w_q=c)[0], truth) for c in cs]
    return np.array(errors)  # (m,)


def _check_products(x, w_q, w_k, w_v) -> None:
    """Raise, naming the arguments, if the scores ``w_q w_k x_i x_j`` or values ``w_v x_j`` could overflow."""
    memory.require_matrix(x.size, x.size, "signal")
    big = np.abs(x).max()
    for w, name in ((w_q, "w_q"), (w_k, "w_k")):
        if _overflows(w, big):
            raise ValueError(f"signal and {name}: the products {name} x_i overflow the double range")
    if _overflows(w_q, w_k, big, big):
        raise ValueError("signal, w_q and w_k: the scores w_q w_k x_i x_j overflow the double range")
    if _overflows(w_v, big):
        raise ValueError("signal and w_v: the values w_v x_j overflow the double range")


def _overflows(*factors) -> bool:
    """Whether the product of ``factors`` exceeds the largest double (judged by logarithms, so nothing overflows)."""
    sizes = [abs(float(f)) for f in factors]
    margin = 1e-9  # the rounding of the products the head computes: refuse what is this close to the limit
    return 0.0 not in sizes and sum(np.log(sizes)) > np.log(np.finfo(float).max) - margin


def onedim_curve(signal, values, strength, w_v=1.0):
    r"""The 1-D head's output as a function of a token's own value, and its slope.

    A token of value :math:`x_i` gets the weights
    :math:`a_{ij} = \operatorname{softmax}_j(c\, x_i\, s_j)` over the tokens
    :math:`s_j` of ``signal``, and outputs

    .. math:: g_c(x_i) = w_v \sum_j a_{ij}\, s_j, \qquad
        g_c'(x_i) = c\, w_v \Big(\sum_j a_{ij}\, s_j^2 - \big(\sum_j a_{ij}\, s_j\big)^2\Big):

    the slope is ``c w_v`` times the variance of the values under the
    weights. At ``x_i = 0`` the weights are uniform, so ``g_c(0)`` is the mean
    of the signal and ``g_c'(0) = c w_v Var(s)``; where the weights pile onto
    the largest (or smallest) values, that variance, and the slope, fall.

    Parameters
    ----------
    signal : array_like, shape (n,)
        The token values ``s`` the head attends over.
    values : array_like, shape (m,)
        The own values ``x`` at which to evaluate the curve.
    strength : float
        The score strength ``c = w_q w_k / tau``.
    w_v : float
        The value projection.

    Returns
    -------
    g : ndarray, shape (m,)
    slope : ndarray, shape (m,)
    """
    s = as_array(signal, "signal", ndim=1)
    if s.size == 0:
        raise ValueError("signal must hold at least one value")
    x = as_array(values, "values", ndim=1)
    c, v = as_real_scalar(strength, "strength"), as_real_scalar(w_v, "w_v")
    with np.errstate(over="ignore", invalid="ignore"):
        scores = c * x[:, None] * s[None, :]  # (m, n)
    finite_result(scores, "strength, signal or values: the scores overflow the double range")
    a = softmax(scores, axis=1)  # (m, n)
    mean = a @ s  # (m,)
    with np.errstate(over="ignore", invalid="ignore"):
        g, slope = v * mean, c * v * (a @ s**2 - mean**2)  # (m,), (m,)
    return finite_result((g, slope), "strength, signal, values or w_v: the curve overflows the double range")
