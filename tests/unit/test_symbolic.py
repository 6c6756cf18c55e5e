"""The quadratic-expansion trick and the bilateral score, checked with sympy."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
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


# --- the head that looks elsewhere -------------------------------------------------


def test_the_offset_heads_score_is_minus_the_shifted_squared_distance():
    assert symbolic.is_offset_squared_distance()
    _, _, factored = symbolic.symbolic_offset_score()
    assert sp.simplify(factored + (p_i + symbolic.delta - p_j) ** 2) == 0


@pytest.mark.parametrize("offset", [-0.7, 0.0, 0.3, 2.5, 11.0])
def test_the_symbolic_offset_projections_evaluate_to_the_packages(offset):
    W_Q, W_K = symbolic.symbolic_offset_projections()
    numeric_Q, numeric_K, _ = sa.gaussian_head_weights(offset=offset)
    # The exact entries are k, k sqrt(2), k delta or k delta**2: evaluated in doubles, a rounding of each.
    np.testing.assert_allclose(np.array(W_Q.subs(symbolic.delta, offset), dtype=float), numeric_Q, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(np.array(W_K, dtype=float), numeric_K)


def test_the_offset_derivation_sees_a_broken_head(monkeypatch):
    real = sa.gaussian_head_weights

    def broken(d_k=3, offset=0.0):  # the query's constant term -delta**2 dropped
        W_Q, W_K, W_V = real(d_k, offset)
        W_Q = W_Q.copy()
        W_Q[3, 1] = 0.0
        return W_Q, W_K, W_V

    monkeypatch.setattr(symbolic, "gaussian_head_weights", broken)
    assert not symbolic.is_offset_squared_distance()


def test_the_offset_derivation_refuses_a_head_of_higher_degree(monkeypatch):
    real = sa.gaussian_head_weights

    def cubic(d_k=3, offset=0.0):
        W_Q, W_K, W_V = real(d_k, offset)
        return W_Q + offset**3, W_K, W_V

    monkeypatch.setattr(symbolic, "gaussian_head_weights", cubic)
    with pytest.raises(AssertionError, match="not a polynomial of degree 2"):
        symbolic.symbolic_offset_projections()


# --- positional encodings ---------------------------------------------------------------------


def test_sympy_derives_the_sinusoidal_score_from_the_packages_projections():
    from selfattention import symbolic

    terms, score = symbolic.symbolic_sinusoidal_score()
    assert len(terms) == 2
    assert sp.simplify(score - symbolic.xi * sp.cos(symbolic.omega * (symbolic.p_i - symbolic.p_j))) == 0
    assert symbolic.is_cosine_of_the_difference() is True


def test_the_cosine_check_fails_for_a_broken_projection(monkeypatch):
    from selfattention import positional, symbolic

    def swapped(amplitudes):  # the sine pair of the key swapped with its cosine pair: cos(a + b)-like terms
        W_Q, W_K, W_V = positional.sinusoidal_head_weights(amplitudes)
        return W_Q, W_K[:, ::-1], W_V

    monkeypatch.setattr(symbolic, "sinusoidal_head_weights", swapped)
    assert symbolic.is_cosine_of_the_difference() is False


def test_the_cosine_expansion_matches_the_gaussian_temperature():
    from selfattention import positional, symbolic

    series, matched = symbolic.cosine_expansion(order=6)
    u, w, r = symbolic.u, symbolic.omega, symbolic.xi
    assert sp.expand(series - (r - r * w**2 * u**2 / 2 + r * w**4 * u**4 / 24)) == 0
    assert sp.simplify(matched - 2 / (r * w**2)) == 0
    numeric = float(matched.subs({w: np.pi, r: positional.gaussian_amplitude(np.pi, 0.005)}))
    assert numeric == pytest.approx(0.005, rel=1e-14)


@pytest.mark.parametrize("angle", [0.3, -2.0, 7.5])
def test_the_symbolic_rotation_is_the_one_the_package_applies(angle):
    from selfattention import positional, symbolic

    numeric = positional.rotate(np.eye(2), [angle, angle], [1.0])  # rows [1, 0] and [0, 1], rotated
    np.testing.assert_allclose(numeric, np.array(symbolic.rotation(angle).evalf(), dtype=float), rtol=0, atol=1e-15)


def test_sympy_finds_the_rotated_score_a_function_of_the_difference():
    from selfattention import positional, symbolic

    score, shift_free = symbolic.symbolic_rotary_score()
    assert shift_free is True
    q, k, (pi, pj), w = np.array([0.7, -1.2]), np.array([0.4, 2.0]), (0.3, 1.1), 2.5
    values = {symbolic.q_i1: q[0], symbolic.q_i2: q[1], symbolic.k_j1: k[0], symbolic.k_j2: k[1],
              symbolic.p_i: pi, symbolic.p_j: pj, symbolic.omega: w}
    numeric = positional.rotate(q[None], [pi], [w]) @ positional.rotate(k[None], [pj], [w]).T
    assert float(score.subs(values)) == pytest.approx(float(numeric[0, 0]), rel=1e-13)
    assert score.free_symbols >= {symbolic.p_i, symbolic.p_j}
    assert sp.simplify(score.subs({symbolic.p_i: symbolic.p_i + 1, symbolic.p_j: symbolic.p_j + 1}) - score) == 0


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_the_distance_determinant_has_its_closed_form(n):
    from selfattention import symbolic

    determinant, matches = symbolic.distance_determinant(n)
    assert matches is True and determinant != 0


@given(st.integers(2, 12).flatmap(lambda n: hnp.arrays(np.float64, n, elements=st.floats(0, 1), unique=True)))
def test_the_distance_matrix_of_distinct_positions_has_the_closed_form_determinant(p):
    """numpy's determinant against the closed form, on random positions: the formula is not sympy's alone."""
    p = np.sort(p)
    assume(np.min(np.diff(p)) > 1e-3)
    D = np.abs(p[:, None] - p[None, :])
    closed = (-1) ** (p.size - 1) * 2.0 ** (p.size - 2) * (p[-1] - p[0]) * np.prod(np.diff(p))
    # LU's determinant is off relatively by about n eps times the condition number of D; with 12 positions and
    # gaps of 1e-3 or more, the condition number measured over 20,000 random draws stays below 1e4: 3e-11.
    assert np.linalg.det(D) == pytest.approx(closed, rel=1e-9)


@given(st.integers(3, 20).flatmap(lambda n: st.tuples(
    hnp.arrays(np.float64, n, elements=st.floats(0, 1), unique=True),
    hnp.arrays(np.float64, n, elements=st.floats(-5, 5)))))
def test_no_term_of_the_query_alone_brings_the_distances_rank_below_n_minus_one(p_c):
    """The softmax ignores a number added to each row: -|p_i - p_j| + c_i still has rank N - 1 or more."""
    p, c = p_c
    assume(np.min(np.diff(np.sort(p))) > 1e-2)
    scores = -np.abs(p[:, None] - p[None, :]) + c[:, None]
    assert np.linalg.matrix_rank(scores) >= p.size - 1


def test_the_symbolic_sizes_are_bounded():
    from selfattention import symbolic

    with pytest.raises(ValueError, match="n must be at most 8"):
        symbolic.distance_matrix(9)
    with pytest.raises(ValueError, match="order must be at most 40"):
        symbolic.cosine_expansion(41)
