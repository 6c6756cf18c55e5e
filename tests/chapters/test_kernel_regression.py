"""The page "Attention is kernel regression": bias and variance, the power laws of the best
temperature, leave-one-out and the edge effect."""

from __future__ import annotations

import re

import numpy as np
import pytest
from chapters.book import prose, source
from tolerances import rounding

import selfattention as sa
from selfattention import defaults
from selfattention.metrics import rmse
from selfattention.studies import bias_variance as bv
from selfattention.studies import power_laws
from selfattention.studies.leave_one_out import LOO_FACTOR

STEM = "kernel-regression"


def test_nadaraya_watson_and_the_head_agree_to_rounding(chapter):
    assert chapter.glued["kr-gap"] < 1e-12


def test_the_error_is_u_shaped_in_the_temperature(chapter):
    mse = chapter.namespace["mse"]
    k = int(np.argmin(mse))
    assert 5 < k < len(mse) - 5
    assert np.all(np.diff(mse[: k + 1]) < 0), "the error falls all the way to its minimum"
    assert np.all(np.diff(mse[k:]) > 0), "and rises all the way after it"


def test_the_ends_of_the_curve_are_the_noise_and_the_flattened_sine(chapter):
    glued = chapter.glued
    assert glued["kr-mse-small"] == pytest.approx(glued["kr-sigma"] ** 2, rel=0.05), "essentially sigma**2"
    assert glued["kr-mse-large"] < 0.5, "heads toward the sine's mean square, 1/2"
    assert sum(bv.expected_risk(defaults.N, defaults.SIGMA, [100.0])) == pytest.approx(0.5, rel=0.03)


def test_the_best_temperature_is_the_vertex_of_the_parabola_through_the_grids_least_error(chapter):
    """The prose's refinement, against a parabola fitted here (numpy.polyfit) to the three errors around the least."""
    glued, ns = chapter.glued, chapter.namespace
    taus, mse = ns["curve_taus"], ns["mse"]
    k = int(np.argmin(mse))
    assert glued["kr-grid-best-tau"] == taus[k] and 0 < k < taus.size - 1
    assert glued["kr-grid-step"] == pytest.approx(taus[1] / taus[0])
    np.testing.assert_allclose(taus[1:] / taus[:-1], taus[1] / taus[0], rtol=1e-12)  # evenly spaced in log tau
    a, b, c = np.polyfit(np.log(taus[k - 1:k + 2]), mse[k - 1:k + 2], 2)
    assert a > 0, "a parabola open upwards: its vertex is a minimum"
    # Three points, logarithms up to 12 in size: the fit and the closed form agree to a few 1e-12 of the step.
    assert np.log(glued["kr-best-tau"]) == pytest.approx(-b / (2 * a), abs=1e-9)
    assert glued["kr-refined-mse"] == pytest.approx(c - b * b / (4 * a), rel=1e-9)
    assert taus[k - 1] < glued["kr-best-tau"] < taus[k + 1] and glued["kr-best-tau"] != taus[k]
    assert glued["kr-refined-mse"] <= glued["kr-best-mse"] == mse[k]
    text = source(STEM)
    assert "parabola in $\\log \\tau$ through these three points" in text
    # The least error on the grid is stated at its grid temperature, not at tau* (where the parabola only estimates).
    after = text[text.index("{glue:text}`kr-best-mse"):]
    assert re.search(r"`kr-(grid-best|best)-tau", after).group(1) == "grid-best"


def test_the_monte_carlo_agrees_with_the_exact_expectation(chapter):
    assert chapter.glued["kr-mc-gap"] < 5  # percent, at every temperature


def test_the_bottom_of_the_u_is_flat(chapter):
    best = chapter.glued["kr-best-tau"]
    assert chapter.glued["kr-cost-half"] < 1.25 and chapter.glued["kr-cost-double"] < 1.25
    far = int(re.search(r"a\s+factor (\d+) does not", prose("kernel-regression")).group(1))

    def at(tau):
        return sum(bv.expected_risk(defaults.N, defaults.SIGMA, [tau])).item()

    assert at(best / far) > 2 * at(best) and at(best * far) > 2 * at(best), f"a factor {far} costs much more"


