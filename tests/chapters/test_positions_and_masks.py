"""The page "Where tokens are, and what they may see": sinusoidal encodings, RoPE, ALiBi and causal masks.

The tests read what the chapter computed (its variables and glued values)
and check each sentence that describes it; the few that need more call the
package with the chapter's arguments.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from chapters.book import source
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tolerances import average_atol, rounding, softmax_rtol

import selfattention as sa
from selfattention import defaults, positional, symbolic
from selfattention.core import attention, causal_mask
from selfattention.kernel import DEFAULT_CANDIDATES, temperature_to_bandwidth
from selfattention.metrics import effective_neighbours, mean_offset, rmse
from selfattention.studies import causal, rotary, sinusoidal

STEM = "positions-and-masks"


# --- sinusoidal encodings ---------------------------------------------------------------------


def test_the_tokens_are_the_sample_and_its_encoding(chapter):
    W_Q, _, _ = positional.sinusoidal_head_weights([1.0, 2.0, 3.0])
    assert W_Q.shape[0] == 1 + 2 * 3, "d_model = 1 + 2F"
    E = positional.sinusoidal_encoding(chapter.namespace["positions"], [np.pi])
    np.testing.assert_allclose(E @ E.T, np.cos(np.pi * (chapter.namespace["positions"][:, None]
                                                        - chapter.namespace["positions"][None, :])), atol=1e-15)


def test_adding_the_encoding_is_appending_it_when_each_is_zero_in_the_others_columns(chapter):
    ns = chapter.namespace
    p, s = ns["positions"], ns["noisy"]
    encoding = positional.sinusoidal_encoding(p, [np.pi, np.pi / 3])  # (N, 2F)
    embedding = np.column_stack([s, np.zeros_like(encoding)])  # zero in the encoding's columns
    padded = np.column_stack([np.zeros_like(s), encoding])  # zero in the sample's column
    np.testing.assert_array_equal(embedding + padded, np.column_stack([s, encoding]))
    moved = np.column_stack([s, np.ones_like(encoding)]) + padded  # an embedding not zero there
    assert not np.array_equal(moved, np.column_stack([s, encoding]))
    W_Q, W_K, W_V = positional.sinusoidal_head_weights([ns["xi"], ns["xi"] / 2])
    X = embedding + padded
    _, added = attention(X @ W_Q, X @ W_K, X @ W_V, 1.0)
    _, head = positional.sinusoidal_head(s, p, [np.pi, np.pi / 3], [ns["xi"], ns["xi"] / 2])
    # The head centres its positions: scores of size 1.5 xi = 61 apart by the rounding of the angles, under
    # 12 eps (1 + pi) of them on either side (positional._check_cosine_rounding's bound, both computations).
    gap = 2 * 12 * np.finfo(float).eps * 1.5 * ns["xi"] * (1 + np.pi)
    np.testing.assert_allclose(added, head, rtol=softmax_rtol(defaults.N, gap), atol=np.finfo(float).tiny)


def test_the_square_root_of_the_amplitudes_size_scales_both_and_the_query_carries_its_sign():
    for weights in (positional.sinusoidal_head_weights, positional.rotary_head_weights):
        W_Q, W_K, _ = weights([-4.0])
        assert np.max(W_K) == 2.0 and np.min(W_Q) == -2.0, weights.__name__
        assert np.min(W_Q @ W_K.T) == -4.0, "the bilinear form W_Q W_K^T carries the amplitude, sign and all"


def test_sympy_finds_the_score_a_cosine_of_the_difference(chapter):
    assert chapter.glued["pos-cosine-holds"] is True
    assert len(chapter.namespace["terms"]) == 2


def test_a_shift_of_every_position_changes_the_scores_by_rounding_only(chapter):
    """The angles omega p reach pi (1 + 10): each encoding entry is off by eps (1 + 35) at most, a score by four
    times that of the largest score, 3e-14; the gap must be below it, and it is not exactly 0 (rounding)."""
    assert chapter.glued["pos-shift"] == chapter.namespace["shift"]
    assert 0 < chapter.glued["pos-shift-gap"] <= 4 * np.finfo(float).eps * (1 + np.pi * 11)


def test_the_amplitude_matches_the_books_temperature(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert ns["one_frequency"] == np.pi, "the largest frequency the rule allows on positions spanning 1"
    assert glued["pos-xi"] == pytest.approx(2 / (defaults.TEMPERATURE * np.pi**2), rel=1e-15)
    omega, xi = sorted(ns["matched"].free_symbols, key=str)
    assert float(ns["matched"].subs({omega: np.pi, xi: glued["pos-xi"]})) == pytest.approx(defaults.TEMPERATURE)


def test_the_cosine_and_the_gaussian_band_differ_first_in_the_quartic_term(chapter):
    """xi cos(omega u) = xi - xi omega^2 u^2 / 2 + xi omega^4 u^4 / 24 - ...: no odd term, the quadratic matched."""
    ns = chapter.namespace
    series, matched = ns["series"], ns["matched"]
    omega, xi, u, tau = symbolic.omega, symbolic.xi, symbolic.u, sp.Symbol("tau", positive=True)
    coefficients = [sp.simplify(series.coeff(u, k)) for k in range(5)]
    assert coefficients[1] == coefficients[3] == 0
    assert sp.simplify(coefficients[2].subs(xi, 2 / (tau * omega**2)) + 1 / tau) == 0, "the Gaussian's -u^2 / tau"
    assert sp.simplify(coefficients[4] - xi * omega**4 / 24) == 0
    assert sp.simplify(coefficients[4].subs(xi, 2 / (tau * omega**2)) - omega**2 / (12 * tau)) == 0
    assert sp.simplify(matched - 2 / (xi * omega**2)) == 0


def test_one_cosine_is_close_to_the_gaussian_band_and_closer_at_a_lower_frequency(chapter):
    glued = chapter.glued
    assert glued["pos-sin-gap-quarter"] < glued["pos-sin-gap-pi"] < 1e-3
    assert glued["pos-sin-rmse-pi"] == pytest.approx(glued["pos-gauss-rmse"], rel=0.01)


def test_a_cosine_falls_to_minus_one_at_pi_over_omega_and_aliases_distances_after():
    u = np.linspace(0, 1, 1201)
    omega = 1.5 * np.pi
    profile = sinusoidal.relative_scores(u, [omega], 0.005)[0]
    assert u[np.argmin(profile)] == pytest.approx(np.pi / omega, abs=1e-3)
    for x in (0.7, 0.8, 0.9):  # u and 2 pi / omega - u share one score
        pair = sinusoidal.relative_scores([x, 2 * np.pi / omega - x], [omega], 0.005)[0]
        assert pair[0] == pytest.approx(pair[1], rel=1e-12)


@pytest.mark.parametrize(("multiple", "monotone"), [(0.5, True), (1.0, True), (1.05, False), (1.5, False)])
def test_the_kernel_stops_falling_within_the_span_once_omega_times_the_span_passes_pi(multiple, monotone):
    u = np.linspace(0, 1, 2001)  # the span of the book's positions
    profile = sinusoidal.relative_scores(u, [multiple * np.pi], 0.005)[0]
    assert bool(np.all(np.diff(profile) <= 1e-12)) is monotone


def test_past_pi_the_far_weights_stay_tiny_and_from_two_pi_a_period_away_is_the_query_itself(chapter):
    glued = chapter.glued
    assert glued["pos-alias-far"] < 1e-6
    sweep = chapter.namespace["sweep"]
    assert sweep["rmse"][chapter.namespace["at"][1.5]] == pytest.approx(glued["pos-gauss-rmse"], rel=0.02)
    assert glued["pos-alias-ratio"] == pytest.approx(1.0, abs=1e-12)
    assert glued["pos-sin-rmse-three"] > 5 * glued["pos-gauss-rmse"]


def test_the_far_weight_at_one_and_a_half_pi_is_the_query_at_zero_on_the_key_at_one(chapter):
    ns = chapter.namespace
    p, turning = ns["positions"], ns["turning"]
    assert (p[0], p[-1]) == (0.0, 1.0)
    assert chapter.glued["pos-alias-far"] == turning[0, -1] / turning[0, 0]
    turn = int(np.argmin(turning[0]))
    assert p[turn] == pytest.approx(2 / 3, abs=1 / (p.size - 1)), "the score turns back up at two thirds of the span"
    assert turning[0, -1] == turning[0, turn:].max(), "past the turn, the farthest key gets the most"


def test_the_aliasing_figures_error_climbs_to_about_eight_times_the_gaussians(chapter):
    """The alt text: the error at four pi is about eight times the Gaussian head's (7.5 to 8.5)."""
    sweep, frequencies = chapter.namespace["sweep"], chapter.namespace["sweep_frequencies"]
    assert frequencies[-1] == pytest.approx(4 * np.pi) and np.argmax(sweep["rmse"]) == frequencies.size - 1
    assert 7.5 <= sweep["rmse"][-1] / sweep["gaussian_rmse"] < 8.5


