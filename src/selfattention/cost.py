r"""What a head costs: its arithmetic and its memory, counted, and laws fitted to measured times.

A head that compares every query with every key does ``n**2`` of
everything: scores, exponentials, weights to hold. The counts here are
exact, from the shapes of the products each method computes, so that a
page can draw them without timing anything (times differ from machine to
machine and from run to run; counts do not). The projections to queries,
keys and values, linear in ``n`` and the same for every method, are left
out.

============================  ==========================  ==============  ================
method                        multiply-adds               evaluations     bytes held
============================  ==========================  ==============  ================
exact head                    ``n**2 (d_k + d_v)``        ``n**2`` exp    ``8 n**2``
random features, ``cols``     ``2 n cols (d_v + 1)``      ``2 n cols``    ``8 (n + cols) (d_v + 1)``
window of ``P`` pairs         ``P (d_k + d_v)``           ``P`` exp       ``8 P``
============================  ==========================  ==============  ================

``cols`` is the features a token has: ``2 D`` for ``D`` frequencies (a
cosine and a sine each), ``D`` for ``D`` centres of positive features.

:func:`loglog_slope` and :func:`crossover` read measured times: the exponent
of a power law, and where two methods' times cross. :func:`read_timings`
reads the times ``make bench`` measured (``benchmarks/attention_cost.json``),
so that a page draws them without timing anything itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from math import isqrt
from pathlib import Path

import numpy as np

from . import memory
from ._validation import InputTypeError, as_array, as_count, as_flag, same_length

#: Bytes of one double.
DOUBLE = 8


@dataclass(frozen=True)
class Cost:
    """The arithmetic and memory of one computation.

    Attributes
    ----------
    multiply_adds : int
        Products added into sums (a dot product of length ``d`` is ``d``).
    evaluations : int
        Exponentials, cosines and sines.
    nbytes : int
        Bytes of the largest arrays held at once.
    """

    multiply_adds: int
    evaluations: int
    nbytes: int

    def __add__(self, other: Cost) -> Cost:
        """Two computations one after the other: their operations add, their memory is the larger."""
        if not isinstance(other, Cost):
            return NotImplemented
        return Cost(self.multiply_adds + other.multiply_adds, self.evaluations + other.evaluations,
                    max(self.nbytes, other.nbytes))


def exact_cost(n, d_k=3, d_v=1) -> Cost:
    r"""The cost of attention of ``n`` queries on ``n`` keys, as :func:`~selfattention.core.attention` computes it.

    .. math:: E = Q K^\top:\ n^2 d_k, \qquad A V:\ n^2 d_v, \qquad
        \exp:\ n^2, \qquad A:\ 8 n^2 \text{ bytes}

    Parameters
    ----------
    n : int
        Tokens, at least 1.
    d_k, d_v : int
        Dimensions of a query (and key) and of a value; the Gaussian head's are 3 and 1.

    Returns
    -------
    Cost
    """
    n, d_k, d_v = _counts(n=n, d_k=d_k, d_v=d_v)
    return Cost(n * n * (d_k + d_v), n * n, DOUBLE * n * n)


def feature_cost(n, columns, d_v=1) -> Cost:
    r"""The cost of a head computed from ``columns`` features per token, never forming the ``n x n`` matrix.

    .. math:: \Psi^\top [V, \mathbf 1]:\ n \cdot \text{columns} \cdot (d_v + 1), \qquad
        \Psi\, (\Psi^\top [V, \mathbf 1]):\ n \cdot \text{columns} \cdot (d_v + 1)

    The features are evaluated once for the keys and once for the queries
    (``2 n columns`` cosines, sines or exponentials), a block of tokens at a
    time: what must be held is the sums over the keys and the numerators
    and denominators of the rows, ``8 (n + columns) (d_v + 1)`` bytes, besides a
    block of features whose size does not grow with ``n``.

    Parameters
    ----------
    n : int
        Tokens, at least 1.
    columns : int
        The features per token: ``2 D`` for ``D`` frequencies (a cosine and a sine each), ``D`` for ``D`` centres.
    d_v : int
        Dimension of a value.

    Returns
    -------
    Cost
    """
    n, columns, d_v = _counts(n=n, columns=columns, d_v=d_v)
    return Cost(2 * n * columns * (d_v + 1), 2 * n * columns, DOUBLE * (n + columns) * (d_v + 1))


def window_cost(pairs, d_k=3, d_v=1) -> Cost:
    """The cost of attention restricted to ``pairs`` (query, key) pairs: the exact head's, pair by pair.

    The bytes are those of the weights of every pair held at once (the
    package's window head computes them in blocks of queries).

    Parameters
    ----------
    pairs : int
        The pairs scored, ``sum_i m_i`` for ``m_i`` keys in query ``i``'s window.
    d_k, d_v : int

    Returns
    -------
    Cost
    """
    pairs, d_k, d_v = _counts(pairs=pairs, d_k=d_k, d_v=d_v)
    return Cost(pairs * (d_k + d_v), pairs, DOUBLE * pairs)


def decoding_cost(n, *, cached, d_k=3, d_v=1) -> Cost:
    r"""The cost of running a causal head over ``n`` given tokens one at a time.

    Without a cache, step ``i`` runs the head on the ``i`` tokens so far:
    ``i**2`` scores, :math:`\sum_{i=1}^n i^2 = n (n + 1) (2 n + 1) / 6` in all.
    With a cache of the keys and values, step ``i`` scores one query
    against ``i`` keys: :math:`\sum_i i = n (n + 1) / 2`. The memory is the
    last step's weights (``8 n**2`` bytes) against the cache (``8 n (d_k +
    d_v)`` bytes).

    Parameters
    ----------
    n : int
        Tokens read, at least 1.
    cached : bool
        Whether the keys and values are kept.
    d_k, d_v : int

    Returns
    -------
    Cost
    """
    n, d_k, d_v = _counts(n=n, d_k=d_k, d_v=d_v)
    if as_flag(cached, "cached"):
        pairs = n * (n + 1) // 2
        return Cost(pairs * (d_k + d_v), pairs, DOUBLE * n * (d_k + d_v))
    pairs = n * (n + 1) * (2 * n + 1) // 6
    return Cost(pairs * (d_k + d_v), pairs, DOUBLE * n * n)


def largest_n(nbytes, bytes_per_entry=memory.BYTES_PER_ENTRY) -> int:
    r"""The most tokens whose ``n x n`` attention fits in ``nbytes``: ``floor(sqrt(nbytes / bytes_per_entry))``.

    With the default ``bytes_per_entry`` (the package's budget,
    :data:`selfattention.memory.BYTES_PER_ENTRY`) this is the largest ``n``
    that :func:`selfattention.memory.require_matrix` lets through at a
    limit of ``nbytes``; with 8, the largest whose weights alone fit.

    Parameters
    ----------
    nbytes : int
        The memory, at least 1 byte.
    bytes_per_entry : int
        Bytes per entry of the matrix, at least 1.

    Returns
    -------
    int
    """
    nbytes = as_count(nbytes, "nbytes", maximum=None)
    per = as_count(bytes_per_entry, "bytes_per_entry")
    return isqrt(nbytes // per)


def loglog_slope(sizes, values) -> float:
    r"""The exponent ``k`` of the power law ``value = C size**k`` fitted by least squares on a log-log scale.

    The line ``log(value) = log(C) + k log(size)`` through the points.

    Parameters
    ----------
    sizes : array_like, shape (k,)
        At least two different sizes, all positive.
    values : array_like, shape (k,)
        Positive (times, bytes or errors).

    Returns
    -------
    float
    """
    x, y = _positive_pair(sizes, values, "sizes", "values")
    if np.ptp(x) == 0:
        raise ValueError("sizes must hold at least two different sizes")
    slope = np.polyfit(x, y, 1)[0]
    return float(slope)


def crossover(sizes, first, second) -> float:
    r"""The size at which ``second`` becomes cheaper than ``first``, interpolated on a log-log scale.

    The first pair of neighbouring sizes where ``first - second`` changes
    sign from at most 0 to above 0 is interpolated linearly in
    ``log size`` against ``log first - log second``.

    Parameters
    ----------
    sizes : array_like, shape (k,)
        Increasing, positive.
    first, second : array_like, shape (k,)
        Positive costs (times) of two methods at each size.

    Returns
    -------
    float
        The size where the two are equal; ``sizes[0]`` if ``second`` is
        cheaper from the start.

    Raises
    ------
    ValueError
        Naming ``first`` and ``second`` if ``second`` never becomes cheaper.
    """
    x, a = _positive_pair(sizes, first, "sizes", "first")
    _, b = _positive_pair(sizes, second, "sizes", "second")
    n = as_array(sizes, "sizes")
    if (np.diff(x) <= 0).any():
        raise ValueError("sizes must increase")
    gap = a - b  # (k,): > 0 where second is cheaper
    if gap[0] > 0:
        return float(n[0])
    after = np.flatnonzero((gap[:-1] <= 0) & (gap[1:] > 0))
    if after.size == 0:
        raise ValueError("first and second: second never becomes cheaper than first at these sizes")
    k = after[0]
    share = -gap[k] / (gap[k + 1] - gap[k])  # in [0, 1)
    with np.errstate(over="ignore"):  # exp(log(largest double)) may round up to inf
        return float(np.clip(np.exp(x[k] + share * (x[k + 1] - x[k])), n[k], n[k + 1]))


def read_timings(path) -> dict:
    """The times ``make bench`` measured, from its JSON file, checked.

    Parameters
    ----------
    path : str or pathlib.Path
        ``benchmarks/attention_cost.json``.

    Returns
    -------
    dict
        ``"machine"`` and ``"date"`` (strings), ``"load"`` (the load
        averages the bench recorded, or None), and for each method
        measured (``"exact"``, ``"fourier"``, ...) a dict of ``"n"`` (k,)
        and ``"seconds"`` (k,) arrays, with the other numbers it records.
    """
    if not isinstance(path, str | Path):
        raise InputTypeError(f"path must be a str or Path, got {path!r}")
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"path: {path} could not be read as JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ValueError(f"path: {path} holds no JSON object")
    missing = {"machine", "date", "methods"} - set(data)
    if missing:
        raise ValueError(f"path: {path} lacks {sorted(missing)}")
    methods = {}
    for name, entry in data["methods"].items():
        ns, seconds = as_array(entry["n"], "n"), as_array(entry["seconds"], "seconds")
        if ns.shape != seconds.shape or (seconds <= 0).any():
            raise ValueError(f"path: {name}'s n and seconds do not match")
        methods[name] = {**entry, "n": ns, "seconds": seconds}
    return {"machine": data["machine"], "date": data["date"], "load": data.get("load"), **methods}


def _positive_pair(sizes, values, name_x: str, name_y: str) -> tuple[np.ndarray, np.ndarray]:
    """The logarithms of two positive 1-D arrays of one length, at least two entries."""
    x = as_array(sizes, name_x, ndim=1)
    y = as_array(values, name_y, ndim=1)
    same_length(x, y, name_x, name_y)
    for name, arr in ((name_x, x), (name_y, y)):
        if arr.size < 2 or (arr <= 0).any():
            raise ValueError(f"{name} must hold at least two positive numbers")
    return np.log(x), np.log(y)


def _counts(**counts) -> list[int]:
    """Each count checked by name (at least 1); a product of them may pass 2**63 (Python's ints)."""
    return [as_count(value, name) for name, value in counts.items()]
