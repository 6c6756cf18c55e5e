r"""Measures of error and of attention: how far an estimate is from the truth,
and what an attention matrix does.

An attention matrix ``A`` has one row per query, holding non-negative weights
that sum to 1. Its two limits are the identity (every token attends to itself
only) and the uniform matrix ``1/n`` (every token averages all); the
functions here say where a matrix lies between them, how many tokens a row
really averages and where its weight goes.
"""

from __future__ import annotations

import numpy as np

from ._validation import (
    as_array,
    as_nonnegative_scalar,
    as_series,
    as_weights,
    finite_result,
    power_of_two,
    same_length,
)


def rmse(estimate, truth) -> float:
    r"""Root-mean-square error of ``estimate`` against ``truth``.

    .. math:: \mathrm{RMSE} = \sqrt{\tfrac{1}{n} \sum_i (\text{estimate}_i - \text{truth}_i)^2}

    Parameters
    ----------
    estimate, truth : array_like, shape (n,)

    Returns
    -------
    float
    """
    e, t = as_series(estimate=estimate, truth=truth)
    with np.errstate(over="ignore"):
        error = finite_result(e - t, "estimate and truth: their difference overflows the double range")
    scale = np.abs(error).max()  # scaled, so that squaring cannot overflow
    return float(scale * np.sqrt(np.mean((error / scale) ** 2))) if scale > 0 else 0.0


def entropy(weights) -> np.ndarray:
    r"""Shannon entropy (in nats) of each row of an attention matrix.

    .. math:: H_i = -\sum_j a_{ij} \log a_{ij}, \qquad 0 \log 0 = 0

    It is ``log(n_keys)`` for uniform weights and 0 for a one-hot row.

    Parameters
    ----------
    weights : array_like, shape (n_queries, n_keys)
        Non-negative rows that sum to 1.

    Returns
    -------
    ndarray, shape (n_queries,)
    """
    w = as_weights(weights, "weights")
    safe = np.where(w > 0, w, 1.0)  # log(1) = 0 where the weight is 0
    return -np.sum(w * np.log(safe), axis=1)  # (n_queries,)


def jacobian_norm(weights) -> np.ndarray:
    r"""How strongly each row of weights responds to its scores: the size of the softmax's derivative.

    For row :math:`i`, the weights :math:`a_{ij} = \operatorname{softmax}_j(e_{ij})`,
    the derivative of the weights by the scores is the matrix
    :math:`\operatorname{diag}(a_{i\cdot}) - a_{i\cdot}^\top a_{i\cdot}`, whose
    Frobenius norm is

    .. math:: \big\|\operatorname{diag}(a_{i\cdot}) - a_{i\cdot}^\top a_{i\cdot}\big\|_F
        = \sqrt{\textstyle\sum_j a_{ij}^2 - 2 \sum_j a_{ij}^3 + \big(\sum_j a_{ij}^2\big)^2}.

    It is 0 for a one-hot row (the softmax is saturated: a small change of
    the scores moves no weight) and ``sqrt((1 - 1/n) / n)`` for ``n`` equal
    weights. The sum over pairs, :math:`(\sum_j a_{ij}^2)^2 - \sum_j a_{ij}^4`, is
    taken apart around the largest weight, so that a nearly one-hot row loses
    no precision to cancellation.

    Parameters
    ----------
    weights : array_like, shape (n_queries, n_keys)
        Non-negative rows that sum to 1.

    Returns
    -------
    ndarray, shape (n_queries,)
    """
    w = as_weights(weights, "weights")
    b = np.sort(w**2, axis=1)  # (n_queries, n_keys), the largest last
    rest = b[:, :-1].sum(axis=1)  # (n_queries,): every squared weight but the largest
    pairs = 2 * b[:, -1] * rest + rest**2 - np.sum(b[:, :-1] ** 2, axis=1)  # sum over j != l of a_j^2 a_l^2
    return np.sqrt(np.maximum(np.sum((w - w**2) ** 2, axis=1) + pairs, 0.0))  # (n_queries,)


