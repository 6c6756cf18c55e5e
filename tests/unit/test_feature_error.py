"""selfattention.feature_error, delta_method and their study: the uniform bound, the worst pair, the ratio's spread."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from selfattention import delta_method, feature_error, random_features, spectrum
from selfattention.figures import feature_error as figures
from selfattention.studies import feature_error as study


def claim(tol, count, dims, moment, diameter):
    """The right-hand side of the uniform bound (the form of Rahimi and Recht's Claim 1), written out."""
    return 2**8 * moment * diameter**2 / tol**2 * np.exp(-count * tol**2 / (4 * (dims + 2)))


def omega_quadrature(values_at, tau):
    """E over omega ~ N(0, 2 / tau) of values_at(omega), by the trapezoid rule on +-12 standard deviations.

    100,001 nodes over 24 standard deviations, each under a hundredth of a period of the fastest cosine here:
    the integrands are smooth, bounded by n**2 and negligible at the ends, so the rule's error is far below
    1e-9 (test_spectrum.py uses the rule alike).
    """
    v = 2 / tau
    omega = np.linspace(-12 * np.sqrt(v), 12 * np.sqrt(v), 100_001)
    density = np.exp(-(omega**2) / (2 * v)) / np.sqrt(2 * np.pi * v)
    values = values_at(omega) * density  # (..., nodes)
    return np.sum((values[..., 1:] + values[..., :-1]) / 2 * np.diff(omega), axis=-1)


# --- the uniform bound ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("failure", "count", "dims", "moment", "diameter"),
                         [(0.5, 64, 1, 400.0, 1.0), (0.01, 1024, 8, 320.0, 2.8), (1.0, 1, 1, 1e-3, 1e-3),
                          (0.5, 10**9, 3, 1e6, 10.0)])
def test_the_bounds_tolerance_puts_the_claims_right_hand_side_at_the_failure_chance(failure, count, dims, moment,
                                                                                   diameter):
    tol = feature_error.uniform_bound(failure, count, dims, moment, diameter)
    assert claim(tol, count, dims, moment, diameter) == pytest.approx(failure, rel=1e-10)  # Newton to rounding
    D = feature_error.uniform_bound_count(tol, failure, dims, moment, diameter)
    # the two functions invert each other; the count is 4 (d_k + 2) / tol**2 times a logarithm of a number
    # rounded to 1e-16, which is D tol**2 / (4 (d_k + 2)): small there, the rounding's share of it grows
    level = count * tol**2 / (4 * (dims + 2))
    assert D == pytest.approx(count, rel=max(1e-9, 1e-14 / level))


def test_the_tolerance_falls_with_d_and_rises_as_the_chance_falls():
    tols = [feature_error.uniform_bound(0.5, D, 1, 400.0, 1.0) for D in (16, 64, 256, 1024, 4096)]
    assert (np.diff(tols) < 0).all()
    assert feature_error.uniform_bound(0.01, 256, 1, 400.0, 1.0) > tols[2]
    root = np.array(tols) * np.sqrt([16, 64, 256, 1024, 4096])  # D**-1/2 times a slowly growing logarithm
    assert (np.diff(root) > 0).all() and root[-1] / root[0] < 1.5


def test_the_count_grows_with_the_dimension_as_d_plus_2_times_a_logarithm():
    """Unit cube keys, tau = 0.05 d_k: E|omega|**2 = 2 d_k / tau, diam = sqrt(d_k)."""
    counts = {d: feature_error.uniform_bound_count(0.1, 0.5, d, 2 * d / (0.05 * d), np.sqrt(d)) for d in (1, 8)}
    ratio = counts[8] / counts[1]
    assert (8 + 2) / (1 + 2) < ratio < 2 * (8 + 2) / (1 + 2)  # the log factor grows by log(8) only


def test_a_tolerance_above_the_prefactor_needs_no_frequencies():
    assert feature_error.uniform_bound_count(100.0, 1.0, 1, 1.0, 1.0) == 0.0


@pytest.mark.parametrize(("name", "value"), [("failure", 1.5), ("failure", 0.0), ("count", 0), ("dims", 0),
                                             ("second_moment", -1.0), ("diameter", 0.0)])
