"""The page "The quadratic-expansion trick": the score is minus the squared distance, and the rows are Gaussians."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import half_spread, rounding, softmax_rtol, square_gap, square_scores_error

import selfattention as sa
from selfattention import defaults, head, symbolic

STEM = "quadratic-trick"


def test_sympy_finds_the_score_is_minus_the_squared_distance(chapter):
    assert chapter.glued["trick-identity-holds"] is True
    assert chapter.namespace["factored"] == -(symbolic.p_i - symbolic.p_j) ** 2


def identity_bound(positions):
    """The expanded square on the centred positions against the square written out: the worst case of their
    roundings (``tests/tolerances.py``), 8 eps on the book's positions: "a few units in the last place"."""
    return square_gap(half_spread(positions))


def test_the_identity_holds_to_rounding_on_the_books_positions(chapter):
    """"a few units in the last place of double precision"."""
    assert 0 <= chapter.glued["trick-max-error"] <= identity_bound(chapter.namespace["positions"])
    assert chapter.glued["trick-n"] == len(chapter.namespace["positions"])


def test_the_computed_rows_lie_on_the_predicted_gaussians(chapter):
    # Rounding: the head's weights against the formula's, at the smallest of the three temperatures, tau / 5.
    p, tau = chapter.namespace["positions"], min(chapter.namespace["profile_taus"])
    gap = square_gap(half_spread(p), tau)
    assert chapter.glued["trick-profile-gap"] <= softmax_rtol(len(p), gap)  # weights are at most 1


def test_four_times_the_temperature_doubles_the_width(chapter):
    glued, taus = chapter.glued, chapter.namespace["profile_taus"]
    assert taus[2] == 4 * taus[1] and taus[0] == taus[1] / 5
    # Exactly: 4 tau is exact, and sqrt(4 x) = 2 sqrt(x) rounds the same (doubling commutes with rounding).
    assert glued["trick-profile-h-2"] == 2 * glued["trick-profile-h-1"]
    assert glued["trick-profile-h-1"] == glued["trick-h"] and glued["trick-profile-h-0"] < glued["trick-h"]


def test_the_profiled_query_is_in_the_middle(chapter):
    # Not rounding: the middle token of the grid, within a spacing of 0.5.
    assert chapter.glued["trick-row-position"] == pytest.approx(0.5, abs=1 / chapter.glued["trick-n"])


def test_far_from_the_origin_the_expansion_cancels_and_centring_cures_it(chapter):
    """"grows from ... to ...", "enough to change a weight by a factor of up to ...", "back to" rounding."""
    glued, ns = chapter.glued, chapter.namespace
    assert glued["trick-offset"] == 1e6 and glued["trick-eps"] == np.finfo(float).eps
    assert glued["trick-far-error"] > 1e6 * glued["trick-max-error"]
    # A division by tau and a product by it: 2 roundings, relative.
    assert glued["trick-far-error"] == pytest.approx(glued["trick-far-scaled"] * defaults.TEMPERATURE, rel=rounding(2),
                                                     abs=0)
    assert glued["trick-far-factor"] == np.exp(2 * glued["trick-far-scaled"])  # (2 e) / tau is 2 (e / tau) exactly
    # Centred, the far positions' differences are exact (Sterbenz): the same bound as near the origin.
    assert 0 <= glued["trick-centred-error"] <= identity_bound(ns["far"])
    # the weights the uncentred rows would give: wrong by more than 1 %, within the stated factor
    X = sa.positional_features(ns["noisy"], ns["far"])
    W_Q, W_K, W_V = sa.gaussian_head_weights()
    _, uncentred = sa.attention(X @ W_Q, X @ W_K, X @ W_V, defaults.TEMPERATURE)
    _, exact = sa.nadaraya_watson(ns["far"], ns["far"], ns["noisy"], np.sqrt(defaults.TEMPERATURE / 2))
    ratio = uncentred[exact > 1e-3] / exact[exact > 1e-3]
    assert 1.01 < max(ratio.max(), 1 / ratio.min()) <= glued["trick-far-factor"]
    assert glued["trick-tolerance"] == head.ROUNDING_TOLERANCE


def test_the_head_centres_at_the_middle_of_the_range(chapter):
    """"subtracts the middle of their range, p_mid = (min + max) / 2"."""
    far = chapter.namespace["far"]
    centred = head.centre_positions(far)
    # Exactly: min / 2 + max / 2 and (min + max) / 2 are the same sum rounded once (halving commutes with rounding).
    np.testing.assert_array_equal(centred, far - (far.min() + far.max()) / 2)


def test_each_query_is_perpendicular_to_its_own_key_yet_wins_its_row(chapter):
    ns = chapter.namespace
    Q, K = ns["X"] @ ns["W_Q"], ns["X"] @ ns["W_K"]  # (N, 3)
    E = Q @ K.T  # (N, N)
    # q_i . k_i = 0 but for the expanded square's rounding, on the raw positions (P = max|p|); the product of
    # Q and K^T and the chapter's row sums are the same three terms in another order (an exact match is not due).
    bound = square_scores_error(np.abs(ns["positions"]).max())
    assert np.max(np.abs(np.diag(E))) <= bound and chapter.glued["trick-self-score"] <= bound
    assert np.all(np.linalg.norm(Q, axis=1) > 0.9) and np.all(np.linalg.norm(K, axis=1) > 0.9), "neither is zero"
    off_diagonal = ~np.eye(len(E), dtype=bool)
    assert np.all(E[off_diagonal] < 0)
    np.testing.assert_array_equal(E.argmax(axis=1), np.arange(len(E)))


