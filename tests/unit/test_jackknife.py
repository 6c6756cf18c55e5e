"""Two heads at temperatures tau and rho**2 tau, combined to cancel the h**2 bias (selfattention.studies.jackknife)."""

from __future__ import annotations

import numpy as np
import pytest

import selfattention as sa
from selfattention import defaults
from selfattention.studies import jackknife as jk
from selfattention.studies import power_laws
from selfattention.studies.bias_variance import region_mask


def test_the_weights_are_the_heads_combined_by_w_o():
    p = np.linspace(0.0, 1.0, 50)
    _, narrow = sa.gaussian_head(np.zeros(50), p, 0.004)
    _, wide = sa.gaussian_head(np.zeros(50), p, 0.008)
    np.testing.assert_allclose(jk.jackknife_weights(p, 0.004), 2 * narrow - wide, rtol=0, atol=1e-15)



def test_the_smoother_is_the_layers_weights_at_each_temperature():
    p, taus = np.linspace(0.0, 1.0, 60), [0.001, 0.004, 0.03]
    for ratio in (jk.RATIO, 1.7):
        weights = jk.jackknife_smoother(ratio)(p, taus)
        for k, tau in enumerate(taus):
            # The heads' matrices are gaussian_head's bits, combined by W_O in layer_weights' order: the same bits.
            np.testing.assert_array_equal(weights[k], jk.jackknife_weights(p, tau, ratio))

def test_the_h_squared_bias_cancels_a_cubic_is_reproduced_in_the_interior():
    """A fourth-order kernel's bias starts at h**4 f'''': on a cubic, f'''' = 0, the interior is exact."""
    p = np.linspace(0.0, 1.0, 401)
    f = 4 * p**3 - 3 * p**2 + p
    inside = region_mask(p, "interior")
    one = sa.gaussian_head(f, p, 0.0005)[0] - f
    layer = jk.jackknife_weights(p, 0.0005) @ f - f
    # One head: h**2 f''/2 = 0.00025 (24 p - 6) / 2, up to 0.00075. The layer: the wide head's tails
    # past the ends, 11 of its bandwidths from the interior, weigh exp(-60), and the grid has 6 steps
    # per h, where a Gaussian's discrete moments are its continuous ones: only rounding is left.
    assert np.abs(one[inside]).max() > 5e-4
    np.testing.assert_allclose(layer[inside], 0.0, rtol=0, atol=1e-12)


def test_the_ratio_cost_grows_with_rho_and_the_book_ratio_is_near_the_limit():
    cost = jk.ratio_cost([1.01, 1.2, jk.RATIO, 2.0, 3.0])
    assert np.all(np.diff(cost) > 0)
    assert cost[0] == pytest.approx(1.0, abs=1e-3)
    assert cost[2] < 1.02



def test_the_cost_is_the_integral_of_the_squared_combined_kernel():
    """V(rho) from the overlaps of Gaussians is the integral of the squared kernel, computed numerically."""
    u = np.linspace(-60.0, 60.0, 240001)  # 120 unit bandwidths, 2000 points per bandwidth

    def cost(rho):
        gauss = lambda s: np.exp(-u * u / (2 * s * s)) / (np.sqrt(2 * np.pi) * s)  # noqa: E731 - bandwidth s
        kernel = (rho**2 * gauss(1.0) - gauss(rho)) / (rho**2 - 1)  # the layer's weights at unit bandwidth
        variance = 2 * np.sqrt(np.pi) * np.trapezoid(kernel**2, u)  # V(rho)
        return rho ** (4 / 9) * variance ** (8 / 9)  # the least error, up to a factor that rho leaves alone

    ratios = [1.2, jk.RATIO, 2.0, 3.0]
    numeric = np.array([cost(rho) for rho in ratios])
    # The trapezoid rule on a Gaussian's whole support is exact but for rounding (its error falls as
    # exp(-2 pi**2 / step**2)); 240001 terms of size at most 1 sum to within about 1e-12, relatively.
    np.testing.assert_allclose(jk.ratio_cost(ratios) / jk.ratio_cost(ratios[:1]), numeric / numeric[0], rtol=1e-10)

