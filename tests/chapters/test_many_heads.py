"""The page "Many heads": heads at an offset, multi-head attention, a derivative and a fourth-order smoother.

The tests read what the chapter computed (its variables and glued values);
the few that need more call the package with the chapter's arguments.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from chapters.book import code_cells, source
from tolerances import average_atol, half_spread, rounding, softmax_rtol, square_scores_error

import selfattention as sa
from selfattention import defaults, symbolic
from selfattention.head import positional_features
from selfattention.kernel import temperature_to_bandwidth
from selfattention.metrics import effective_neighbours
from selfattention.multihead import (
    Head,
    curvature_layer,
    derivative_layer,
    head_outputs,
    jackknife_layer,
    layer_weights,
    multi_head,
    offset_head,
    signal_tokens,
)
from selfattention.studies import bias_variance as bv
from selfattention.studies import derivative as dv
from selfattention.studies import differences as df
from selfattention.studies import jackknife as jk
from selfattention.studies import power_laws
from tools import toc

STEM = "many-heads"
OMEGA = 2 * np.pi


# --- a head that looks elsewhere ----------------------------------------------------------------


def test_sympy_derives_the_offset_score_and_only_w_q_changes(chapter):
    assert chapter.glued["mh-offset-identity"] is True
    ns = chapter.namespace
    assert sp.simplify(ns["offset_factored"] + (symbolic.p_i + symbolic.delta - symbolic.p_j) ** 2) == 0
    np.testing.assert_array_equal(np.array(ns["W_K_delta"], dtype=float), sa.gaussian_head_weights()[1])
    assert ns["W_Q_delta"].free_symbols == {symbolic.delta}


def test_no_head_engineered_before_this_chapter_has_an_offset_but_the_exercises(chapter):
    """"Every head engineered so far has centred its band on its own token; only ex-trick-offset moved one"."""
    earlier = [name.split("/")[-1] for name in toc.documents()]
    earlier = earlier[1:earlier.index(STEM)]  # the chapters before this one
    with_offset = [(stem, cell) for stem in earlier for cell in code_cells(stem) if "offset=" in cell]
    assert [stem for stem, _ in with_offset] == ["quadratic-trick"]
    after = source("quadratic-trick").split("```{solution-start} ex-trick-offset", 1)[1]
    solution = after.split("```{solution-end}", 1)[0]
    assert all(cell in solution for _, cell in with_offset), "the only offset is in that exercise's solution"
    assert "only {ref}`ex-trick-offset` moved one" in source(STEM)


def test_each_term_of_the_offset_score_sits_in_the_coordinate_the_text_names(chapter):
    """-2 delta p_i and -delta**2 join -p_i**2 where the key is 1; 2 delta p_j joins 2 p_i p_j where it is sqrt2 p_j."""
    ns = chapter.namespace
    p_i, p_j, d = symbolic.p_i, symbolic.p_j, symbolic.delta
    q = symbolic.token_row(symbolic.s_i, p_i) * ns["W_Q_delta"]
    k = symbolic.token_row(symbolic.s_j, p_j) * ns["W_K_delta"]
    assert [sp.expand(x) for x in k] == [sp.sqrt(2) * p_j, 1, -(p_j**2)]
    assert [sp.expand(x - y) for x, y in zip(q, [sp.sqrt(2) * (p_i + d), -((p_i + d) ** 2), 1], strict=True)] == [0] * 3
    expected = [2 * p_i * p_j + 2 * d * p_j, -(p_i**2) - 2 * d * p_i - d**2, -(p_j**2)]
    assert [sp.expand(x - y) for x, y in zip(ns["offset_terms"], expected, strict=True)] == [0] * 3
    assert ns["W_Q_delta"][3, 0] == sp.sqrt(2) * d, "the query's delta comes from the constant feature"


def test_this_w_q_is_the_one_exercise_trick_offset_built(chapter):
    W_Q = chapter.namespace["W_Q_delta"]
    for offset in (0.1, -0.37, 2.5):  # the exercise's 0.1 among them
        np.testing.assert_allclose(np.array(W_Q.subs(symbolic.delta, offset), dtype=float),
                                   sa.gaussian_head_weights(offset=offset)[0], rtol=0, atol=rounding(2, 2.5**2))
    assert "sa.gaussian_head_weights(offset=ahead)[0]" in source("quadratic-trick")


def test_each_row_is_a_gaussian_cut_off_by_the_ends(chapter):
    """Over the keys there are, row i is proportional to exp(-(p_i + delta - p_j)**2 / tau), even at the ends."""
    ns = chapter.namespace
    p, tau, delta, w = ns["positions"], ns["tau"], ns["offset"], ns["ahead_weights"]
    gauss = np.exp(-((p[:, None] + delta - p[None, :]) ** 2) / tau)  # (N, N)
    rows = gauss / gauss.sum(axis=1, keepdims=True)
    # Exponents below (1 + delta)**2 / tau = 243, rounded as the head rounds them and as this test does.
    gap = square_scores_error(half_spread(p, delta), tau) + square_scores_error(1 + delta, tau, expanded=False)
    np.testing.assert_allclose(w, rows, rtol=softmax_rtol(defaults.N, gap), atol=0)


def test_a_head_averages_ahead_of_each_token_whose_band_fits_and_not_past_the_end(chapter):
    ns = chapter.namespace
    p, h = ns["positions"], temperature_to_bandwidth(ns["tau"])
    for label, delta in ns["heads"].items():
        if delta == 0:
            continue
        means = ns["runs"][label][1] @ p  # (N,): each row's mean key position
        fits = (p + delta - 3 * h >= 0) & (p + delta + 3 * h <= 1)  # the band, three h either side, inside
        assert fits.sum() > defaults.N / 2, label
        assert np.all(np.sign(means[fits] - p[fits]) == np.sign(delta)), label
    glued = chapter.glued
    assert glued["mh-end-centre"] == p[-1] + ns["offset"] > 1
    assert glued["mh-end-mean"] < p[-1], "the last query averages behind itself"


def test_the_band_is_centred_ahead_for_a_positive_offset_and_behind_for_a_negative_one(chapter):
    ns, glued = chapter.namespace, chapter.glued
    p, middle, shift = ns["positions"], ns["middle"], ns["shift"]
    assert glued["mh-peak"] == p[middle + shift]
    assert glued["mh-offset"] == pytest.approx(shift * (p[1] - p[0]), rel=1e-15)
    for label, (_, w) in ns["runs"].items():
        mean = w[middle] @ p
        sign = np.sign(ns["heads"][label])
        assert np.sign(round(mean - p[middle], 12)) == sign, label  # ahead, centred or behind


def test_an_offset_of_k_steps_relabels_the_rows_exactly_and_moves_the_output(chapter):
    ns, glued = chapter.namespace, chapter.glued
    shift, n = ns["shift"], defaults.N
    # Scores rounded differently by O(eps), divided by tau = 0.005: a few 1e-14 at most.
    assert glued["mh-row-gap"] < 1e-12
    np.testing.assert_allclose(ns["ahead_output"][: n - shift], ns["centred_output"][shift:], rtol=0, atol=1e-12)


def test_the_last_query_cannot_look_past_the_end(chapter):
    ns, glued = chapter.namespace, chapter.glued
    p = ns["positions"]
    assert p[-1] == 1.0 and glued["mh-end-mean"] < p[-1]  # behind the query itself
    assert ns["ahead_weights"][-1].argmax() == defaults.N - 1  # piled onto the last keys


# --- multi-head attention -----------------------------------------------------------------------


def test_selecting_the_first_head_returns_gaussian_head_at_its_offset(chapter):
    assert chapter.glued["mh-select-gap"] == 0.0
    ns = chapter.namespace
    assert head_outputs(ns["X"], ns["pair"]).shape == (defaults.N, 2)  # N x M d_v


def test_the_layer_of_one_value_heads_is_one_matrix_whose_rows_sum_to_the_entries_of_w_o(chapter):
    ns = chapter.namespace
    W_O = np.array([[0.7], [-1.9]])
    B = layer_weights(ns["X"], ns["pair"], W_O)
    np.testing.assert_allclose(B @ ns["noisy"], multi_head(ns["X"], ns["pair"], W_O)[:, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(B.sum(axis=1), W_O.sum(), rtol=0, atol=1e-13)
    assert (B < 0).any()  # where the negative entry's head, weighted by that entry, outweighs the other


def test_b_is_negative_where_the_negatively_weighted_heads_outweigh_the_rest_not_where_one_head_does(chapter):
    """With W_O = [2, -1]: b_ij < 0 where a2 > 2 a1, not wherever a2 > a1."""
    ns = chapter.namespace
    X, pair = ns["X"], ns["pair"]
    B = layer_weights(X, pair, [[2.0], [-1.0]])  # (N, N)
    a1, a2 = (head(X)[1] for head in pair)  # (N, N) each
    margin = np.abs(2 * a1 - a2) > 1e-15  # away from ties, where rounding decides the sign
    np.testing.assert_array_equal((B < 0)[margin], (a2 > 2 * a1)[margin])
    assert ((a2 > a1) & (B > 0)).any(), "a head with a negative entry can outweigh the other and B stay positive"


def test_centring_the_positions_of_the_tokens_changes_no_score(chapter):
    ns = chapter.namespace
    p, X, pair = ns["positions"], ns["X"], ns["pair"]
    np.testing.assert_array_equal(X[:, 1], p - 0.5)  # the middle of the range, 1/2, subtracted: exact on [0, 1]
    uncentred = positional_features(ns["noisy"], p)  # (N, 4): [s, p, p**2, 1] as they are
    # Both expanded squares round on their own positions: |p + delta| up to 1.1 here, 0.6 centred.
    delta, tau = ns["offset"], ns["tau"]
    gap = square_scores_error(1 + delta, tau) + square_scores_error(half_spread(p, delta), tau)
    for head in pair:
        np.testing.assert_allclose(head(uncentred)[1], head(X)[1], rtol=softmax_rtol(defaults.N, gap), atol=0)


# --- a derivative from two heads ----------------------------------------------------------------


def test_the_derivative_layer_is_multi_head_with_w_o_of_one_over_two_delta(chapter):
    ns, glued = chapter.namespace, chapter.glued
    heads, W_O = derivative_layer(glued["mh-best-delta"], glued["mh-best-tau"])
    np.testing.assert_allclose(W_O[:, 0], [1 / (2 * glued["mh-best-delta"]), -1 / (2 * glued["mh-best-delta"])])
    estimate = multi_head(ns["X"], heads, W_O)[:, 0]
    # Both are sums of the same 2N weighted samples, divided by 2 delta = 0.21: rounding of a few 1e-15.
    np.testing.assert_allclose(ns["estimate"], estimate, rtol=0, atol=1e-12)
    assert glued["mh-row-sum"] < 1e-12


def test_the_leading_order_bias_is_the_blur_plus_the_central_differences(chapter):
    """(h**2 / 2 + delta**2 / 6) f''' in the interior, better and better as h and delta shrink."""
    n = 2001
    p, f, _ = sa.noisy_sine(n, 0.0)
    inside = bv.region_mask(p, "interior")
    third = -(OMEGA**3) * np.cos(OMEGA * p)  # f'''
    errors = []
    for scale in (1.0, 0.5):
        delta, tau = 0.04 * scale, 4e-4 * scale**2
        h = temperature_to_bandwidth(tau)
        bias = dv.derivative_weights(p, delta, tau) @ f - dv.true_derivative(p)
        leading = (h * h / 2 + delta * delta / 6) * third
        errors.append(np.abs(bias - leading)[inside].max() / np.abs(leading[inside]).max())
    assert errors[1] < errors[0] / 3 and errors[1] < 0.01  # the next order, h**4, falls 4-fold per halving


