r"""The Gaussian head from positive random features: bumps at random centres.

The cosine features of :mod:`~selfattention.random_features` estimate each
row's denominator by a sum of cosines, which can come near 0 or fall below
it. Positive features (Choromanski et al., 2021, the Performer) cannot:
every feature is an exponential, so every estimated weight is positive.
Written as functions of the position, the Performer's features are
Gaussian bumps :math:`\exp(-2 (p - \bar p)^2 / \tau)` at random centres
:math:`\bar p`, weighted. Two bumps integrate, over their common centre, to
the head's kernel (:func:`~selfattention.spectrum.bump_integral`); how the
centres are drawn decides how well an average of ``D`` of them estimates
that integral. :func:`performer_centres` draws them as the Performer does,
near 0; :func:`spread_centres` uniformly where the tokens are.
"""

from __future__ import annotations

import numpy as np

from . import memory
from ._validation import (
    as_array,
    as_count,
    as_real_scalar,
    as_rng,
    as_series,
    as_temperature,
    finite_result,
    power_of_two,
)
from .head import centre_positions
from .random_features import _blocks, _ratio

#: How far beyond the positions :func:`spread_centres` draws centres, in
#: units of ``sqrt(tau)``: the bumps' products it leaves out are below
#: ``exp(-2 * 3**2 * 2) = 2e-16`` of the kernel.
MARGIN = 3.0


def positive_feature_head(signal, positions, temperature, centres,
                          log_weights=None):
    r"""The Gaussian head from positive features: bumps at the ``centres``.

    .. math:: \psi_+(p) = \big[\,\exp(\text{log-weight}_r
        - 2 (p - \bar p_r)^2 / \tau) \,\big]_{r = 1..D}, \qquad
        \text{output}_i = \frac{\psi_+(p_i) \cdot \sum_j \psi_+(p_j)^\top
        s_j}{\psi_+(p_i) \cdot \sum_j \psi_+(p_j)^\top}

    Two bumps of width ``sqrt(tau) / 2`` at ``p_i`` and ``p_j`` integrate,
    over their common centre, to ``sqrt(pi tau / 4) exp(-(p_i - p_j)**2 /
    tau)``: the kernel, to a constant the normalisation removes, when the
    centres and log-weights are drawn so that each centre counts as
    much as any other (:func:`spread_centres`, :func:`performer_centres`).
    Every term is positive, so every denominator is. Computed with the
    logarithms of the features, each feature's largest taken out, so that
    no bump underflows to a zero denominator.

    Parameters
    ----------
    signal : array_like, shape (n,)
    positions : array_like, shape (n,)
    temperature : float
        ``tau > 0``.
    centres : array_like, shape (D,)
        The bumps' centres ``bar p_r``, positions.
    log_weights : array_like, shape (D,), optional
        The log-weight of each bump; 0 (equal weights) when omitted.

    Returns
    -------
    ndarray, shape (n,)
    """
    s, p = as_series(signal=signal, positions=positions)
    tau = as_temperature(temperature, "temperature")
    c, lam = _as_centres(centres, log_weights)
    middle = p.min() / 2 + p.max() / 2  # shift positions and centres alike
    p, c = centre_positions(p), _shifted(c, middle)
    scale = power_of_two(float(np.max(np.abs(s))))
    values = np.column_stack([s / scale, np.ones_like(s)])  # (n, 2)
    top = _feature_maxima(p, c, lam, tau)  # (D,): each feature's largest log
    summary = np.zeros((c.size, 2))  # sum_j psi_+(p_j)^T [s_j, 1], scaled
    for rows in _blocks(p.size, c.size, "centres"):
        bumps = np.exp(_log_bumps(p[rows], c, lam, tau) - top)  # (block, D)
        summary += bumps.T @ values[rows]
    sums = np.empty((p.size, 2))
    for rows in _blocks(p.size, c.size, "centres"):
        with np.errstate(over="ignore"):  # below the double range: -inf, 0
            logs = _log_bumps(p[rows], c, lam, tau) + top  # (block, D)
        logs -= _row_maxima(logs)
        sums[rows] = np.exp(logs) @ summary
    return _ratio(sums, scale, "signal: the output leaves the double range")


def _log_bumps(p: np.ndarray, c: np.ndarray, lam: np.ndarray,
               tau: float) -> np.ndarray:
    """``lambda_r - 2 (p_i - c_r)**2 / tau``, (n, D); far bumps give -inf."""
    with np.errstate(over="ignore", invalid="ignore"):
        logs = lam - 2.0 * ((p[:, None] - c) ** 2 / tau)  # (n, D)
    logs[np.isnan(logs)] = -np.inf
    return logs