def test_the_leading_order_variance_is_the_layers_at_a_token_of_the_interior():
    """sigma**2 sum_j b_ij**2 of the middle row against sigma**2 V(rho) / (2 sqrt(pi) (N - 1) h)."""
    sigma = 0.3
    for n, tau, rho in ((401, 0.002, jk.RATIO), (401, 0.002, 2.0), (100, 0.005, jk.RATIO), (201, 0.004, 1.0005)):
        p = np.linspace(0.0, 1.0, n)
        B = jk.jackknife_weights(p, tau, rho)  # (n, n)
        exact = sigma**2 * np.sum(B[n // 2] ** 2)
        # Each sum over the grid is of a Gaussian of 5 or more steps per bandwidth: it equals its integral times
        # N - 1 but for exp(-2 pi**2 25) (Poisson summation). The wide head's tails past the ends, 7 or more of
        # its bandwidths away, weigh below exp(-24) = 4e-11: that, not rounding, is the tolerance.
        assert jk.leading_order_variance(n, tau, sigma, rho) == pytest.approx(exact, rel=1e-9), (n, tau, rho)


def test_the_leading_order_variance_is_the_integral_of_the_squared_kernel_even_near_one():
    """V(rho) = 2 sqrt(pi) times the integral of the squared weights at unit bandwidth, computed numerically.

    Near rho = 1 the closed form of V cancels; the function switches to its series there.
    """
    u = np.linspace(-60.0, 60.0, 240001)  # as in test_the_cost_is_the_integral_of_the_squared_combined_kernel
    gauss = lambda s: np.exp(-u * u / (2 * s * s)) / (np.sqrt(2 * np.pi) * s)  # noqa: E731 - bandwidth s
    n, tau, sigma = 101, 2.0, 1.0  # h = 1: the formula is V(rho) / (2 sqrt(pi) 100)
    for rho in (1 + 1e-7, 1.0005, 1.002, 1.2, 2.0, 30.0):
        kernel = (rho**2 * gauss(1.0) - gauss(rho)) / (rho**2 - 1)  # (u,): cancels by rho - 1 only, once
        numeric = np.trapezoid(kernel**2, u) / (n - 1)
        # Trapezoid on a Gaussian's whole support: exact but for rounding; kernel rounded to eps / (rho - 1).
        assert jk.leading_order_variance(n, tau, sigma, rho) == pytest.approx(numeric, rel=1e-8), rho


def test_the_least_error_at_the_best_bandwidth_scales_as_the_ratio_cost():
    """Bias -rho**2 h**4 f4 / 8 (f4 the fourth derivative) and the leading-order variance: the least error over h
    goes as rho**(4/9) V(rho)**(8/9)."""
    h = np.geomspace(1e-3, 1.0, 40001)  # (g,): steps d = 1.7e-4 in log h
    ratios = [1.2, jk.RATIO, 2.0, 3.0]
    least = []
    for rho in ratios:
        at_one = jk.leading_order_variance(400, 2.0, 0.3, rho)  # h = 1
        for x in (1e-3, 0.03, 0.5):  # of order 1 / h: one division, one rounding
            assert jk.leading_order_variance(400, 2 * x * x, 0.3, rho) == pytest.approx(at_one / x, rel=1e-14)
        mse = (rho**2 * h**4 * 30.0 / 8) ** 2 + at_one / h  # (g,): a fourth derivative of size 30
        least.append(mse.min())
    # For a h**8 + b / h, in x = log h, f'' / f = 8 at the minimum: the least value on a grid of step d is
    # high by at most f'' (d / 2)**2 / 2, a relative d**2 = 3e-8, in each of the two values compared.
    cost = jk.ratio_cost(ratios)
    np.testing.assert_allclose(np.array(least) / least[0], cost / cost[0], rtol=1e-7)


def test_at_the_ends_the_bias_is_reduced_by_about_rho_over_rho_plus_one():
    one, layer = jk.end_bias(defaults.TEMPERATURE, defaults.N)
    assert one > 0 and 0 < layer < one
    assert layer / one == pytest.approx(jk.RATIO / (jk.RATIO + 1), rel=0.05)  # leading order only: 5 %


def test_the_grids_of_one_head_are_chapter_sevens_and_both_kinds_come_from_one_pass():
    small = dict(ns=(30, 60), sigmas=(0.2, 0.4), temperatures=np.logspace(-4, -0.5, 15), draws=20, rng=3)
    for name, smoother in (("one head", None), ("two heads", jk.jackknife_smoother())):
        grids = power_laws.best_error_grid(**small, smoother=smoother)
        if smoother is None:
            best = power_laws.best_temperature_grid(**small)
            for region, table in best.items():
                np.testing.assert_array_equal(grids["measured"][0][region], table)
        assert set(grids) == {"measured", "expected"}, name
        for best, least in grids.values():
            assert all((table > 0).all() for table in (*best.values(), *least.values()))


def test_error_fits_fit_every_grid():
    grids = {("one head", "expected"): ({"interior": np.array([[0.01, 0.02], [0.005, 0.01]])},
                                        {"interior": np.array([[1e-3, 4e-3], [5e-4, 2e-3]])})}
    fits = jk.error_fits(grids, ns=(10, 20), sigmas=(0.1, 0.2))
    tau_law, error_law = fits["one head", "expected", "interior"]
    assert error_law.n_exponent == pytest.approx(-1.0) and error_law.sigma_exponent == pytest.approx(2.0)
    assert tau_law.n_exponent == pytest.approx(-1.0) and tau_law.sigma_exponent == pytest.approx(1.0)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: jk.jackknife_weights(np.linspace(0, 1, 5), 0.01, 0.5), "ratio must be greater than 1"),
        (lambda: jk.jackknife_smoother(1.0), "ratio must be greater than 1"),
        (lambda: jk.ratio_cost([0.9]), "ratios must all lie in"),
        (lambda: jk.leading_order_variance(10, 0.01, 0.3, 1.0), "ratio must lie in"),
        (lambda: jk.leading_order_variance(10, 0.01, 0.3, 1001.0), "ratio must lie in"),
        (lambda: jk.leading_order_variance(1, 0.01, 0.3), "n must be at least 2"),
        (lambda: jk.leading_order_variance(10, 0.0, 0.3), "temperature must be positive"),
        (lambda: jk.leading_order_variance(10, 0.01, -0.3), "sigma"),
        (lambda: jk.leading_order_variance(10, 1e-300, 1e300), "sigma and temperature: the variance overflows"),
        (lambda: jk.error_fits({"a": 1}), "grids must map keys"),
        (lambda: jk.end_bias(0.0, 10), "temperature must be positive"),
        (lambda: jk.end_bias(0.01, 1), "n must be at least 2"),
    ],
)
def test_bad_input_is_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()
