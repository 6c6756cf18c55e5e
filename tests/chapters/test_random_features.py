"""The page "When random features win": bumps on a grid as quadrature, keys of several dimensions, the weights' rank.

The tests read what the page computed (its variables and glued values) and
check each sentence that describes it; the few that need more call the
package with the page's arguments.
"""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import EPS

import selfattention as sa
from selfattention import defaults, feature_error, low_rank, quadrature, random_features, spectrum
from selfattention.metrics import rmse
from selfattention.positive_features import positive_feature_head, spread_centres
from selfattention.studies import approximate_heads
from selfattention.studies import feature_error as feature_error_study
from selfattention.studies import quadrature as quadrature_study

STEM = "random-features"

#: Two computations of one output of size ~1.6 (the noisy sine), some hundred roundings each: "the rounding of doubles"
ROUNDING = 1e-13


# --- spread bumps are quadrature -------------------------------------------------------------------


def test_the_grid_of_sixty_four_is_at_the_rounding_of_a_trapezoid_rule_and_random_ones_far_off(chapter):
    ns, glued = chapter.namespace, chapter.glued
    compared, counts = ns["compared"], ns["grid_counts"]
    assert glued["random-features-grid-64"] == compared["grid"][counts.index(64)]  # the visible cell, the study
    assert glued["random-features-grid-64"] < 1e-10
    assert glued["random-features-random-64"] == np.median(compared["random"][:, counts.index(64)])
    assert glued["random-features-random-64"] > 1e7 * glued["random-features-grid-64"]  # "orders of magnitude"
    assert glued["random-features-grid-128"] < ROUNDING
    assert glued["random-features-draws"] == 30


def test_the_grid_is_equal_steps_over_the_interval_the_spread_centres_come_from(chapter):
    ns = chapter.namespace
    centres = ns["centres"]
    steps = np.diff(centres)
    np.testing.assert_allclose(steps, steps.mean(), rtol=0, atol=8 * EPS)  # a few roundings of numbers below 2
    drawn = spread_centres(10_000, ns["positions"], ns["tau"], rng=1)
    assert centres[0] <= drawn.min() and drawn.max() <= centres[-1]
    assert drawn.min() - centres[0] < 1e-3 and centres[-1] - drawn.max() < 1e-3  # the same interval


def test_the_trapezoid_rules_leading_term_predicts_the_fall_from_32_to_64(chapter):
    """Both fall by ~1e8; the prefactors the leading term leaves out differ by less than a factor 3 between the two."""
    glued = chapter.glued
    predicted, measured = glued["random-features-rate-ratio"], glued["random-features-grid-ratio"]
    assert predicted > 1e7 and measured > 1e7
    assert 1 / 3 < measured / predicted < 3
    ns = chapter.namespace
    assert ns["rates"] == [quadrature.trapezoid_rate(D, ns["positions"], ns["tau"]) for D in ns["grid_counts"]]
    assert 1 < glued["random-features-random-ratio"] < 2.5  # random centres: about sqrt(2) a doubling


def test_the_grid_figure_plunges_and_the_random_band_falls_slowly(chapter):
    ns = chapter.namespace
    grid, medians = ns["compared"]["grid"], ns["random_medians"]
    assert (np.diff(grid[:-1]) < 0).all() and grid[0] / grid[-1] > 1e10
    assert medians[0] / medians[-1] < 20  # 16 times the bumps: about 4 at D**-1/2


# --- where randomness pays --------------------------------------------------------------------------