def effective_neighbours(weights) -> np.ndarray:
    r"""How many tokens each query really averages: ``1 / sum_j a_ij**2``.

    .. math:: N_{\text{eff},i} = \frac{1}{\sum_j a_{ij}^2}

    A row that puts weight ``1/m`` on ``m`` tokens gives exactly ``m``;
    averaging independent noise of standard deviation ``sigma`` with row
    ``i`` leaves noise of standard deviation ``sigma / sqrt(N_eff_i)``.

    Parameters
    ----------
    weights : array_like, shape (n, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    w = _square(weights)
    return 1.0 / np.sum(w**2, axis=1)  # (n,)


def distance_from_identity(weights) -> float:
    """``max |A - I|``: how far an attention matrix is from "attend to yourself".

    Parameters
    ----------
    weights : array_like, shape (n, n)

    Returns
    -------
    float
    """
    w = _square(weights)
    return float(np.max(np.abs(w - np.eye(w.shape[0]))))


def distance_from_uniform(weights) -> float:
    """``max |A - 1/n|``: how far an attention matrix is from "attend to all equally".

    Parameters
    ----------
    weights : array_like, shape (n, n)

    Returns
    -------
    float
    """
    w = _square(weights)
    return float(np.max(np.abs(w - 1.0 / w.shape[0])))


def _square(weights) -> np.ndarray:
    return as_weights(weights, "weights", square=True)


def most_attended(weights) -> np.ndarray:
    """Index of the key each query gives its largest weight.

    Parameters
    ----------
    weights : array_like, shape (n_queries, n_keys)

    Returns
    -------
    ndarray of int, shape (n_queries,)
    """
    return np.argmax(as_weights(weights, "weights"), axis=1)


def row_moments(weights, positions) -> tuple[np.ndarray, np.ndarray]:
    r"""Where each row's weight sits in position, and how widely it spreads.

    .. math:: \operatorname{centre}_i = \sum_j a_{ij}\, p_j, \qquad
        \operatorname{spread}_i = \Big(\sum_j a_{ij}\, (p_j - \operatorname{centre}_i)^2\Big)^{1/2}

    For a row that is a whole Gaussian of standard deviation ``h`` centred on
    ``c``, these are about ``c`` and ``h``; cut by an end of the interval, the
    centre moves inside it.

    Parameters
    ----------
    weights : array_like, shape (n_queries, n)
    positions : array_like, shape (n,)

    Returns
    -------
    centres : ndarray, shape (n_queries,)
    spreads : ndarray, shape (n_queries,)
    """
    w = as_weights(weights, "weights")
    p = as_array(positions, "positions", ndim=1)
    if w.shape[1] != p.size:
        raise ValueError(f"weights must have one column per position ({p.size}), got shape {w.shape}")
    mid = p.min() / 2 + p.max() / 2  # moments about the middle of the range: no cancellation far away
    scale = power_of_two(float(np.max(np.abs(p - mid))))  # exact: the squares below cannot overflow
    offsets = (p - mid) / scale  # (n,), within [-1, 1]
    centres = w @ offsets  # (n_queries,)
    spreads = np.sqrt(np.sum(w * (offsets[None, :] - centres[:, None]) ** 2, axis=1))  # (n_queries,)
    return centres * scale + mid, spreads * scale


def local_share(weights, positions, radius) -> float:
    r"""Mean share of each row's attention that lands within ``radius`` of the query.

    .. math:: \frac{1}{n} \sum_i \sum_{j:\, |p_i - p_j| \le r} a_{ij}

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
    w = as_weights(weights, "weights")
    p = as_array(positions, "positions", ndim=1)
    if w.shape != (p.size, p.size):
        raise ValueError(f"weights must have shape (n, n) = {(p.size, p.size)}, got {w.shape}")
    r = as_nonnegative_scalar(radius, "radius")
    with np.errstate(over="ignore"):  # an overflowing distance is correctly "not near"
        near = np.abs(p[:, None] - p[None, :]) <= r  # (n, n)
    return float(np.mean(np.sum(np.where(near, w, 0.0), axis=1)))


def shrunk_share(output, signal) -> float:
    r"""Share of the tokens whose output is smaller in magnitude than their input.

    .. math:: \frac{1}{n}\, \#\{i : |\text{output}_i| < |s_i|\}

    Parameters
    ----------
    output, signal : array_like, shape (n,)

    Returns
    -------
    float, between 0 and 1
    """
    o = as_array(output, "output", ndim=1)
    s = as_array(signal, "signal", ndim=1)
    same_length(o, s, "output", "signal")
    if s.size == 0:
        raise ValueError("signal must hold at least one value")
    return float(np.mean(np.abs(o) < np.abs(s)))



def mean_attended_distance(weights, positions) -> float:
    r"""How far, on average, queries look: :math:`\frac1N \sum_i \sum_j a_{ij} |p_i - p_j|`.

    Parameters
    ----------
    weights : array_like, shape (n, n) or (k, n, n)
        One attention matrix, or one per signal (then averaged over all of them).
    positions : array_like, shape (n,)

    Returns
    -------
    float
        In position units: 0 for the identity, about 1/3 for uniform weights on [0, 1].
    """
    p = as_array(positions, "positions", ndim=1)
    w = as_array(weights, "weights")
    if w.ndim not in (2, 3) or w.shape[-2:] != (p.size, p.size) or p.size == 0:
        raise ValueError(f"weights must have shape (n, n) or (k, n, n) with n = {p.size} >= 1, got {w.shape}")
    as_weights(w.reshape(-1, p.size), "weights")  # every row an attention row
    scale = power_of_two(float(np.max(np.abs(p))))  # exact: the distances below cannot overflow
    distance = np.abs(p[:, None] / scale - p[None, :] / scale)  # (n, n)
    with np.errstate(over="ignore"):
        mean = scale * float(np.mean(np.sum(w * distance, axis=-1)))
    return float(finite_result(mean, "positions: the mean distance overflows the double range"))


def mean_offset(weights, positions) -> np.ndarray:
    r"""Where each query looks, on average, relative to itself: :math:`\sum_j a_{ij} (p_j - p_i)`.

    0 for a row symmetric about its query; negative for a row that looks
    behind it, as a causal head's does: minus the mean offset is the lag of
    the head's output (a row of weights averages the signal around
    ``p_i`` plus this offset).

    Parameters
    ----------
    weights : array_like, shape (n, n)
    positions : array_like, shape (n,)

    Returns
    -------
    ndarray, shape (n,)
        In position units.
    """
    w = as_weights(weights, "weights", square=True)
    (p,) = as_series(positions=positions)
    if w.shape[0] != p.size:
        raise ValueError(f"weights must have shape (n, n) for the {p.size} positions, got {w.shape}")
    scale = power_of_two(float(np.max(np.abs(p))))  # exact: the offsets below cannot overflow
    offset = p[None, :] / scale - p[:, None] / scale  # (n, n): p_j - p_i, scaled
    with np.errstate(over="ignore"):
        mean = scale * np.sum(w * offset, axis=1)  # (n,)
    return finite_result(mean, "positions: a mean offset overflows the double range")
