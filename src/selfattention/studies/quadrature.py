r"""Bumps on a grid against bumps and cosines at random, in one dimension and in ``d_k``.

:func:`grid_errors` compares, on one signal, the head of ``D`` bumps on a
regular grid (:func:`~selfattention.quadrature.grid_centres`) with heads of
``D`` bumps at random centres
(:func:`~selfattention.positive_features.spread_centres`).
:func:`dimension_errors` does it for keys of ``d_k`` dimensions, beside the
cosine head of random frequencies, at the same number of features a token.
The distance to the exact head is the root-mean-square difference of the
outputs (:func:`~selfattention.metrics.rmse`).
"""

from __future__ import annotations

import numpy as np

from .. import memory, quadrature
from .._validation import (
    as_array,
    as_count,
    as_counts,
    as_nonnegative_scalar,
    as_rng,
    as_series,
    as_temperature,
    finite_result,
    naming,
)
from ..head import gaussian_head
from ..metrics import rmse
from ..positive_features import MARGIN, positive_feature_head, spread_centres

#: The largest key dimension :func:`dimension_errors` takes.
MAX_DIMS = 8

#: The temperature of :func:`dimension_errors`, per dimension of the keys:
#: two uniform keys lie ``d_k / 6`` apart in square on average, so
#: ``tau = 0.05 d_k`` keeps that distance at ``10 / 3`` temperatures in
#: every dimension.
TEMPERATURE_PER_DIM = 0.05


def grid_errors(signal, positions, temperature, counts, draws,
                rng=None) -> dict:
    """The head of ``D`` bumps on a grid and at random centres, against the exact head.

    Parameters
    ----------
    signal, positions : array_like, shape (n,)
    temperature : float
    counts : sequence of int, length k
        The ``D`` tried.
    draws : int
        Draws of random centres for each ``D``.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    dict
        ``"grid"`` (k,) and ``"random"`` (draws, k): distances to the
        exact head's output.
    """
    s, p = as_series(signal=signal, positions=positions)
    tau = as_temperature(temperature, "temperature")
    counts, draws = as_counts(counts, "counts"), as_count(draws, "draws")
    rng = as_rng(rng)
    memory.require(8 * draws * len(counts), "draws", "the errors")
    exact, _ = gaussian_head(s, p, tau)
    with naming("counts", "count", "centres"), naming("signal", "estimate and truth"):
        grid = [rmse(positive_feature_head(
            s, p, tau, quadrature.grid_centres(D, p, tau)), exact) for D in counts]
        random = [[rmse(positive_feature_head(
            s, p, tau, spread_centres(D, p, tau, rng)), exact) for D in counts]
            for _ in range(draws)]
    return {"grid": np.array(grid), "random": np.array(random)}


def dimension_errors(dims, counts, draws, n=400, sigma=0.3,
                     rng=None) -> dict:
    r"""Bumps on a grid, bumps at random and cosines, on keys of ``d_k`` dimensions.

    The keys are ``n`` uniform draws in :math:`[0, 1]^{d_k}`, the signal
    :math:`\sin(2 \pi k_{j,1}) + \sigma z_j`, the temperature
    :data:`TEMPERATURE_PER_DIM` times ``d_k``. For each budget ``count`` of
    columns a token: the grid of ``m = floor(count ** (1 / d_k))`` centres
    an axis (``m ** d_k <= count`` bumps), ``count`` bumps at random
    centres, and ``count // 2`` random frequencies (a cosine and a sine
    each).

    Parameters
    ----------
    dims : sequence of int
        The ``d_k`` tried, each from 1 to :data:`MAX_DIMS`.
    counts : sequence of int, length k
        The budgets of columns a token, each at least 2.
    draws : int
        Draws of random centres and frequencies for each ``D``.
    n : int
    sigma : float
    rng : int, numpy.random.Generator or None

    Returns
    -------
    dict
        For each ``d_k``: ``"counts"`` (k,), the budgets;
        ``"grid_sizes"`` (k,), ``"grid"`` (k,),
        ``"bumps"`` (draws, k) and ``"cosines"`` (draws, k), distances
        to the exact head's output.
    """
    dims = [as_count(d, "dims", maximum=MAX_DIMS) for d in as_counts(dims, "dims")]
    counts = as_counts(counts, "counts", minimum=2)
    draws, n, rng = as_count(draws, "draws"), as_count(n, "n"), as_rng(rng)
    memory.require_matrix(n, n, "n")
    memory.require(24 * n * max(counts) * MAX_DIMS, "n and counts", "the features")
    memory.require(16 * draws * len(counts), "draws", "the errors")
    sigma = as_nonnegative_scalar(sigma, "sigma")
    with naming("counts", "count", "per_axis", "centres", "frequencies"), \
            naming("sigma", "signal", "estimate and truth"):
        return {d: _one_dimension(d, counts, draws, n, sigma, rng) for d in dims}