def test_the_printed_variance_formula_has_n_minus_one_and_is_the_exact_noise(chapter):
    """The formulas as the text prints them: (N - 1) h delta**2 and, as delta -> 0, (N - 1) h**3."""
    text = source(STEM)
    assert r"{4 \sqrt{\pi}\, (N - 1)\, h\, \delta^2}" in text
    assert r"\sigma^2 / (4\sqrt\pi\, (N - 1)\, h^3)" in text
    ns, glued = chapter.namespace, chapter.glued
    sigma, n, h, delta = defaults.SIGMA, defaults.N, glued["mh-best-h"], ns["noise_offsets"]
    printed = sigma**2 * -np.expm1(-(delta**2) / h**2) / (4 * np.sqrt(np.pi) * (n - 1) * h * delta**2)
    np.testing.assert_allclose(np.sqrt(printed), ns["noise"], rtol=2 * glued["mh-noise-gap"])
    assert glued["mh-noise-gap"] < 1e-6
    np.testing.assert_allclose(np.sqrt(printed), ns["leading"], rtol=1e-12)  # the package's formula is the printed one
    with_n = np.sqrt(printed * (n - 1) / n)
    assert np.abs(with_n / ns["noise"] - 1).min() > 1e-3, "with N for N - 1 the formula is off by 0.5 %"


