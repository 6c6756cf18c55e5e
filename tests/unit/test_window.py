"""selfattention.window: the Gaussian head cut to the keys within U of each query.

Checked against the package's exact head under a band mask (an independent
computation: projections, the expanded square and the softmax), against the
exact head when the window holds every key, and against the bound on what
the keys left out can change.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tolerances import average_atol, half_spread, square_gap

import selfattention as sa
from selfattention import window

TAU = 0.005


def book_signal(n=200):
    positions, _, noisy = sa.noisy_sine(n, 0.3, rng=1729)
    return positions, noisy


def band(positions, half_width):
    return np.abs(positions[:, None] - positions[None, :]) <= half_width


def head_atol(signal, positions, tau=TAU):
    """The window squares the differences directly; the head expands the square: their scores' gap, averaged."""
    return average_atol(len(positions), signal, square_gap(half_spread(positions), tau))


@pytest.mark.parametrize("half_width", [0.0, 0.013, 0.05, 0.2, 0.6])
def test_the_window_is_the_head_under_a_band_mask(half_width):
    p, s = book_signal()
    output, keys = window.window_head(s, p, TAU, half_width)
    mask = band(p, half_width)
    masked, _ = sa.gaussian_head(s, p, TAU, mask=mask)
    np.testing.assert_allclose(output, masked, rtol=0, atol=head_atol(s, p))
    np.testing.assert_array_equal(keys, mask.sum(axis=1))


@given(st.integers(1, 25), st.floats(0.01, 1.0), st.floats(0, 1), st.data())
def test_the_window_is_the_masked_head_on_any_sorted_positions(n, tau, share, data):
    p = np.sort(data.draw(hnp.arrays(np.float64, n, elements=st.floats(0, 1))))
    s = data.draw(hnp.arrays(np.float64, n, elements=st.floats(-5, 5)))
    half_width = share * (p[-1] - p[0])
    output, keys = window.window_head(s, p, tau, half_width)
    mask = band(p, half_width)
    masked, _ = sa.gaussian_head(s, p, tau, mask=mask)
    np.testing.assert_allclose(output, masked, rtol=0, atol=head_atol(s, p, tau))
    np.testing.assert_array_equal(keys, mask.sum(axis=1))


def test_a_window_as_wide_as_the_signal_is_the_exact_head():
    p, s = book_signal()
    output, keys = window.window_head(s, p, TAU, p[-1] - p[0])
    exact, _ = sa.gaussian_head(s, p, TAU)
    np.testing.assert_allclose(output, exact, rtol=0, atol=head_atol(s, p))
    assert (keys == len(p)).all()


@pytest.mark.parametrize("multiple", [1.0, 2.0, 3.0, 4.0, 5.0])
def test_the_error_is_at_most_what_the_keys_left_out_weigh(multiple):
    """The query's own weight is 1; the keys beyond U weigh at most n exp(-U**2 / tau) together; moving that share
    of a row's weight changes an average by at most that share times the signal's range."""
    p, s = book_signal(400)
    half_width = multiple * np.sqrt(TAU)
    output, _ = window.window_head(s, p, TAU, half_width)
    exact, _ = sa.gaussian_head(s, p, TAU)
    bound = len(p) * np.exp(-(half_width**2) / TAU) * np.ptp(s) + head_atol(s, p)
    assert np.max(np.abs(output - exact)) <= bound


def test_the_window_holds_about_two_u_n_keys_a_query_away_from_the_ends():
    p, s = book_signal(1001)
    _, keys = window.window_head(s, p, TAU, 0.1)
    assert keys[500] == 201  # 100 on each side, 0.001 apart, and the query


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"half_width": 1.5}, "half_width"),
    ({"half_width": -0.1}, "half_width"),
    ({"positions": [0.0, 0.5, 0.25]}, "positions"),
    ({"temperature": 0.0}, "temperature"),
])
def test_bad_input_is_refused_by_name(kwargs, word):
    call = {"signal": [1.0, 2.0, 3.0], "positions": [0.0, 0.5, 1.0], "temperature": TAU, "half_width": 0.5,
            **kwargs}
    with pytest.raises(ValueError, match=word):
        window.window_head(**call)


def test_a_window_wider_than_the_signal_says_so():
    with pytest.raises(ValueError, match="wider than the signal"):
        window.window_head([1.0, 2.0], [0.0, 1.0], TAU, 1.0 + 1e-9)
