r"""Measures of error and of attention: how far an estimate is from the truth,
and what an attention matrix does.

An attention matrix ``W`` has one row per query, holding non-negative weights
that sum to 1. Its two limits are the identity (every token attends to itself
only) and the uniform matrix ``1/n`` (every token averages all); the
functions here say where a matrix lies between them, how many tokens a row
really averages and where its weight goes.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_array, as_nonnegative_scalar, same_length


def rmse(estimate, truth) -> float:
    r"""Root-mean-square error of ``estimate`` against ``truth``.

    .. math:: \mathrm{RMSE} = \sqrt{\tfrac{1}{n} \sum_i (\hat y_i - y_i)^2}

    Parameters
    ----------
    estimate, truth : array_like, shape (n,)

    Returns
    -------
    float
    """
    e = as_array(estimate, "estimate", ndim=1)
    t = as_array(truth, "truth", ndim=1)
    same_length(e, t, "estimate", "truth")
    if e.size == 0:
        raise ValueError("estimate must hold at least one value")
    return float(np.sqrt(np.mean((e - t) ** 2)))


def entropy(weights) -> np.ndarray:
    r"""Shannon entropy (in nats) of each row of an attention matrix.

    .. math:: H_i = -\sum_j w_{ij} \log w_{ij}, \qquad 0 \log 0 = 0

    It is ``log(n_keys)`` for uniform weights and 0 for a one-hot row.

    Parameters
    ----------
    weights : array_like, shape (n_queries, n_keys)
        Non-negative rows that sum to 1.

    Returns
    -------
    ndarray, shape (n_queries,)
    """
    w = as_array(weights, "weights", ndim=2)
    if (w < 0).any():
        raise ValueError("weights must not be negative")
    safe = np.where(w > 0, w, 1.0)  # log(1) = 0 where the weight is 0
    return -np.sum(w * np.log(safe), axis=1)  # (n_queries,)


def effective_neighbours(weights) -> np.ndarray:
    r"""How many tokens each query really averages: ``1 / sum_j w_ij**2``.

    .. math:: k_i = \frac{1}{\sum_j w_{ij}^2}

    A row that puts weight ``1/k`` on ``k`` tokens gives exactly ``k``;
    averaging independent noise of standard deviation ``sigma`` with row
    ``i`` leaves noise of standard deviation ``sigma / sqrt(k_i)``.

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
    """``max |W - I|``: how far an attention matrix is from "attend to yourself".

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
    """``max |W - 1/n|``: how far an attention matrix is from "attend to all equally".

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
    w = as_array(weights, "weights", ndim=2)
    if w.shape[0] != w.shape[1] or w.size == 0:
        raise ValueError(f"weights must be a non-empty square matrix, got shape {w.shape}")
    return w


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


def local_share(weights, positions, radius) -> float:
    r"""Mean share of each row's attention that lands within ``radius`` of the query.

    .. math:: \frac{1}{n} \sum_i \sum_{j:\, |p_i - p_j| \le r} w_{ij}

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
    if w.ndim not in (2, 3) or w.shape[-2:] != (p.size, p.size):
        raise ValueError(f"weights must have shape (n, n) or (k, n, n) with n = {p.size}, got {w.shape}")
    return float(np.mean(np.sum(w * np.abs(p[:, None] - p[None, :]), axis=-1)))