def assert_exponents_match_theory(fits):
    for region, (alpha, beta) in power_laws.THEORY_EXPONENTS.items():
        assert fits[region].n_exponent == pytest.approx(alpha, abs=power_laws.EXPONENT_TOLERANCE), region
        assert fits[region].sigma_exponent == pytest.approx(beta, abs=power_laws.EXPONENT_TOLERANCE), region


def test_the_fitted_exponents_are_within_the_stated_tolerance_of_theory(chapter):
    assert chapter.glued["kr-tolerance"] == power_laws.EXPONENT_TOLERANCE
    assert_exponents_match_theory(chapter.namespace["fits"])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_fitted_exponents_hold_for_other_noise_draws(seed):
    best = power_laws.best_temperature_grid(power_laws.GRID_NS, power_laws.GRID_SIGMAS, power_laws.GRID_TEMPERATURES,
                                            draws=power_laws.GRID_DRAWS, rng=seed)
    assert_exponents_match_theory({region: power_laws.fit_power_law(power_laws.GRID_NS, power_laws.GRID_SIGMAS, table)
                                   for region, table in best.items()})


def test_the_whole_interval_exponents_differ_from_the_interior(chapter):
    best, fits = chapter.namespace["best"], chapter.namespace["fits"]
    whole, interior = fits["whole"], fits["interior"]
    assert whole.n_exponent < interior.n_exponent - 3 * np.hypot(whole.n_stderr, interior.n_stderr)
    assert whole.sigma_exponent > interior.sigma_exponent + 3 * np.hypot(whole.sigma_stderr, interior.sigma_stderr)
    assert np.all(best["whole"] < best["interior"]), "the circles lie below the squares"


def test_some_differences_from_theory_exceed_the_standard_errors(chapter):
    fits = chapter.namespace["fits"]
    misses = [(abs(fits[region].n_exponent - alpha) / fits[region].n_stderr,
               abs(fits[region].sigma_exponent - beta) / fits[region].sigma_stderr)
              for region, (alpha, beta) in power_laws.THEORY_EXPONENTS.items()]
    assert np.max(misses) > 1


def test_the_grid_doubles_n_and_sigma(chapter):
    """"each doubling the last"."""
    # Doubling a double is exact; two logarithms of 1 ulp (2 roundings each) and the difference, on log2(800) < 10.
    for grid in (power_laws.GRID_NS, power_laws.GRID_SIGMAS):
        np.testing.assert_allclose(np.diff(np.log2(grid)), 1, rtol=0, atol=rounding(5, 10.0))
    assert chapter.glued["kr-n-count"] == len(power_laws.GRID_NS)


def test_leave_one_out_lands_within_the_stated_factor_on_the_books_signals(chapter):
    glued = chapter.glued
    assert glued["kr-loo-factor"] == LOO_FACTOR
    assert 1 / LOO_FACTOR < glued["kr-loo-low"] <= glued["kr-loo-high"] < LOO_FACTOR
    assert 1 / LOO_FACTOR < glued["kr-chosen-ratio"] < LOO_FACTOR


def test_leave_one_out_is_right_on_average_but_misses_a_minority_of_other_draws(chapter):
    glued, other_ratio = chapter.glued, chapter.namespace["other_ratio"]
    assert 0.8 < glued["kr-loo-median"] < 1.25, "right on average"
    assert 0 < glued["kr-loo-outside"] < 35, "some, but a minority, miss by more than the factor"
    assert other_ratio.min() < 0.1, "a few of them by far more: far too small temperatures"


def test_the_edge_effect_pulls_the_ends_inward_at_first_order(chapter):
    glued = chapter.glued
    end = glued["kr-end-theory"]
    assert glued["kr-end-bias"] > 0 > glued["kr-end-bias-right"], "pulled toward the inside values at both ends"
    assert glued["kr-end-bias"] == pytest.approx(end, rel=0.15)
    assert -glued["kr-end-bias-right"] == pytest.approx(end, rel=0.15)
    assert glued["kr-end-shortfall"] > 0, "the measured pull is smaller than the leading-order value"
    assert glued["kr-interior-bias"] == pytest.approx(glued["kr-interior-theory"], rel=0.05)
    assert glued["kr-end-bias"] > 3 * glued["kr-interior-bias"]


