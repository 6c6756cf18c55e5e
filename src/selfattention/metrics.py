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

from ._validation import as_array, as_nonnegative_scalar, as_series, as_weights, finite_result


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
    e, t = as_series(estimate=estimate, truth=truth)
    with np.errstate(over="ignore"):
        error = finite_result(e - t, "estimate and truth: their difference overflows the double range")
    scale = np.abs(error).max()  # scaled, so that squaring cannot overflow
    return float(scale * np.sqrt(np.mean((error / scale) ** 2))) if scale > 0 else 0.0


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
    w = as_weights(weights, "weights")
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
    w = as_weights(weights, "weights")
    p = as_array(positions, "positions", ndim=1)
    if w.shape != (p.size, p.size):
        raise ValueError(f"weights must have shape (n, n) = {(p.size, p.size)}, got {w.shape}")
    r = as_nonnegative_scalar(radius, "radius")
    with np.errstate(over="ignore"):  # an overflowing distance is correctly "not near"
        near = np.abs(p[:, None] - p[None, :]) <= r  # (n, n)
    return float(np.mean(np.sum(np.where(near, w, 0.0), axis=1)))
