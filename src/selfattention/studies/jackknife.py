r"""A better smoother from two heads: temperatures ``tau`` and ``rho**2 tau``, ``W_O = [rho**2, -1] / (rho**2 - 1)``.

In the interior a head of bandwidth ``h`` has the bias ``h**2 f'' / 2 +
h**4 f'''' / 8 + ...``; the second head, of bandwidth ``rho h``, has
``rho**2`` times the first term, and the combination
(:func:`~selfattention.multihead.jackknife_layer`) cancels it, leaving
``-rho**2 h**4 f'''' / 8``: a kernel of order four (the generalised
jackknife; :func:`ratio_cost` writes the kernel). With the variance
``sigma**2 / ((N - 1) h)`` times the integral of the squared kernel at unit
bandwidth (:func:`leading_order_variance`), the best error then falls as
``N**(-8/9)`` instead of ``N**(-4/5)``.

At the ends each head's bias is first order, ``c h f'(0)``, and the
combination leaves ``c h f'(0) rho / (rho + 1)``: reduced, not cancelled.

This study measures the best temperature and the error there on the grid of
:mod:`.power_laws`, with its Monte Carlo, for one head and for the layer.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import numpy as np

from .. import memory
from .._validation import (
    InputTypeError,
    as_array,
    as_count,
    as_nonnegative_scalar,
    as_positive_scalar,
    as_seed,
    as_series,
    as_temperature,
    as_temperatures,
    finite_result,
    naming,
)
from ..head import attention_matrices, gaussian_head
from ..multihead import jackknife_layer, layer_weights, signal_tokens
from ..signals import noisy_sine
from . import power_laws

#: The ratio of the two bandwidths: temperatures tau and 2 tau, W_O = [2, -1].
RATIO = float(np.sqrt(2.0))
#: Theory's exponents ``(n, sigma)`` of the least mean squared error, for one head and for the layer.
THEORY_ERROR_EXPONENTS = {
    ("one head", "interior"): (-4 / 5, 8 / 5),
    ("two heads", "interior"): (-8 / 9, 16 / 9),
    ("one head", "whole"): (-3 / 4, 3 / 2),
    ("two heads", "whole"): (-3 / 4, 3 / 2),
}


def jackknife_weights(positions, temperature, ratio=RATIO) -> np.ndarray:
    """The layer's weights ``(rho**2 A(tau) - A(rho**2 tau)) / (rho**2 - 1)``.

    Parameters
    ----------
    positions : array_like, shape (n,)
    temperature : float
        ``tau > 0``.
    ratio : float
        ``rho > 1``.

    Returns
    -------
    ndarray, shape (n, n)
        Rows sum to 1; some entries are negative.
    """
    (p,) = as_series(positions=positions)
    memory.require_matrix(p.size, p.size, "positions", count=3)
    heads, W_O = jackknife_layer(temperature, ratio)
    return layer_weights(signal_tokens(np.zeros_like(p), p), heads, W_O)  # (n, n)


def jackknife_smoother(ratio=RATIO):
    """The layer as a smoother for :func:`~selfattention.studies.bias_variance.monte_carlo_parts`.

    Its weights at each temperature are :func:`jackknife_weights`', to the
    last bit: both heads' attention matrices come from one matrix of scores
    (:func:`~selfattention.head.attention_matrices`), and ``W_O`` combines
    them as :func:`~selfattention.multihead.layer_weights` does.

    Parameters
    ----------
    ratio : float
        ``rho > 1``.

    Returns
    -------
    callable
        ``(positions, temperatures) -> weights``, shapes (n,), (c,) and (c, n, n).
    """
    jackknife_layer(1.0, ratio)  # refuses a bad ratio now, by name

    def smoother(positions, temperatures):
        taus = as_temperatures(temperatures, "temperatures")
        with naming("temperatures", "temperature"):
            _, W_O = jackknife_layer(taus.max(), ratio)  # the same for every temperature
        rho = as_positive_scalar(ratio, "ratio")
        rho2 = rho * rho  # as jackknife_layer squares it
        A = attention_matrices(positions, np.concatenate([taus, taus * rho2]))  # (2c, n, n): both heads
        narrow, wide = A[: taus.size], A[taus.size :]  # (c, n, n) each
        narrow *= W_O[0, 0]
        wide *= W_O[1, 0]
        narrow += wide
        return narrow  # (c, n, n)

    return smoother


def ratio_cost(ratios) -> np.ndarray:
    r"""How the least interior error depends on ``rho``, relative to the limit ``rho -> 1``.

    The layer's weights are, on a dense grid and away from the ends,
    :math:`b_{ij} \approx \chi_\rho\big((p_j - p_i) / h\big) / ((N - 1)\, h)`, with the
    kernel at unit bandwidth

    .. math:: \chi_\rho(u) = \frac{\rho^2 \kappa_1(u) - \kappa_\rho(u) / \rho}{\sqrt{2\pi}\, (\rho^2 - 1)},

    where :math:`\kappa_1` and :math:`\kappa_\rho` are the Gaussian kernel at
    the bandwidths 1 and :math:`\rho`. Its squared integral follows from the
    overlaps of Gaussians, :math:`\int \kappa_1(u)^2\, du = \sqrt\pi`,
    :math:`\int \kappa_1(u)\, \kappa_\rho(u)\, du = \sqrt{2\pi}\, \rho / \sqrt{1 + \rho^2}` and
    :math:`\int \kappa_\rho(u)^2\, du = \sqrt\pi\, \rho`:

    .. math:: \int \chi_\rho(u)^2\, du
        = \frac{\rho^4 - 2\sqrt 2\, \rho^2 / \sqrt{1 + \rho^2} + 1/\rho}{2 \sqrt\pi\, (\rho^2 - 1)^2} .

    With the bias ``-rho**2 h**4 f'''' / 8`` and the variance
    ``sigma**2 / ((N - 1) h)`` times that integral, the error at the best
    ``h`` is proportional to ``rho**(4/9)`` times the integral to the power ``8/9``.

    Parameters
    ----------
    ratios : array_like, shape (a,)
        Values of ``rho > 1``.

    Returns
    -------
    ndarray, shape (a,)
        ``rho**(4/9)`` times the integral to the power ``8/9``, divided by its limit as ``rho -> 1``.
    """
    rho = as_array(ratios, "ratios", ndim=1)
    if (rho <= 1).any() or (rho > 1e3).any():
        raise ValueError("ratios must all lie in (1, 1000]")
    return _cost(rho) / _cost(np.array([1.0]))  # (a,)


def leading_order_variance(n, temperature, sigma, ratio=RATIO) -> float:
    r"""The layer's variance at a token of the interior, to leading order.

    .. math:: \sigma^2 \sum_j b_{ij}^2 \approx \frac{\sigma^2}{(N - 1)\, h} \int \chi_\rho(u)^2\, du,

    where :math:`\chi_\rho` is the layer's kernel at unit bandwidth, whose
    squared integral :func:`ratio_cost` writes in closed form (sums over the
    grid, ``N - 1`` samples per unit of position, replaced by integrals).

    Parameters
    ----------
    n : int
        Samples on [0, 1], at least 2.
    temperature : float
        ``tau > 0``, the first head's; ``h = sqrt(tau / 2)``.
    sigma : float
        Noise standard deviation, ``>= 0``.
    ratio : float
        ``rho``, in (1, 1000].

    Returns
    -------
    float
    """
    n, sigma = as_count(n, "n", minimum=2), as_nonnegative_scalar(sigma, "sigma")
    h = np.sqrt(as_temperature(temperature, "temperature") / 2)
    rho = as_positive_scalar(ratio, "ratio")
    if not 1 < rho <= 1e3:
        raise ValueError(f"ratio must lie in (1, 1000], got {ratio!r}")
    with np.errstate(over="ignore", under="ignore"):
        variance = sigma * sigma * (_variance_factor(np.array([rho]))[0] / (2 * np.sqrt(np.pi) * (n - 1))) / h
    return float(finite_result(variance, "sigma and temperature: the variance overflows the double range"))


def _variance_factor(rho: np.ndarray) -> np.ndarray:
    """``2 sqrt(pi)`` times the integral of the squared kernel, (a,): the closed form, or near 1, where it
    cancels, its series (27/16 at 1)."""
    r2, e = rho * rho, rho - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        closed = (r2 * r2 - 2 * np.sqrt(2) * r2 / np.sqrt(1 + r2) + 1 / rho) / (r2 - 1) ** 2
    series = 27 / 16 - 27 / 32 * e + 217 / 256 * e**2 - 435 / 512 * e**3  # error O(e**4), below 1e-12 here
    return np.where(e < 1e-3, series, closed)  # the closed form loses about eps / e**2 relatively


def _cost(rho: np.ndarray) -> np.ndarray:
    return rho ** (4 / 9) * _variance_factor(rho) ** (8 / 9)


def error_grids(*, seed, ratio=RATIO, ns=power_laws.GRID_NS, sigmas=power_laws.GRID_SIGMAS,
                temperatures=power_laws.GRID_TEMPERATURES, draws=power_laws.GRID_DRAWS):
    """The best temperature and the least error on a grid of ``N`` and ``sigma``, for one head and for the layer.

    Parameters
    ----------
    seed : int
        Both runs draw their noise from a generator of this seed, so they
        see the same noisy sines; with the book's seed and the default grid,
        the one head's best temperatures are those of the kernel-regression chapter's power laws
        (:func:`~selfattention.studies.power_laws.best_temperature_grid`).
    ratio : float
    ns, sigmas, temperatures, draws
        The grid, :mod:`.power_laws`' by default (:func:`~selfattention.studies.power_laws.best_error_grid`).

    Returns
    -------
    dict
        ``{("one head" | "two heads", "measured" | "expected"): (best, least)}``,
        as :func:`~selfattention.studies.power_laws.best_error_grid` returns them.
    """
    smoothers = {"one head": None, "two heads": jackknife_smoother(ratio)}
    seed = as_seed(seed, "seed")
    out = {}
    for name, smoother in smoothers.items():
        grids = power_laws.best_error_grid(ns, sigmas, temperatures, draws=draws, rng=seed, smoother=smoother)
        out.update({(name, kind): pair for kind, pair in grids.items()})
    return out


def error_fits(grids, ns=power_laws.GRID_NS, sigmas=power_laws.GRID_SIGMAS):
    """The power laws of the best temperature and of the least error, fitted on each grid.

    Parameters
    ----------
    grids : dict
        As :func:`error_grids` returns them.
    ns, sigmas : sequence
        The grid's numbers of samples and noise levels: :mod:`.power_laws`' by default.

    Returns
    -------
    dict
        ``{(name, kind, region): (law of the best temperature, law of the least error)}``,
        each a :class:`~selfattention.studies.power_laws.PowerLaw`.
    """
    if not isinstance(grids, Mapping) or not grids or not all(
            isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(t, Mapping) for t in pair)
            for pair in grids.values()):
        raise InputTypeError("grids must map keys to (best, least) pairs of dicts, as error_grids returns them")
    fit = functools.partial(power_laws.fit_power_law, ns, sigmas)
    with naming("grids", "best"):  # the grids' best temperatures and least errors are fit_power_law's best
        return {(*key, region): (fit(best[region]), fit(least[region]))
                for key, (best, least) in grids.items() for region in best}


def end_bias(temperature, n, ratio=RATIO):
    """The bias at ``p = 0`` on the noise-free sine, of one head and of the layer.

    Parameters
    ----------
    temperature : float
    n : int
    ratio : float

    Returns
    -------
    one, layer : float
    """
    tau = as_temperature(temperature, "temperature")
    p, f, _ = noisy_sine(as_count(n, "n", minimum=2), 0.0)
    one = gaussian_head(f, p, tau)[0][0] - f[0]
    layer = (jackknife_weights(p, tau, ratio) @ f)[0] - f[0]
    return float(one), float(layer)
