r"""How the best temperature scales with the number of samples and the noise.

Kernel-smoothing theory gives the best temperature ``tau*`` (the minimum of
the error against temperature) as a power law in ``N`` and ``sigma``, with
exponents that differ between the interior of the interval, where the bias
is second order in the bandwidth, and the whole interval, where the ends add
a first-order bias:

.. math:: \tau^* \propto N^{-2/5} \sigma^{4/5} \ \text{(interior)}, \qquad
    \tau^* \propto N^{-1/2} \sigma \ \text{(whole interval)}.

This study measures ``tau*`` on a grid of ``(N, sigma)`` with the Monte Carlo
of :mod:`.bias_variance` and fits the exponents by least squares.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .._validation import (
    as_array,
    as_counts,
    as_nonnegative_scalar,
    as_positive_scalar,
    as_real_scalar,
    as_rng,
    finite_result,
    naming,
)
from .bias_variance import REGIONS, monte_carlo_parts, refined_minimum, risk

#: The grid on which the power laws of the best temperature are measured:
#: numbers of samples and noise levels, each doubling the last; the
#: temperatures searched for each pair; Monte Carlo draws per pair.
GRID_NS = (50, 100, 200, 400, 800)
GRID_SIGMAS = (0.1, 0.2, 0.4, 0.8)
GRID_TEMPERATURES = np.logspace(-4.5, -1, 36)
GRID_DRAWS = 200
#: Theory's exponents ``(n, sigma)`` of the best temperature in each region.
THEORY_EXPONENTS = {"whole": (-1 / 2, 1.0), "interior": (-2 / 5, 4 / 5)}
#: How far the fitted exponents may stray from :data:`THEORY_EXPONENTS`.
EXPONENT_TOLERANCE = 0.05


@dataclass(frozen=True)
class PowerLaw:
    """A fitted law ``tau* = prefactor * n**n_exponent * sigma**sigma_exponent``.

    ``n_stderr`` and ``sigma_stderr`` are the standard errors of the two
    exponents from the least-squares regression of ``log tau*``.
    """

    prefactor: float
    n_exponent: float
    sigma_exponent: float
    n_stderr: float
    sigma_stderr: float

    def __post_init__(self):
        as_positive_scalar(self.prefactor, "prefactor")
        for name in ("n_exponent", "sigma_exponent"):
            as_real_scalar(getattr(self, name), name)
        for name in ("n_stderr", "sigma_stderr"):
            as_nonnegative_scalar(getattr(self, name), name)

    def __call__(self, n, sigma):
        """The law's ``tau*`` at ``n`` and ``sigma`` (arrays broadcast), both ``> 0``."""
        n, sigma = _positive(n, "n"), _positive(sigma, "sigma")
        with np.errstate(over="ignore", under="ignore"):
            tau = self.prefactor * n**self.n_exponent * sigma**self.sigma_exponent
        return finite_result(tau, "n and sigma: the law's temperature overflows the double range")


def _positive(x, name: str) -> np.ndarray:
    values = as_array(x, name)
    if (values <= 0).any():
        raise ValueError(f"{name} must all be positive")
    return values


def best_temperature_grid(ns, sigmas, temperatures, *, draws=100, periods=1, rng=None):
    """Measure the best temperature for every ``(n, sigma)`` pair, in each region.

    One Monte Carlo run per ``n`` (:func:`monte_carlo_parts`) serves every
    ``sigma``; the runs share one generator, drawn from in the order of ``ns``.

    Parameters
    ----------
    ns : sequence of int, length a
    sigmas : sequence of float, length b
        Noise levels, all ``> 0``.
    temperatures : array_like, shape (m,)
        Increasing grid searched by :func:`refined_argmin`.

    Returns
    -------
    dict
        ``{region: ndarray, shape (a, b)}`` for each region of :data:`REGIONS`.
    """
    grids = best_error_grid(ns, sigmas, temperatures, draws=draws, periods=periods, rng=rng)
    return grids["measured"][0]


