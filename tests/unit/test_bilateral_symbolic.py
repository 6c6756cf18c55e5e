"""The bilateral score derived with sympy from the package's own projections."""

from __future__ import annotations

import sympy as sp

from selfattention import bilateral_symbolic as bs
from selfattention.symbolic import p_i, p_j, s_i, s_j


def test_the_score_is_minus_both_squared_distances_over_their_temperatures():
    assert bs.is_bilateral_score()
    *_, parts = bs.symbolic_bilateral_score()
    assert sp.simplify(parts["position"] + (p_i - p_j) ** 2 / bs.tau_p) == 0
    assert sp.simplify(parts["signal"] + (s_i - s_j) ** 2 / bs.tau_s) == 0


def test_each_dimension_contributes_one_term_of_the_expansion():
    _, _, terms, _ = bs.symbolic_bilateral_score()
    expected = [2 * p_i * p_j / bs.tau_p, -(p_i**2) / bs.tau_p, -(p_j**2) / bs.tau_p,
                2 * s_i * s_j / bs.tau_s, -(s_i**2) / bs.tau_s, -(s_j**2) / bs.tau_s]
    assert all(sp.simplify(t - e) == 0 for t, e in zip(terms, expected, strict=True))


def test_the_symbolic_matrices_evaluate_to_the_numeric_ones():
    import numpy as np

    from selfattention.bilateral import bilateral_head_weights

    W_Q, W_K = bs.symbolic_bilateral_projections()
    numeric_Q, numeric_K, _ = bilateral_head_weights(0.25, 2.0)
    np.testing.assert_allclose(np.array(W_Q.subs({bs.tau_p: 0.25, bs.tau_s: 2.0}), dtype=float), numeric_Q)
    np.testing.assert_allclose(np.array(W_K, dtype=float), numeric_K)