def test_a_cosine_of_a_random_frequency_vector_has_the_one_dimensional_mean_and_variance():
    """omega . u is normal with variance 2 |u|**2 / tau in any d_k: 200,000 draws in eight dimensions.

    The mean of cos has standard error sd / sqrt(n); the variance's, about sd**2 sqrt(2 / n) (cos is bounded,
    its fourth moment below its variance): five of each allowed.
    """
    tau, n = 0.4, 200_000
    u = np.array([0.3, -0.2, 0.1, 0.25, 0.0, -0.15, 0.2, 0.05])
    omega = quadrature.normal_frequencies(n, u.size, tau, rng=11)
    cosines = np.cos(omega @ u)
    distance = float(np.linalg.norm(u))
    mean = np.exp(-(distance**2) / tau)
    variance = float(spectrum.cosine_variance().subs({spectrum.u: distance, spectrum.tau: tau}))
    assert cosines.mean() == pytest.approx(mean, abs=5 * np.sqrt(variance / n))
    assert cosines.var() == pytest.approx(variance, abs=5 * np.sqrt(2 / n))


def test_a_grid_puts_the_root_of_d_along_each_axis(chapter):
    ns, glued = chapter.namespace, chapter.glued
    dims, budgets = ns["dimensions"], ns["budgets"]
    at_256, at_1024 = budgets.index(256), budgets.index(1024)
    assert dims[4]["grid_sizes"][at_256] == 4**4 and dims[8]["grid_sizes"][at_256] == 2**8
    assert glued["random-features-d8-grid-size"] == 2**8 == dims[8]["grid_sizes"][at_1024]
    assert glued["random-features-d8-next-grid"] == 3**8 > glued["random-features-budget"]
    assert glued["random-features-d8-grid-1024"] == glued["random-features-d8-grid-256"]  # the same grid
    assert glued["random-features-budget-frequencies"] * 2 == glued["random-features-budget"] == 1024
    assert glued["random-features-d1-grid-256"] < ROUNDING
    assert glued["random-features-d4-grid-256"] > 0.1 and glued["random-features-d8-grid-256"] > 0.1


def test_the_cosines_error_does_not_grow_with_the_dimension_and_random_bumps_do_not_escape_it(chapter):
    glued = chapter.glued
    cosines = [glued[f"random-features-d{d}-cosines-1024"] for d in (1, 4, 8)]
    assert max(cosines) < 2 * min(cosines)  # five draws each: medians within a factor 2
    assert glued["random-features-d8-bumps-1024"] > 5 * glued["random-features-d8-cosines-1024"]
    assert glued["random-features-d8-bumps-1024"] > 10 * glued["random-features-d1-bumps-1024"]


def test_the_dimension_figure_cosines_start_highest_and_end_lowest(chapter):
    ns = chapter.namespace
    for d in (4, 8):
        result, medians = ns["dimensions"][d], ns["medians"][d]
        assert medians["cosines"][0] > max(medians["bumps"][0], result["grid"][0])
        assert medians["cosines"][-1] < min(medians["bumps"][-1], result["grid"][-1])


