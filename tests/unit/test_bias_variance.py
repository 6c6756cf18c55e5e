"""Bias and variance of the head, by vectorised Monte Carlo and exactly."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import mse_atol, rounding

import selfattention as sa
from selfattention.head import attention_matrices
from selfattention.studies import bias_variance as bv

TAUS = np.logspace(-5, 0, 51)


def literal_monte_carlo(n, sigma, taus, draws, seed, region):
    """Draw noisy sines one by one, smooth each with the head, average by hand."""
    z = np.random.default_rng(seed).standard_normal((draws, n))
    p = np.linspace(0, 1, n)
    clean = np.sin(2 * np.pi * p)
    inside = bv.region_mask(p, region)
    bias2, variance, mse = [], [], []
    for tau in taus:
        outputs = np.array([sa.gaussian_head(clean + sigma * z_r, p, tau)[0] for z_r in z])  # (R, n)
        mean = outputs.mean(axis=0)
        bias2.append(np.mean((mean - clean)[inside] ** 2))
        variance.append(np.mean(((outputs - mean) ** 2).mean(axis=0)[inside]))
        mse.append(np.mean(((outputs - clean) ** 2)[:, inside]))
    return np.array(bias2), np.array(variance), np.array(mse)


@pytest.mark.parametrize("region", sorted(bv.REGIONS))
def test_vectorised_monte_carlo_equals_the_literal_loop(region):
    taus = [1e-4, 3e-3, 0.1]
    parts = bv.monte_carlo_parts(30, taus, draws=25, rng=11)
    for sigma in (0.0, 0.3, 1.2):
        bias2, variance = bv.risk(parts, sigma, region)
        ref_bias2, ref_variance, ref_mse = literal_monte_carlo(30, sigma, taus, 25, 11, region)
        # The same weights (they depend on the positions only); A (f + sigma z) against A f + sigma A z and
        # the means over the draws: 2 n + R + 6 roundings on the outputs' scale 1 + sigma max|z|; the
        # squares of residuals at most twice that are averaged over the draws and the region.
        scale = 1 + sigma * np.abs(np.random.default_rng(11).standard_normal((25, 30))).max()
        atol = mse_atol(25 + 30, 2 * scale, rounding(2 * 30 + 25 + 6, scale))
        np.testing.assert_allclose(bias2, ref_bias2, rtol=0, atol=atol)
        np.testing.assert_allclose(variance, ref_variance, rtol=0, atol=atol)
        np.testing.assert_allclose(bias2 + variance, ref_mse, rtol=0, atol=3 * atol)  # bias2, variance and mse


@pytest.mark.parametrize("region", sorted(bv.REGIONS))
def test_monte_carlo_converges_to_the_exact_expectation(region):
    parts = bv.monte_carlo_parts(60, TAUS, draws=400, rng=3)
    bias2, variance = bv.risk(parts, 0.3, region)
    exact_bias2, exact_variance = bv.expected_risk(60, 0.3, TAUS, region)
    # Not rounding: a variance estimated from 400 draws is off by about sqrt(2 / 400) = 7% at one position,
    # less averaged over a region; the squared mean of the noise adds sigma**2 / 400 to the bias.
    np.testing.assert_allclose(bias2 + variance, exact_bias2 + exact_variance, rtol=0.1)


def test_bias_grows_and_variance_shrinks_with_the_temperature():
    bias2, variance = bv.expected_risk(100, 0.3, TAUS)
    assert np.all(np.diff(bias2) > 0)
    assert np.all(np.diff(variance) < 0)


def test_refined_argmin_finds_the_minimum_between_grid_points():
    taus = np.logspace(-4, -1, 13)
    curve = (np.log(taus) - np.log(0.00321)) ** 2 + 1.0
    # Exact for a parabola, but for rounding: the logarithms (1 ulp of |log tau| <= 9.3), the curve and the
    # vertex formula, a few tens of roundings on 9.3 in log tau, relative in tau.
    assert bv.refined_argmin(taus, curve) == pytest.approx(0.00321, rel=rounding(32, 9.3), abs=0)
    assert abs(taus[np.argmin(curve)] / 0.00321 - 1) > 1e-3, "the grid's own minimum is further off"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: bv.refined_argmin([1.0, 2.0, 3.0], [0.0, 1.0, 2.0]), "minimum is at the end of the grid"),
        (lambda: bv.refined_argmin([1.0, 2.0, 3.0], [1.0, 1.0, 0.0]), "minimum is at the end of the grid"),
        (lambda: bv.refined_argmin([3.0, 2.0, 1.0], [1.0, 0.0, 1.0]), "must increase"),
        (lambda: bv.refined_argmin([1.0, 2.0], [1.0, 0.0]), "at least 3"),
        (lambda: bv.monte_carlo_parts(1, [0.1]), "n must be at least 2"),
        (lambda: bv.monte_carlo_parts(10, [0.1], draws=1), "draws must be at least 2"),
        (lambda: bv.monte_carlo_parts(10, [0.1, -1.0]), "temperatures must all be positive"),
        (lambda: bv.monte_carlo_parts(10, []), "temperatures must hold at least one"),
        (lambda: bv.region_mask([0.0], "edges"), "region must be one of"),
        (lambda: bv.risk(bv.monte_carlo_parts(10, [0.1], draws=2, rng=0), -0.1), "sigma must not be negative"),
        (lambda: bv.leading_bias(0.0), "temperature must be positive"),
    ],
)
def test_bias_variance_functions_reject_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_monte_carlo_is_reproducible_from_its_seed():
    a = bv.monte_carlo_parts(20, [0.01], draws=5, rng=4)
    b = bv.monte_carlo_parts(20, [0.01], draws=5, rng=np.random.default_rng(4))
    np.testing.assert_array_equal(a.noise_var, b.noise_var)  # the same draws through the same operations


def test_leading_bias_matches_a_fine_grid():
    """With many samples per bandwidth the leading-order formulas become exact."""
    tau = 2e-4
    p = np.linspace(0, 1, 4001)
    clean = np.sin(2 * np.pi * p)
    smoothed, _ = sa.gaussian_head(clean, p, tau)
    end, interior = bv.leading_bias(tau)
    # Not rounding: the leading-order formulas drop terms of relative size h**2 omega**2 (h = 0.01: 0.4%),
    # and the grid (spacing 2.5e-4) approximates the integrals they come from.
    assert smoothed[0] - clean[0] == pytest.approx(end, rel=0.02)
    assert np.abs(smoothed - clean)[bv.region_mask(p, "interior")].max() == pytest.approx(interior, rel=0.01)


def test_the_expected_risk_from_the_parts_is_expected_risk():
    taus = np.logspace(-3.5, -1, 9)
    parts = bv.monte_carlo_parts(40, taus, draws=5, rng=2)
    for region in bv.REGIONS:
        want = bv.expected_risk(40, 0.3, taus, region)
        # Both are sums of the same O(1) squares in another order: a few eps.
        np.testing.assert_allclose(bv.risk(parts, 0.3, region, expected=True), want, rtol=1e-13, atol=0)
    no_sums = bv.ErrorParts(parts.positions, taus, parts.smooth_bias, parts.noise_mean, parts.noise_var, 5)
    with pytest.raises(ValueError, match="expected: parts has no square_sums"):
        bv.risk(no_sums, 0.3, expected=True)


def test_monte_carlo_parts_runs_any_linear_smoother():
    taus = [0.003, 0.01]
    double = lambda p, t: 2 * attention_matrices(p, t)  # noqa: E731 - twice the head
    one, two = bv.monte_carlo_parts(30, taus, draws=4, rng=1), bv.monte_carlo_parts(30, taus, draws=4, rng=1,
                                                                                     smoother=double)
    np.testing.assert_allclose(two.noise_var, 4 * one.noise_var, rtol=1e-12)
    np.testing.assert_allclose(two.square_sums, 4 * one.square_sums, rtol=1e-12)
    with pytest.raises(TypeError, match="smoother must be a callable"):
        bv.monte_carlo_parts(30, taus, smoother="head")
    with pytest.raises(ValueError, match=r"smoother must return finite weights of shape \(2, 30, 30\)"):
        bv.monte_carlo_parts(30, taus, smoother=lambda p, t: attention_matrices(p, t)[0])


def test_the_blocks_of_temperatures_change_nothing_but_rounding(monkeypatch):
    taus = np.logspace(-4, -0.5, 7)
    whole = bv.monte_carlo_parts(40, taus, draws=6, rng=3)  # one block: 7 x 40 x 40 weights
    monkeypatch.setattr(bv, "_BLOCK", 3 * 40 * 40)  # blocks of 3, 3 and 1 temperatures
    blocks = bv.monte_carlo_parts(40, taus, draws=6, rng=3)
    # The same weights and draws; each response is a dot product of 40 terms on at most max|z| (the weights
    # sum to 1), rounded in whatever order BLAS takes for the block's shape; means and variances of 6 of them.
    scale = np.abs(np.random.default_rng(3).standard_normal((6, 40))).max()
    for name in ("smooth_bias", "noise_mean", "noise_var", "square_sums"):
        np.testing.assert_allclose(getattr(blocks, name), getattr(whole, name), rtol=0,
                                   atol=rounding(2 * 40 + 12, scale**2 + scale))


def test_refined_minimum_is_the_parabolas_vertex():
    taus = np.exp(np.array([0.0, 1.0, 2.0]))
    tau, value = bv.refined_minimum(taus, [3.0, 1.0, 2.0])  # the parabola 1.5 x**2 - 3.5 x + 3 in x = log tau
    assert np.log(tau) == pytest.approx(3.5 / 3, rel=1e-12)
    assert value == pytest.approx(3 - 3.5**2 / 6, rel=1e-12)
    assert bv.refined_argmin(taus, [3.0, 1.0, 2.0]) == tau


def test_refined_minimum_names_mse_when_the_least_error_overflows():
    # Two equal errors near -1.8e308: the parabola's vertex lies between them, below the double range
    # (the input audit drew mse = [0, -1.598e308, -1.598e308]: an overflow warning, then -inf).
    with pytest.raises(ValueError, match=r"^mse: the least error between grid points overflows"):
        bv.refined_minimum([0.001, 0.01, 0.1], [0.0, -1.79e308, -1.79e308])