def test_the_variance_formula_and_its_two_regimes(chapter):
    ns, glued = chapter.namespace, chapter.glued
    assert glued["mh-noise-gap"] < 1e-6
    h, sigma = glued["mh-best-h"], defaults.SIGMA
    flat = sigma / np.sqrt(4 * np.sqrt(np.pi) * (defaults.N - 1) * h**3)
    assert glued["mh-noise-small"] == pytest.approx(flat, rel=1e-3)
    offsets, noise = ns["noise_offsets"], ns["noise"]
    below = offsets < h / 3
    assert np.ptp(noise[below]) < 0.05 * noise[below].max()  # flat below the bandwidth
    slope = np.log(noise[-1] / noise[-2]) / np.log(offsets[-1] / offsets[-2])
    assert slope == pytest.approx(-1.0, abs=0.05)  # as 1/delta above it
    assert glued["mh-noise-best"] < glued["mh-noise-small"]
    # At the rule's offset itself, not the nearest offset of the figure.
    assert glued["mh-noise-best"] == dv.noise_std(ns["positions"], [glued["mh-best-delta"]], glued["mh-best-tau"],
                                                  defaults.SIGMA)[0]
    assert glued["mh-best-delta"] not in offsets


def test_the_derivatives_noise_is_one_over_root_two_h_times_one_heads_and_grows_as_h_to_the_minus_three_halves(chapter):
    """Below the bandwidth: sigma**2 / (4 sqrt(pi) (N - 1) h**3), 1 / (sqrt(2) h) times one head's noise, at several h;
    above it, 1 / (sqrt(2) delta) times one head's."""
    glued, ns = chapter.glued, chapter.namespace
    assert glued["mh-noise-head"] == defaults.SIGMA / np.sqrt(effective_neighbours(ns["rule_weights"])[ns["middle"]])
    assert glued["mh-noise-factor"] == glued["mh-noise-small"] / glued["mh-noise-head"]
    # A band in the interior averages N_eff = 2 sqrt(pi) (N - 1) h samples (the grid's sum is the integral, as below).
    assert ns["head_neighbours"] == pytest.approx(2 * np.sqrt(np.pi) * (defaults.N - 1) * glued["mh-best-h"], rel=1e-4)
    assert glued["mh-noise-factor-theory"] == pytest.approx(1 / (np.sqrt(2) * glued["mh-best-h"]), rel=1e-15)
    # delta = 1e-4 is 0.2 % of h: the flat part is reached to (delta / h)**2; the sums over the grid are the integrals
    # but for exp(-2 pi**2 (h / step)**2) with h at least 2.2 steps here.
    assert glued["mh-noise-factor"] == pytest.approx(glued["mh-noise-factor-theory"], rel=1e-4)
    p, middle = ns["positions"], ns["middle"]
    temperatures = np.array([0.001, 0.002, 0.004, 0.008, 0.016])
    hs = np.sqrt(temperatures / 2)
    flat = np.array([dv.noise_std(p, [1e-4], tau, defaults.SIGMA)[0] for tau in temperatures])
    one = np.array([defaults.SIGMA / np.sqrt(effective_neighbours(sa.gaussian_head(p, p, tau)[1])[middle])
                    for tau in temperatures])
    np.testing.assert_allclose(flat / one, 1 / (np.sqrt(2) * hs), rtol=1e-4)
    assert np.polyfit(np.log(hs), np.log(flat), 1)[0] == pytest.approx(-1.5, abs=0.01)
    # Far above the bandwidth (delta = 8 h; the bands share exp(-16) of their weight): 1 / (sqrt(2) delta), for the
    # two narrowest bands, whose heads at +-8 h still lie 8 h or more inside the signal.
    far = np.array([dv.noise_std(p, [8 * h], tau, defaults.SIGMA)[0] for h, tau in zip(hs[:2], temperatures[:2],
                                                                                         strict=True)])
    np.testing.assert_allclose(far / one[:2], 1 / (np.sqrt(2) * 8 * hs[:2]), rtol=1e-4)
    for phrase in (r"$1 / (\sqrt 2\, h)$ times one head's", r"grows as $h^{-3/2}$",
                   r"$1 / (\sqrt 2\, \delta)$ times one head's"):
        assert phrase in source(STEM), phrase
    assert "amplified by $1/h$" not in source(STEM)


def test_the_rule_picks_the_least_expected_error_inside_the_grid(chapter):
    ns, glued = chapter.namespace, chapter.glued
    risk = ns["risk"]
    assert glued["mh-grid-offsets"] == len(risk.offsets) and glued["mh-grid-taus"] == len(risk.temperatures)
    a, b = np.unravel_index(np.argmin(risk.mse), risk.mse.shape)
    assert (glued["mh-best-delta"], glued["mh-best-tau"]) == (risk.offsets[a], risk.temperatures[b])
    assert 0 < a < len(risk.offsets) - 1 and 0 < b < len(risk.temperatures) - 1  # not cut off by the grid
    assert glued["mh-expected-rmse"] == pytest.approx(np.sqrt(risk.mse.min()), rel=1e-15)
    assert glued["mh-best-h"] == temperature_to_bandwidth(glued["mh-best-tau"])
    assert glued["mh-amplitude"] == pytest.approx(np.abs(dv.true_derivative(ns["positions"])).max())


def test_the_best_offset_is_a_couple_of_bandwidths_as_theory_says(chapter):
    glued = chapter.glued
    assert glued["mh-theory-ratio"] == dv.best_offset_ratio()
    assert 2 < glued["mh-theory-ratio"] < 3
    assert glued["mh-best-ratio"] == pytest.approx(glued["mh-theory-ratio"], abs=0.2)


def test_at_the_best_ratio_the_bands_barely_overlap(chapter):
    """The two heads' noises are correlated by exp(-delta**2 / h**2): under 1 % at theory's ratio."""
    ns, glued = chapter.namespace, chapter.glued
    assert glued["mh-theory-correlation"] == np.exp(-glued["mh-theory-ratio"] ** 2) < 0.01
    # The correlation of the middle output's two noises, from the heads' rows, at the rule's pair.
    p, middle, delta, tau = ns["positions"], ns["middle"], glued["mh-best-delta"], glued["mh-best-tau"]
    ahead, behind = (sa.gaussian_head(ns["noisy"], p, tau, offset=d)[1][middle] for d in (delta, -delta))
    correlation = ahead @ behind / np.sqrt((ahead @ ahead) * (behind @ behind))
    # Sums over the grid of Gaussians of 4.5 steps per bandwidth, centred 9 bandwidths or more from the ends: their
    # integrals but for exp(-40), and rounding.
    assert correlation == pytest.approx(np.exp(-((delta / glued["mh-best-h"]) ** 2)), rel=1e-12)


