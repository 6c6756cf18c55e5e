"""The quadratic-expansion trick and the bilateral score, checked with sympy."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from tolerances import half_spread, square_gap

import selfattention as sa
from selfattention import bilateral, defaults, symbolic
from selfattention.symbolic import p_i, p_j, s_i, s_j


def test_package_head_scores_the_negative_squared_distance():
    assert symbolic.is_negative_squared_distance()
    _, expanded, factored = symbolic.symbolic_score()
    assert sp.expand(expanded - (-p_i**2 + 2 * p_i * p_j - p_j**2)) == 0
    assert factored == -(p_i - p_j) ** 2


def test_each_term_rides_on_its_own_dimension():
    terms, _, _ = symbolic.symbolic_score()
    assert terms == [2 * p_i * p_j, -p_i**2, -p_j**2]


def test_queries_and_keys_ignore_the_signal():
    q, k = symbolic.symbolic_projections()
    assert q == sp.Matrix([[sp.sqrt(2) * p_i, -p_i**2, 1]])
    assert k == sp.Matrix([[sp.sqrt(2) * p_j, 1, -p_j**2]])
    assert not (q.free_symbols | k.free_symbols) & {s_i, s_j}


def test_derivation_uses_the_package_matrices(monkeypatch):
    """Break the package's W_K: the default derivation must notice."""
    W_Q, W_K, W_V = sa.gaussian_head_weights()
    broken = W_K[:, [0, 2, 1]]  # route p_j^2 and the constant to the wrong dimensions
    monkeypatch.setattr(symbolic, "gaussian_head_weights", lambda: (W_Q, broken, W_V))
    assert not symbolic.is_negative_squared_distance()


def test_the_d_k_2_score_is_off_by_a_term_of_the_query_alone():
    W_Q, W_K, _ = sa.gaussian_head_weights(d_k=2)
    assert symbolic.score_offset(W_Q, W_K) == symbolic.p_i**2
    assert symbolic.score_offset() == 0
    assert not symbolic.is_negative_squared_distance(W_Q, W_K)


def test_a_doubled_cross_term_is_caught():
    W_Q, W_K, _ = sa.gaussian_head_weights()
    W_K = W_K.copy()
    W_K[1, 0] = 2 * np.sqrt(2.0)  # q.k would hold 4 p_i p_j instead of 2 p_i p_j
    assert not symbolic.is_negative_squared_distance(W_Q, W_K)


def test_exact_matrix_keeps_sqrt2_exact():
    m = symbolic.exact_matrix([[np.sqrt(2.0), -1.0], [0.0, -3 * np.sqrt(2.0)]])
    assert m == sp.Matrix([[sp.sqrt(2), -1], [0, -3 * sp.sqrt(2)]])


@pytest.mark.parametrize("value", [0.3, 1.41421356, np.pi])
def test_exact_matrix_refuses_to_guess(value):
    with pytest.raises(ValueError, match="matrix entry"):
        symbolic.exact_matrix([[value]])


def test_exact_matrix_bad_shape():
    with pytest.raises(ValueError, match="matrix"):
        symbolic.exact_matrix([1.0, 2.0])


def test_projection_shapes_are_checked():
    W_Q, W_K, _ = sa.gaussian_head_weights()
    with pytest.raises(ValueError, match="W_Q and W_K"):
        symbolic.symbolic_projections(W_Q[:3], W_K)
    with pytest.raises(ValueError, match="W_Q and W_K"):
        symbolic.symbolic_projections(W_Q, W_K[:, :2])


def test_numeric_scores_match_on_the_books_positions():
    positions, _, noisy = sa.noisy_sine(defaults.N, defaults.SIGMA, rng=defaults.SEED)
    assert symbolic.numeric_score_error(positions, noisy) <= square_gap(half_spread(positions))


def test_numeric_scores_match_on_any_positions():
    rng = np.random.default_rng(0)
    positions = rng.uniform(-3, 3, 40)
    assert symbolic.numeric_score_error(positions, rng.normal(size=40)) <= square_gap(half_spread(positions))


def test_numeric_check_sees_a_broken_head(monkeypatch):
    W_Q, W_K, W_V = sa.gaussian_head_weights()
    monkeypatch.setattr(symbolic, "gaussian_head_weights", lambda: (W_Q, W_K[:, [0, 2, 1]], W_V))
    assert symbolic.numeric_score_error(np.linspace(0.0, 1.0, 50)) > 0.1


# --- the bilateral head ----------------------------------------------------------


def test_bilateral_score_is_minus_both_squared_distances_over_their_temperatures():
    assert symbolic.is_bilateral_score()
    *_, parts = symbolic.symbolic_bilateral_score()
    assert sp.simplify(parts["position"] + (p_i - p_j) ** 2 / symbolic.tau_p) == 0
    assert sp.simplify(parts["signal"] + (s_i - s_j) ** 2 / symbolic.tau_s) == 0


def test_each_bilateral_dimension_contributes_one_term_of_the_expansion():
    _, _, terms, _ = symbolic.symbolic_bilateral_score()
    expected = [2 * p_i * p_j / symbolic.tau_p, -(p_i**2) / symbolic.tau_p, -(p_j**2) / symbolic.tau_p,
                2 * s_i * s_j / symbolic.tau_s, -(s_i**2) / symbolic.tau_s, -(s_j**2) / symbolic.tau_s]
    assert all(sp.simplify(t - e) == 0 for t, e in zip(terms, expected, strict=True))


def test_the_symbolic_bilateral_matrices_evaluate_to_the_numeric_ones():
    W_Q, W_K = symbolic.symbolic_bilateral_projections()
    numeric_Q, numeric_K, _ = bilateral.bilateral_head_weights(0.25, 2.0)
    # Exactly: dividing by tau_p = 1/4 and tau_s = 2, powers of two, is exact, so both sides round only sqrt(2),
    # correctly (sympy's float of an exact expression, and numpy's sqrt).
    np.testing.assert_array_equal(np.array(W_Q.subs({symbolic.tau_p: 0.25, symbolic.tau_s: 2.0}), dtype=float),
                                  numeric_Q)
    np.testing.assert_array_equal(np.array(W_K, dtype=float), numeric_K)
