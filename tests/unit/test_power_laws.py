"""The power laws of the best temperature: the grid search and the least-squares fit."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import rounding

from selfattention.studies import bias_variance as bv
from selfattention.studies import power_laws


def test_best_temperature_grid_minimises_each_pairs_error_curve():
    taus = np.logspace(-4, -1, 13)
    best = power_laws.best_temperature_grid([40, 80], [0.2, 0.5], taus, draws=50, rng=3)
    generator = np.random.default_rng(3)  # the grid draws from one generator, n by n
    for a, n in enumerate([40, 80]):
        parts = bv.monte_carlo_parts(n, taus, draws=50, rng=generator)
        for b, sigma in enumerate([0.2, 0.5]):
            for region, table in best.items():
                assert table[a, b] == bv.refined_argmin(taus, sum(bv.risk(parts, sigma, region)))
    assert set(best) == set(bv.REGIONS)


def test_fit_power_law_recovers_exact_exponents():
    ns, sigmas = [10, 20, 40, 80], [0.1, 0.3, 0.9]
    n, s = np.meshgrid(ns, sigmas, indexing="ij")
    truth = 0.7 * n**-0.45 * s**0.9
    fit = power_laws.fit_power_law(ns, sigmas, truth)
    # The data's logarithms are off by a few roundings on max|log| (4.4); least squares passes that on, times
    # the condition number of [1, log n, log sigma] (18), to the coefficients.
    design = np.column_stack([np.ones(n.size), np.log(n).ravel(), np.log(s).ravel()])
    tol = rounding(4 * np.linalg.cond(design), np.abs(np.log(truth)).max())
    assert fit.prefactor == pytest.approx(0.7, rel=tol + rounding(1), abs=0)  # exp(c): relative
    assert (fit.n_exponent, fit.sigma_exponent) == pytest.approx((-0.45, 0.9), rel=0, abs=tol)
    assert fit.n_stderr < tol and fit.sigma_stderr < tol  # the residuals are rounding only
    # Each coefficient's error, times |log n| or |log sigma| at most, and the powers' roundings: relative.
    rtol = tol * (1 + np.log(80) + abs(np.log(0.1))) + rounding(4)
    np.testing.assert_allclose(fit(n, s), truth, rtol=rtol, atol=0)


def test_fit_power_law_standard_errors_cover_noisy_truth():
    ns, sigmas = [10, 20, 40, 80, 160], [0.1, 0.2, 0.4, 0.8]
    n, s = np.meshgrid(ns, sigmas, indexing="ij")
    misses = []
    for seed in range(200):
        noise = np.exp(0.05 * np.random.default_rng(seed).standard_normal(n.shape))
        fit = power_laws.fit_power_law(ns, sigmas, n**-0.4 * s**0.8 * noise)
        misses.append(abs(fit.n_exponent + 0.4) > 2 * fit.n_stderr)
    assert 0.01 < np.mean(misses) < 0.12  # about 5 % outside two standard errors


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: power_laws.fit_power_law([1, 2], [1.0], [[1.0], [2.0]]), "at least two different values"),
        (lambda: power_laws.fit_power_law([1, 2], [1.0, 2.0], [[1.0, 2.0]]), "shape"),
        (lambda: power_laws.best_temperature_grid([10], [0.0], [0.1, 0.2, 0.3]), "sigmas must be positive"),
    ],
)
def test_power_law_functions_reject_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