def local_linear_weights(positions, at, h):
    """The weights local linear regression gives each sample at ``at``, written from its definition."""
    kernel = np.exp(-((positions - at) ** 2) / (2 * h**2))  # (n,)
    design = np.column_stack([np.ones_like(positions), positions - at])  # (n, 2)
    fit = np.linalg.solve(design.T @ (kernel[:, None] * design), design.T * kernel)  # (2, n)
    return fit[0]  # the intercept: the estimate at ``at``


def test_local_linear_regression_has_negative_weights_near_the_ends_and_no_first_order_bias(chapter):
    ns = chapter.namespace
    positions, clean, h = ns["positions"], ns["clean"], ns["h"]
    end = local_linear_weights(positions, 0.0, h)
    # They reproduce constants exactly, but for the solver: its error is the condition number of the 2 x 2
    # system times a few roundings, relative to the weights' sizes; forming it rounds 4 n times more.
    kernel = np.exp(-((positions - 0.0) ** 2) / (2 * h**2))
    design = np.column_stack([np.ones_like(positions), positions])
    condition = np.linalg.cond(design.T @ (kernel[:, None] * design))
    assert end.sum() == pytest.approx(1.0, rel=0, abs=rounding(3 * condition + 4 * len(positions), np.abs(end).sum()))
    assert end.min() < 0, "partly negative"
    assert abs(end @ clean) < abs(ns["smoothed"][0] - clean[0]) / 5


def test_a_single_head_has_non_negative_weights_two_heads_combined_need_not(chapter):
    """Twice a head of bandwidth h minus a head of bandwidth 2h (temperature 4 tau): the first-order pulls cancel."""
    ns = chapter.namespace
    positions, clean, tau = ns["positions"], ns["clean"], ns["tau"]
    one, narrow = ns["smoothed"], ns["weights"]
    wide_output, wide = sa.gaussian_head(clean, positions, 4 * tau)
    assert np.all(narrow >= 0) and np.all(wide >= 0)
    effective = 2 * narrow - wide  # (N, N): the weights of the combined output
    n = len(positions)
    # Each head's rows sum to 1 within 2 n roundings (the narrow one's doubled); the n differences and their
    # sum round 2 n times on 3.
    np.testing.assert_allclose(effective.sum(axis=1), 1.0, rtol=0, atol=3 * rounding(2 * n) + rounding(2 * n, 3.0))
    assert effective.min() < 0
    combined = 2 * one - wide_output
    # Two heads' averages (2 n roundings each, the first doubled) against one product with weights of sizes
    # summing to 3 at most: 4 n roundings on 3 max|clean|.
    np.testing.assert_allclose(combined, effective @ clean, rtol=0, atol=rounding(4 * n, 3 * np.abs(clean).max()))
    for end in (0, -1):
        assert abs(combined[end] - clean[end]) < abs(one[end] - clean[end]) / 4


def test_the_bias_is_first_order_at_the_ends_and_second_order_inside():
    """Interior bias of order h^2 (cost h^4), end bias of order h, whole-interval cost of order h^3, on a fine grid."""
    positions, f, _ = sa.noisy_sine(2000, 0.0)
    taus = np.array([2e-4, 5e-4, 1e-3, 2e-3])
    hs = np.sqrt(taus / 2)
    inside = bv.region_mask(positions, "interior")
    interior, whole, end = [], [], []
    for tau in taus:
        smooth, _ = sa.gaussian_head(f, positions, tau)
        interior.append(np.mean((smooth - f)[inside] ** 2))
        whole.append(np.mean((smooth - f) ** 2))
        end.append(smooth[0] - f[0])
    slope = {name: np.polyfit(np.log(hs), np.log(values), 1)[0]
             for name, values in (("interior", interior), ("whole", whole), ("end", end))}
    # Not rounding: exponents fitted over a factor 10 in tau to errors that follow their leading orders only.
    assert slope["interior"] == pytest.approx(4, abs=0.1)
    assert slope["end"] == pytest.approx(1, abs=0.1)
    assert slope["whole"] == pytest.approx(3, abs=0.15)


# --- the exercises -----------------------------------------------------------------------------


def test_ex_the_best_bandwidth(chapter):
    glued = chapter.glued
    assert glued["ex-kr-bandwidth-h"] == np.sqrt(glued["kr-best-tau"] / 2)  # the same operations on the same tau
    assert 0.01 < glued["ex-kr-bandwidth-h"] < 0.1, "a few hundredths"


