r"""Spread bumps as quadrature: centres on a regular grid, and the keys of several dimensions.

The head's kernel is an integral over a bump's centre
(:func:`~selfattention.spectrum.bump_integral`),

.. math:: \exp\!\big(-(p_i - p_j)^2 / \tau\big) \propto \int
    \exp\!\big(-2 (p_i - \bar p)^2 / \tau\big)\,
    \exp\!\big(-2 (p_j - \bar p)^2 / \tau\big)\, \mathrm{d}\bar p,

and a head of ``D`` bumps estimates it by a sum over ``D`` centres. Drawn
at random (:func:`~selfattention.positive_features.spread_centres`), the
sum is a Monte Carlo estimate, whose error falls as :math:`D^{-1/2}`;
placed on a regular grid (:func:`grid_centres`), it is the trapezoidal
rule, whose error for a smooth integrand that vanishes at both ends falls
faster than any power of the spacing.

In ``d_k`` dimensions the kernel :math:`\exp(-\lVert k_i - k_j \rVert^2 /
\tau)` is the same integral over a centre in ``d_k`` dimensions; a grid of
``m`` points an axis holds :math:`m^{d_k}` centres. :func:`box_grid` and
:func:`box_uniform` place centres so; :func:`bump_head` and
:func:`cosine_head` are the heads of ``d_k``-dimensional keys from bumps and
from cosines (:func:`normal_frequencies`), :func:`kernel_head` the exact one.
"""

from __future__ import annotations

import numpy as np

from . import memory
from ._validation import (
    as_array,
    as_count,
    as_rng,
    as_series,
    as_temperature,
    finite_result,
    same_length,
)
from .positive_features import MARGIN


def grid_centres(count, positions, temperature) -> np.ndarray:
    r"""``D`` evenly spaced centres over the positions and a margin.

    The interval is the one :func:`~selfattention.positive_features.spread_centres`
    draws from, :data:`~selfattention.positive_features.MARGIN` times
    :math:`\sqrt\tau` beyond each end; the centres are its ends and
    ``D - 2`` points between, equally spaced (the nodes of the
    trapezoidal rule, whose end weights of one half change nothing here:
    the bumps at the ends weigh below 2e-16 of the kernel).

    Parameters
    ----------
    count : int
        ``D``, at least 1 (one centre: the interval's lower end).
    positions : array_like, shape (n,)
    temperature : float
        ``tau > 0``.

    Returns
    -------
    ndarray, shape (D,)
    """
    count = as_count(count, "count")
    (p,) = as_series(positions=positions)
    tau = as_temperature(temperature, "temperature")
    memory.require(8 * count, "count", f"{count} centres")
    margin = MARGIN * np.sqrt(tau)
    with np.errstate(over="ignore", invalid="ignore"):
        low, high = p.min() - margin, p.max() + margin
        u = np.linspace(0.0, 1.0, count)  # (D,)
        centres = low * (1 - u) + high * u  # no overflow of high - low
    return finite_result(centres, "positions and temperature: the centres "
                         "leave the double range")


def trapezoid_rate(count, positions, temperature) -> float:
    r"""The leading error of the trapezoidal rule on :func:`grid_centres`, relative to the integral.

    Over their common centre, two bumps multiply to a Gaussian of variance
    :math:`\tau / 8`; sampled at a step ``step``, the Poisson summation
    formula gives the rule's relative error as a sum whose largest term is at most

    .. math:: 2 \exp\!\big(-2 \pi^2 (\tau / 8) / \text{step}^2\big)

    (Trefethen and Weideman, 2014): the error falls faster than any power
    of the step.

    Parameters
    ----------
    count : int
        ``D``, at least 2.
    positions : array_like, shape (n,)
    temperature : float

    Returns
    -------
    float
    """
    count = as_count(count, "count", minimum=2)
    centres = grid_centres(2, positions, temperature)
    tau = as_temperature(temperature, "temperature")
    with np.errstate(all="ignore"):  # the step may overflow, or be 0 far from 0
        step = (centres[1] - centres[0]) / (count - 1)  # the spacing
        ratio = (tau / 8) / step * (2 * np.pi**2 / step)  # 0 when the step overflows
    return float(2.0 * np.exp(-ratio))


