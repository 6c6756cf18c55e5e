r"""Producing tokens one at a time: with and without a key-value cache.

A language model writes token ``i`` after reading tokens ``1..i-1``; its
heads are causal (:func:`~selfattention.core.causal_mask`): query ``i``
sees keys ``1..i``. Run naively, each step feeds the whole prefix through
the head again, ``i**2`` scores at step ``i``, of which only the last row
is new: the rows of earlier queries see the same keys as before (the mask
hides the new one from them), so they do not change. A cache keeps every
token's key and value as it is made; step ``i`` then projects the new
token once and scores one query against ``i`` cached keys: ``i`` scores.

.. math:: \text{output}_i = \sum_{j \le i} a^{(\le i)}_{ij}\, v_j, \qquad
    a^{(\le i)}_{ij} = \operatorname{softmax}_j\big(q_i \cdot k_j / \tau\big)

Both functions return the same outputs (to rounding) and what their
arithmetic costs (:class:`~selfattention.cost.Cost`, tallied step by
step); :func:`~selfattention.cost.decoding_cost` gives the totals in
closed form.
"""

from __future__ import annotations

import numpy as np

from . import memory, work
from ._validation import as_array, as_positive_scalar, finite_result, naming
from .core import attention, causal_mask
from .cost import Cost, exact_cost


def decode_recomputed(X, W_Q, W_K, W_V, temperature):
    r"""Each step runs the causal head on all tokens so far, keeps one row.

    Step ``i`` projects the ``i`` tokens, scores ``i x i`` pairs under the
    causal mask, and keeps ``output_i``; the ``i - 1`` rows before it are
    computed again and thrown away.

    Parameters
    ----------
    X : array_like, shape (n, d_model)
        The given tokens, in the order they are read.
    W_Q, W_K : array_like, shape (d_model, d_k)
    W_V : array_like, shape (d_model, d_v)
    temperature : float
        ``tau > 0``.

    Returns
    -------
    outputs : ndarray, shape (n, d_v)
        ``outputs[i - 1]``: the output for token ``i``, seeing ``1..i``.
    cost : Cost
        The attention's arithmetic over the steps, and its largest
        matrix of weights (the last step's ``n x n``).

    Raises
    ------
    ValueError
        Naming ``X``, if the steps' :math:`\sum_i i^2` pairs pass the work
        limit (:mod:`~selfattention.work`), or the last step's matrix the
        memory limit.
    """
    X, W_Q, W_K, W_V, tau = _checked(X, W_Q, W_K, W_V, temperature)
    n, d_k, d_v = X.shape[0], W_K.shape[1], W_V.shape[1]
    memory.require_matrix(n, n, "X")
    work.require_work(n * (n + 1) * (2 * n + 1) // 6, "X",
                      f"decoding {n} tokens, recomputing every step")
    outputs, cost = np.empty((n, d_v)), Cost(0, 0, 0)
    with naming("X", "Q", "K", "V"):
        for i in range(1, n + 1):
            x = X[:i]  # (i, d_model): every token so far
            Q, K, V = _project(x, W_Q), _project(x, W_K), _project(x, W_V)
            rows, _ = attention(Q, K, V, tau, mask=causal_mask(i))  # (i, d_v)
            outputs[i - 1] = rows[-1]  # only the last row is new
            cost += exact_cost(i, d_k, d_v)
    return outputs, cost


def decode_cached(X, W_Q, W_K, W_V, temperature):
    r"""Each step caches the new key and value, attends with the new query.

    Step ``i`` projects token ``i`` once, stores its key :math:`k_i` and
    value :math:`v_i` in row ``i`` of the cache, and scores its query
    :math:`q_i` against the ``i`` keys cached so far.

    Parameters
    ----------
    X : array_like, shape (n, d_model)
    W_Q, W_K : array_like, shape (d_model, d_k)
    W_V : array_like, shape (d_model, d_v)
    temperature : float

    Returns
    -------
    outputs : ndarray, shape (n, d_v)
        As :func:`decode_recomputed`'s, to rounding.
    cost : Cost
        ``i (d_k + d_v)`` multiply-adds and ``i`` exponentials at step
        ``i``; the memory is the cache, ``n (d_k + d_v)`` numbers.
    """
    X, W_Q, W_K, W_V, tau = _checked(X, W_Q, W_K, W_V, temperature)
    n, d_k, d_v = X.shape[0], W_K.shape[1], W_V.shape[1]
    work.require_work(n * (n + 1) // 2, "X",
                      f"decoding {n} tokens with a cache")
    keys, values = np.empty((n, d_k)), np.empty((n, d_v))  # the cache
    outputs, cost = np.empty((n, d_v)), Cost(0, 0, 8 * n * (d_k + d_v))
    with naming("X", "Q", "K", "V"):
        for i in range(n):  # 0-based: token i + 1
            x = X[i : i + 1]  # (1, d_model): the new token only
            keys[i], values[i] = _project(x, W_K)[0], _project(x, W_V)[0]
            q = _project(x, W_Q)  # (1, d_k)
            row, _ = attention(q, keys[: i + 1], values[: i + 1], tau)
            outputs[i] = row[0]
            cost += Cost((i + 1) * (d_k + d_v), i + 1, 0)
    return outputs, cost


def _project(tokens: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``tokens @ W``, refused by name if it leaves the double range."""
    with np.errstate(over="ignore", invalid="ignore"):
        return finite_result(tokens @ W, "X and the projections: a query, "
                             "key or value overflows the double range")


def _checked(X, W_Q, W_K, W_V, temperature):
    """Both decoders' arguments: shapes that chain, a positive temperature."""
    X = as_array(X, "X", ndim=2)
    W_Q, W_K, W_V = (as_array(W, name, ndim=2) for W, name in
                     ((W_Q, "W_Q"), (W_K, "W_K"), (W_V, "W_V")))
    if X.shape[0] == 0:
        raise ValueError("X must hold at least one token")
    if not X.shape[1] == W_Q.shape[0] == W_K.shape[0] == W_V.shape[0]:
        raise ValueError(f"W_Q, W_K and W_V must each have X's {X.shape[1]} "
                         f"columns as rows, got shapes {W_Q.shape}, "
                         f"{W_K.shape} and {W_V.shape}")
    if W_Q.shape[1] != W_K.shape[1]:
        raise ValueError("W_Q and W_K must have the same number of columns "
                         f"d_k, got {W_Q.shape[1]} and {W_K.shape[1]}")
    return X, W_Q, W_K, W_V, as_positive_scalar(temperature, "temperature")