def test_the_keys_and_temperature_are_as_said(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert glued["random-features-keys"] == ns["key_count"] == 400
    assert glued["random-features-sigma"] == defaults.SIGMA
    assert glued["random-features-tau-per-dim"] == quadrature_study.TEMPERATURE_PER_DIM
    assert glued["random-features-draws-dims"] == ns["dimensions"][8]["cosines"].shape[0] == 5


# --- the low-rank view -------------------------------------------------------------------------------


def test_the_rank_falls_nearly_as_one_over_root_tau_and_not_with_n(chapter):
    glued, ns = chapter.glued, chapter.namespace
    sweep, taus = ns["sweep"], ns["rank_taus"]
    assert (np.diff(sweep["ranks"]) < 0).all()
    assert -0.55 < glued["random-features-rank-slope"] < -0.35
    root = sweep["ranks"] * np.sqrt(taus)
    assert glued["random-features-root-rank-low"] == root.min()
    assert glued["random-features-root-rank-high"] == root.max()
    assert glued["random-features-rank-span"] == 256 and taus[0] == ns["tau"] / 4
    assert abs(glued["random-features-rank-denser"] - glued["random-features-rank-book"]) <= 2
    assert glued["random-features-rank-book"] == low_rank.numerical_rank(low_rank.singular_values(
        np.linspace(0, 1, 200), defaults.TEMPERATURE))


def test_eight_frequencies_give_rank_at_most_2d_and_no_closer_than_eckart_young_allows(chapter):
    glued = chapter.glued
    D = glued["random-features-feature-d"]
    assert glued["random-features-feature-rank"] <= 2 * D
    assert glued["random-features-feature-gap"] >= glued["random-features-feature-bound"]
    assert glued["random-features-feature-gap"] > 5 * glued["random-features-feature-bound"]  # "far from the best"


def test_bumps_give_rank_at_most_d_and_a_window_is_bound_by_no_rank(chapter):
    """The window of U = 2 sqrt(tau): its band keeps the near keys exactly, at a rank far above A's numerical rank."""
    ns, glued = chapter.namespace, chapter.glued
    p, tau = ns["rank_positions"], ns["tau"]
    centres = spread_centres(10, p, tau, rng=1)
    bumps = np.exp(-2 * (p[:, None] - centres) ** 2 / tau)  # (n, D)
    kernel = bumps @ bumps.T
    assert np.linalg.matrix_rank(kernel / kernel.sum(axis=1, keepdims=True)) <= centres.size
    u = p[:, None] - p[None, :]
    near = np.abs(u) <= 2 * np.sqrt(tau)
    band = np.exp(-(u**2) / tau) * near
    band /= band.sum(axis=1, keepdims=True)
    assert np.linalg.matrix_rank(band) > 4 * glued["random-features-rank-book"]
    _, exact = sa.gaussian_head(np.zeros_like(p), p, tau)
    kept = exact[near] / band[near]  # each kept weight, up to its row's share kept
    assert kept.max() <= 1 + 1e-12 and kept.min() > 1 - 2 * np.exp(-4)  # exp(-U**2 / tau) left out, both sides


def test_the_wide_kernels_rank_is_small_where_sixty_four_frequencies_beat_the_window(chapter):
    """Chapter 13's wide kernel, a hundred times the book's: 64 frequencies (median of ten draws) beat U = sqrt(tau)."""
    glued = chapter.glued
    assert glued["random-features-rank-wide"] < glued["random-features-rank-book"] / 4
    p, _, s = sa.noisy_sine(1000, defaults.SIGMA, rng=defaults.SEED)
    wide = 100 * defaults.TEMPERATURE
    features = approximate_heads.feature_errors(s, p, wide, [64], draws=10, rng=34, methods=["fourier"])
    window = approximate_heads.window_errors(s, p, wide, [np.sqrt(wide)])
    assert np.median(features["fourier"]) < window["errors"][0]


# --- exercises ---------------------------------------------------------------------------------------


def test_exercise_grid(chapter):
    assert chapter.glued["ex-random-features-grid-size"] == 3**8 == 6561


def test_exercise_rank(chapter):
    glued = chapter.glued
    assert glued["ex-random-features-rank-tau"] == 0.02 == 4 * defaults.TEMPERATURE
    assert glued["ex-random-features-rank-n"] == 200
    value = glued["ex-random-features-rank-value"]
    assert value == low_rank.numerical_rank(low_rank.singular_values(np.linspace(0, 1, 200), 0.02))
    assert abs(value - glued["random-features-rank-book"] / 2) <= 2  # "near half the book's"


def test_exercise_live(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert glued["ex-random-features-live-half"] * 2 == ns["count"] == 48
    exact, _ = sa.gaussian_head(ns["noisy"], ns["positions"], ns["tau"])
    for count, name in ((48, "ex-random-features-live-before"), (24, "ex-random-features-live-error")):
        grid = quadrature.grid_centres(count, ns["positions"], ns["tau"])
        assert glued[name] == rmse(positive_feature_head(ns["noisy"], ns["positions"], ns["tau"], grid), exact)
    assert glued["ex-random-features-live-factor"] > 1e3 > np.sqrt(2)  # "by far more"


def test_the_page_runs_the_book_s_signal():
    positions, _, noisy = sa.noisy_sine(defaults.N, defaults.SIGMA, rng=defaults.SEED)
    result = quadrature_study.grid_errors(noisy, positions, defaults.TEMPERATURE, [64], draws=1, rng=1)
    assert result["grid"][0] < 1e-10


# --- positive features, derived ------------------------------------------------------------------------


def test_sympy_derives_the_spread_products_relative_variance_the_same_for_every_pair(chapter):
    import sympy as sp

    mean, relative = chapter.namespace["kernel_mean"], chapter.namespace["spread_variance"]
    assert sp.simplify(mean - sp.exp(-((spectrum.x - spectrum.y) ** 2) / spectrum.tau)) == 0  # unbiased
    assert sp.simplify(relative - (sp.sqrt(2 / sp.pi) * spectrum.length / sp.sqrt(spectrum.tau) - 1)) == 0
    assert relative.free_symbols == {spectrum.length, spectrum.tau}  # no p_i, p_j: the same for every pair


def test_the_measured_relative_variance_is_the_derived_one(chapter):
    """Ten batches of 20,000 draws: five standard errors of their mean, from their own spread."""
    ns, glued = chapter.namespace, chapter.glued
    derived = glued["random-features-derived-relative"]
    assert glued["random-features-ell"] == pytest.approx(1 + 6 * np.sqrt(defaults.TEMPERATURE), abs=4 * EPS)
    assert derived == pytest.approx(np.sqrt(2 / np.pi) * glued["random-features-ell"] / np.sqrt(ns["tau"]) - 1)
    for pair in ([0.4, 0.45], [0.1, 0.3]):  # a near pair (the page's) and a far one
        batches = [quadrature_study.spread_product_variance(ns["positions"], ns["tau"], pair, 20_000, rng=seed)
                   for seed in range(10)]
        values = np.array([b["relative"] for b in batches])
        assert values.mean() == pytest.approx(derived, abs=5 * values.std(ddof=1) / np.sqrt(values.size))
        kernel = np.exp(-((pair[0] - pair[1]) ** 2) / ns["tau"])
        means = np.array([b["mean"] for b in batches])
        assert means.mean() == pytest.approx(kernel, abs=5 * means.std(ddof=1) / np.sqrt(means.size))
    page = glued["random-features-measured-relative"]
    assert page == ns["measured_product"]["relative"] and abs(page - derived) < 0.05 * derived
    assert glued["random-features-product-draws"] == 200_000
    assert glued["random-features-relative-64"] == pytest.approx(np.sqrt(derived / 64), rel=1e-15)


def test_in_d_k_dimensions_the_ratio_is_its_power(chapter):
    glued = chapter.glued
    for d in (1, 8):
        tau = quadrature_study.TEMPERATURE_PER_DIM * d
        one = np.sqrt(2 / np.pi) * (1 + 6 * np.sqrt(tau)) / np.sqrt(tau) - 1
        assert glued[f"random-features-bump-variance-{d}"] == pytest.approx((1 + one) ** d - 1, rel=1e-12)
    assert glued["random-features-bump-variance-8"] > 1e5 * glued["random-features-bump-variance-1"]


def test_orthogonal_blocks_lower_the_error_by_a_constant_factor_at_the_same_rate(chapter):
    """Per D, the two means differ by more than four standard errors of their difference (20 draws each)."""
    ns, glued = chapter.namespace, chapter.glued
    found, shares = ns["orthogonality"], ns["shares"]
    for col in range(shares.size):
        a, b = found["independent"][:, col], found["orthogonal"][:, col]
        se = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
        assert a.mean() - b.mean() > 4 * se
    assert glued["random-features-orthogonal-low"] == shares.min() and glued["random-features-orthogonal-high"] < 1
    assert shares.max() - shares.min() < 0.05  # "a constant factor"
    counts = [8, 32, 128]
    for kind in found:
        slope = np.polyfit(np.log(counts), np.log(found[kind].mean(axis=0)), 1)[0]
        assert slope == pytest.approx(-0.5, abs=0.05)
    assert glued["random-features-orthogonal-draws"] == 20


def test_the_performers_dot_product_at_the_ends_is_one_over_two_tau(chapter):
    import sympy as sp

    x, y, tau = spectrum.x, spectrum.y, spectrum.tau
    split = sp.exp(-(x**2) / tau) * sp.exp(2 * x * y / tau) * sp.exp(-(y**2) / tau)
    assert sp.simplify(split - sp.exp(-((x - y) ** 2) / tau)) == 0
    assert chapter.glued["random-features-performer-dot"] == pytest.approx(1 / (2 * defaults.TEMPERATURE))


# --- one cosine with a random phase --------------------------------------------------------------------


def test_sympy_finds_a_random_phase_adds_one_half_to_the_pairs_variance(chapter):
    import sympy as sp

    ns = chapter.namespace
    kernel = sp.exp(-(spectrum.u**2) / spectrum.tau)
    assert sp.simplify(ns["phase_mean"] - kernel) == 0  # unbiased
    assert ns["extra"] == sp.Rational(1, 2)
    assert sp.simplify(ns["pair_variance"] - (1 - kernel**2) ** 2 / 2) == 0  # never above one half


def test_the_measured_variances_are_the_derived_ones_and_the_pair_wins_per_column(chapter):
    """200,000 draws: a variance's standard error is below sqrt(E X**4 / n) <= 4 / sqrt(n) (|X| <= 2): 5 of them."""
    ns, glued = chapter.namespace, chapter.glued
    se = 4 / np.sqrt(200_000)
    assert glued["random-features-pair-measured"] == pytest.approx(glued["random-features-pair-derived"], abs=5 * se)
    assert glued["random-features-phase-measured"] == pytest.approx(glued["random-features-phase-derived"], abs=5 * se)
    assert glued["random-features-phase-derived"] == pytest.approx(glued["random-features-pair-derived"] + 0.5)
    assert ns["phases"]["phase_mean"] == pytest.approx(np.exp(-(0.05**2) / defaults.TEMPERATURE), abs=5 * se)
    assert glued["random-features-phase-per-column"] < 1
    for distance in np.linspace(0.0, 1.0, 21):  # "always": for every distance
        pair = float(ns["pair_variance"].subs({spectrum.u: distance, spectrum.tau: defaults.TEMPERATURE}))
        assert pair / 1 <= (pair + 0.5) / 2


# --- the worst pair: a uniform bound -------------------------------------------------------------------


def test_the_bound_holds_at_every_d_loosely_and_says_nothing_at_16(chapter):
    ns, glued = chapter.namespace, chapter.glued
    uniform, medians = ns["uniform"], ns["sup_medians"]
    assert ns["bound_counts"] == [16, 64, 256, 1024, 4096] and glued["random-features-bound-draws"] == 25
    for D, tol in zip(ns["bound_counts"], uniform["bound"], strict=True):
        assert tol == feature_error.uniform_bound(0.5, D, 1, 2 / defaults.TEMPERATURE, 1.0)
    assert glued["random-features-bound-root-moment"] == pytest.approx(np.sqrt(2 / defaults.TEMPERATURE))
    assert glued["random-features-bound-root-moment"] > 5 * uniform["bound"].max()  # "far above every tolerance"
    assert (uniform["bound"] > medians).all()  # the bound holds
    assert glued["random-features-bound-16"] == uniform["bound"][0] > 2  # "says nothing at all"
    assert uniform["measured"].max() <= 2
    assert glued["random-features-sup-16"] == medians[0] and glued["random-features-sup-4096"] == medians[-1]
    assert glued["random-features-bound-4096"] == uniform["bound"][-1]
    assert glued["random-features-loose-low"] == (uniform["bound"] / medians).min() > 5
    assert glued["random-features-loose-high"] == (uniform["bound"] / medians).max() < 15


def test_the_pairs_estimate_is_a_mean_of_cosines_of_the_difference_and_a_phases_is_not():
    """The bound applies to the pair: psi(p) . psi(p') = mean_r cos(omega_r (p - p')), the same for every shift of
    both positions, each term in [-1, 1]; a random phase's product depends on p + p' as well."""
    tau = defaults.TEMPERATURE
    omega = random_features.gaussian_frequencies(64, tau, rng=5)
    p = np.array([0.1, 0.35, 0.8])
    for shift in (0.0, 0.3, 2.0):
        psi = random_features.fourier_features(p + shift, omega)  # (3, 2D)
        terms = np.cos(omega[None, None, :] * (p[:, None, None] - p[None, :, None]))  # (3, 3, D)
        np.testing.assert_allclose(psi @ psi.T, terms.mean(axis=2), rtol=0, atol=1e-15)  # sums of 64 cosines / 64
        assert np.abs(terms).max() <= 1
    phase = np.random.default_rng(6).uniform(0, 2 * np.pi, 64)
    product = [np.mean(2 * np.cos(omega * (0.1 + c) + phase) * np.cos(omega * (0.35 + c) + phase)) for c in (0, 0.3)]
    assert abs(product[0] - product[1]) > 0.05  # the same difference, another sum: another estimate


def test_both_fall_as_root_d_the_bound_with_a_logarithm(chapter):
    """The bound's x = D tol**2 / (4 (d_k + 2)) solves x + log x = L, L = log(2**8 E w**2 diam**2 D / (12 / 2))."""
    ns, glued = chapter.namespace, chapter.glued
    assert glued["random-features-sup-slope"] == pytest.approx(-0.5, abs=0.05)
    assert -0.5 < glued["random-features-bound-slope"] < -0.4  # shallower: D inside the logarithm
    assert glued["random-features-sup-slope"] < glued["random-features-bound-slope"]  # "a little more slowly"
    D, tol = np.array(ns["bound_counts"]), ns["uniform"]["bound"]
    x = D * tol**2 / 12
    level = np.log(2**8 * (2 / defaults.TEMPERATURE) * D / 12 / 0.5)
    np.testing.assert_allclose(x + np.log(x), level, rtol=1e-12)
    assert (x < level).all() and (np.diff(x) > 0).all()  # about the logarithm, and growing with D


def test_read_the_other_way_the_bound_asks_for_a_hundred_times_the_frequencies(chapter):
    ns, glued = chapter.namespace, chapter.glued
    asked, target = glued["random-features-bound-asked"], glued["random-features-sup-1024"]
    assert target == ns["sup_medians"][ns["bound_counts"].index(1024)]
    assert feature_error.uniform_bound(0.5, round(asked), 1, 2 / defaults.TEMPERATURE, 1.0) == pytest.approx(
        target, rel=1e-5)  # the count rounded to a whole number of frequencies
    assert glued["random-features-bound-asked-factor"] == pytest.approx(asked / 1024)
    assert glued["random-features-bound-asked-factor"] > 50


def test_the_bound_covers_every_pair_of_the_interval_not_only_the_tokens():
    """Four times as many positions, in the same interval: the median largest error still lies below the bound."""
    dense = np.linspace(0, 1, 400)
    tau = defaults.TEMPERATURE
    found = feature_error_study.uniform_errors(dense, tau, [256], draws=15, rng=3)
    assert np.median(found["measured"]) < found["bound"][0]


# --- the head's ratio, to first order -------------------------------------------------------------------


def test_the_means_of_the_estimates_are_the_exact_heads_numerator_and_denominator(chapter):
    ns = chapter.namespace
    moments = feature_error.frequency_moments(ns["noisy"], ns["positions"], ns["tau"])
    exact, _ = sa.gaussian_head(ns["noisy"], ns["positions"], ns["tau"])
    np.testing.assert_allclose(moments["mean_num"] / moments["mean_den"], exact, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ns["spread"]["exact"], exact)


def test_the_delta_method_matches_the_measured_spread_where_d_is_large(chapter):
    """300 draws: a standard deviation's standard error is about 1 / sqrt(2 * 300), 4 %; the largest of 100
    queries' ratios may stray three or four of them (the queries share their draws)."""
    ns, glued = chapter.namespace, chapter.glued
    assert ns["spread_counts"] == [16, 64, 256, 1024] and glued["random-features-spread-draws"] == 300
    for D in (256, 1024):
        row = ns["ratios"][ns["spread_counts"].index(D)]
        assert glued[f"random-features-ratio-{D}-low"] == row.min() > 0.85
        assert glued[f"random-features-ratio-{D}-high"] == row.max() < 1.15
    assert abs(glued["random-features-ratio-1024-median"] - 1) < 0.06
    np.testing.assert_allclose(ns["spread"]["predicted"][3], feature_error.delta_sd(
        ns["noisy"], ns["positions"], ns["tau"], 1024))


def test_first_order_breaks_down_at_small_d_first_at_the_ends(chapter):
    ns, glued = chapter.namespace, chapter.glued
    ratios, p = ns["ratios"], ns["positions"]
    assert glued["random-features-ratio-64-worst-p"] in (p[0], p[-1])  # an end
    assert glued["random-features-ratio-64-low"] == ratios[1].min() < 0.5
    assert glued["random-features-ratio-64-median"] == np.median(ratios[1]) < 0.9
    assert glued["random-features-ratio-16-median"] == np.median(ratios[0]) < 0.2
    sums = ns["row_sums"]
    assert glued["random-features-den-end-share"] == sums[0] / sums[p.size // 2] < 0.6
    relative = ns["relative_den"]  # one frequency's sd of den_i over its mean: largest at the ends
    assert glued["random-features-den-end-relative"] == relative[0] == relative.max()
    assert glued["random-features-den-middle-relative"] == relative[p.size // 2] < relative[0] / 1.2
    assert sums[0] == sums.min() and sums[-1] == pytest.approx(sums.min(), rel=1e-12)  # the ends, one side only


def test_the_rare_draws_make_the_measured_spread_and_the_robust_one_stays_close(chapter):
    ns, glued = chapter.namespace, chapter.glued
    spread = ns["spread"]
    assert np.median(spread["sd"][0] / spread["robust"][0]) > 5  # D = 16: a few draws inflate the SD
    assert np.median(spread["sd"][3] / spread["robust"][3]) == pytest.approx(1, abs=0.1)  # D = 1024: none
    for D in (16, 64):
        k = ns["spread_counts"].index(D)
        assert glued[f"random-features-robust-{D}-median"] == np.median(ns["robust_ratios"][k])
        assert 0.8 < glued[f"random-features-robust-{D}-median"] < 1.2
    assert glued["random-features-normal-iqr"] == pytest.approx(1.349, abs=5e-4)


def test_the_ratio_figure_shows_the_breakdown_at_16_and_the_fit_at_256(chapter):
    ns = chapter.namespace
    spread = ns["spread"]
    assert (spread["sd"][0] > 2 * spread["predicted"][0]).all()  # D = 16: far above the curve
    assert 2 < np.ptp(np.log10(spread["sd"][0])) < 3  # the measured points: "over two orders of magnitude"
    predicted = spread["predicted"][2]  # D = 256: a dip in the middle, a rise at both ends
    middle = predicted[30:70]
    assert middle.min() < predicted[0] / 5 and middle.min() < predicted[-1] / 5
    assert predicted[0] > predicted[5] and predicted[-1] > predicted[-6]
