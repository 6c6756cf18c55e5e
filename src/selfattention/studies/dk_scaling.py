r"""Why attention divides the scores by ``sqrt(d_k)``: the numbers behind it.

For a query ``q`` and a key ``k`` whose ``d_k`` entries are independent with
mean 0 and variance 1, the dot product is a sum of ``d_k`` independent terms
of variance 1, so

.. math:: \operatorname{Var}(q \cdot k) = d_k, \qquad
    \operatorname{std}(q \cdot k) = \sqrt{d_k}.

Unscaled scores therefore spread wider as ``d_k`` grows and the softmax of a
row of them tends to a one-hot vector; dividing by ``sqrt(d_k)`` brings the
spread back to 1 whatever ``d_k`` is. The functions here measure both effects
by simulation, with explicit randomness (an ``rng`` argument).
"""

from __future__ import annotations

import numpy as np

from .. import memory
from .._validation import as_count, as_counts, as_flag, as_rng
from ..core import attention
from ..metrics import entropy, jacobian_norm

#: Key dimensions of the book's experiment, from 1 to 1024.
DEFAULT_D_K = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def standard_normal_vectors(n, d_k, rng=None) -> np.ndarray:
    """Random vectors with independent standard normal entries.

    Parameters
    ----------
    n : int
        Number of vectors.
    d_k : int
        Dimension of each vector.
    rng : int, numpy.random.Generator or None
        Seed or generator.

    Returns
    -------
    ndarray, shape (n, d_k)
        Each entry has mean 0 and variance 1.
    """
    n = as_count(n, "n")
    d_k = as_count(d_k, "d_k")
    memory.require(8 * n * d_k, "n and d_k", f"{n} vectors of dimension {d_k}")
    return as_rng(rng).standard_normal((n, d_k))


def dot_product_std(d_k, n_pairs=4000, rng=None) -> float:
    r"""Standard deviation of ``q . k`` over random unit-variance vectors.

    .. math:: \operatorname{std}(q \cdot k) \approx \sqrt{d_k}

    Parameters
    ----------
    d_k : int
        Dimension of the queries and keys.
    n_pairs : int
        Number of random (query, key) pairs sampled, at least 2.
    rng : int, numpy.random.Generator or None
        Seed or generator.

    Returns
    -------
    float
        The sample standard deviation of the ``n_pairs`` dot products.
    """
    n_pairs = as_count(n_pairs, "n_pairs", minimum=2)
    memory.require(24 * n_pairs * as_count(d_k, "d_k"), "n_pairs and d_k", f"{n_pairs} pairs of dimension {d_k}")
    rng = as_rng(rng)
    q = standard_normal_vectors(n_pairs, d_k, rng)  # (n_pairs, d_k)
    k = standard_normal_vectors(n_pairs, d_k, rng)  # (n_pairs, d_k)
    return float(np.std(np.sum(q * k, axis=1), ddof=1))


def softmax_sharpness(d_k, *, scaled, n_keys=16, n_queries=500, rng=None):
    """How peaked attention over random keys is, with or without scaling.

    Draws ``n_queries`` queries and ``n_keys`` keys with unit-variance
    entries and runs :func:`selfattention.attention` on them with
    temperature ``sqrt(d_k)`` (``scaled=True``) or 1 (``scaled=False``).

    Parameters
    ----------
    d_k : int
        Dimension of the queries and keys.
    scaled : bool
        Whether to divide the scores by ``sqrt(d_k)``.
    n_keys, n_queries : int
        How many keys each query attends over, and how many queries.
    rng : int, numpy.random.Generator or None
        Seed or generator.

    Returns
    -------
    max_weight : float
        Mean over queries of the largest weight in the row (1 = one-hot,
        ``1 / n_keys`` = uniform).
    mean_entropy : float
        Mean over queries of the row's entropy, in nats.
    mean_jacobian : float
        Mean over queries of :func:`~selfattention.metrics.jacobian_norm`: how
        much the weights respond to the scores (0 when the softmax is saturated).
    """
    scaled = as_flag(scaled, "scaled")
    n_keys = as_count(n_keys, "n_keys", minimum=2)
    n_queries = as_count(n_queries, "n_queries")
    d_k = as_count(d_k, "d_k")
    memory.require(8 * (n_queries + n_keys) * d_k + memory.BYTES_PER_ENTRY * (n_queries + n_keys) * n_keys,
                   "n_queries, n_keys and d_k", f"{n_queries} x {n_keys} attention weights of dimension {d_k}")
    rng = as_rng(rng)
    Q = standard_normal_vectors(n_queries, d_k, rng)  # (n_queries, d_k)
    K = standard_normal_vectors(n_keys, d_k, rng)  # (n_keys, d_k)
    V = np.eye(n_keys)  # (n_keys, n_keys); only the weights are used
    _, weights = attention(Q, K, V, None if scaled else 1.0)  # (n_queries, n_keys)
    return (float(weights.max(axis=1).mean()), float(entropy(weights).mean()),
            float(jacobian_norm(weights).mean()))


def dk_scaling_experiment(d_ks=DEFAULT_D_K, *, n_keys=16, n_queries=500, n_pairs=4000, rng=None):
    """Everything the figure of the ``sqrt(d_k)`` scaling shows, for each key dimension.

    Parameters
    ----------
    d_ks : sequence of int, shape (m,)
        Key dimensions to try.
    n_keys, n_queries, n_pairs : int
        Passed to :func:`softmax_sharpness` and :func:`dot_product_std`.
    rng : int, numpy.random.Generator or None
        Seed or generator. The scaled and unscaled runs of one ``d_k`` see
        the same queries and keys, so they differ only by the scaling.

    Returns
    -------
    dict of str to ndarray, each shape (m,)
        ``d_k``; ``std`` (spread of ``q . k``); ``max_weight_unscaled``,
        ``max_weight_scaled``, ``entropy_unscaled``, ``entropy_scaled``,
        ``jacobian_unscaled``, ``jacobian_scaled``.
    """
    dims = as_counts(d_ks, "d_ks")
    n_keys, n_queries = as_count(n_keys, "n_keys", minimum=2), as_count(n_queries, "n_queries")
    n_pairs = as_count(n_pairs, "n_pairs", minimum=2)
    memory.require(8 * (n_queries + n_keys + 3 * n_pairs) * max(dims), "d_ks, n_keys, n_queries and n_pairs",
                   f"{n_queries + n_keys} vectors and {n_pairs} pairs of dimension up to {max(dims)}")
    rng = as_rng(rng)
    rows = []
    for d_k in dims:
        std = dot_product_std(d_k, n_pairs, rng)
        seed = int(rng.integers(2**32))  # the same draws for both runs
        unscaled = softmax_sharpness(d_k, scaled=False, n_keys=n_keys, n_queries=n_queries, rng=seed)
        scaled = softmax_sharpness(d_k, scaled=True, n_keys=n_keys, n_queries=n_queries, rng=seed)
        rows.append((d_k, std, *(value for pair in zip(unscaled, scaled, strict=True) for value in pair)))
    names = ("d_k", "std", "max_weight_unscaled", "max_weight_scaled", "entropy_unscaled", "entropy_scaled",
             "jacobian_unscaled", "jacobian_scaled")
    return {name: np.array(column) for name, column in zip(names, zip(*rows, strict=True), strict=True)}
