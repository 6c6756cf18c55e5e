r"""What the cheaper heads cost in accuracy: random features against ``D``, windows against ``U``.

Each function compares a cheaper head with the exact Gaussian head
(:func:`~selfattention.gaussian_head`) on one signal, with its randomness
from an explicit ``rng``. The distance between two outputs is their
root-mean-square difference over the tokens
(:func:`~selfattention.metrics.rmse`).
"""

from __future__ import annotations

import numpy as np

from .. import memory
from .._validation import (
    as_array,
    as_choice,
    as_count,
    as_counts,
    as_rng,
    as_sequence,
    as_series,
    as_temperature,
    naming,
)
from ..cost import feature_cost, window_cost
from ..head import gaussian_head
from ..metrics import rmse
from ..positive_features import (
    performer_centres,
    positive_feature_head,
    spread_centres,
)
from ..random_features import gaussian_frequencies, random_feature_head
from ..window import window_head

#: The random-feature heads :func:`feature_errors` compares: cosines and
#: sines (Bochner), the Performer's positive features, and positive bumps
#: spread over the positions.
METHODS = ("fourier", "performer", "spread")


def feature_head(method, signal, positions, temperature, count, rng=None):
    """One draw of ``count`` random features and the head they give.

    Parameters
    ----------
    method : {"fourier", "performer", "spread"}
        :data:`METHODS`.
    signal, positions : array_like, shape (n,)
    temperature : float
    count : int
        ``D``: frequencies (two columns each, a cosine and a sine) or
        centres (one column each). The Performer's features are taken about
        the middle of the positions, as the other heads take them
        (:func:`~selfattention.head.centre_positions`).
    rng : int, numpy.random.Generator or None

    Returns
    -------
    output : ndarray, shape (n,)
    denominators : ndarray, shape (n,) or None
        The cosine head's estimated denominators; None for positive features.
    """
    method = as_choice(method, "method", METHODS)
    if method == "fourier":
        omega = gaussian_frequencies(count, temperature, rng)
        return random_feature_head(signal, positions, omega)
    if method == "performer":  # about the middle of the positions, as every head here works
        _, p = as_series(signal=signal, positions=positions)
        middle = p.min() / 2 + p.max() / 2
        centres, weights = performer_centres(count, temperature, rng, origin=middle)
    else:
        centres = spread_centres(count, positions, temperature, rng)
        weights = None
    return positive_feature_head(signal, positions, temperature, centres,
                                 weights), None


def feature_errors(signal, positions, temperature, counts, draws,
                   rng=None, methods=METHODS) -> dict:
    """Each method's distance to the exact head, for ``draws`` independent draws at each ``D``.

    Parameters
    ----------
    signal, positions : array_like, shape (n,)
    temperature : float
    counts : sequence of int, length k
        The ``D`` to try.
    draws : int
        Independent draws of the features at each ``D``.
    rng : int, numpy.random.Generator or None
    methods : sequence of str
        Some of :data:`METHODS`, all by default.

    Returns
    -------
    dict
        ``"counts"`` (k,); for each of ``methods``, the RMS distances
        to the exact head, (draws, k); ``"nonpositive"`` (draws, k), True
        where a cosine draw left a row's denominator at or below 0.
    """
    s, p = as_series(signal=signal, positions=positions)
    counts, draws = as_counts(counts, "counts"), as_count(draws, "draws")
    exact, _ = gaussian_head(s, p, temperature)
    rng, methods = as_rng(rng), _as_methods(methods)
    memory.require(8 * draws * len(counts) * (len(methods) + 1), "draws",
                   f"{draws} x {len(counts)} errors per method")
    found = {m: np.empty((draws, len(counts))) for m in methods}
    found["nonpositive"] = np.zeros((draws, len(counts)), dtype=bool)
    with naming("counts", "count", "frequencies", "centres"):
        for (d, k), count in _grid(draws, counts):
            for method in methods:
                out, den = feature_head(method, s, p, temperature, count, rng)
                with naming("signal", "estimate and truth"):  # both outputs are the signal's
                    found[method][d, k] = rmse(out, exact)
                if den is not None:
                    found["nonpositive"][d, k] = bool((den <= 0).any())
    return {"counts": np.array(counts), **found}


def _as_methods(methods) -> list[str]:
    methods = as_sequence(methods, "methods")
    if not all(isinstance(m, str) for m in methods):
        raise TypeError(f"methods must be a sequence of names, got {methods!r}")
    unknown = set(methods) - set(METHODS)
    if unknown or not methods:
        raise ValueError(f"methods must be some of {list(METHODS)}, "
                         f"got {list(methods)!r}")
    return list(methods)


def _grid(draws: int, counts: list[int]):
    """((draw, k), counts[k]) for every draw at every count, count by count."""
    return [((d, k), c) for k, c in enumerate(counts) for d in range(draws)]