def test_dropping_the_query_only_dimension_changes_no_weight(chapter):
    ns = chapter.namespace
    assert ns["W_Q2"].shape == ns["W_K2"].shape == (4, 2)
    assert symbolic.score_offset(ns["W_Q2"], ns["W_K2"]) == symbolic.p_i**2, "a term of the query alone"
    # Rounding error: attention on the raw positions (d_k = 2) against the head's centred ones (d_k = 3).
    p, tau = ns["positions"], defaults.TEMPERATURE
    gap = square_scores_error(np.abs(p).max(), tau) + square_scores_error(half_spread(p), tau)
    assert chapter.glued["trick-dk2-gap"] <= softmax_rtol(len(p), gap), "rounding error"  # weights are at most 1
    assert ns["weights_three"].shape == (defaults.N, defaults.N)


# --- the exercises -----------------------------------------------------------------------------


def test_ex_swapped_projections_give_the_same_scores(chapter):
    assert chapter.glued["ex-trick-swap-holds"] is True
    assert chapter.namespace["swapped"] == -(symbolic.p_i - symbolic.p_j) ** 2
    ns = chapter.namespace
    E = (ns["X"] @ ns["W_Q"]) @ (ns["X"] @ ns["W_K"]).T  # (N, N)
    # "Symmetric before the softmax": e_ij and e_ji add the same three terms in other orders, 3 roundings on
    # 4 max|p|**2 each.
    np.testing.assert_allclose(E, E.T, rtol=0, atol=rounding(3, 4 * np.abs(ns["positions"]).max() ** 2))
    # "the weights do not change either": the head with the projections swapped gives the same weights, to the
    # rounding of the scores (both computations, then the subtraction of the row's maximum and the division by tau).
    X, V, tau = ns["X"], ns["X"] @ ns["W_V"], defaults.TEMPERATURE
    _, swapped_weights = sa.attention(X @ ns["W_K"], X @ ns["W_Q"], V, tau)
    _, weights_here = sa.attention(X @ ns["W_Q"], X @ ns["W_K"], V, tau)
    score_gap = 2 * rounding(3, 4 * np.abs(ns["positions"]).max() ** 2) / tau + rounding(2, np.abs(E).max() / tau)
    np.testing.assert_allclose(swapped_weights, weights_here, rtol=softmax_rtol(len(E), score_gap), atol=0)
    weights = ns["weights_three"]
    assert np.abs(weights - weights.T).max() > 1e-3, "each row's own normalisation makes the weights asymmetric"


def test_ex_the_temperature_of_a_given_width(chapter):
    glued = chapter.glued
    # np.square(h) against h ** 2 (libm's pow, within an ulp); doubling is exact.
    assert glued["ex-trick-width-tau"] == pytest.approx(2 * glued["ex-trick-width-h"] ** 2, rel=rounding(2), abs=0)
    # the middle row, sampled every h/10 and far from the ends: its spread is h to a part in a thousand
    assert glued["ex-trick-width-spread"] == pytest.approx(glued["ex-trick-width-h"], rel=1e-3)


def test_ex_the_band_centred_ahead(chapter):
    glued, ns = chapter.glued, chapter.namespace
    delta = glued["ex-trick-offset-delta"]
    r2 = np.sqrt(2)
    expanded = [[0, 0, 0], [r2, -2 * delta, 0], [0, -1, 0], [r2 * delta, -delta**2, 1]]  # the solution's expansion
    np.testing.assert_array_equal(glued["ex-trick-offset-wq"], expanded)  # the package's expressions, exactly
    X, W_K = ns["X"], ns["W_K"]
    scores = (X @ np.array(glued["ex-trick-offset-wq"])) @ (X @ W_K).T  # (N, N)
    p = ns["positions"]
    # Not centred here: the expanded square's terms are as large as (max|p| + |delta|)**2.
    atol = square_gap(np.abs(p).max() + abs(delta))
    np.testing.assert_allclose(scores, -((p[:, None] + delta - p[None, :]) ** 2), rtol=0, atol=atol)
    # the middle query's weights, a whole Gaussian far from the ends, centred delta ahead
    assert glued["ex-trick-offset-centre"] == pytest.approx(glued["ex-trick-offset-query"] + delta, abs=1e-4)


def test_ex_the_cancellation_grows_with_the_square_of_the_shift(chapter):
    """"should grow about a hundredfold": ten times the positions, a hundred times their squares' rounding."""
    glued = chapter.glued
    assert glued["ex-trick-live-factor"] == glued["ex-trick-live-after"] / glued["ex-trick-live-before"]  # as glued
    assert 50 < glued["ex-trick-live-factor"] < 200
    assert chapter.namespace["shift"] == chapter.namespace["first_shift"] == 1e3  # the solution starts at the cell's


def test_ex_a_linear_fall_off_needs_as_many_dimensions_as_tokens(chapter):
    assert chapter.glued["ex-trick-open-rank"] == chapter.namespace["W_Q"].shape[1] == 3
    assert chapter.glued["ex-trick-open-abs-rank"] == chapter.glued["trick-n"]