def test_a_small_offset_does_not_make_a_better_derivative(chapter):
    risk, glued = chapter.namespace["risk"], chapter.glued
    assert glued["mh-small-offset"] == risk.offsets.min()
    assert glued["mh-small-offset-rmse"] == pytest.approx(np.sqrt(risk.mse[0].min()))  # at its own best temperature
    assert glued["mh-small-offset-rmse"] > glued["mh-expected-rmse"]
    h = temperature_to_bandwidth(risk.temperatures[np.argmin(risk.mse[0])])
    assert glued["mh-small-offset"] < h / 2  # in the regime where the noise is amplified by 1/h


def test_the_estimate_fails_at_the_ends(chapter):
    ns, glued = chapter.namespace, chapter.glued
    assert glued["mh-rmse-inside"] == pytest.approx(
        np.sqrt(np.mean((ns["estimate"] - ns["slope"])[ns["inside"]] ** 2)), rel=1e-14)
    assert glued["mh-ends-ratio"] > 1.5
    assert glued["mh-end-truth"] == pytest.approx(OMEGA)
    assert glued["mh-end-estimate"] < glued["mh-end-truth"] / 2
    # The head at -delta at the first query: its weights pile up at the start, well short of p = -delta.
    _, behind = sa.gaussian_head(ns["noisy"], ns["positions"], glued["mh-best-tau"], offset=-glued["mh-best-delta"])
    assert behind[0] @ ns["positions"] < glued["mh-best-h"]


# --- a better smoother from two heads -----------------------------------------------------------


def test_one_heads_bias_is_the_two_terms_of_the_expansion():
    n, tau = 2001, 0.001
    p, f, _ = sa.noisy_sine(n, 0.0)
    inside = bv.region_mask(p, "interior")
    h = temperature_to_bandwidth(tau)
    bias = sa.gaussian_head(f, p, tau)[0] - f
    expansion = (-(h**2) / 2 * OMEGA**2 + h**4 / 8 * OMEGA**4) * f  # h**2 f''/2 + h**4 f''''/8
    x = (OMEGA * h) ** 2 / 2
    # The series of exp(-x) - 1 cut after x**2: the next term is x**3 / 6 of the sine's amplitude.
    assert np.abs(bias - expansion)[inside].max() < 1.1 * x**3 / 6


def test_the_layer_leaves_the_fourth_order_term(chapter):
    n, tau = 2001, 0.001
    p, f, _ = sa.noisy_sine(n, 0.0)
    inside = bv.region_mask(p, "interior")
    h, rho = temperature_to_bandwidth(tau), chapter.namespace["ratio"]
    bias = jk.jackknife_weights(p, tau, rho) @ f - f
    left = -(rho**2) * h**4 / 8 * OMEGA**4 * f  # -rho**2 h**4 f''''/8
    big = np.abs(f) > 0.5
    np.testing.assert_allclose(bias[inside & big] / left[inside & big], 1.0, rtol=0.05)


def test_the_layers_weights_sum_to_one_and_some_are_negative(chapter):
    glued = chapter.glued
    assert glued["mh-jk-row-sum"] < 1e-12
    assert glued["mh-jk-min-weight"] < 0 < glued["mh-jk-negative-mass"]
    B, middle = chapter.namespace["B_jk"], chapter.namespace["middle"]
    row, peak = B[middle], B[middle].argmax()
    assert peak == middle
    left, right = row[:peak].min(), row[peak + 1:].min()
    assert left < 0 and right < 0, "a dip on either side of the peak"
    # The grid is symmetric about the middle query; the ends, 9 bandwidths of the wide head away, weigh exp(-40).
    assert left == pytest.approx(glued["mh-jk-min-weight"], rel=1e-9)
    assert right == pytest.approx(glued["mh-jk-min-weight"], rel=1e-9)


def test_the_first_querys_combined_weights_have_one_negative_dip(chapter):
    """The alt text: 'a taller half peak with one negative dip'."""
    B = chapter.namespace["B_jk"]
    negative = np.flatnonzero(B[0] < 0)
    assert negative.size > 0 and np.all(np.diff(negative) == 1), "one run of negative weights"
    assert B[0].argmax() == 0 < negative[0]


def test_rho_is_root_two_w_o_is_two_minus_one_and_the_cost_is_as_stated(chapter):
    glued, rho = chapter.glued, chapter.namespace["ratio"]
    assert rho == np.sqrt(2)
    _, W_O = jackknife_layer(0.01, rho)
    np.testing.assert_allclose(W_O[:, 0], [2.0, -1.0], rtol=0, atol=1e-15)
    cost = jk.ratio_cost([rho, 2.0])
    assert glued["mh-rho-cost"] == pytest.approx(100 * (cost[0] - 1)) and glued["mh-rho-cost"] < 2
    assert glued["mh-rho-cost-2"] == pytest.approx(100 * (cost[1] - 1))
    assert glued["mh-rho-cost-2"] > glued["mh-rho-cost"]
    near = 1.001
    W_O = jackknife_layer(0.01, near)[1][:, 0] * 2 * (near - 1)
    np.testing.assert_allclose(W_O, [1.0, -1.0], rtol=0, atol=2e-3)  # about +-1/(2(rho-1))


def test_the_layers_variance_is_the_integral_of_its_squared_kernel(chapter):
    ns, glued = chapter.namespace, chapter.glued
    exact = defaults.SIGMA**2 * np.sum(ns["B_jk"][ns["middle"]] ** 2)
    formula = jk.leading_order_variance(defaults.N, ns["tau"], defaults.SIGMA, ns["ratio"])
    assert glued["mh-jk-variance-gap"] == abs(exact / formula - 1) < 1e-9


