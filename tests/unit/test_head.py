"""The engineered head: features, weights, scores and the smoother it is."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from strategies import positions, signals_on_positions, temperatures

import selfattention as sa


def gaussian_kernel_smoother(signal, positions, temperature):
    """A Gaussian kernel smoother written directly, with no attention code."""
    out = np.empty(len(signal))
    for i, p_i in enumerate(positions):
        k = np.exp(-((p_i - positions) ** 2 - np.min((p_i - positions) ** 2)) / temperature)
        out[i] = np.sum(k * signal) / np.sum(k)
    return out


def test_positional_features_columns():
    X = sa.positional_features([5.0, 6.0, 7.0], [0.0, 0.5, 2.0])
    np.testing.assert_array_equal(X, [[5, 0, 0, 1], [6, 0.5, 0.25, 1], [7, 2, 4, 1]])


def test_gaussian_head_weights_shapes_and_values():
    W_Q, W_K, W_V = sa.gaussian_head_weights()
    assert (W_Q.shape, W_K.shape, W_V.shape) == ((4, 3), (4, 3), (4, 1))
    np.testing.assert_array_equal(W_V[:, 0], [1, 0, 0, 0])
    np.testing.assert_allclose(W_Q[1, 0] * W_K[1, 0], 2.0)


@given(positions)
def test_engineered_scores_are_minus_squared_distance(p):
    X = sa.positional_features(np.zeros_like(p), p)
    W_Q, W_K, _ = sa.gaussian_head_weights()
    scores = (X @ W_Q) @ (X @ W_K).T
    np.testing.assert_allclose(scores, -((p[:, None] - p[None, :]) ** 2), atol=1e-12)


@given(signals_on_positions(), temperatures)
def test_gaussian_head_equals_a_directly_written_kernel_smoother(sig_pos, tau):
    signal, p = sig_pos
    output, weights = sa.gaussian_head(signal, p, tau)
    assert output.shape == (len(p),) and weights.shape == (len(p), len(p))
    np.testing.assert_allclose(output, gaussian_kernel_smoother(signal, p, tau), rtol=1e-9, atol=1e-9)


def test_gaussian_head_on_a_constant_signal_returns_it():
    p = np.linspace(0, 1, 20)
    output, _ = sa.gaussian_head(np.full(20, 3.5), p, 0.01)
    np.testing.assert_allclose(output, 3.5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sa.positional_features([1.0, 2.0], [0.0]), "signal and positions must have the same length"),
        (lambda: sa.positional_features([], []), "at least one value"),
        (lambda: sa.positional_features([[1.0]], [0.0]), "signal must be 1-dimensional"),
        (lambda: sa.positional_features([1.0], [np.nan]), "positions contains NaN"),
        (lambda: sa.gaussian_head([1.0], [0.0], 0), "temperature must be positive"),
        (lambda: sa.gaussian_head([1.0], [0.0], -2.0), "temperature must not be negative"),
        (lambda: sa.gaussian_head([np.inf], [0.0], 1.0), "signal contains infinite"),
    ],
)
def test_head_rejects_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