def test_bad_bound_arguments_are_refused_by_name(name, value):
    kwargs = {"failure": 0.5, "count": 64, "dims": 1, "second_moment": 400.0, "diameter": 1.0, name: value}
    with pytest.raises(ValueError, match=name):
        feature_error.uniform_bound(**kwargs)


# --- the worst pair -------------------------------------------------------------------------------------


def test_the_sup_error_is_the_largest_error_over_every_pair_written_out():
    p = np.array([0.0, 0.13, 0.4, 0.41, 0.9])
    tau, omega = 0.05, random_features.gaussian_frequencies(7, 0.05, rng=3)
    worst = max(abs(np.mean(np.cos(omega * (a - b))) - np.exp(-((a - b) ** 2) / tau)) for a in p for b in p)
    assert feature_error.sup_error(p, omega, tau) == pytest.approx(worst, abs=1e-14)  # sums of 7 cosines
    assert feature_error.sup_error(p + 1e3, omega, tau) == pytest.approx(worst, abs=1e-9)  # differences only


def test_the_sup_error_is_between_0_and_2():
    p = np.linspace(0, 1, 30)
    for seed in range(5):
        error = feature_error.sup_error(p, random_features.gaussian_frequencies(2, 0.001, rng=seed), 0.001)
        assert 0 <= error <= 2


# --- the ratio, to first order -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small():
    p = np.array([0.0, 0.1, 0.25, 0.3, 0.7])
    s = np.array([0.5, -1.0, 2.0, 0.3, -0.7])
    return s, p, 0.03


def test_the_moments_are_the_integrals_over_the_frequency(small):
    s, p, tau = small
    moments = feature_error.frequency_moments(s, p, tau)
    for i in range(p.size):
        def terms(w, i=i):  # (2, nodes): one frequency's numerator and denominator at query i
            cosines = np.cos(np.multiply.outer(p[i] - p, w))  # (n, nodes)
            return np.stack([s @ cosines, cosines.sum(axis=0)])

        mean_num, mean_den = omega_quadrature(terms, tau)
        square_num, square_den = omega_quadrature(lambda w: terms(w) ** 2, tau)
        product = omega_quadrature(lambda w: terms(w).prod(axis=0), tau)
        assert moments["mean_num"][i] == pytest.approx(mean_num, abs=1e-9)
        assert moments["mean_den"][i] == pytest.approx(mean_den, abs=1e-9)
        assert moments["var_num"][i] == pytest.approx(square_num - mean_num**2, abs=1e-8)
        assert moments["cov"][i] == pytest.approx(product - mean_num * mean_den, abs=1e-8)
        assert moments["var_den"][i] == pytest.approx(square_den - mean_den**2, abs=1e-8)


def test_the_delta_sd_is_the_formula_on_the_moments_over_root_d(small):
    s, p, tau = small
    m = feature_error.frequency_moments(s, p, tau)
    output = m["mean_num"] / m["mean_den"]
    formula = np.sqrt(m["var_num"] - 2 * output * m["cov"] + output**2 * m["var_den"]) / m["mean_den"]
    for D in (1, 4, 100):
        np.testing.assert_allclose(feature_error.delta_sd(s, p, tau, D), formula / np.sqrt(D), rtol=1e-10)
    np.testing.assert_allclose(feature_error.delta_sd(-3 * s, p + 7, tau, 4), 3 * formula / 2, rtol=1e-9)


def test_the_delta_sd_predicts_the_spread_of_many_draws_of_many_frequencies(small):
    """D = 1000, 1000 draws: the first order's error is O(1 / D); an SD's standard error about 1 / sqrt(2 * 1000),
    2.2 %: five of them allowed."""
    s, p, tau = small
    rng = np.random.default_rng(5)
    outputs = np.array([random_features.random_feature_head(s, p, random_features.gaussian_frequencies(
        1000, tau, rng))[0] for _ in range(1000)])
    np.testing.assert_allclose(outputs.std(axis=0, ddof=1), feature_error.delta_sd(s, p, tau, 1000), rtol=0.12)