def test_the_dip_at_two_pi_is_the_ends_attending_to_each_other(chapter):
    ns, glued = chapter.namespace, chapter.glued
    assert glued["pos-sin-rmse-two"] < glued["pos-gauss-rmse"]
    p, s, f = ns["positions"], ns["noisy"], ns["clean"]
    xi = positional.gaussian_amplitude(2 * np.pi, ns["tau"])
    output, weights = positional.sinusoidal_head(s, p, [2 * np.pi], [xi])
    assert weights[0, -1] == pytest.approx(weights[0, 0], rel=1e-12), "a period, 1, away: the query's own weight"
    ends = [0, -1]
    assert np.all(np.abs(output[ends] - f[ends]) < np.abs(ns["gauss_output"][ends] - f[ends])), "no one-sided pull"


def test_at_two_pi_the_inside_gains_nothing_and_a_sine_of_another_period_loses(chapter):
    ns, glued = chapter.namespace, chapter.glued
    p, h, inner = ns["positions"], ns["h"], ns["inner"]
    np.testing.assert_array_equal(inner, np.minimum(p, 1 - p) >= 3 * h)
    assert rmse(ns["wrapped"], ns["clean"]) == glued["pos-sin-rmse-two"], "the head at two pi"
    gain = glued["pos-gauss-rmse"] - glued["pos-sin-rmse-two"]
    assert glued["pos-dip-inner"] >= glued["pos-dip-inner-gauss"] > glued["pos-dip-inner"] - gain / 10, \
        "inside, no gain (not even a tenth of the whole signal's)"
    np.testing.assert_array_equal(ns["other_positions"], p)
    np.testing.assert_allclose(ns["other_noisy"] - ns["other_clean"], ns["noisy"] - ns["clean"], rtol=0, atol=1e-15)
    assert not float(1 / glued["pos-dip-period"]).is_integer(), "the sine does not repeat with the period 1"
    assert glued["pos-dip-other"] > 1.5 * glued["pos-dip-other-gauss"]


@given(hnp.arrays(np.float64, st.integers(1, 4), elements=st.floats(0.01, 1.0)),
       hnp.arrays(np.float64, 4, elements=st.floats(0.01, 10.0)))
def test_frequencies_that_each_obey_the_rule_with_positive_amplitudes_fall_over_the_span(fractions, amplitudes):
    """omega_n = fraction_n pi / span: every cosine, and their sum, falls over [0, span]."""
    u = np.linspace(0, 1, 801)
    kernel = sum(r * np.cos(f * np.pi * u) for f, r in zip(fractions, amplitudes, strict=False))
    assert np.all(np.diff(kernel) <= 1e-12)


def test_a_frequency_beyond_the_rule_keeps_the_sum_falling_only_with_a_small_enough_amplitude(chapter):
    """cos(pi u) + a cos(3 pi u) falls over [0, 1] for a <= 1/3 (sin 3x = sin x (3 - 4 sin^2 x)), not beyond."""
    p = chapter.namespace["positions"]
    for amplitude, falls in ((0.2, True), (0.3, True), (0.5, False), (1.0, False)):
        row = sinusoidal.cosine_scores(p, [np.pi, 3 * np.pi], [1.0, amplitude])[0]  # the query at p = 0
        assert bool(np.all(np.diff(row) < 0)) is falls, amplitude


def test_the_original_transformers_frequencies_fall_over_half_their_wavelengths():
    """Vaswani et al.: omega = 10000**(-2k / d_model), k = 0, ..., d_model / 2 - 1 (d_model = 512 in the paper)."""
    d_model = 512
    omega = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)  # (256,), in radians per token
    np.testing.assert_allclose(omega[1:] / omega[:-1], omega[1] / omega[0], rtol=1e-12)  # a geometric progression
    wavelengths = 2 * np.pi / omega
    assert omega[0] == 1 and wavelengths[0] == 2 * np.pi
    assert 0.95 * 10000 * 2 * np.pi < wavelengths[-1] < 10000 * 2 * np.pi, "nearly 10000 times 2 pi"
    for w in (omega[0], omega[-1]):  # a sequence of m tokens spans m - 1: the rule holds up to pi / omega
        longest = int(np.floor(np.pi / w)) + 1
        assert positional.alias_free_frequency(np.arange(float(longest))) >= w
        assert positional.alias_free_frequency(np.arange(float(longest + 1))) < w
    assert np.pi / omega[-1] == pytest.approx(wavelengths[-1] / 2) and np.pi / omega[-1] > 0.95 * 10000 * np.pi