def test_the_combined_kernel_is_of_order_four_and_one_head_of_order_two(chapter):
    """The moments of the middle query's weights, in powers of h: one head's 1, 0, 1, 0, 3; the layer's 1, 0, 0, 0,
    -3 rho**2."""
    glued, ns = chapter.glued, chapter.namespace
    rho = ns["ratio"]
    # Bands of 5 and 7 grid steps per bandwidth: the grid's moments are the integrals but for exp(-2 pi**2 25);
    # the middle query is 7 of the wide head's bandwidths from either end, whose tails beyond weigh exp(-24).
    np.testing.assert_allclose(ns["head_moments"], [1, 0, 1, 0, 3], rtol=0, atol=1e-9)
    np.testing.assert_allclose(ns["layer_moments"], [1, 0, 0, 0, -3 * rho**2], rtol=0, atol=1e-7)
    assert (glued["mh-moment-head-2"], glued["mh-moment-head-4"]) == tuple(ns["head_moments"][[2, 4]])
    assert glued["mh-moment-layer-low"] == np.abs(ns["layer_moments"][1:4]).max() < 1e-7
    assert glued["mh-moment-layer-theory"] == pytest.approx(-6.0) and glued["mh-moment-layer-4"] == pytest.approx(-6.0)
    # The fourth moment times h**4 f/24 is the leading bias -rho**2 h**4 f/8, for any rho.
    assert -3 * rho**2 / 24 == pytest.approx(-(rho**2) / 8)
    # rho = 2 on a finer grid (9 steps per h), the wide band 11 of its bandwidths from either end.
    p, tau = np.linspace(0.0, 1.0, 401), 0.001
    in_h = (p - p[200]) / temperature_to_bandwidth(tau)
    wide = jk.jackknife_weights(p, tau, 2.0)[200] @ in_h[:, None] ** np.arange(5)
    np.testing.assert_allclose(wide, [1, 0, 0, 0, -12], rtol=0, atol=1e-9)


def test_the_squared_integral_of_the_combined_kernel_is_the_closed_form(chapter):
    """The displayed closed form, against the integral of chi_rho squared on a fine grid (an independent sum)."""
    u = np.linspace(-40.0, 40.0, 400001)
    du = 80.0 / (u.size - 1)  # exact: u[1] - u[0] loses eps * 40 / du = 2e-11 of the step
    kappa = lambda x, h: np.exp(-(x**2) / (2 * h * h))  # noqa: E731 - the Gaussian kernel at the bandwidth h
    for rho in (1.05, np.sqrt(2), 2.0, 5.0):
        chi = (rho**2 * kappa(u, 1.0) - kappa(u, rho) / rho) / (np.sqrt(2 * np.pi) * (rho**2 - 1))
        assert np.sum(chi) * du == pytest.approx(1.0, rel=1e-12)
        assert np.sum(u**4 * chi) * du == pytest.approx(-3 * rho**2, rel=1e-9)
        integral = np.sum(chi**2) * du  # the trapezoid rule, exact to far below 1e-9 for a Gaussian
        closed = ((rho**4 - 2 * np.sqrt(2) * rho**2 / np.sqrt(1 + rho**2) + 1 / rho)
                  / (2 * np.sqrt(np.pi) * (rho**2 - 1) ** 2))
        assert closed == pytest.approx(integral, rel=1e-9)
        # The package's variance is sigma**2 / ((N - 1) h) times it.
        n, tau, sigma = 101, 0.002, 0.3
        expected = sigma**2 * integral / ((n - 1) * temperature_to_bandwidth(tau))
        assert jk.leading_order_variance(n, tau, sigma, rho) == pytest.approx(expected, rel=1e-9)
    assert r"\int \chi_\rho(u)^2\, du &= \frac{1}{2\sqrt\pi\, (\rho^2 - 1)^2}" in source(STEM)
    assert r"\rho^4 - \frac{2\sqrt 2\, \rho^2}{\sqrt{1 + \rho^2}} + \frac1\rho" in source(STEM)


def test_the_generalised_jackknife_and_higher_order_kernels_are_cited(chapter):
    text = source(STEM)
    for key in ("gray1972generalized", "schucany1977improvement", "wand1995kernel"):
        assert key in text, key
    assert "Statisticians call this" not in text, "the words are defined, not only named"


def test_the_one_heads_best_temperatures_are_chapter_sevens(chapter, chapter_run):
    best = chapter.namespace["grids"]["one head", "measured"][0]
    seven = chapter_run("kernel-regression").namespace["best"]
    for region in bv.REGIONS:
        np.testing.assert_array_equal(best[region], seven[region])


THEORY = {("one", "interior"): -4 / 5, ("two", "interior"): -8 / 9, ("one", "whole"): -3 / 4, ("two", "whole"): -3 / 4}


@pytest.mark.parametrize(("name", "region"), THEORY)
def test_the_exact_exponents_are_theorys(chapter, name, region):
    glued = chapter.glued
    tolerance = 0.01 if region == "interior" else 0.03  # the whole interval mixes h**3 and h**4 on this grid
    assert glued[f"mh-{name}-expected-{region}-alpha"] == pytest.approx(THEORY[name, region], abs=tolerance)


@pytest.mark.parametrize("name", ["one", "two"])
def test_over_the_whole_interval_the_exponents_lie_between_the_ends_and_the_interior(chapter, name):
    """Several standard errors below -3/4, above the interior's exponent: the interior's term still adds in."""
    glued = chapter.glued
    whole, se = glued[f"mh-{name}-expected-whole-alpha"], glued[f"mh-{name}-expected-whole-alpha-se"]
    assert glued[f"mh-{name}-expected-interior-alpha"] < whole < -3 / 4
    assert (-3 / 4 - whole) / se > 3, "several standard errors away"
    assert "± is the standard error of the least-squares fit" in source(STEM)


def test_the_sigma_and_temperature_exponents_are_theorys(chapter):
    glued = chapter.glued
    assert glued["mh-one-expected-interior-beta"] == pytest.approx(8 / 5, abs=0.02)
    assert glued["mh-two-expected-interior-beta"] == pytest.approx(16 / 9, abs=0.02)
    assert glued["mh-one-expected-interior-tau-alpha"] == pytest.approx(-2 / 5, abs=0.03)
    assert glued["mh-two-expected-interior-tau-alpha"] == pytest.approx(-2 / 9, abs=0.03)
    assert glued["mh-two-expected-interior-tau-alpha"] > glued["mh-one-expected-interior-tau-alpha"]


def test_the_layers_error_falls_faster_and_is_smaller(chapter):
    glued, grids = chapter.glued, chapter.namespace["grids"]
    assert glued["mh-two-expected-interior-alpha"] < glued["mh-one-expected-interior-alpha"] - 0.05
    ratio = grids["one head", "expected"][1]["interior"] / grids["two heads", "expected"][1]["interior"]
    assert glued["mh-gain"] == pytest.approx(np.median(ratio)) and glued["mh-gain"] > 1
    assert abs(glued["mh-two-expected-whole-alpha"] - glued["mh-one-expected-whole-alpha"]) < 0.02