def test_sympy_averages_a_product_of_cosines_to_the_kernels_half_sum():
    expected = (sp.exp(-((spectrum.u - delta_method.u_other) ** 2) / spectrum.tau)
                + sp.exp(-((spectrum.u + delta_method.u_other) ** 2) / spectrum.tau)) / 2
    assert sp.simplify(delta_method.cosine_product_mean() - expected) == 0
    u, w, tau = 0.07, -0.11, 0.03
    numeric = omega_quadrature(lambda x: np.cos(x * u) * np.cos(x * w), tau)
    value = float(delta_method.cosine_product_mean().subs({spectrum.u: u, delta_method.u_other: w, spectrum.tau: tau}))
    assert value == pytest.approx(numeric, abs=1e-9)


def test_sympy_finds_the_delta_methods_variance_of_a_ratio():
    d = delta_method
    expected = (d.var_num - 2 * d.output * d.cov + d.output**2 * d.var_den) / d.mean_den**2
    assert sp.simplify(d.ratio_variance() - expected) == 0
    # the linear part's variance, numerically: a gradient by central differences of n / d at the means
    mean_n, mean_d, Vn, C, Vd = 0.8, 2.0, 0.3, 0.1, 0.2
    h = 1e-6
    grad = np.array([((mean_n + h) / mean_d - (mean_n - h) / mean_d) / (2 * h),
                     (mean_n / (mean_d + h) - mean_n / (mean_d - h)) / (2 * h)])
    numeric = grad @ np.array([[Vn, C], [C, Vd]]) @ grad
    value = float(d.ratio_variance().subs({d.output: mean_n / mean_d, d.var_num: Vn, d.cov: C, d.var_den: Vd,
                                           d.mean_den: mean_d}))
    assert value == pytest.approx(numeric, rel=1e-8)  # central differences of a smooth ratio: h**2 ~ 1e-12


# --- the study and its figures ---------------------------------------------------------------------------


def test_the_uniform_study_measures_the_sup_error_of_its_draws_beside_the_bound():
    p = np.linspace(0, 1, 20)
    found = study.uniform_errors(p, 0.01, [8, 32], draws=3, rng=4)
    rng = np.random.default_rng(4)
    again = [[feature_error.sup_error(p, random_features.gaussian_frequencies(D, 0.01, rng), 0.01) for D in (8, 32)]
             for _ in range(3)]
    np.testing.assert_array_equal(found["measured"], again)
    assert found["bound"][1] == feature_error.uniform_bound(0.5, 32, 1, 200.0, 1.0)
    assert found["second_moment"] == 200.0 and found["diameter"] == 1.0


def test_the_ratio_study_runs_the_cosine_head_and_the_delta_method(small):
    s, p, tau = small
    found = study.ratio_spread(s, p, tau, [4, 16], draws=50, rng=6)
    rng = np.random.default_rng(6)
    first = [random_features.random_feature_head(s, p, random_features.gaussian_frequencies(4, tau, rng))[0]
             for _ in range(50)]
    np.testing.assert_allclose(found["sd"][0], np.std(first, axis=0, ddof=1), rtol=1e-9)  # centred alike
    low, high = np.percentile(first, [25, 75], axis=0)
    np.testing.assert_allclose(found["robust"][0], (high - low) / study.NORMAL_IQR, rtol=1e-9)
    np.testing.assert_allclose(found["predicted"][1], feature_error.delta_sd(s, p, tau, 16))
    assert study.NORMAL_IQR == pytest.approx(2 * 0.6744897501960817)  # the normal's quartiles at -+0.674


def test_the_figures_draw_and_refuse_mismatched_shapes():
    fig = figures.plot_uniform_errors([4, 16], [[0.3, 0.2], [0.4, 0.1]], [2.0, 1.0])
    assert len(fig.axes) == 1
    with pytest.raises(ValueError, match="measured"):
        figures.plot_uniform_errors([4, 16], [[0.3, 0.2, 0.1]], [2.0, 1.0])
    fig = figures.plot_ratio_spread([0.0, 0.5, 1.0], [4, 16], np.ones((2, 3)), np.ones((2, 3)))
    assert len(fig.axes) == 2
    with pytest.raises(ValueError, match="predicted"):
        figures.plot_ratio_spread([0.0, 0.5, 1.0], [4, 16], np.ones((1, 3)), np.ones((2, 3)))