# --- rotary encodings ---------------------------------------------------------------------------


def test_rotations_add_their_angles_and_the_transpose_turns_one_back():
    R = lambda a: positional.rotate(np.eye(2), [a, a], [1.0])  # noqa: E731 - the rows of rot(a)
    np.testing.assert_allclose(R(0.7) @ R(0.3).T, R(0.4), atol=1e-15)


def test_the_rotated_score_is_the_query_turned_by_the_difference_dotted_with_the_key():
    """One pair, symbolically; then two pairs (F = 2), numerically: the score is the sum over the pairs."""
    q, k = sp.Matrix([[symbolic.q_i1, symbolic.q_i2]]), sp.Matrix([[symbolic.k_j1, symbolic.k_j2]])
    omega, p_i, p_j = symbolic.omega, symbolic.p_i, symbolic.p_j
    rotated = (q * symbolic.rotation(omega * p_i)).dot(k * symbolic.rotation(omega * p_j))
    assert sp.simplify(rotated - (q * symbolic.rotation(omega * (p_i - p_j))).dot(k)) == 0
    rng = np.random.default_rng(defaults.SEED)
    Q, K, p, omegas = rng.normal(size=(5, 4)), rng.normal(size=(5, 4)), rng.uniform(0, 1, 5), [np.pi, 1.0]
    scores = positional.rotate(Q, p, omegas) @ positional.rotate(K, p, omegas).T  # (5, 5)
    for i in range(5):
        for j in range(5):
            turned = positional.rotate(Q[i:i + 1], [p[i] - p[j]], omegas)[0]  # the query turned by the difference
            pairs = [turned[r:r + 2] @ K[j, r:r + 2] for r in (0, 2)]
            # Entries of size about 4 after a few roundings each, angles below 4: 1e-13 covers it.
            assert scores[i, j] == pytest.approx(sum(pairs), abs=1e-13)


def test_sympy_finds_the_rotated_score_unchanged_by_a_shift(chapter):
    ns = chapter.namespace
    assert chapter.glued["pos-rotary-holds"] is True
    shown = ns["cos_part"] * sp.cos(ns["turned"]) + ns["sin_part"] * sp.sin(ns["turned"])
    assert sp.simplify(shown - ns["rotary_score"]) == 0, "the two lines shown are the whole score"


def test_random_projections_break_the_sinusoidal_heads_invariance_and_not_ropes(chapter):
    glued = chapter.glued
    assert glued["pos-rand-sin"] > 0.1
    assert glued["pos-rand-rot"] < 1e-14  # rounding of angles below pi (1 + 0.37): a few eps
    assert glued["pos-rand-shift"] == 0.37


def test_the_rotated_constant_is_the_sinusoidal_encoding(chapter):
    ns = chapter.namespace
    p, xi = ns["positions"], ns["xi"]
    X = np.column_stack([ns["noisy"], np.ones_like(p)])
    W_Q, W_K, _ = positional.rotary_head_weights([xi])
    assert W_Q.shape == (2, 2), "two numbers per token, whatever the number of frequencies"
    rotated = positional.rotate(X @ W_K, p, [np.pi])
    np.testing.assert_allclose(rotated, np.sqrt(xi) * positional.sinusoidal_encoding(p, [np.pi]), rtol=0,
                               atol=1e-14)


def test_the_rope_head_is_the_sinusoidal_head_to_the_last_bit_and_close_to_the_gaussian(chapter):
    """The same products of the same cosines and sines by the same roots, added to exact zeros: the same weights."""
    glued, ns = chapter.glued, chapter.namespace
    np.testing.assert_array_equal(ns["rope_weights"], ns["sin_weights"])
    assert glued["pos-rope-rmse"] == pytest.approx(glued["pos-gauss-rmse"], rel=0.01)


def test_beyond_its_span_the_rope_head_gives_a_key_two_units_away_its_own_weight(chapter):
    ns, glued = chapter.namespace, chapter.glued
    p = ns["long_positions"]
    assert p[-1] == glued["pos-long-length"] and np.diff(p) == pytest.approx(1 / (defaults.N - 1))
    q = ns["query"]
    two_away = int(np.argmin(np.abs(p - (p[q] + 2))))
    assert ns["long_rope_weights"][q, two_away] == pytest.approx(ns["long_rope_weights"][q, q], rel=1e-9)
    assert glued["pos-long-query"] == pytest.approx(0.5, abs=0.01)
    assert 0.45 < glued["pos-long-far"] < 0.55
    assert rotary.far_share(ns["long_gauss_weights"], p, 1.0)[q] < 1e-12, "the Gaussian head: none"
    rope, gauss = ns["long_rope_weights"][q], ns["long_gauss_weights"][q]
    assert rope[q] / gauss[q] == pytest.approx(0.5, rel=0.05), "the figure's alt: a bump about half as tall"


