r"""Random features over many draws: how often the cosines' denominator fails, and how firm a fitted slope is.

:func:`nonpositive_rate` draws the frequencies of the cosine head
(:func:`~selfattention.random_features.random_feature_head`) many times
and counts the draws that leave some row's estimated denominator at or
below 0; it computes only the denominators, for many draws at once.
:func:`error_slopes` fits the log-log slope of errors against ``D`` to the
medians of all the draws, and to the medians of groups of them, so that a
page can give a slope with its spread.
"""

from __future__ import annotations

import numpy as np

from .. import memory
from .._validation import as_array, as_count, as_real_scalar, as_rng, as_series, as_temperature, power_of_two
from ..cost import loglog_slope
from ..head import centre_positions

#: Draws whose denominators are computed at once: ``_BLOCK x D x n`` angles.
_BLOCK = 256


def nonpositive_rate(positions, temperature, count, draws, rng=None) -> dict:
    r"""The share of ``draws`` draws of ``D`` cosine frequencies that leave a denominator at or below 0.

    Draw ``k`` takes ``D`` frequencies as
    :func:`~selfattention.random_features.gaussian_frequencies` does, the
    generator's next ``D`` normal draws (so that ``rng`` gives the draws
    of successive calls of that function), and the head's denominators on
    the centred positions,

    .. math:: \psi(p_i) \cdot \sum_j \psi(p_j)
        = \frac1D \sum_{r=1}^{D} \sum_j \cos\big(\omega_r (p_i - p_j)\big).

    Parameters
    ----------
    positions : array_like, shape (n,)
    temperature : float
        ``tau > 0``.
    count : int
        ``D`` frequencies a draw.
    draws : int
        How many draws.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    dict
        ``"crossed"`` (draws,) of bool, True where a row's denominator is
        at or below 0; ``"rate"``, their share.
    """
    (p,) = as_series(positions=positions)
    tau = as_temperature(temperature, "temperature")
    count, draws, rng = as_count(count, "count"), as_count(draws, "draws"), as_rng(rng)
    memory.require(draws, "draws", f"{draws} outcomes")
    memory.require(3 * 8 * min(draws, _BLOCK) * count * p.size, "count", f"{_BLOCK} x {count} x {p.size} angles")
    p = centre_positions(p)
    crossed = np.empty(draws, dtype=bool)
    for start in range(0, draws, _BLOCK):
        rows = min(_BLOCK, draws - start)
        omega = np.abs(rng.standard_normal((rows, count))) * np.sqrt(2.0 / tau)  # (rows, D)
        angles = omega[:, :, None] * p  # (rows, D, n)
        cos, sin = np.cos(angles), np.sin(angles)
        sums = cos.sum(axis=2, keepdims=True), sin.sum(axis=2, keepdims=True)  # (rows, D, 1) each
        denominators = (cos * sums[0] + sin * sums[1]).sum(axis=1) / count  # (rows, n)
        crossed[start:start + rows] = (denominators <= 0).any(axis=1)
    return {"crossed": crossed, "rate": float(crossed.mean())}


def error_slopes(counts, errors, smallest, groups) -> dict:
    """The log-log slope of errors against ``D``, from ``smallest`` on: pooled, and for groups of draws.

    Parameters
    ----------
    counts : array_like, shape (k,)
        The ``D`` tried, increasing.
    errors : array_like, shape (draws, k)
        One error for each draw at each ``D``.
    smallest : int
        The least ``D`` of the fit; at least two of ``counts`` from it on.
    groups : int
        Groups of consecutive draws, each of ``draws // groups`` (the rest
        left out), at least 2.

    Returns
    -------
    dict
        ``"pooled"``, the slope fitted to the medians of all the draws;
        ``"groups"`` (groups,), the slope fitted to each group's medians.
    """
    D = as_array(counts, "counts", ndim=1)
    e = as_array(errors, "errors", ndim=2)
    if e.shape[1] != D.size:
        raise ValueError(f"errors must have a column for each of the {D.size} counts, got shape {e.shape}")
    for name, values in (("counts", D), ("errors", e)):
        if (values <= 0).any():
            raise ValueError(f"{name} must be positive (the fit is on their logarithms)")
    if (np.diff(D) <= 0).any():
        raise ValueError("counts must increase")
    groups = as_count(groups, "groups", minimum=2, maximum=e.shape[0])
    fitted = D >= as_real_scalar(smallest, "smallest")
    if fitted.sum() < 2:
        raise ValueError(f"smallest must leave at least two counts to fit, got {smallest!r}")
    size = e.shape[0] // groups
    parts = [e[g * size:(g + 1) * size] for g in range(groups)]
    return {"pooled": loglog_slope(D[fitted], _medians(e)[fitted]),
            "groups": np.array([loglog_slope(D[fitted], _medians(part)[fitted]) for part in parts])}


def _medians(e: np.ndarray) -> np.ndarray:
    """``np.median(e, axis=0)``, computed on ``e`` over a power of two so that no mean of two overflows."""
    scale = power_of_two(float(np.max(np.abs(e))))
    return np.median(e / scale, axis=0) * scale  # (k,): exact, scale being a power of two