def spread_product_variance(positions, temperature, pair, draws, rng=None) -> dict:
    r"""One product of two spread bumps over many draws of its centre: its mean and relative variance.

    The centre is drawn as :func:`~selfattention.positive_features.spread_centres`
    draws it, uniform on an interval of length :math:`\Lambda`; the product of
    the bumps at ``p_i`` and ``p_j``, times ``Lambda`` and over
    ``sqrt(pi tau) / 2`` (:func:`~selfattention.spectrum.bump_integral`),
    has the kernel as its mean.

    Parameters
    ----------
    positions : array_like, shape (n,)
    temperature : float
    pair : sequence of two floats
        ``p_i`` and ``p_j``.
    draws : int
    rng : int, numpy.random.Generator or None

    Returns
    -------
    dict
        ``"length"``, :math:`\Lambda`; ``"mean"`` and ``"relative"``, the
        sample mean and the sample variance over the mean's square.
    """
    (p,) = as_series(positions=positions)
    ends = as_array(pair, "pair", ndim=1)
    if ends.size != 2:
        raise ValueError(f"pair must hold two positions, got {ends.size}")
    tau = as_temperature(temperature, "temperature")
    draws = as_count(draws, "draws", minimum=2)
    memory.require(24 * draws, "draws", f"{draws} products")
    with naming("positions", "count"):
        centres = spread_centres(draws, p, tau, rng)  # (draws,)
    low, high = quadrature.grid_centres(2, p, tau)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        length = high - low
        logs = -2 * ((ends[0] - centres) ** 2 / tau) - 2 * ((ends[1] - centres) ** 2 / tau)
        products = np.exp(logs - logs.max())  # (draws,): scaled so the largest is 1
        relative = products.var() / products.mean() ** 2  # the scale cancels
        mean = products.mean() * np.exp(logs.max()) * length / (np.sqrt(np.pi) * np.sqrt(tau) / 2)
    finite_result(np.array([length, relative, mean]), "pair, positions and temperature: the products leave "
                  "the double range")
    return {"length": float(length), "mean": float(mean), "relative": float(relative)}


def bump_relative_variance(dims) -> float:
    r"""The relative variance of one product of two random bumps, at :func:`dimension_errors`' settings.

    A bump and a uniform centre factor over the axes, so the ratio of
    :func:`~selfattention.spectrum.spread_relative_variance` becomes, in
    ``d_k`` dimensions, with the interval :math:`\Lambda = 1 + 6 \sqrt\tau` of
    each axis of the unit cube and :math:`\tau` = :data:`TEMPERATURE_PER_DIM`
    times ``d_k``,

    .. math:: \Big(\sqrt{\frac{2}{\pi}}\, \frac{\Lambda}{\sqrt\tau}\Big)^{d_k} - 1

    Parameters
    ----------
    dims : int
        ``d_k``, from 1 to :data:`MAX_DIMS`.

    Returns
    -------
    float
    """
    d = as_count(dims, "dims", maximum=MAX_DIMS)
    tau = TEMPERATURE_PER_DIM * d
    length = 1 + 2 * MARGIN * np.sqrt(tau)
    return float((np.sqrt(2 / np.pi) * length / np.sqrt(tau)) ** d - 1)


def phase_product_variance(pair, temperature, draws, rng=None) -> dict:
    r"""One pair's kernel estimated by one frequency: the [cos, sin] pair against one cosine of random phase.

    Draws :math:`\omega \sim \mathcal N(0, 2/\tau)` and a phase
    :math:`\text{phase}` uniform on :math:`[0, 2\pi)`, and returns the sample
    variances of :math:`\cos(\omega (p_i - p_j))`, what the pair of
    features gives, and of :math:`2 \cos(\omega p_i + \text{phase}) \cos(\omega
    p_j + \text{phase})`, what two random-phase features give.

    Parameters
    ----------
    pair : sequence of two floats
        ``p_i`` and ``p_j``.
    temperature : float
    draws : int
    rng : int, numpy.random.Generator or None

    Returns
    -------
    dict
        ``"pair"`` and ``"phase"``: sample variances; ``"phase_mean"``, the
        random-phase products' mean.
    """
    ends = as_array(pair, "pair", ndim=1)
    if ends.size != 2:
        raise ValueError(f"pair must hold two positions, got {ends.size}")
    tau = as_temperature(temperature, "temperature")
    draws, rng = as_count(draws, "draws", minimum=2), as_rng(rng)
    memory.require(48 * draws, "draws", f"{draws} products")
    omega = rng.standard_normal(draws) * (np.sqrt(2.0) * np.sqrt(1.0 / tau))  # (draws,)
    phases = rng.uniform(0.0, 2 * np.pi, draws)  # (draws,)
    with np.errstate(over="ignore", invalid="ignore"):
        angles = finite_result(np.stack([omega * ends[0], omega * ends[1], omega * (ends[0] - ends[1])]),
                               "pair and temperature: an angle omega p overflows the double range")
        both = np.cos(angles[2])  # (draws,): the pair's product
        phased = 2 * np.cos(angles[0] + phases) * np.cos(angles[1] + phases)  # (draws,)
    return {"pair": float(both.var()), "phase": float(phased.var()), "phase_mean": float(phased.mean())}