def test_ex_twice_the_noise_about_twice_the_temperature(chapter):
    glued = chapter.glued
    assert chapter.namespace["sigma"] == defaults.SIGMA
    np.testing.assert_array_equal(chapter.namespace["live_noisy"], chapter.namespace["noisy"])  # the same draw
    assert glued["ex-kr-live-before"] == glued["kr-chosen-tau"]
    assert glued["ex-kr-live-factor"] == glued["ex-kr-live-after"] / glued["ex-kr-live-before"]
    step = 10 ** (1 / 20)  # the spacing of kernel.DEFAULT_CANDIDATES, the solution's "factor 10^(1/20)"
    # Each candidate's logarithm is off by ln(10) times linspace's 2 roundings of an exponent up to 7 (in size),
    # and by the power's and the logarithm's ulps (on 1 and on 14); two of them are subtracted.
    log_error = np.log(10) * rounding(2, 7.0) + rounding(2) + rounding(2, 14.0)
    np.testing.assert_allclose(np.diff(np.log(sa.kernel.DEFAULT_CANDIDATES)), np.log(step), rtol=0,
                               atol=2 * log_error + rounding(1, np.log(step)))
    assert 2 / step <= glued["ex-kr-live-factor"] <= 2 * step, "as close to twice as the candidates allow"


def test_ex_two_heads_cancel_the_first_order_pull(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert glued["ex-kr-open-single"] == glued["kr-end-bias"]  # the same head on the same signal
    assert glued["ex-kr-open-wide-tau"] == 4 * glued["kr-tau"]  # the second head of the question, for the book's tau
    assert ns["tau"] == glued["kr-tau"] and ns["h"] == glued["kr-h"]
    assert abs(glued["ex-kr-open-combined"]) < 0.2 * abs(glued["ex-kr-open-single"]), "of second order"
    removed = 100 * (1 - glued["ex-kr-open-combined"] / glued["ex-kr-open-single"])
    assert glued["ex-kr-open-removed"] == removed and 80 < removed < 100, "the share of the pull removed"
    # "It costs twice": to leading order the interior bias doubles and flips its sign. At the crest (f'' < 0) the
    # single head falls short of the sine and the combination overshoots it, by between one and two times as much.
    crest = np.argmin(np.abs(ns["positions"] - 0.25))
    single, combined = ns["narrow"] - ns["clean"], ns["combined"] - ns["clean"]
    assert single[crest] < 0 < combined[crest] and 1 < combined[crest] / -single[crest] < 2
    middle_single, middle_combined = glued["ex-kr-open-middle-single"], glued["ex-kr-open-middle-combined"]
    assert middle_single == np.abs(single)[ns["middle_half"]].max()
    assert middle_combined == np.abs(combined)[ns["middle_half"]].max()
    assert 1.3 * middle_single < middle_combined < 2 * middle_single, "grows"
    assert np.array_equal(ns["middle_half"], (ns["positions"] >= 0.25) & (ns["positions"] <= 0.75)), "the middle half"
    # "hardly falls" over the whole interval: by less than a tenth
    assert glued["ex-kr-open-rms-single"] == rmse(ns["narrow"], ns["clean"])
    assert glued["ex-kr-open-rms-combined"] == rmse(ns["combined"], ns["clean"])
    assert 0.9 * glued["ex-kr-open-rms-single"] < glued["ex-kr-open-rms-combined"] < glued["ex-kr-open-rms-single"]
    assert glued["ex-kr-open-lowest"] < 0, "partly negative weights"
    middle = ns["middle"]
    # As for the combined head above: each head's rows sum to 1 within 2 n roundings, the differences and their
    # sums round 2 n times on 3.
    n = len(ns["positions"])
    np.testing.assert_allclose(ns["combined_weights"].sum(axis=1), 1.0, rtol=0,
                               atol=3 * rounding(2 * n) + rounding(2 * n, 3.0))
    squares = {name: np.sum(ns[name][middle] ** 2) for name in ("narrow_weights", "wide_weights", "combined_weights")}
    assert squares["combined_weights"] > max(squares["narrow_weights"], squares["wide_weights"]), "more noise left"
