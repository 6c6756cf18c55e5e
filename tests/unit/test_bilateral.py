"""The bilateral head: equal to a directly written bilateral filter, and its projections."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import signals_on_positions
from tolerances import average_atol, half_spread, rounding, square_scores_error

import selfattention as sa
from selfattention import bilateral

signal_temperatures = st.floats(min_value=1e-2, max_value=1e2)
position_temperatures = st.floats(min_value=1e-2, max_value=1e2)


def squares_gap(P, tau_p, S, tau_s, *, expanded_sides=1):
    """How far two computations of the bilateral scores can be apart: two squares, each expanded or direct.

    ``P`` and ``S`` bound the positions' and the signal's terms; ``expanded_sides`` of the two computations
    expand the squares (the head), the others square differences (the filter). Folding the temperatures
    into W_Q and adding the two terms round 4 times more, on the scores' size.
    """
    direct = 2 - expanded_sides
    return (expanded_sides * (square_scores_error(P, tau_p) + square_scores_error(S, tau_s))
            + direct * (square_scores_error(P, tau_p, expanded=False) + square_scores_error(S, tau_s, expanded=False))
            + rounding(4, 4 * P**2 / tau_p + 4 * S**2 / tau_s))


def bilateral_filter(signal, positions, tau_p, tau_s):
    """The bilateral filter written directly: a weighted mean, one output at a time."""
    out = np.empty(len(signal))
    for i in range(len(signal)):
        log_w = -((positions[i] - positions) ** 2) / tau_p - (signal[i] - signal) ** 2 / tau_s
        w = np.exp(log_w - log_w.max())
        out[i] = np.sum(w * signal) / np.sum(w)
    return out


@given(signals_on_positions(), position_temperatures, signal_temperatures)
def test_bilateral_head_equals_a_directly_written_bilateral_filter(sig_pos, tau_p, tau_s):
    signal, p = sig_pos
    output, weights = bilateral.bilateral_head(signal, p, tau_p, tau_s)
    assert output.shape == (len(p),) and weights.shape == (len(p), len(p))
    # The head centres positions and signal; the filter's differences round on their own size.
    gap = squares_gap(half_spread(p), tau_p, half_spread(signal), tau_s)
    atol = average_atol(len(p), np.abs(signal), gap)
    np.testing.assert_allclose(output, bilateral_filter(signal, p, tau_p, tau_s), rtol=0, atol=atol)
    # Normalising (n - 1 additions, a division) and summing again (n - 1): 2 n roundings on at most 1.
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=0, atol=rounding(2 * len(p)))


@given(signals_on_positions(), position_temperatures, signal_temperatures)
def test_projections_score_pairs_by_both_distances(sig_pos, tau_p, tau_s):
    signal, p = sig_pos
    X = bilateral.content_features(signal, p)
    W_Q, W_K, W_V = bilateral.bilateral_head_weights(tau_p, tau_s)
    expected = -((p[:, None] - p) ** 2) / tau_p - (signal[:, None] - signal) ** 2 / tau_s
    # Not centred here: the expanded squares' terms are as large as max|p|**2 and max|s|**2.
    atol = squares_gap(np.abs(p).max(), tau_p, np.abs(signal).max(), tau_s)
    np.testing.assert_allclose((X @ W_Q) @ (X @ W_K).T, expected, rtol=0, atol=atol)
    np.testing.assert_array_equal(X @ W_V, signal[:, None])  # W_V copies a column: s * 1 + 0 + ..., exactly


#: A dyadic grid and signal: adding 1e6 or 2**30 to them is exact, so the shifted head must equal the head.
GRID = np.arange(64) / 64
DYADIC_SIGNAL = np.round(np.sin(2 * np.pi * GRID) * 256) / 256


@pytest.mark.parametrize("offset", [1e6, 2.0**30])
def test_far_from_the_origin_the_bilateral_head_is_still_the_bilateral_filter(offset):
    """Before centring, the weights were off by 0.07 at 1e6 and by 1.0 at 2**30: the squares cancel in the scores."""
    tau_p, tau_s = 1e-3, 0.05
    output, weights = bilateral.bilateral_head(DYADIC_SIGNAL + offset, GRID + offset, tau_p, tau_s)
    near_output, near_weights = bilateral.bilateral_head(DYADIC_SIGNAL, GRID, tau_p, tau_s)
    # Exactly: the shift and the centring of a dyadic grid and signal are exact, so no distance changed.
    np.testing.assert_array_equal(weights, near_weights)
    # The values are the shifted signal: averages of numbers near the offset (weights summing to 1 within
    # 2 n eps), less the offset once more.
    atol = average_atol(64, np.abs(DYADIC_SIGNAL).max() + offset) + rounding(1, offset)
    np.testing.assert_allclose(output - offset, near_output, rtol=0, atol=atol)
    gap = squares_gap(half_spread(GRID), tau_p, half_spread(DYADIC_SIGNAL), tau_s)
    atol = average_atol(64, np.abs(DYADIC_SIGNAL), gap)
    np.testing.assert_allclose(near_output, bilateral_filter(DYADIC_SIGNAL, GRID, tau_p, tau_s), rtol=0, atol=atol)


def test_a_huge_signal_temperature_gives_back_the_gaussian_head():
    p, _, s = sa.noisy_sine(40, 0.3, rng=1)
    output, _ = bilateral.bilateral_head(s, p, 0.01, 1e12)
    # Not rounding alone: the signal's term moves the scores by (s_i - s_j)**2 / 1e12 at most; the two heads'
    # expanded squares round besides.
    gap = (2 * half_spread(s)) ** 2 / 1e12 + squares_gap(half_spread(p), 0.01, half_spread(s), 1e12, expanded_sides=2)
    np.testing.assert_allclose(output, sa.gaussian_head(s, p, 0.01)[0], rtol=0, atol=average_atol(40, np.abs(s), gap))


def test_the_blocks_are_chapter_4s_applied_to_positions_and_to_the_signal():
    W_Q, W_K, _ = bilateral.bilateral_head_weights(1.0, 1.0)
    G_Q, G_K, _ = sa.gaussian_head_weights()
    rows = {name: k for k, name in enumerate(bilateral.FEATURES)}
    np.testing.assert_array_equal(W_Q[[rows["p"], rows["p^2"], rows["1"]], :3], G_Q[1:])
    np.testing.assert_array_equal(W_K[[rows["s"], rows["s^2"], rows["1"]], 3:], G_K[1:])
    W_Q2, W_K2, _ = bilateral.bilateral_head_weights(0.5, 4.0)
    np.testing.assert_array_equal(W_Q2, W_Q / np.array([0.5] * 3 + [4.0] * 3))  # powers of two: exact
    np.testing.assert_array_equal(W_K2, W_K)


def test_content_features_columns():
    np.testing.assert_array_equal(bilateral.content_features([2.0, 3.0], [0.0, 0.5]),  # dyadic squares: exact
                                  [[2, 4, 0, 0, 1], [3, 9, 0.5, 0.25, 1]])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: bilateral.bilateral_head([1.0, 2.0], [0.0], 1.0, 1.0), "signal and positions must have the same"),
        (lambda: bilateral.bilateral_head([], [], 1.0, 1.0), "at least one value"),
        (lambda: bilateral.bilateral_head([1.0], [0.0], 0.0, 1.0), "temperature must be positive"),
        (lambda: bilateral.bilateral_head([1.0], [0.0], 1.0, -1.0), "signal_temperature must not be negative"),
        (lambda: bilateral.bilateral_head([1.0], [0.0], 1.0, np.inf), "signal_temperature must be finite"),
        (lambda: bilateral.bilateral_head([[1.0]], [0.0], 1.0, 1.0), "signal must be 1-dimensional"),
        (lambda: bilateral.bilateral_head([1.0], [np.nan], 1.0, 1.0), "positions contains NaN"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