def orthogonal_errors(dims, counts, draws, n=200, rng=None) -> dict:
    r"""The cosines' estimate of the kernel matrix, from independent and from orthogonal frequencies.

    Keys as in :func:`dimension_errors` (``n`` uniform in the unit cube of
    ``d_k`` dimensions, temperature :data:`TEMPERATURE_PER_DIM` times
    ``d_k``); for each ``D`` of ``counts`` and each draw, the root-mean-square
    difference over all pairs between :math:`\frac1D \sum_r \cos(\omega_r
    \cdot (k_i - k_j))` and the kernel, with frequencies from
    :func:`~selfattention.quadrature.normal_frequencies` and from
    :func:`~selfattention.quadrature.orthogonal_frequencies`.

    Parameters
    ----------
    dims : int
        ``d_k``, from 1 to :data:`MAX_DIMS`.
    counts : sequence of int, length k
    draws : int
    n : int
    rng : int, numpy.random.Generator or None

    Returns
    -------
    dict
        ``"independent"`` and ``"orthogonal"``, each (draws, k).
    """
    d = as_count(dims, "dims", maximum=MAX_DIMS)
    counts, draws, n, rng = as_counts(counts, "counts"), as_count(draws, "draws"), as_count(n, "n"), as_rng(rng)
    memory.require_matrix(n, n, "n", count=4)
    memory.require(24 * n * max(counts), "n and counts", "the features")
    memory.require(16 * draws * len(counts), "draws", "the errors")
    keys = rng.uniform(size=(n, d))  # (n, d_k)
    tau = TEMPERATURE_PER_DIM * d
    kernel = np.exp(-quadrature._squared_distances(keys, keys, "keys") / tau)  # (n, n)
    found = {"independent": np.empty((draws, len(counts))), "orthogonal": np.empty((draws, len(counts)))}
    draw = {"independent": quadrature.normal_frequencies, "orthogonal": quadrature.orthogonal_frequencies}
    for k in range(draws):
        for col, D in enumerate(counts):
            for kind, frequencies in draw.items():
                angles = keys @ frequencies(D, d, tau, rng).T  # (n, D)
                estimate = (np.cos(angles) @ np.cos(angles).T + np.sin(angles) @ np.sin(angles).T) / D
                found[kind][k, col] = np.sqrt(np.mean((estimate - kernel) ** 2))
    return found


def _one_dimension(d, counts, draws, n, sigma, rng) -> dict:
    """:func:`dimension_errors` for one ``d_k``."""
    keys = rng.uniform(size=(n, d))  # (n, d_k)
    signal = np.sin(2 * np.pi * keys[:, 0]) + sigma * rng.standard_normal(n)
    tau = TEMPERATURE_PER_DIM * d
    exact = quadrature.kernel_head(signal, keys, tau)
    sizes = [_per_axis(D, d) ** d for D in counts]
    grid = [rmse(quadrature.bump_head(signal, keys, quadrature.box_grid(
        _per_axis(D, d), keys, tau), tau), exact) for D in counts]
    bumps, cosines = np.empty((draws, len(counts))), np.empty((draws, len(counts)))
    for k in range(draws):
        for col, D in enumerate(counts):
            centres = quadrature.box_uniform(D, keys, tau, rng)  # (D, d_k)
            bumps[k, col] = rmse(quadrature.bump_head(signal, keys, centres, tau), exact)
            omega = quadrature.normal_frequencies(D // 2, d, tau, rng)  # (D/2, d_k)
            cosines[k, col] = rmse(quadrature.cosine_head(signal, keys, omega), exact)
    return {"counts": np.array(counts), "grid_sizes": np.array(sizes), "grid": np.array(grid),
            "bumps": bumps, "cosines": cosines}


def _per_axis(count: int, d: int) -> int:
    """The largest ``m`` with ``m ** d <= count`` (integers, no rounding)."""
    m = round(count ** (1.0 / d))
    while m**d > count:
        m -= 1
    while (m + 1) ** d <= count:
        m += 1
    return m