def test_the_monte_carlo_exponents_are_less_steep_because_of_the_draws(chapter):
    glued, grids = chapter.glued, chapter.namespace["grids"]
    for name in ("one", "two"):
        assert glued[f"mh-{name}-measured-interior-alpha"] > glued[f"mh-{name}-expected-interior-alpha"]
    assert glued["mh-mc-gap-small"] > glued["mh-mc-gap-rest"]  # the smallest N is the least well measured
    assert glued["mh-interior-samples"] == 24 and glued["mh-draws"] == 200
    gaps = {name: 100 * np.abs(grids[name, "measured"][1]["interior"] / grids[name, "expected"][1]["interior"] - 1)
            for name in ("one head", "two heads")}  # (a, b) each
    assert glued["mh-mc-gap-small"] == max(gap[0].max() for gap in gaps.values())
    assert glued["mh-mc-gap-rest"] == max(gap[1:].max() for gap in gaps.values())
    assert all(gap[1:].max() < gap[0].max() for gap in gaps.values()), "for the head and for the layer"


@pytest.mark.parametrize(("name", "short"), [("one head", "one"), ("two heads", "two")])
def test_without_the_smallest_n_the_monte_carlo_exponent_nears_the_exact_one(chapter, name, short):
    glued, grids = chapter.glued, chapter.namespace["grids"]
    for kind in ("measured", "expected"):
        rest = power_laws.fit_power_law(power_laws.GRID_NS[1:], power_laws.GRID_SIGMAS,
                                        grids[name, kind][1]["interior"][1:])
        assert glued[f"mh-{short}-{kind}-rest-alpha"] == rest.n_exponent
    full = abs(glued[f"mh-{short}-measured-interior-alpha"] - glued[f"mh-{short}-expected-interior-alpha"])
    rest = abs(glued[f"mh-{short}-measured-rest-alpha"] - glued[f"mh-{short}-expected-rest-alpha"])
    assert rest < full / 1.5, "the draws at the smallest N tilt the line"


def test_the_layer_affords_wider_bands_at_every_point_of_the_grid(chapter):
    glued, grids = chapter.glued, chapter.namespace["grids"]
    wider = grids["two heads", "expected"][0]["interior"] / grids["one head", "expected"][0]["interior"]
    assert (glued["mh-wider-min"], glued["mh-wider-max"]) == (wider.min(), wider.max())
    assert glued["mh-wider-min"] > 2


def test_at_the_ends_the_layer_only_reduces_the_bias(chapter):
    glued = chapter.glued
    assert 0 < glued["mh-end-bias-layer"] < glued["mh-end-bias-one"]
    assert glued["mh-end-bias-theory"] == pytest.approx(np.sqrt(2) / (np.sqrt(2) + 1))
    assert glued["mh-end-bias-ratio"] == pytest.approx(glued["mh-end-bias-theory"], rel=0.05)


def test_the_other_combination_cancels_the_ends_and_keeps_an_interior_h_squared(chapter):
    """Twice a head of bandwidth h minus one of 2h (temperature 4 tau): the first-order pulls cancel at the ends."""
    p, f, _ = sa.noisy_sine(400, 0.0)
    inside = bv.region_mask(p, "interior")
    tau = 0.002
    X = signal_tokens(np.zeros_like(p), p)
    W_Q, W_K, W_V = sa.gaussian_head_weights()
    B = layer_weights(X, [Head(W_Q, W_K, W_V, tau), Head(W_Q, W_K, W_V, 4 * tau)], [[2.0], [-1.0]])
    one = sa.gaussian_head(f, p, tau)[0] - f
    other = B @ f - f
    assert abs(other[0]) < 0.2 * abs(one[0])
    big = np.abs(f) > 0.5
    np.testing.assert_allclose(other[inside & big] / one[inside & big], -2.0, rtol=0.1)  # -h**2 f'' against h**2 f''/2


def test_cancelling_both_terms_takes_a_third_head(chapter):
    """Two heads, W_O summing to 1: one condition more (interior h**2, or the ends' h) is all they can meet. Three
    heads at h, rho h, rho**2 h meet both: the interior's second moment and the end's first moment vanish."""
    rho = chapter.namespace["ratio"]
    scales = np.array([1.0, rho, rho**2])  # (3,): the bandwidths, in units of h
    # Two heads: rows sum to 1, and w1 + w2 rho**2 = 0 (interior) or w1 + w2 rho = 0 (ends): no W_O does both.
    two = np.vstack([np.ones(2), scales[:2] ** 2, scales[:2]])  # (3, 2)
    _, residual, *_ = np.linalg.lstsq(two, [1.0, 0.0, 0.0], rcond=None)
    assert residual[0] > 0.1
    W_O = np.linalg.solve(np.vstack([np.ones(3), scales**2, scales]), [1.0, 0.0, 0.0])  # (3,)
    n, tau = 401, 0.002  # h = 0.0316, 12.6 steps
    p = np.linspace(0.0, 1.0, n)
    X = signal_tokens(np.zeros(n), p)
    heads = [offset_head(0.0, tau * s * s) for s in scales]
    B = layer_weights(X, heads, W_O[:, None])  # (n, n)
    one = sa.gaussian_head(np.zeros(n), p, tau)[1]  # (n, n)
    i = n // 2
    second = [weights[i] @ (p - p[i]) ** 2 for weights in (one, B)]  # h**2 for one head
    # Gaussians of 12.6 steps or more per bandwidth: their moments on the grid are the continuous ones but for
    # exp(-2 pi**2 12.6**2) (Poisson summation); the widest, 2h, is 7.9 of its bandwidths from either end, whose
    # tails past them weigh exp(-31). What is left is rounding, a few eps against h**2 = 1e-3.
    assert abs(second[1]) < 1e-9 * second[0]
    first = [weights[0] @ p for weights in (one, B)]  # the end's first-order pull, c h for one head
    assert abs(first[1]) < 0.05 * first[0], "the end's first-order pull cancels too, but for the grid's steps"
    jk_end = jk.jackknife_weights(p, tau, rho)[0] @ p
    assert jk_end > 0.5 * first[0], "two heads, cancelling the interior's term, only reduce it"


def test_the_explorer_starts_near_the_rules_choice(chapter):
    text = source(STEM)
    assert ":layer: derivative" in text
    glued = chapter.glued
    assert ":offset: 0.1\n" in text and abs(0.1 - glued["mh-best-delta"]) < 0.01
    assert ":temperature: 0.004\n" in text and abs(0.004 / glued["mh-best-tau"] - 1) < 0.01


# --- the exercises -----------------------------------------------------------------------------


