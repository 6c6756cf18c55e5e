r"""Kernel regression: the classical estimator the engineered head reproduces.

The Nadaraya-Watson estimator with a Gaussian kernel of bandwidth ``h``,

.. math:: \hat f(x) = \frac{\sum_j K_h(x - x_j)\, y_j}{\sum_j K_h(x - x_j)},
    \qquad K_h(u) = \exp\!\left(-\frac{u^2}{2 h^2}\right),

is the engineered attention head with temperature ``tau = 2 h**2``
(:func:`temperature_to_bandwidth` converts back).
:func:`nadaraya_watson` is written from this formula, independently of the
attention code, so that the two can be checked against each other. The
temperature is picked by leave-one-out cross-validation, which for this
estimator is the head itself with the diagonal of its attention masked out.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_array, as_positive_scalar, as_temperatures, same_length
from .core import softmax
from .head import gaussian_head_weights, positional_features

#: Candidate temperatures searched by :func:`choose_temperature` by default.
DEFAULT_CANDIDATES = np.logspace(-6, 1, 141)
#: Entries of the (candidates, n, n) weight blocks of :func:`leave_one_out_scores`.
_BLOCK = 2**22


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


def temperature_to_bandwidth(temperature) -> float:
    """``h = sqrt(tau / 2)``: the bandwidth equivalent to a temperature."""
    return float(np.sqrt(as_positive_scalar(temperature, "temperature") / 2.0))


def candidate_temperatures(candidates=None) -> np.ndarray:
    """The temperatures a leave-one-out search tries, checked.

    Parameters
    ----------
    candidates : array_like, shape (m,), optional
        Temperatures, all ``> 0``; :data:`DEFAULT_CANDIDATES` when omitted.

    Returns
    -------
    ndarray, shape (m,)
    """
    return DEFAULT_CANDIDATES if candidates is None else as_temperatures(candidates, "candidates")


def leave_one_out_scores(signal, positions, candidates=None) -> np.ndarray:
    r"""Leave-one-out error of the masked head for many temperatures at once.

    Leave-one-out predicts every sample from all the others: it is the
    engineered head with the diagonal of its attention masked out,

    .. math:: \mathrm{LOO}(\tau) = \frac{1}{n} \sum_i
        \Big(s_i - \sum_{j \ne i} w^{(-i)}_{ij} s_j\Big)^2 .

    The masked scores ``-(p_i - p_j)**2`` (``-inf`` on the diagonal) come
    from the head's projections once; each block of candidates then costs
    one batched softmax and one batched product with the signals.

    Parameters
    ----------
    signal : array_like, shape (n,) or (k, n)
        One signal, or ``k`` signals sampled at the same positions; ``n >= 2``.
    positions : array_like, shape (n,)
    candidates : array_like, shape (m,), optional
        Temperatures ``> 0``; :data:`DEFAULT_CANDIDATES` when omitted.

    Returns
    -------
    scores : ndarray, shape (m,) or (k, m)
        ``scores[..., t]`` is the leave-one-out mean squared error at ``candidates[t]``.
    """
    s = as_array(signal, "signal")
    if s.ndim not in (1, 2) or s.shape[-1] < 2:
        raise ValueError(f"signal must have shape (n,) or (k, n) with n >= 2, got {s.shape}")
    S = np.atleast_2d(s)  # (k, n)
    taus = candidate_temperatures(candidates)
    X = positional_features(S[0], positions)  # (n, 4); checks positions
    W_Q, W_K, _ = gaussian_head_weights()
    scores = (X @ W_Q) @ (X @ W_K).T  # (n, n) = -(p_i - p_j)**2
    np.fill_diagonal(scores, -np.inf)  # token i may not attend to itself
    out = np.empty((S.shape[0], taus.size))  # (k, m)
    step = max(1, _BLOCK // scores.size)
    for start in range(0, taus.size, step):
        block = taus[start : start + step]  # (c,)
        weights = softmax(scores / block[:, None, None], axis=-1)  # (c, n, n)
        residual = S.T - weights @ S.T  # (c, n, k)
        out[:, start : start + step] = np.mean(residual**2, axis=1).T
    return out[0] if s.ndim == 1 else out


def choose_temperature(signal, positions, candidates=None):
    """Pick the temperature by leave-one-out cross-validation.

    Each candidate is scored by how well the head, with its diagonal masked
    out, predicts every sample from all the others
    (:func:`leave_one_out_scores`); the noise on sample ``i`` then never
    helps to predict sample ``i``, so the score cannot reward copying it.

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
    taus = candidate_temperatures(candidates)
    scores = leave_one_out_scores(s, p, taus)  # (m,)
    return float(taus[np.argmin(scores)]), scores