def test_on_the_books_sine_the_copies_help_and_on_another_period_they_hurt(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert glued["pos-long-rope-book"] < glued["pos-long-gauss-book"]
    p, q, weights = ns["long_positions"], ns["query"], ns["long_rope_weights"]  # the weights need no signal
    np.testing.assert_array_equal(ns["book_positions"], p)
    two_away = int(np.argmin(np.abs(p - (p[q] + 2))))
    assert ns["book_clean"][two_away] == pytest.approx(ns["book_clean"][q], abs=1e-12), "a copy of the value"
    neighbours = effective_neighbours(weights)[q] / effective_neighbours(ns["long_gauss_weights"])[q]
    assert neighbours == pytest.approx(2, rel=0.05), "it averages the copies: twice as many samples"
    assert not float(2 / glued["pos-long-period"]).is_integer(), "the period does not divide the kernel's, 2"
    assert glued["pos-long-rope"] > 3 * glued["pos-long-gauss"]


# --- ALiBi --------------------------------------------------------------------------------------


def test_the_score_ranks_are_three_two_and_full(chapter):
    glued = chapter.glued
    assert (glued["pos-rank-gauss"], glued["pos-rank-cos"], glued["pos-rank-lap"]) == (3, 2, glued["pos-n"])
    assert glued["pos-n"] == defaults.N
    assert glued["pos-rank-smallest"] > 1e3 * defaults.N * np.finfo(float).eps, "far above rounding"


def test_sympy_confirms_the_determinant_of_the_distances(chapter):
    assert chapter.namespace["closed_form_holds"] is True
    assert chapter.glued["pos-det-holds"] is True and chapter.glued["pos-det-largest"] == 5


def test_a_term_of_the_query_alone_lowers_the_rank_of_the_distances_by_one_at_most(chapter):
    p = chapter.namespace["positions"]
    rng = np.random.default_rng(defaults.SEED)
    for _ in range(5):
        scores = -np.abs(p[:, None] - p[None, :]) + rng.normal(size=(p.size, 1))
        assert np.linalg.matrix_rank(scores) >= p.size - 1


def test_with_a_causal_mask_an_alibi_row_is_a_decaying_exponential(chapter):
    ns, glued = chapter.namespace, chapter.glued
    p, middle, zeta = ns["positions"], defaults.N // 2, glued["pos-equal-slope"]
    _, weights = positional.alibi_head(ns["noisy"], p, zeta, mask=causal_mask(defaults.N))
    one_side = np.exp(-zeta * (p[middle] - p[:middle + 1]))  # (middle + 1,): the keys j <= i
    # Scores below zeta = 28 in size, the distances rounded on positions in [0, 1]: a gap of 1e-13 at most.
    np.testing.assert_allclose(weights[middle, :middle + 1], one_side / one_side.sum(), atol=0,
                               rtol=softmax_rtol(defaults.N, 1e-13))
    assert np.all(weights[middle, middle + 1:] == 0.0)


def test_leave_one_out_chooses_each_heads_setting(chapter):
    ns, glued = chapter.namespace, chapter.glued
    p, s = ns["positions"], ns["noisy"]
    assert glued["pos-loo-tau"] == sa.choose_temperature(s, p)[0]
    assert glued["pos-loo-slope"] == 1 / sa.choose_temperature(s, p, kernel="laplace")[0]
    assert np.min(np.abs(DEFAULT_CANDIDATES * glued["pos-loo-slope"] - 1)) <= 2 * np.finfo(float).eps, \
        "the reciprocal of one of the candidates"
    assert glued["pos-loo-gauss"] < glued["pos-loo-alibi"]


def test_over_other_draws_the_gaussian_head_smooths_better(chapter):
    glued = chapter.glued
    assert glued["pos-draws"] == 20
    assert glued["pos-draws-gauss-wins"] >= 0.9 * glued["pos-draws"]
    assert glued["pos-draws-ratio"] > 1


def test_at_equal_width_the_laplace_row_piles_its_weight_near_the_query(chapter):
    ns, glued = chapter.namespace, chapter.glued
    assert glued["pos-equal-slope"] == pytest.approx(np.sqrt(2) / ns["h"])
    assert glued["pos-equal-laplace"] < glued["pos-equal-gauss"]
    assert glued["pos-equal-ratio"] == pytest.approx(glued["pos-equal-theory"], rel=0.03)
    p, middle = ns["positions"], defaults.N // 2
    laplace = positional.alibi_head(np.zeros_like(p), p, glued["pos-equal-slope"])[1][middle]
    gauss = ns["gauss_weights"][middle]
    near = slice(middle - 1, middle + 2)
    assert np.all(laplace[near] > gauss[near]), "the query and its nearest neighbours"


def test_at_equal_width_the_laplace_rows_heavy_tails_carry_much_of_its_variance_and_force_a_taller_peak(chapter):
    ns, glued = chapter.namespace, chapter.glued
    p, middle, h = ns["positions"], defaults.N // 2, ns["h"]
    laplace = positional.alibi_head(np.zeros_like(p), p, glued["pos-equal-slope"])[1][middle]
    gauss = ns["gauss_weights"][middle]
    offsets = p - p[middle]
    tails = {name: np.sum(row * offsets**2 * (np.abs(offsets) > 2 * h)) / np.sum(row * offsets**2)
             for name, row in (("laplace", laplace), ("gauss", gauss))}
    assert tails["laplace"] > 0.4 and tails["laplace"] > 1.5 * tails["gauss"], tails  # beyond 2h: much of it
    assert laplace[middle] > 1.5 * gauss[middle], "a taller peak"
    assert np.sum(laplace > laplace.max() / 2) < np.sum(gauss > gauss.max() / 2), "a narrower one"


def test_at_equal_width_the_two_rows_blur_the_sine_alike_to_leading_order(chapter):
    """Both rows have the variance h^2, so both blur by h^2 f''(p) / 2; their fourth moments, 3 h^4 and 6 h^4,
    differ, so the blurs differ by 3 h^4 max |f''''| / 24, plus what the grid does to the variances (2 %)."""
    ns, glued = chapter.namespace, chapter.glued
    p, f, h = ns["positions"], ns["clean"], ns["h"]
    inner = np.minimum(p, 1 - p) >= 5 * h  # away from the ends
    laplace = positional.alibi_head(np.zeros_like(p), p, glued["pos-equal-slope"])[1]
    gauss = ns["gauss_weights"]
    offsets = p[None, :] - p[:, None]  # (N, N)
    for rows in (gauss, laplace):
        np.testing.assert_allclose(np.sum(rows * offsets**2, axis=1)[inner], h**2, rtol=0.02)
    leading = 0.5 * h**2 * (2 * np.pi) ** 2  # max |h^2 f'' / 2|, f = sin(2 pi p)
    blur = {name: (rows @ f - f)[inner] for name, rows in (("gauss", gauss), ("laplace", laplace))}
    gap = np.max(np.abs(blur["gauss"] - blur["laplace"]))
    assert gap <= 3 * h**4 * (2 * np.pi) ** 4 / 24 + 0.02 * leading and gap < 0.05 * leading


def test_alibi_extrapolates_as_the_gaussian_head_does(chapter):
    glued = chapter.glued
    assert glued["pos-long-alibi"] == pytest.approx(glued["pos-long-gauss"], rel=0.2)
    assert glued["pos-long-alibi"] < glued["pos-long-rope"] / 3


# --- causal masks -------------------------------------------------------------------------------


def test_the_causal_head_lags_by_about_a_half_bells_mean(chapter):
    ns, glued = chapter.namespace, chapter.glued
    np.testing.assert_array_equal(ns["mask"], np.tri(defaults.N, dtype=bool))
    assert glued["pos-h"] == temperature_to_bandwidth(defaults.TEMPERATURE)
    assert glued["pos-lag-theory"] == pytest.approx(glued["pos-h"] * np.sqrt(2 / np.pi))
    assert 0.85 * glued["pos-lag-theory"] < glued["pos-lag"] < glued["pos-lag-theory"], "a little less"


def test_the_pull_acts_on_every_token_always_backwards(chapter):
    """Every row but the first (which sees only itself) looks behind its query."""
    ns = chapter.namespace
    lags = -mean_offset(ns["causal_weights"], ns["positions"])  # (N,)
    assert lags[0] == 0 and np.all(lags[1:] > 0)


def test_the_lag_falls_short_of_the_half_bells_because_the_querys_own_sample_counts_in_full(chapter):
    """The continuous half bell is the trapezoid rule's sum, which counts its end, distance 0, by half."""
    ns, glued = chapter.namespace, chapter.glued
    p, middle = ns["positions"], defaults.N // 2
    row = ns["causal_weights"][middle].copy()
    row[middle] /= 2  # the query's own sample counted by half
    halved = -np.sum(row * (p - p[middle])) / np.sum(row)
    assert abs(halved - glued["pos-lag-theory"]) < 0.1 * (glued["pos-lag-theory"] - glued["pos-lag"])


def test_with_an_offset_ahead_the_causal_row_is_steeper(chapter):
    """Each key's weight relative to the query's own falls faster with the distance: exp(-(d^2 + 2 d delta) / tau)."""
    ns = chapter.namespace
    middle = defaults.N // 2
    plain, ahead = ns["causal_weights"][middle, :middle + 1], ns["offset_weights"][middle, :middle + 1]
    seen = slice(middle - 20, middle)  # keys up to 20 spacings behind: weights far above underflow
    assert ns["delta"] > 0
    assert np.all(ahead[seen] / ahead[middle] < plain[seen] / plain[middle])


def test_heads_combined_with_weights_of_both_signs_can_get_ahead_of_a_rising_signal(chapter):
    """Two causal heads, at tau and 4 tau, combined by W_O = [3, -2]: on a rising line the output runs ahead."""
    ns = chapter.namespace
    p, tau, mask = ns["positions"], ns["tau"], ns["mask"]
    rising = p.copy()
    narrow, _ = sa.gaussian_head(rising, p, tau, mask=mask)
    wide, _ = sa.gaussian_head(rising, p, 4 * tau, mask=mask)
    layer = 3 * narrow - 2 * wide
    inside = slice(defaults.N // 4, defaults.N)  # past the start, where the rows are whole half bells
    assert np.all(layer[inside] > rising[inside]) and np.all(narrow[inside] < rising[inside])


def test_most_of_the_causal_error_is_the_delay(chapter):
    glued = chapter.glued
    assert glued["pos-causal-rmse"] > 2 * glued["pos-gauss-rmse"]
    assert glued["pos-causal-delayed"] < glued["pos-causal-rmse"] / 2


def test_an_offset_trades_lag_for_neighbours_and_the_best_one_is_in_between(chapter):
    ns, glued = chapter.namespace, chapter.glued
    sweep = ns["offset_sweep"]
    assert np.all(np.diff(sweep["lag"]) < 0) and np.all(np.diff(sweep["neighbours"]) < 0)
    best = ns["best"]
    assert 0 < best < len(ns["offsets"]) - 1, "the error falls to a minimum and rises again"
    assert np.all(np.diff(sweep["rmse"][best:]) > 0), "past that offset the noise costs more than the lag saves"
    assert glued["pos-delta"] == ns["offsets"][best]
    assert glued["pos-delta-lag"] < glued["pos-lag"] == sweep["lag"][0]
    assert glued["pos-delta-rmse"] < glued["pos-causal-rmse"]
    assert glued["pos-delta-neighbours"] < glued["pos-causal-neighbours"]
    assert glued["pos-delta-noise"] == pytest.approx(defaults.SIGMA / np.sqrt(glued["pos-delta-neighbours"]))
    assert glued["pos-delta-noise"] > glued["pos-causal-noise"]


def test_a_narrower_band_with_as_many_neighbours_lags_about_as_little(chapter):
    ns, glued = chapter.namespace, chapter.glued
    assert glued["pos-narrow-tau"] < defaults.TEMPERATURE
    narrow = causal.offset_sweep(ns["noisy"], ns["clean"], ns["positions"], glued["pos-narrow-tau"], [0.0])
    assert narrow["neighbours"][0] == pytest.approx(glued["pos-delta-neighbours"], rel=1e-6)
    assert glued["pos-narrow-lag"] == pytest.approx(glued["pos-delta-lag"], rel=0.15)
    assert glued["pos-narrow-rmse"] == pytest.approx(glued["pos-delta-rmse"], rel=0.1)


@given(st.floats(1e-4, 0.05), st.floats(0.0, 0.3))
def test_on_a_rising_signal_a_causal_head_stays_below_the_present_value(tau, delta):
    """Non-negative weights, all on the past: no causal head can get ahead of a rising signal."""
    p = np.linspace(0, 1, 40)
    rising = p**2 + p  # increasing
    output, _ = sa.gaussian_head(rising, p, tau, offset=delta, mask=causal_mask(40))
    assert np.all(output <= rising + 1e-15)


# --- predicting the next sample -----------------------------------------------------------------


def test_no_row_of_a_causal_head_sees_the_sample_it_predicts(chapter):
    weights = chapter.namespace["causal_weights"]
    assert np.all(np.diag(weights, k=1) == 0.0)


def test_the_next_sample_head_is_chosen_by_its_own_error(chapter):
    ns, glued = chapter.namespace, chapter.glued
    errors = causal.next_token_errors(ns["noisy"], ns["positions"], DEFAULT_CANDIDATES)
    assert glued["pos-next-tau"] == DEFAULT_CANDIDATES[np.argmin(errors)]
    assert glued["pos-next-noisy"] == pytest.approx(np.sqrt(errors.min()), rel=1e-12)


def test_the_next_sample_error_is_close_to_sigma_and_the_clean_one_below(chapter):
    glued = chapter.glued
    assert glued["pos-sigma"] == defaults.SIGMA
    assert glued["pos-next-noisy"] == pytest.approx(defaults.SIGMA, rel=0.1)
    assert glued["pos-next-clean"] < min(defaults.SIGMA, glued["pos-next-noisy"])
    assert glued["pos-two-sigma"] == np.sqrt(2) * defaults.SIGMA
    assert glued["pos-next-copy"] == pytest.approx(glued["pos-two-sigma"], rel=0.1)
    assert glued["pos-next-copy"] > glued["pos-next-noisy"]


def test_at_the_chosen_temperature_the_next_sample_error_is_on_average_the_clean_one_plus_sigma_squared(chapter):
    """The expected squared error against s_{i+1} is that against f(p_{i+1}) plus sigma**2, at the chapter's tau.

    Over 200 draws the mean of the per-draw differences has a standard error of about 0.001 (measured, below);
    four standard errors leave it one chance in 10**4 to fail by luck, and sigma**2 = 0.09 is far outside.
    """
    ns, glued = chapter.namespace, chapter.glued
    tau, mask, sigma = glued["pos-next-tau"], ns["mask"], defaults.SIGMA
    gaps = []
    for seed in range(200):
        p, f, s = sa.noisy_sine(defaults.N, sigma, rng=seed)
        prediction = sa.gaussian_head(s, p, tau, mask=mask)[0][:-1]  # row i predicts sample i + 1
        gaps.append(np.mean((prediction - s[1:]) ** 2) - np.mean((prediction - f[1:]) ** 2))
    standard_error = np.std(gaps, ddof=1) / np.sqrt(len(gaps))
    assert standard_error < sigma**2 / 20
    assert np.mean(gaps) == pytest.approx(sigma**2, abs=4 * standard_error)


def test_on_other_draws_the_next_sample_error_stays_above_sigma_on_average():
    """Its expectation is sigma**2 plus the clean error: above sigma**2 on average over draws, as on the book's."""
    errors = [causal.next_token(s, f, p)["rmse_noisy"] ** 2
              for p, f, s in (sa.noisy_sine(defaults.N, defaults.SIGMA, rng=seed) for seed in range(10))]
    assert np.mean(errors) > defaults.SIGMA**2


# --- four kernels side by side ------------------------------------------------------------------


def test_the_four_kernels_are_at_one_width(chapter):
    ns = chapter.namespace
    heads = ns["heads"]
    assert list(heads) == ["Gaussian", "cosine (sinusoidal, RoPE)", "Laplace (ALiBi)", "Gaussian, causal"]
    middle = defaults.N // 2
    offsets = ns["positions"] - ns["positions"][middle]
    for name in list(heads)[:3]:  # the same standard deviation h, to 5 % (the cosine to its quartic term)
        row = heads[name][1][middle]
        assert np.sqrt(np.sum(row * offsets**2)) == pytest.approx(ns["h"], rel=0.05), name


def test_three_kernels_smooth_alike_and_the_causal_one_trails(chapter):
    errors, glued = chapter.namespace["errors"], chapter.glued
    three = list(errors.values())[:3]
    assert glued["pos-three-spread"] == max(three) - min(three) < 0.01
    assert errors["Gaussian, causal"] > 2 * max(three)
    assert errors["Gaussian"] == rmse(chapter.namespace["gauss_output"], chapter.namespace["clean"])


def test_on_the_books_draw_the_alibi_head_is_best_by_luck_and_over_many_draws_it_is_worst(chapter):
    ns, glued = chapter.namespace, chapter.glued
    errors = ns["errors"]
    assert min(errors, key=errors.get) == "Laplace (ALiBi)", "on the book's draw the ALiBi head even best"
    widths = ns["width_errors"]
    assert glued["pos-width-draws"] == len(widths["gaussian"]) == 200
    assert defaults.SEED not in ns["width_seeds"], "other draws than the book's"
    means = {name: float(np.mean(values)) for name, values in widths.items()}
    assert (glued["pos-width-gauss"], glued["pos-width-cos"], glued["pos-width-laplace"]) == \
        (means["gaussian"], means["cosine"], means["laplace"])
    assert means["gaussian"] < means["laplace"] and means["cosine"] < means["laplace"]
    wins = glued["pos-width-laplace-wins"]
    assert wins == 100 * np.mean(widths["laplace"] < widths["gaussian"]) and wins < 50
    spreads = np.max(list(widths.values()), axis=0) - np.min(list(widths.values()), axis=0)
    assert glued["pos-width-spread"] == pytest.approx(np.mean(spreads), rel=1e-12) and glued["pos-width-spread"] < 0.01


def test_the_causal_rows_are_nearly_twice_as_tall_and_brighter_than_the_laplace_ones(chapter):
    """The kernels figure's alt text: the causal bumps nearly twice as tall as the Gaussian ones (1.7 to 2), the
    ALiBi matrix brighter than the Gaussian's and the causal one brighter still."""
    heads = chapter.namespace["heads"]
    for q in chapter.namespace["queries"]:
        peak = {name: weights[q].max() for name, (_, weights) in heads.items()}
        assert 1.7 < peak["Gaussian, causal"] / peak["Gaussian"] < 2, q
        assert peak["Gaussian"] < peak["Laplace (ALiBi)"] < peak["Gaussian, causal"], q


def test_the_glued_numbers_are_plain_python_numbers(chapter):
    """myst-nb formats floats and ints, not numpy scalars: each glued number must be one."""
    numbers = {name: value for name, value in chapter.glued.items() if not name.startswith("fig-")}
    assert all(type(value) in (float, int, bool) for value in numbers.values()), \
        {name: type(value) for name, value in numbers.items() if type(value) not in (float, int, bool)}


# --- the exercises -----------------------------------------------------------------------------


def test_ex_the_temperature_of_one_cosine(chapter):
    glued, ns = chapter.glued, chapter.namespace
    xi, omega = glued["ex-pos-cosine-xi"], ns["check_frequency"]
    assert omega == np.pi / 2 and xi == ns["check_amplitude"]
    # sympy's 2 / (omega**2 xi), evaluated in floating point: a few roundings of each.
    assert glued["ex-pos-cosine-tau"] == pytest.approx(2 / (xi * omega**2), rel=rounding(8), abs=0)
    assert glued["ex-pos-cosine-tau"] == pytest.approx(8 / (xi * np.pi**2), rel=rounding(8), abs=0)
    assert positional.gaussian_amplitude(omega, glued["ex-pos-cosine-tau"]) == pytest.approx(xi, rel=rounding(8))
    _, cosine = positional.sinusoidal_head(ns["noisy"], ns["positions"], [omega], [xi])
    _, gauss = sa.gaussian_head(ns["noisy"], ns["positions"], glued["ex-pos-cosine-tau"])
    assert glued["ex-pos-cosine-gap"] == np.max(np.abs(cosine - gauss)) < 1e-3


def test_ex_an_alibi_head_as_wide_as_the_gaussian_head(chapter):
    glued, ns = chapter.glued, chapter.namespace
    tau, zeta = glued["pos-loo-tau"], glued["ex-pos-alibi-slope"]
    assert glued["ex-pos-alibi-h"] == temperature_to_bandwidth(tau)
    assert zeta == pytest.approx(np.sqrt(2) / glued["ex-pos-alibi-h"], rel=rounding(4), abs=0)
    assert zeta == pytest.approx(2 / np.sqrt(tau), rel=rounding(4), abs=0)
    assert 2 / np.sqrt(round(tau, 4)) == pytest.approx(zeta, rel=0.01), "tau as printed gives an answer the box takes"
    # 1001 positions, a row of standard deviation 0.0375 = 37 steps, 13 of them from the nearest end: h to 1e-3
    assert glued["ex-pos-alibi-dense"] == ns["dense_positions"].size == 1001
    assert glued["ex-pos-alibi-spread"] == pytest.approx(glued["ex-pos-alibi-h"], rel=1e-3)
    slopes = 1 / DEFAULT_CANDIDATES
    assert glued["pos-loo-slope"] == slopes[slopes < zeta].max(), "the candidate just below"
    assert glued["ex-pos-alibi-step"] == pytest.approx(10 ** (1 / 20), rel=rounding(4))


def test_ex_the_original_transformers_frequencies(chapter):
    glued = chapter.glued
    F, n = glued["ex-pos-freq-f"], glued["ex-pos-freq-n"]
    assert (glued["ex-pos-freq-width"], F, n) == (512, 256, 512)
    assert glued["ex-pos-freq-span"] == n - 1
    assert glued["ex-pos-freq-limit"] == pytest.approx(np.pi / (n - 1), rel=rounding(4))
    assert glued["ex-pos-freq-period"] == pytest.approx(2 * (n - 1), rel=rounding(8)), "twice the span"
    # Vaswani's frequencies written out, 1 / 10000**(2 i / d_model), and the rule omega (N - 1) <= pi:
    vaswani = [1 / 10000 ** (2 * i / glued["ex-pos-freq-width"]) for i in range(F)]
    assert glued["ex-pos-freq-count"] == sum(omega * (n - 1) <= np.pi for omega in vaswani)
    margin = min(abs(omega * (n - 1) / np.pi - 1) for omega in vaswani)
    assert margin > 1e-3, "no frequency sits on the edge, where rounding could move it across"
    assert glued["ex-pos-freq-above"] + glued["ex-pos-freq-count"] == F
    assert glued["ex-pos-freq-share"] == 100 * glued["ex-pos-freq-count"] / F
    u = np.arange(float(n))
    for omega in vaswani:  # the obeying cosines fall over the whole sequence, the others turn back up
        falls = bool(np.all(np.diff(np.cos(omega * u)) <= 0))
        assert falls is (omega * (n - 1) <= np.pi)
    assert vaswani[0] == 1.0


def test_ex_a_quarter_of_the_temperature_about_halves_the_lag(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert ns["temperature"] == defaults.TEMPERATURE and ns["row"] == ns["middle"]
    assert glued["ex-pos-live-lag-before"] == glued["pos-lag"]  # the same head on the same draw
    assert glued["ex-pos-live-rmse-before"] == glued["pos-causal-rmse"]
    assert glued["ex-pos-live-neighbours-before"] == pytest.approx(glued["pos-causal-neighbours"], rel=1e-12)
    assert glued["ex-pos-live-lag-factor"] == glued["ex-pos-live-lag-after"] / glued["ex-pos-live-lag-before"]
    assert 0.4 < glued["ex-pos-live-lag-factor"] < 0.5, "a little more than half"
    ratio = glued["ex-pos-live-neighbours-after"] / glued["ex-pos-live-neighbours-before"]
    assert ratio == pytest.approx(0.5, rel=0.1), "about half as many samples"
    assert glued["ex-pos-live-rmse-after"] < glued["ex-pos-live-rmse-before"], "the error falls"
    # Why a little more than half: give the query's own sample half its weight (as an integral would, the
    # trapezoid rule) and the two lags are each within 2 % of h sqrt(2 / pi), halving with h.
    p, row = ns["sine_positions"], ns["middle_row"]
    book_tau = defaults.TEMPERATURE
    for weights, tau in ((ns["before_weights"], book_tau), (ns["quarter_weights"], book_tau / 4)):
        trapezoid = weights[row].copy()
        trapezoid[row] /= 2
        lag = p[row] - trapezoid @ p / trapezoid.sum()
        assert lag == pytest.approx(temperature_to_bandwidth(tau) * np.sqrt(2 / np.pi), rel=0.02)


def test_ex_two_causal_heads_against_the_lag(chapter):
    glued, ns = chapter.glued, chapter.namespace
    p, middle = ns["positions"], ns["middle"]
    # The lags of the heads at tau and 4 tau are about in the ratio of their bandwidths, 2.
    wide_lag = float(-mean_offset(ns["wide_weights"], p)[middle])
    assert wide_lag / glued["pos-lag"] == pytest.approx(2, rel=0.15)
    np.testing.assert_array_equal(np.linalg.solve([[1.0, 1.0], [1.0, 2.0]], [1.0, 0.0]), [2.0, -1.0])
    B = ns["pair_weights"]
    np.testing.assert_array_equal(B, 2 * ns["causal_weights"] - ns["wide_weights"])
    assert (B < 0).any() and np.all(np.triu(B, 1) == 0), "both signs, and still causal"
    # The lag of the layer's middle row, from its weights: rounding of two averages of positions up to 1.
    assert glued["ex-pos-open-lag"] == pytest.approx(p[middle] - B[middle] @ p, rel=0,
                                                     abs=3 * average_atol(defaults.N, 1.0))
    assert -glued["pos-lag"] / 5 < glued["ex-pos-open-lag"] < 0, "not exactly zero: a little ahead"
    assert glued["pos-gauss-rmse"] < glued["ex-pos-open-rmse"] < glued["pos-causal-rmse"]
    assert glued["ex-pos-open-noise-one"] == pytest.approx(defaults.SIGMA / np.sqrt(glued["pos-causal-neighbours"]))
    assert glued["ex-pos-open-noise"] > glued["ex-pos-open-noise-one"]
    assert glued["ex-pos-open-next-one"] == rmse(ns["causal_output"][:-1], ns["clean"][1:])
    assert glued["ex-pos-open-next"] < glued["pos-next-clean"] < glued["ex-pos-open-next-one"]
    assert ns["pair_means"][middle] > p[middle], "on the rising line p it is ahead of the present: it extrapolates"


# --- issue 30: the corrections of an expert reading ---------------------------------------------


def test_a_key_a_period_away_gets_the_querys_weight_only_if_it_sits_exactly_there(chapter):
    """At 3 pi a key sits a period away (2/3); at 2.5 pi the period 0.8 falls between keys: 0.99918, not 1."""
    glued, ns = chapter.glued, chapter.namespace
    p = ns["positions"]
    assert glued["pos-offgrid-period"] == pytest.approx(0.8)
    step = p[1] - p[0]
    assert np.min(np.abs(p - glued["pos-offgrid-period"])) > step / 10, "no key a whole period away"
    assert glued["pos-offgrid-key"] == p[np.argmin(np.abs(p - 0.8))]
    xi = positional.gaussian_amplitude(2.5 * np.pi, ns["tau"])
    weights = positional.sinusoidal_head(ns["noisy"], p, [2.5 * np.pi], [xi])[1]
    assert glued["pos-offgrid-ratio"] == weights[0, ns["nearest_key"]] / weights[0, 0]
    # The nearest key is 0.2 % of a period off: xi (cos(2 pi * 0.0025) - 1) = -8e-4 in log weight.
    gap = glued["pos-offgrid-key"] - glued["pos-offgrid-period"]
    assert glued["pos-offgrid-ratio"] == pytest.approx(np.exp(xi * (np.cos(2.5 * np.pi * gap) - 1)), rel=1e-12)
    assert 0.999 < glued["pos-offgrid-ratio"] < 1 - 1e-4, "nearly as much, not exactly"
    assert glued["pos-alias-ratio"] == pytest.approx(1.0, abs=1e-12), "on the grid, exactly"


def test_many_geometric_frequencies_repeat_exactly_only_with_rational_ratios_and_otherwise_only_nearly(chapter):
    glued, ns = chapter.glued, chapter.namespace
    tau = ns["tau"]
    assert rotary.largest_return([np.pi], tau, 1.0, 10.0) == pytest.approx((1.0, 2.0), abs=1e-12), "one frequency"
    # F = 2: the ratio 10000**(1/2) = 100 is whole, the kernel repeats every 200 units.
    assert positional.transformer_frequencies(2)[1] == pytest.approx(0.01, rel=1e-15)
    assert glued["pos-return-2-1000-at"] == pytest.approx(200.0, abs=1e-9)
    assert glued["pos-return-2-1000"] == pytest.approx(1.0, abs=1e-12)
    # F = 3: irrational ratio; returns closer the farther one looks, never back to 1.
    three = [glued[f"pos-return-3-{reach}"] for reach in (10, 1000, 10000)]
    assert three[0] < three[1] < three[2] < 1 - 1e-3
    assert glued["pos-return-3-10"] < 0.2 and glued["pos-return-3-10000"] > 0.85
    assert 1 < glued["pos-return-3-1000-at"] < 1000 < glued["pos-return-3-10000-at"] < 10000
    # F = 8: lower still within the same reach.
    assert glued["pos-return-8-10000"] < 1e-15 < glued["pos-return-3-10000"]
    for (count, reach), (weight, _) in ns["returns"].items():
        omegas = np.pi * positional.transformer_frequencies(count)
        assert omegas[0] == np.pi and np.allclose(omegas[1:] / omegas[:-1], 10000 ** (-1 / count))
        assert weight == glued[f"pos-return-{count}-{reach:.0f}"]
    text = source(STEM)
    assert "only\n  comes near its peak again, rarer and farther out" in text
    assert "set up for one span, its kernel repeats beyond it." not in text


def test_the_next_sample_error_is_read_against_its_expectation(chapter):
    """0.319 against sqrt(0.186**2 + sigma**2) = 0.353; below it because the draw's noise, rms 0.270, is below sigma."""
    glued, ns = chapter.glued, chapter.namespace
    sigma = defaults.SIGMA
    assert glued["pos-next-expected"] == pytest.approx(np.sqrt(glued["pos-next-clean"] ** 2 + sigma**2), rel=1e-15)
    noise = (ns["noisy"] - ns["clean"])[1:]  # the samples s_2, ..., s_N that rows 1, ..., N - 1 predict
    assert glued["pos-next-drawn-noise"] == pytest.approx(np.sqrt(np.mean(noise**2)), rel=1e-15)
    assert glued["pos-next-drawn-noise"] < sigma, "this draw's noise is smaller than sigma"
    assert glued["pos-next-noisy"] < glued["pos-next-expected"]
    drawn, expected = glued["pos-next-drawn"], glued["pos-next-expected"]
    measured = glued["pos-next-noisy"]
    assert abs(measured - drawn) < abs(measured - expected), "the draw's noise explains it"
    assert "close to the\nnoise level" not in source(STEM)


def test_the_causal_mask_is_defined_where_the_alibi_section_first_uses_it(chapter):
    text = source(STEM)
    first_use = text.index(r"a^{(\le i)}_{ij}")
    defined = text.index("*causal mask*")
    assert defined < first_use, "defined before a^(<= i) is first written"
    section = text[text.rindex("\n## ", 0, first_use):first_use]
    assert "*causal mask*" in section and r"$-\infty$" in section, "in the same section, with what it does"


def test_the_geometric_ratio_is_whole_only_when_the_count_of_frequencies_divides_four():
    """10000**(1/F) = 10**(4/F): rational (and then whole) for F = 1, 2, 4 only, irrational for F = 32 and 64."""
    rational = [count for count in range(1, 129) if (sp.Integer(10000) ** sp.Rational(1, count)).is_rational]
    assert rational == [count for count in range(1, 129) if 4 % count == 0] == [1, 2, 4]
    assert all((sp.Integer(10000) ** sp.Rational(1, count)).is_integer for count in rational)
    assert all((sp.Integer(10000) ** sp.Rational(1, count)).is_rational is False for count in (3, 32, 64))
    text = " ".join(source(STEM).split())
    assert "$10000^{1/F} = 10^{4/F}$ is a whole number only when $F$ divides $4$" in text
    assert "the $32$ or $64$ frequencies of a RoPE head of $d_k = 64$ or $128$" in text