def best_error_grid(ns, sigmas, temperatures, *, draws=100, periods=1, rng=None, smoother=None):
    """:func:`best_temperature_grid`, with the least error too, measured and expected, for any linear smoother.

    Parameters
    ----------
    ns, sigmas, temperatures, draws, periods, rng
        As for :func:`best_temperature_grid`.
    smoother : callable, optional
        Passed to :func:`monte_carlo_parts`: the engineered head when omitted.

    Returns
    -------
    dict
        ``{"measured" | "expected": (best, least)}``: from the draws, and
        from the exact expectation over the noise (:func:`risk` with
        ``expected=True``), in the same pass. ``best`` and ``least`` are
        ``{region: ndarray, shape (a, b)}``: the best temperature of each
        pair and the mean squared error there (the vertex of
        :func:`refined_minimum`'s parabola).
    """
    ns = as_counts(ns, "ns", minimum=2)
    sigmas = [as_positive_scalar(s, "sigmas") for s in as_array(sigmas, "sigmas", ndim=1)]
    gen = as_rng(rng)
    out = {kind: tuple({region: np.empty((len(ns), len(sigmas))) for region in REGIONS} for _ in range(2))
           for kind in ("measured", "expected")}
    for a, n in enumerate(ns):
        with naming("ns", "n", "n and draws"):
            parts = monte_carlo_parts(n, temperatures, draws=draws, periods=periods, rng=gen, smoother=smoother)
        for b, sigma in enumerate(sigmas):
            for (kind, (best, least)), region in itertools.product(out.items(), REGIONS):
                with naming("sigmas", "sigma"):
                    best[region][a, b], least[region][a, b] = refined_minimum(
                        parts.temperatures, sum(risk(parts, sigma, region, expected=kind == "expected")))
    return out


def fit_power_law(ns, sigmas, best) -> PowerLaw:
    """Least-squares fit of ``log tau* = c + alpha log n + beta log sigma``.

    Parameters
    ----------
    ns : sequence of int, length a
    sigmas : sequence of float, length b
    best : array_like, shape (a, b)
        Best temperatures, as from :func:`best_temperature_grid`.

    Returns
    -------
    PowerLaw
        With standard errors ``sqrt(s**2 (X^T X)^-1)`` of the exponents, where
        ``s**2`` is the residual variance on ``a * b - 3`` degrees of freedom.
    """
    ns, sigmas, best = _positive(ns, "ns"), _positive(sigmas, "sigmas"), _positive(best, "best")
    if ns.ndim != 1 or sigmas.ndim != 1 or len(set(ns.tolist())) < 2 or len(set(sigmas.tolist())) < 2:
        raise ValueError("ns and sigmas must be 1-D, each with at least two different values")
    log_n, log_s = np.meshgrid(np.log(ns), np.log(sigmas), indexing="ij")  # (a, b)
    y = np.log(best).ravel()
    if best.shape != log_n.shape or y.size < 4:
        raise ValueError("best must have shape (len(ns), len(sigmas)) with at least 4 entries")
    X = np.column_stack([np.ones_like(y), log_n.ravel(), log_s.ravel()])  # (a b, 3)
    coef, rss, *_ = np.linalg.lstsq(X, y, rcond=None)
    s2 = float(rss[0]) / (y.size - 3) if rss.size else 0.0
    stderr = np.sqrt(s2 * np.diag(np.linalg.inv(X.T @ X)))  # (3,)
    with np.errstate(over="ignore", under="ignore"):
        prefactor = np.exp(coef[0])
    if not 0 < prefactor < np.inf:
        raise ValueError(f"ns, sigmas and best: the fitted prefactor exp({coef[0]:.4g}), the law's value at n = 1 "
                         "and sigma = 1, is outside the double range")
    return PowerLaw(float(prefactor), float(coef[1]), float(coef[2]), float(stderr[1]), float(stderr[2]))