def _row_maxima(logs: np.ndarray) -> np.ndarray:
    """Each query's largest log, (block, 1); refused if a query has none."""
    top = logs.max(axis=1, keepdims=True)
    if np.isneginf(top).any():
        raise ValueError("centres: a position lies so far from every bump "
                         "(for this temperature) that its features are 0")
    return top


def _feature_maxima(p, c, lam, tau) -> np.ndarray:
    """Each feature's largest log over the tokens; refused if one is -inf."""
    top = np.full(c.size, -np.inf)
    for rows in _blocks(p.size, c.size, "centres"):
        top = np.maximum(top, _log_bumps(p[rows], c, lam, tau).max(axis=0))
    if np.isneginf(top).any():
        raise ValueError("centres: a bump is so far from every position "
                         "(for this temperature) that it underflows to 0 "
                         "on all of them")
    return top


def spread_centres(count, positions, temperature, rng=None) -> np.ndarray:
    r"""``D`` centres drawn uniformly over the positions and a margin.

    The margin, :data:`MARGIN`, is ``3 sqrt(tau)`` beyond each end. With
    equal weights every centre counts as much as any other, as the
    integral over the common centre asks; the bumps cut off beyond the
    margin would change the kernel by less than 2e-16 of itself.

    Parameters
    ----------
    count : int
        ``D``, at least 1.
    positions : array_like, shape (n,)
    temperature : float
    rng : int, numpy.random.Generator or None

    Returns
    -------
    ndarray, shape (D,)
    """
    count = as_count(count, "count")
    (p,) = as_series(positions=positions)
    tau = as_temperature(temperature, "temperature")
    memory.require(8 * count, "count", f"{count} centres")
    margin = MARGIN * np.sqrt(tau)
    with np.errstate(over="ignore"):
        low, high = p.min() - margin, p.max() + margin
    u = as_rng(rng).uniform(size=count)  # (D,)
    centres = low * (1 - u) + high * u  # no overflow of high - low
    return finite_result(centres, "positions and temperature: the centres "
                         "leave the double range")


def performer_centres(count, temperature, rng=None, origin=0.0):
    r"""The Performer's positive features as bumps: centres near ``origin``, weighted.

    The Performer's feature :math:`\exp(\omega p - 2 p^2 / \tau)`, with
    :math:`\omega \sim \mathcal N(0, 2 / \tau)`, is the bump at
    :math:`\bar p = \omega \tau / 4` with log-weight :math:`2 \bar
    p^2 / \tau`:

    .. math:: \omega p - \frac{2 p^2}{\tau} = \frac{2 \bar p^2}{\tau}
        - \frac{2 (p - \bar p)^2}{\tau}, \qquad
        \bar p \sim \mathcal N(0, \tau / 8).

    Parameters
    ----------
    count : int
        ``D``, at least 1.
    temperature : float
    rng : int, numpy.random.Generator or None
    origin : float
        The position the features are written about, the Performer's
        :math:`p = 0`: its features of :math:`p - \text{origin}`. The
        variance of a product of two grows as :math:`\exp(2 (p_i + p_j)^2
        / \tau)` with :math:`p_i, p_j` measured from it
        (:func:`~selfattention.spectrum.performer_relative_variance`), so
        the middle of the positions is the best place for it.

    Returns
    -------
    centres : ndarray, shape (D,)
        ``origin`` plus normal draws of variance ``tau / 8``.
    log_weights : ndarray, shape (D,)
    """
    count = as_count(count, "count")
    tau = as_temperature(temperature, "temperature")
    origin = as_real_scalar(origin, "origin")
    memory.require(16 * count, "count", f"{count} centres")
    offsets = as_rng(rng).standard_normal(count) * np.sqrt(tau / 8)  # (D,)
    return origin + offsets, 2.0 * offsets * (offsets / tau)  # offsets below 1e155: never overflows


def _as_centres(centres, log_weights):
    """Centres and their log-weights (0 when None), the largest weight 0."""
    c = as_array(centres, "centres", ndim=1)
    if c.size == 0:
        raise ValueError("centres must hold at least one centre")
    if log_weights is None:
        return c, np.zeros_like(c)
    lam = as_array(log_weights, "log_weights", ndim=1)
    if lam.shape != c.shape:
        raise ValueError(f"log_weights must have the shape of centres, "
                         f"{c.shape}, got {lam.shape}")
    return c, lam - lam.max()  # a common factor cancels in the ratio


def _shifted(c: np.ndarray, middle: float) -> np.ndarray:
    with np.errstate(over="ignore"):
        return finite_result(c - middle, "centres and positions: a centre "
                             "lies beyond the double range from them")