def test_ex_the_derivative_layers_w_o_and_a_straight_line(chapter):
    glued, ns = chapter.glued, chapter.namespace
    delta, p = glued["ex-mh-line-delta"], ns["positions"]
    assert delta == ns["line_offset"] and ns["line_heads"][0].temperature == defaults.TEMPERATURE
    # [1, -1] / (2 delta): a doubling (exact) and a division (one rounding) on each side.
    np.testing.assert_allclose(glued["ex-mh-line-wo"], [[1 / (2 * delta)], [-1 / (2 * delta)]], rtol=rounding(2),
                               atol=0)
    assert [glued["ex-mh-line-wo-plus"], glued["ex-mh-line-wo-minus"]] == [row[0] for row in glued["ex-mh-line-wo"]]
    B = dv.derivative_weights(p, delta, defaults.TEMPERATURE)
    np.testing.assert_allclose(B.sum(axis=1), 0.0, rtol=0, atol=rounding(2 * defaults.N + 4, 1 / delta))  # no constant
    # The middle query's bands lie 9 h inside the signal: both heads average the line (values up to 5) to its value
    # at their centres, but for rounding; the difference is divided by 2 delta.
    gap = square_scores_error(half_spread(p, delta), defaults.TEMPERATURE)
    atol = 2 * average_atol(defaults.N, 5.0, gap) / (2 * delta)
    assert glued["ex-mh-line-slope"] == pytest.approx(3.0, rel=0, abs=atol)
    assert glued["ex-mh-line-gap"] == np.abs(ns["line_output"][ns["inside"]] - 3).max() < 1e-3
    assert glued["ex-mh-line-end"] < 3 / 2, "at p = 0 the head at -delta cannot look behind the start"


def test_ex_bandwidths_h_and_2h(chapter):
    glued, ns = chapter.glued, chapter.namespace
    # [rho**2, -1] / (rho**2 - 1) with rho**2 = 4 and 3 exact: one division each.
    np.testing.assert_allclose(glued["ex-mh-rho-wo"], [[4 / 3], [-1 / 3]], rtol=rounding(1), atol=0)
    narrow, wide = ns["wide_heads"]
    assert wide.temperature == 4 * narrow.temperature == 4 * defaults.TEMPERATURE
    # What is left is -rho**2 h**4 f''''/8: twice as much at rho = 2 as at rho = sqrt(2) (measured as in
    # test_the_layer_leaves_the_fourth_order_term: the next order, (1 + rho**2) (omega h)**2 / 6, is 1.6 % here).
    n, tau = 2001, 0.001
    p, f, _ = sa.noisy_sine(n, 0.0)
    big = bv.region_mask(p, "interior") & (np.abs(f) > 0.5)
    h = temperature_to_bandwidth(tau)
    for rho in (2.0, np.sqrt(2)):
        bias = jk.jackknife_weights(p, tau, rho) @ f - f
        np.testing.assert_allclose(bias[big] / (-(rho**2) * h**4 / 8 * OMEGA**4 * f[big]), 1.0, rtol=0.05)
    # The noise: smaller with rho = 2 at the same temperature, the negative dip shallower.
    assert glued["ex-mh-rho-noise-root"] == defaults.SIGMA * np.sqrt(np.sum(ns["B_jk"][ns["middle"]] ** 2))
    assert glued["ex-mh-rho-noise-two"] < glued["ex-mh-rho-noise-root"]
    assert glued["mh-jk-min-weight"] < glued["ex-mh-rho-min"] < 0
    # Rows: two heads' rows, each 1 within softmax_rtol(N), weighted by entries that add up to 5/3 in size.
    assert glued["ex-mh-rho-row-sum"] <= 5 / 3 * softmax_rtol(defaults.N) + rounding(defaults.N + 2, 5 / 3)
    assert glued["mh-rho-cost-2"] > glued["mh-rho-cost"], "at the best h the doubled bias outweighs the noise"