def box_grid(per_axis, keys, temperature) -> np.ndarray:
    r"""A regular grid of ``m`` centres an axis over the keys' box and a margin.

    Along each axis, the :func:`grid_centres` of that coordinate of the
    keys; the grid is every combination, :math:`m^{d_k}` centres.

    Parameters
    ----------
    per_axis : int
        ``m``, at least 1.
    keys : array_like, shape (n, d_k)
    temperature : float

    Returns
    -------
    ndarray, shape (m ** d_k, d_k)
    """
    per_axis = as_count(per_axis, "per_axis")
    x = _as_keys(keys)
    memory.require(8 * x.shape[1] * per_axis ** x.shape[1], "per_axis",
                   f"{per_axis} ** {x.shape[1]} centres")
    axes = [grid_centres(per_axis, x[:, k], temperature)
            for k in range(x.shape[1])]
    mesh = np.meshgrid(*axes, indexing="ij")  # d_k arrays of m ** d_k
    return np.stack([axis.ravel() for axis in mesh], axis=1)  # (m**d_k, d_k)


def box_uniform(count, keys, temperature, rng=None) -> np.ndarray:
    r"""``D`` centres drawn uniformly over the keys' box and a margin.

    Each coordinate uniform over the interval of :func:`grid_centres` for
    that coordinate of the keys.

    Parameters
    ----------
    count : int
        ``D``, at least 1.
    keys : array_like, shape (n, d_k)
    temperature : float
    rng : int, numpy.random.Generator or None

    Returns
    -------
    ndarray, shape (D, d_k)
    """
    count = as_count(count, "count")
    x = _as_keys(keys)
    memory.require(8 * count * x.shape[1], "count", f"{count} centres")
    ends = np.array([grid_centres(2, x[:, k], temperature)
                     for k in range(x.shape[1])])  # (d_k, 2)
    u = as_rng(rng).uniform(size=(count, x.shape[1]))  # (D, d_k)
    return ends[:, 0] * (1 - u) + ends[:, 1] * u


def normal_frequencies(count, dims, temperature, rng=None) -> np.ndarray:
    r"""``D`` frequency vectors of ``d_k`` coordinates, each :math:`\mathcal N(0, 2/\tau)`.

    Then :math:`\mathbb E_\omega \cos\big(\omega \cdot (k_i - k_j)\big) =
    \exp(-\lVert k_i - k_j \rVert^2 / \tau)`, one factor an axis
    (:func:`~selfattention.spectrum.frequency_variance`).

    Parameters
    ----------
    count : int
        ``D``, at least 1.
    dims : int
        ``d_k``, at least 1.
    temperature : float
    rng : int, numpy.random.Generator or None

    Returns
    -------
    ndarray, shape (D, d_k)
    """
    count, dims = as_count(count, "count"), as_count(dims, "dims")
    tau = as_temperature(temperature, "temperature")
    memory.require(8 * count * dims, "count and dims",
                   f"{count} x {dims} frequencies")
    spread = np.sqrt(2.0) * np.sqrt(1.0 / tau)  # no overflow
    with np.errstate(over="ignore"):
        omega = as_rng(rng).standard_normal((count, dims)) * spread
    return finite_result(omega, "temperature: the frequencies sqrt(2 / tau) "
                         "z overflow the double range")


