"""The bilateral head: equal to a directly written bilateral filter, and its projections."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import signals_on_positions

import selfattention as sa
from selfattention import bilateral

signal_temperatures = st.floats(min_value=1e-2, max_value=1e2)
position_temperatures = st.floats(min_value=1e-2, max_value=1e2)


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
    np.testing.assert_allclose(output, bilateral_filter(signal, p, tau_p, tau_s), rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)


@given(signals_on_positions(), position_temperatures, signal_temperatures)
def test_projections_score_pairs_by_both_distances(sig_pos, tau_p, tau_s):
    signal, p = sig_pos
    X = bilateral.content_features(signal, p)
    W_Q, W_K, W_V = bilateral.bilateral_head_weights(tau_p, tau_s)
    expected = -((p[:, None] - p) ** 2) / tau_p - (signal[:, None] - signal) ** 2 / tau_s
    scale = max(1.0, np.abs(expected).max())
    np.testing.assert_allclose((X @ W_Q) @ (X @ W_K).T, expected, atol=1e-9 * scale)
    np.testing.assert_array_equal(X @ W_V, signal[:, None])


#: A dyadic grid and signal: adding 1e6 or 2**30 to them is exact, so the shifted head must equal the head.
GRID = np.arange(64) / 64
DYADIC_SIGNAL = np.round(np.sin(2 * np.pi * GRID) * 256) / 256


@pytest.mark.parametrize("offset", [1e6, 2.0**30])
def test_far_from_the_origin_the_bilateral_head_is_still_the_bilateral_filter(offset):
    """Before centring, the weights were off by 0.07 at 1e6 and by 1.0 at 2**30: the squares cancel in the scores."""
    tau_p, tau_s = 1e-3, 0.05
    output, weights = bilateral.bilateral_head(DYADIC_SIGNAL + offset, GRID + offset, tau_p, tau_s)
    near_output, near_weights = bilateral.bilateral_head(DYADIC_SIGNAL, GRID, tau_p, tau_s)
    np.testing.assert_allclose(weights, near_weights, rtol=0, atol=1e-12)  # no distance changed
    np.testing.assert_allclose(output - offset, near_output, rtol=0, atol=1e-13 * offset)
    np.testing.assert_allclose(near_output, bilateral_filter(DYADIC_SIGNAL, GRID, tau_p, tau_s), rtol=0, atol=1e-12)


def test_a_huge_signal_temperature_gives_back_the_gaussian_head():
    p, _, s = sa.noisy_sine(40, 0.3, rng=1)
    output, _ = bilateral.bilateral_head(s, p, 0.01, 1e12)
    np.testing.assert_allclose(output, sa.gaussian_head(s, p, 0.01)[0], atol=1e-9)


def test_the_blocks_are_chapter_4s_applied_to_positions_and_to_the_signal():
    W_Q, W_K, _ = bilateral.bilateral_head_weights(1.0, 1.0)
    G_Q, G_K, _ = sa.gaussian_head_weights()
    rows = {name: k for k, name in enumerate(bilateral.FEATURES)}
    np.testing.assert_array_equal(W_Q[[rows["p"], rows["p^2"], rows["1"]], :3], G_Q[1:])
    np.testing.assert_array_equal(W_K[[rows["s"], rows["s^2"], rows["1"]], 3:], G_K[1:])
    W_Q2, W_K2, _ = bilateral.bilateral_head_weights(0.5, 4.0)
    np.testing.assert_allclose(W_Q2, W_Q / np.array([0.5] * 3 + [4.0] * 3))
    np.testing.assert_array_equal(W_K2, W_K)


def test_content_features_columns():
    np.testing.assert_allclose(bilateral.content_features([2.0, 3.0], [0.0, 0.5]),
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