def test_ex_half_the_offset_does_not_double_the_noise(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert ns["live_offset"] == glued["mh-best-delta"]
    assert glued["ex-mh-live-before"] == ns["live_noise"], "the live cell prints the solution's first value"
    assert glued["ex-mh-live-factor"] == glued["ex-mh-live-after"] / glued["ex-mh-live-before"]
    assert 1.5 < glued["ex-mh-live-factor"] < 1.9, "not by two"
    ratio = glued["mh-best-ratio"]
    assert 0.9 < ratio / 2 < 1.3, "half the rule's offset is close to one bandwidth"
    formula = np.sqrt(4 * -np.expm1(-(ratio**2) / 4) / -np.expm1(-(ratio**2)))  # the factor written in the solution
    assert glued["ex-mh-live-formula"] == pytest.approx(formula, rel=1e-12)
    assert glued["ex-mh-live-factor"] == pytest.approx(glued["ex-mh-live-formula"], rel=2 * glued["mh-noise-gap"])
    assert 1 < glued["ex-mh-live-again"] < 1.3 < glued["ex-mh-live-factor"], "nearing the flat part"


def test_ex_the_curvature_from_three_heads(chapter):
    glued, ns = chapter.glued, chapter.namespace
    delta, tau, middle = glued["mh-best-delta"], glued["mh-best-tau"], ns["middle"]
    heads, W_O = curvature_layer(delta, tau)
    assert [head.W_Q[3, 0] / np.sqrt(2) for head in heads] == pytest.approx([-delta, 0.0, delta])
    np.testing.assert_array_equal(W_O[:, 0], np.array([1.0, -2.0, 1.0]) / delta / delta)
    B = ns["B_curv"]
    np.testing.assert_array_equal(B, layer_weights(ns["X"], heads, W_O))
    # Rows sum to zero; the middle query's first moment vanishes (positions up to 1, the same bound).
    atol = 4 / delta**2 * (softmax_rtol(defaults.N) + rounding(defaults.N + 3))
    np.testing.assert_allclose(B.sum(axis=1), 0.0, rtol=0, atol=atol)
    assert glued["ex-mh-open-moment"] <= 2 * atol
    # The bias (h**2 / 2 + delta**2 / 12) f'''', closer and closer as h and delta shrink (as for the slope).
    n = 2001
    p, f, _ = sa.noisy_sine(n, 0.0)
    inside = bv.region_mask(p, "interior")
    errors = []
    for scale in (1.0, 0.5):
        d, t = 0.04 * scale, 4e-4 * scale**2
        h = temperature_to_bandwidth(t)
        X = signal_tokens(np.zeros(n), p)
        bias = layer_weights(X, *curvature_layer(d, t)) @ f + OMEGA**2 * f  # f'' = -omega**2 f
        leading = (h * h / 2 + d * d / 12) * OMEGA**4 * f  # f'''' = omega**4 f
        errors.append(np.abs(bias - leading)[inside].max() / np.abs(leading[inside]).max())
    assert errors[1] < errors[0] / 3 and errors[1] < 0.01
    # Far apart (delta = 8 h), the heads average separate samples: 6 times one head's variance over delta**4.
    h = temperature_to_bandwidth(tau)
    far = layer_weights(ns["X"], *curvature_layer(8 * h, tau))[middle]
    one_head = np.sum(sa.gaussian_head(ns["noisy"], ns["positions"], tau)[1][middle] ** 2)
    assert np.sum(far**2) == pytest.approx(6 * one_head / (8 * h) ** 4, rel=1e-3)
    # The book's sine: the glued numbers, and what the solution says of them.
    noise = {name: defaults.SIGMA * np.sqrt(np.sum(weights[middle] ** 2))
             for name, weights in (("", B), ("-wide", ns["B_curv_wide"]))}
    assert (glued["ex-mh-open-noise"], glued["ex-mh-open-noise-wide"]) == (noise[""], noise["-wide"])
    assert glued["ex-mh-open-amplitude"] == pytest.approx(4 * np.pi**2)
    curvature = -(OMEGA**2) * ns["clean"]
    for name, weights in (("", B), ("-wide", ns["B_curv_wide"])):
        rmse = np.sqrt(np.mean((weights @ ns["noisy"] - curvature)[ns["inside"]] ** 2))
        assert glued[f"ex-mh-open-rmse{name}"] == pytest.approx(rmse, rel=1e-14)
    assert glued["ex-mh-open-share"] == pytest.approx(100 * glued["ex-mh-open-rmse"] / glued["ex-mh-open-amplitude"])
    assert glued["ex-mh-open-slope-share"] == pytest.approx(100 * glued["mh-rmse-inside"] / OMEGA)
    assert glued["ex-mh-open-share"] > glued["ex-mh-open-slope-share"]
    assert glued["ex-mh-open-noise-wide"] < glued["ex-mh-open-noise"], "twice the offset cuts the noise"
    assert glued["ex-mh-open-rmse-wide"] < glued["ex-mh-open-rmse"], "a curvature wants wider offsets"
    wide_bias = ns["B_curv_wide"] @ ns["clean"] - curvature
    assert np.abs(wide_bias[ns["inside"]]).max() > np.abs((B @ ns["clean"] - curvature)[ns["inside"]]).max()


def test_the_shown_docstrings_give_w_o_the_notation_pages_shape():
    """multi_head and head_outputs, shown in the chapter, use the notation page's sizes: M d_v, d_out."""
    notation = source("notation")
    assert r"$M d_v \times d_{\text{out}}$" in notation and r"| $d_{\text{out}}$ |" in notation
    assert "W_O : array_like, shape (M d_v, d_out)" in multi_head.__doc__
    assert "ndarray, shape (n, M d_v)" in head_outputs.__doc__
    for doc in (multi_head.__doc__, head_outputs.__doc__):
        assert "(D," not in doc and ", D)" not in doc and "row ``r``" not in doc, "no size or index the page lacks"


def test_ex_the_curvatures_noise_levels_off_below_the_bandwidth(chapter):
    """The solution's numbers, completed for delta <= h: 4.6, 14.7, 25.8, 31.6 at 0.2, 0.1, 0.05, 0.02, limit 33.0."""
    glued, ns = chapter.glued, chapter.namespace
    tau, h = glued["mh-best-tau"], glued["mh-best-h"]
    deltas = [glued[f"ex-mh-open-level-delta-{k}"] for k in range(1, 5)]
    levels = np.array([glued[f"ex-mh-open-level-{k}"] for k in range(1, 5)])
    assert deltas[0] > 4 * h and deltas[-1] < h / 2, "from well above h to below it"
    np.testing.assert_array_equal(levels, df.difference_noise(ns["positions"], 2, deltas, tau, defaults.SIGMA))
    # The same layer as the solution's curvature_layer: at the rule's offset, the same noise.
    assert df.difference_noise(ns["positions"], 2, [glued["mh-best-delta"]], tau, defaults.SIGMA)[0] == \
        pytest.approx(glued["ex-mh-open-noise"], rel=1e-12)
    limit = glued["ex-mh-open-level-limit"]
    assert limit == pytest.approx(defaults.SIGMA * np.sqrt(3 / (8 * np.sqrt(np.pi) * (defaults.N - 1) * h**5)))
    assert np.all(np.diff(levels) > 0) and levels[-1] < limit, "it grows as delta shrinks, towards the limit"
    assert levels[-1] > 0.95 * limit, "levelled off"
    # At delta = 4.5 h the heads are nearly separate: sqrt(6) times one head's noise over delta**2.
    one = glued["mh-noise-head"]
    assert levels[0] == pytest.approx(np.sqrt(6) * one / deltas[0] ** 2, rel=0.01)
    # The exact noise at the smallest offset of the figure, against the closed-form limit.
    assert df.difference_noise(ns["positions"], 2, [1e-3], tau, defaults.SIGMA)[0] == pytest.approx(limit, rel=1e-3)


@pytest.mark.parametrize("order", [1, 2])
def test_ex_each_further_derivative_costs_one_more_power_of_one_over_delta_above_h_and_of_one_over_h_below(
        chapter, order):
    """The solution's last sentence, at the rule's temperature, for a difference of order + 1 heads."""
    glued, p = chapter.glued, chapter.namespace["positions"]
    tau, h = glued["mh-best-tau"], glued["mh-best-h"]
    # Above h, as far as the book's signal allows: at order 3 the outer heads sit 1.5 spacings from the middle query,
    # and their bands must stay inside [0, 1].
    spacings = np.array([4.5, 5.0]) * h
    slopes = [np.diff(np.log(df.difference_noise(p, k, spacings, tau, defaults.SIGMA))) / np.diff(np.log(spacings))
              for k in (order, order + 1)]
    # Bands 4.5 h apart still share exp(-5) of their weight, which flattens the power law by a few hundredths
    # (tests/unit/test_differences.py checks it to 1e-3 with bands 8 h apart).
    assert slopes[0][0] == pytest.approx(-order, abs=0.05) and slopes[1][0] == pytest.approx(-order - 1, abs=0.05)
    below = [df.difference_noise(p, k, [h / 50], tau, defaults.SIGMA)[0] for k in (order, order + 1)]
    # Below h the ratio of consecutive orders is sqrt((2 order + 1) / 2) / h: one more power of 1 / h.
    assert below[1] / below[0] * h == pytest.approx(np.sqrt((2 * order + 1) / 2), rel=2e-3)
    assert "one more power of $1/\\delta$ in the noise while $\\delta$ is above" in source(STEM)
    assert "one more power of $1/h$ below it" in source(STEM)