def orthogonal_frequencies(count, dims, temperature, rng=None) -> np.ndarray:
    r"""``D`` frequency vectors drawn in blocks of ``d_k`` orthogonal directions (FAVOR+).

    Each block is the rows of a uniformly random orthogonal matrix (the QR
    factor of a normal matrix, its signs fixed), each row scaled by an
    independent length, the length of a normal vector of ``d_k`` coordinates
    (a chi distribution), and by :math:`\sqrt{2/\tau}`: every
    vector is then distributed as :func:`normal_frequencies`' are, but
    those of a block are orthogonal (Yu et al., 2016; Choromanski et al.,
    2021), which lowers the variance of their average.

    Parameters
    ----------
    count : int
        ``D``, at least 1; the last block is cut to it.
    dims : int
        ``d_k``, at least 1.
    temperature : float
    rng : int, numpy.random.Generator or None

    Returns
    -------
    ndarray, shape (D, d_k)
    """
    count, dims = as_count(count, "count"), as_count(dims, "dims")
    tau = as_temperature(temperature, "temperature")
    blocks = -(-count // dims)
    memory.require(8 * (blocks + 2) * dims * dims, "count and dims", f"{blocks} blocks of {dims} x {dims}")
    rng = as_rng(rng)
    rows = []
    for _ in range(blocks):
        q, r = np.linalg.qr(rng.standard_normal((dims, dims)))  # (d_k, d_k)
        directions = (q * np.sign(np.diag(r))).T  # rows: orthonormal, uniformly rotated
        rows.append(directions * np.sqrt(rng.chisquare(dims, size=dims))[:, None])
    spread = np.sqrt(2.0) * np.sqrt(1.0 / tau)  # no overflow
    with np.errstate(over="ignore"):
        omega = np.vstack(rows)[:count] * spread  # (D, d_k)
    return finite_result(omega, "temperature: the frequencies overflow the double range")


def kernel_head(signal, keys, temperature) -> np.ndarray:
    r"""The exact Gaussian head of ``d_k``-dimensional keys.

    .. math:: \text{output}_i = \frac{\sum_j \exp(-\lVert k_i - k_j
        \rVert^2 / \tau)\, s_j}{\sum_l \exp(-\lVert k_i - k_l \rVert^2
        / \tau)}

    Parameters
    ----------
    signal : array_like, shape (n,)
    keys : array_like, shape (n, d_k)
    temperature : float

    Returns
    -------
    ndarray, shape (n,)
    """
    (s,) = as_series(signal=signal)
    x = _as_keys(keys)
    same_length(s, x, "signal", "keys")
    tau = as_temperature(temperature, "temperature")
    memory.require_matrix(s.size, s.size, "keys")
    with np.errstate(over="ignore"):
        logs = -(_squared_distances(x, x, "keys") / tau)  # (n, n), 0 on the diagonal
    scale = float(np.max(np.abs(s))) or 1.0
    values = np.column_stack([s / scale, np.ones_like(s)])  # (n, 2)
    sums = np.exp(logs - logs.max(axis=1, keepdims=True)) @ values  # (n, 2)
    return sums[:, 0] / sums[:, 1] * scale  # a weighted mean: within s


def bump_head(signal, keys, centres, temperature) -> np.ndarray:
    r"""The head of ``d_k``-dimensional keys from equal bumps at ``centres``.

    Key ``k`` has the features ``exp(-2 |k - centres[r]|**2 / tau)``, one
    a centre; the output is the features' estimate of the kernel's
    weighted mean, as in
    :func:`~selfattention.positive_features.positive_feature_head`.

    Computed from the features' logarithms, each feature's and each row's
    largest taken out, so that no bump underflows to a zero denominator.

    Parameters
    ----------
    signal : array_like, shape (n,)
    keys : array_like, shape (n, d_k)
    centres : array_like, shape (D, d_k)
    temperature : float

    Returns
    -------
    ndarray, shape (n,)
    """
    (s,) = as_series(signal=signal)
    x, c = _as_keys(keys), _as_keys(centres, "centres")
    same_length(s, x, "signal", "keys")
    if c.shape[1] != x.shape[1]:
        raise ValueError(f"centres must have the keys' {x.shape[1]} "
                         f"columns, got {c.shape[1]}")
    tau = as_temperature(temperature, "temperature")
    memory.require_matrix(s.size, c.shape[0], "centres")
    with np.errstate(over="ignore"):
        logs = -2.0 * (_squared_distances(x, c, "centres") / tau)  # (n, D)
    if np.isneginf(logs.max(axis=0)).any() or np.isneginf(logs.max(axis=1)).any():
        raise ValueError("centres: a bump is so far from every key, or a key "
                         "from every bump (for this temperature), that its "
                         "features underflow to 0")
    return _log_ratio(logs, s)


def cosine_head(signal, keys, frequencies) -> np.ndarray:
    r"""The head of ``d_k``-dimensional keys from random Fourier features.

    Key ``k`` has the features ``cos(frequencies[r] . k)`` and
    ``sin(frequencies[r] . k)``, so that two keys' features multiply to the
    mean of ``cos(frequencies[r] . (k_i - k_j))``, as in
    :func:`~selfattention.random_features.random_feature_head`.

    Parameters
    ----------
    signal : array_like, shape (n,)
    keys : array_like, shape (n, d_k)
    frequencies : array_like, shape (D, d_k)

    Returns
    -------
    ndarray, shape (n,)
        Refused (naming ``frequencies``) where an estimated denominator is
        so near 0 that the output leaves the double range.
    """
    (s,) = as_series(signal=signal)
    x, w = _as_keys(keys), _as_keys(frequencies, "frequencies")
    same_length(s, x, "signal", "keys")
    if w.shape[1] != x.shape[1]:
        raise ValueError(f"frequencies must have the keys' {x.shape[1]} "
                         f"columns, got {w.shape[1]}")
    memory.require_matrix(s.size, 2 * w.shape[0], "frequencies")
    with np.errstate(over="ignore", invalid="ignore"):
        angles = finite_result(x @ w.T, "keys and frequencies: an angle "
                               "overflows the double range")  # (n, D)
    psi = np.hstack([np.cos(angles), np.sin(angles)])  # (n, 2D)
    scale = float(np.max(np.abs(s))) or 1.0
    sums = psi @ (psi.T @ np.column_stack([s / scale, np.ones_like(s)]))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        output = sums[:, 0] / sums[:, 1] * scale  # (n,)
    return finite_result(output, "frequencies: an estimated denominator is "
                         "so near 0 that the output leaves the double range")


def _as_keys(keys, name: str = "keys") -> np.ndarray:
    x = as_array(keys, name, ndim=2)
    if x.size == 0:
        raise ValueError(f"{name} must hold at least one row and column")
    return x


def _squared_distances(x: np.ndarray, c: np.ndarray, name: str) -> np.ndarray:
    """``|x_i - c_r|**2``, (n, D), one axis at a time; refused if it overflows."""
    total = np.zeros((x.shape[0], c.shape[0]))
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(x.shape[1]):
            total += (x[:, k, None] - c[None, :, k]) ** 2
    return finite_result(total, f"{name}: a squared distance overflows the "
                         "double range")


def _log_ratio(logs: np.ndarray, s: np.ndarray) -> np.ndarray:
    r"""``exp(L) (exp(L)^T [s, 1])``, numerator over denominator, from logs ``L``.

    Each column's largest log is taken out of the keys' sums, each row's
    out of the rows', so that a row's largest term is 1 times a sum of at
    least 1: no denominator is 0.
    """
    top = logs.max(axis=0)  # (D,)
    scale = float(np.max(np.abs(s))) or 1.0
    values = np.column_stack([s / scale, np.ones_like(s)])  # (n, 2)
    with np.errstate(under="ignore"):
        summary = np.exp(logs - top).T @ values  # (D, 2)
        rows = logs + top  # (n, D)
        sums = np.exp(rows - rows.max(axis=1, keepdims=True)) @ summary
    return sums[:, 0] / sums[:, 1] * scale  # (n,): |ratio| <= max |s|
