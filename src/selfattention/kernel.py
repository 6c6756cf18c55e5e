"""Kernel regression: the classical estimator the engineered head reproduces.

The Nadaraya-Watson estimator with a Gaussian kernel of bandwidth ``h``,

.. math:: \\hat f(x) = \\frac{\\sum_j K_h(x - x_j)\\, y_j}{\\sum_j K_h(x - x_j)},
    \\qquad K_h(u) = \\exp\\!\\left(-\\frac{u^2}{2 h^2}\\right),

is the engineered attention head with temperature ``tau = 2 h**2``. This
module writes it from the formula, independently of :mod:`selfattention.core`,
and picks the temperature by leave-one-out cross-validation.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_array, as_positive_scalar, same_length
from .head import gaussian_head

#: Candidate temperatures searched by :func:`choose_temperature` by default.
DEFAULT_CANDIDATES = np.logspace(-6, 1, 141)


def nadaraya_watson(x_query, x, y, bandwidth):
    """Gaussian-kernel Nadaraya-Watson estimate at ``x_query``.

    Parameters
    ----------
    x_query : array_like, shape (m,)
        Where to estimate.
    x : array_like, shape (n,)
        Sample locations.
    y : array_like, shape (n,)
        Sample values.
    bandwidth : float
        Kernel standard deviation ``h > 0``.

    Returns
    -------
    estimate : ndarray, shape (m,)
    weights : ndarray, shape (m, n)
        Normalised kernel weights; row ``i`` sums to 1.
    """
    xq = as_array(x_query, "x_query", ndim=1)
    x = as_array(x, "x", ndim=1)
    y = as_array(y, "y", ndim=1)
    same_length(x, y, "x", "y")
    if x.size == 0:
        raise ValueError("x must hold at least one sample")
    h = as_positive_scalar(bandwidth, "bandwidth")
    u = (xq[:, None] - x[None, :]) / h  # (m, n)
    log_k = -0.5 * u**2
    log_k -= log_k.max(axis=1, keepdims=True)  # the nearest sample gets exp(0) = 1
    k = np.exp(log_k)  # (m, n)
    weights = k / k.sum(axis=1, keepdims=True)
    return weights @ y, weights


def bandwidth_to_temperature(bandwidth) -> float:
    """``tau = 2 h**2``: the temperature equivalent to a kernel bandwidth."""
    return 2.0 * as_positive_scalar(bandwidth, "bandwidth") ** 2


def temperature_to_bandwidth(temperature) -> float:
    """``h = sqrt(tau / 2)``: the bandwidth equivalent to a temperature."""
    return float(np.sqrt(as_positive_scalar(temperature, "temperature") / 2.0))


def leave_one_out_error(signal, positions, temperature) -> float:
    """Mean squared error of predicting each sample from all the others.

    This is the engineered head with the diagonal of the attention matrix
    masked out: token ``i`` may attend to every token but itself.

    .. math:: \\mathrm{LOO}(\\tau) = \\frac{1}{n} \\sum_i
        \\Big(s_i - \\sum_{j \\ne i} w^{(-i)}_{ij} s_j\\Big)^2
    """
    s = as_array(signal, "signal", ndim=1)
    if s.size < 2:
        raise ValueError(f"leave-one-out needs at least 2 samples, got {s.size}")
    off_diagonal = ~np.eye(s.size, dtype=bool)  # (n, n)
    prediction, _ = gaussian_head(s, positions, temperature, mask=off_diagonal)
    return float(np.mean((s - prediction) ** 2))


def choose_temperature(signal, positions, candidates=None):
    """Pick the temperature by leave-one-out cross-validation.

    Parameters
    ----------
    signal : array_like, shape (n,)
        The noisy observations, ``n >= 2``.
    positions : array_like, shape (n,)
    candidates : array_like, shape (m,), optional
        Temperatures to try, all ``> 0``; :data:`DEFAULT_CANDIDATES`
        (log-spaced from 1e-6 to 10) when omitted.

    Returns
    -------
    best_tau : float
        The candidate with the lowest leave-one-out error (the first, on ties).
    scores : ndarray, shape (m,)
        The leave-one-out mean squared error of each candidate.
    """
    s = as_array(signal, "signal", ndim=1)
    p = as_array(positions, "positions", ndim=1)
    same_length(s, p, "signal", "positions")
    taus = DEFAULT_CANDIDATES if candidates is None else as_array(candidates, "candidates", ndim=1)
    if taus.size == 0:
        raise ValueError("candidates must hold at least one temperature")
    if (taus <= 0).any():
        raise ValueError(f"candidates must all be positive, got {taus[taus <= 0][0]!r}")
    scores = np.array([leave_one_out_error(s, p, tau) for tau in taus])  # (m,)
    return float(taus[np.argmin(scores)]), scores