def nonpositive_draw(signal, positions, temperature, count, rng=None,
                     tries=1000) -> dict:
    """The first of successive cosine draws that leaves a denominator at or below 0.

    Parameters
    ----------
    signal, positions : array_like, shape (n,)
    temperature : float
    count : int
        ``D`` frequencies.
    rng : int, numpy.random.Generator or None
    tries : int
        How many draws to try, at least 1.

    Returns
    -------
    dict
        ``"draw"`` (how many draws came before it), ``"frequencies"`` (D,),
        ``"output"`` and ``"denominators"`` of its head (n,), and
        ``"exact_denominators"`` (n,), the sums
        ``sum_j exp(-(p_i - p_j)**2 / tau)`` they estimate.

    Raises
    ------
    ValueError
        Naming ``tries`` if no draw of so many crosses 0.
    """
    s, p = as_series(signal=signal, positions=positions)
    tau = as_temperature(temperature, "temperature")
    rng, tries = as_rng(rng), as_count(tries, "tries")
    for draw in range(tries):
        omega = gaussian_frequencies(count, tau, rng)
        with naming("count", "frequencies"):
            output, denominators = random_feature_head(s, p, omega)
        if (denominators <= 0).any():
            return {"draw": draw, "frequencies": omega, "output": output,
                    "denominators": denominators,
                    "exact_denominators": kernel_sums(p, tau)}
    raise ValueError(f"tries: none of {tries} draws of {count} frequencies "
                     "left a denominator at or below 0")


def kernel_sums(positions, temperature) -> np.ndarray:
    r"""The exact head's denominators, :math:`\sum_j \exp(-(p_i - p_j)^2 / \tau)`, row by row.

    Parameters
    ----------
    positions : array_like, shape (n,)
    temperature : float

    Returns
    -------
    ndarray, shape (n,)
    """
    (p,) = as_series(positions=positions)
    tau = as_temperature(temperature, "temperature")
    sums = np.empty(p.size)
    with np.errstate(over="ignore", under="ignore"):
        for i in range(p.size):  # one row at a time: n numbers held, not n**2
            u = p[i] - p  # (n,)
            sums[i] = np.exp(-(u * (u / tau))).sum()
    return sums


def window_errors(signal, positions, temperature, half_widths) -> dict:
    """The window head's distance to the exact head, and its keys, for each half-width ``U``.

    Parameters
    ----------
    signal, positions : array_like, shape (n,)
        Positions sorted.
    temperature : float
    half_widths : array_like, shape (k,)
        Each ``U``, from 0 to the span of the positions.

    Returns
    -------
    dict
        ``"half_widths"`` (k,); ``"errors"`` (k,), RMS distances to the
        exact head; ``"keys"`` (k,), the mean number of keys ``m`` a query
        sees; ``"pairs"`` (k,) of int, the pairs scored, ``sum_i m_i``.
    """
    s, p = as_series(signal=signal, positions=positions)
    widths = as_array(half_widths, "half_widths", ndim=1)
    exact, _ = gaussian_head(s, p, temperature)
    errors, pairs = np.empty(widths.size), np.empty(widths.size, dtype=int)
    with naming("half_widths", "half_width"):
        for k, U in enumerate(widths):
            output, keys = window_head(s, p, temperature, U)
            with naming("signal", "estimate and truth"):  # both outputs are the signal's
                errors[k], pairs[k] = rmse(output, exact), keys.sum()
    return {"half_widths": widths, "errors": errors,
            "keys": pairs / p.size, "pairs": pairs}


def cost_and_error(signal, positions, temperature, half_widths, counts,
                   draws, rng=None) -> dict:
    """Multiply-adds per token against distance to the exact head: the window and two random-feature heads.

    Parameters
    ----------
    signal, positions : array_like, shape (n,)
        Positions sorted.
    temperature : float
    half_widths : array_like, shape (a,)
        The window's ``U``.
    counts : sequence of int, length b
        The random features' ``D``.
    draws : int
        Draws of the features at each ``D``; their median error is kept.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    dict
        For ``"window"``, ``"fourier"`` and ``"spread"``, a dict of
        ``"operations"`` (multiply-adds per token, as counted by
        :mod:`~selfattention.cost`) and ``"errors"``; the window's also
        ``"keys"``, the mean number of keys a query sees.
    """
    s, p = as_series(signal=signal, positions=positions)
    win = window_errors(s, p, temperature, half_widths)
    ops = [window_cost(int(pairs)).multiply_adds / p.size
           for pairs in win["pairs"]]
    found = {"window": {"operations": np.array(ops), "errors": win["errors"],
                        "keys": win["keys"]}}
    errors = feature_errors(s, p, temperature, counts, draws, rng,
                            methods=("fourier", "spread"))
    for method, per_draw in (("fourier", 2), ("spread", 1)):
        columns = [per_draw * c for c in errors["counts"].tolist()]
        ops = [feature_cost(p.size, c).multiply_adds / p.size for c in columns]
        found[method] = {"operations": np.array(ops),
                         "errors": np.median(errors[method], axis=0)}
    return found
