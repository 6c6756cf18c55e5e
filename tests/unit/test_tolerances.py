"""The bounds of tests/tolerances.py hold where they are derived, and its assertion fails when it should."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import moderate
from tolerances import EPS, SUBNORMAL, TINY, assert_close, average_atol, rounding, softmax_rtol, square_scores_error

import selfattention as sa
from selfattention.head import gaussian_head_weights, positional_features

rows = st.integers(1, 8).flatmap(lambda n: hnp.arrays(np.float64, n, elements=moderate))


@given(rows, st.floats(0.0, 1e-3), st.integers(0, 2**32 - 1))
def test_scores_moved_by_at_most_g_move_each_weight_by_at_most_softmax_rtol(x, g, seed):
    shift = np.random.default_rng(seed).uniform(-g, g, x.size)
    moved = x + shift  # rounds once more, on |x| + g
    gap = g + rounding(1, np.abs(x).max() + g) + rounding(2, 2 * np.abs(moved).max())  # and the row maxima
    w, w_moved = sa.softmax(x), sa.softmax(moved)
    np.testing.assert_allclose(w_moved, w, rtol=softmax_rtol(x.size, gap), atol=TINY)
    values = np.linspace(-1.0, 2.0, x.size)
    assert abs(w_moved @ values - w @ values) <= average_atol(x.size, np.abs(values), gap)


@given(hnp.arrays(np.float64, st.integers(2, 20), elements=st.floats(-1e3, 1e3)), st.floats(-10.0, 10.0))
def test_the_expanded_square_rounds_within_its_bound(p, delta):
    """The head's projections and dot products, against -(c_i + delta - c_j)**2 in exact arithmetic."""
    c = p - (p.min() / 2 + p.max() / 2)  # centred as the head centres them
    X = positional_features(np.zeros_like(c), c)
    W_Q, W_K, _ = gaussian_head_weights(offset=delta)
    scores = (X @ W_Q) @ (X @ W_K).T  # (n, n)
    exact = [[-((Fraction(a) + Fraction(delta) - Fraction(b)) ** 2) for b in c] for a in c]
    error = max(abs(Fraction(float(s)) - e) for row_s, row_e in zip(scores, exact, strict=True)
                for s, e in zip(row_s, row_e, strict=True))
    # The part of square_scores_error that these roundings make: 12 EPS P**2, and their underflows (the rest is
    # centring, the row maximum and the temperature).
    P = np.abs(c).max() + abs(delta)
    bound = 12 * (EPS * P**2 + SUBNORMAL)
    assert float(error) <= bound <= square_scores_error(P)


def test_rounding_counts_eps_on_the_largest_scale_and_the_smallest_subnormal():
    assert rounding(3, [0.5, -2.0]) == 3 * (EPS * 2.0 + SUBNORMAL)
    assert rounding(4) == 4 * (EPS + SUBNORMAL)
    assert rounding(2, 0.0) == 2 * SUBNORMAL > 0  # an underflow may still round


def test_assert_close_takes_one_tolerance_per_entry_and_fails_beyond_it():
    assert_close([1.0, 2.0], [1.0, 2.5], [0.0, 0.5])
    with pytest.raises(AssertionError, match=r"1 of 2 entries .* the worst, at \(1,\): 2.0 against 2.5"):
        assert_close([1.0, 2.0], [1.0, 2.5], [0.5, 0.4])
    with pytest.raises(AssertionError, match="1 of 1 entries"):
        assert_close(np.nan, 1.0, 1.0)
