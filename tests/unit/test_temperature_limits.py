"""The temperature's two limits: the head at several temperatures, and how close it
comes to the identity and to the uniform average."""

from __future__ import annotations

import numpy as np
import pytest

import selfattention as sa
from selfattention.metrics import distance_from_identity, distance_from_uniform
from selfattention.studies import temperature_limits

TAUS = np.logspace(-6, 4, 11)


@pytest.fixture(scope="module")
def signal():
    return sa.noisy_sine(40, 0.3, rng=2)


def test_head_at_temperatures_runs_the_head_at_each(signal):
    positions, _, noisy = signal
    outputs, weights = temperature_limits.head_at_temperatures(noisy, positions, TAUS[:3])
    assert outputs.shape == (3, 40) and weights.shape == (3, 40, 40)
    for k, tau in enumerate(TAUS[:3]):
        output, w = sa.gaussian_head(noisy, positions, tau)
        np.testing.assert_array_equal(outputs[k], output)  # the same calls
        np.testing.assert_array_equal(weights[k], w)


def test_sweep_measures_the_heads_distances_from_both_limits(signal):
    positions, _, noisy = signal
    sweep = temperature_limits.temperature_sweep(noisy, positions, TAUS)
    outputs, weights = temperature_limits.head_at_temperatures(noisy, positions, TAUS)
    # Exactly: the sweep computes these same expressions on the same weights.
    np.testing.assert_array_equal(sweep["identity"], [distance_from_identity(w) for w in weights])
    np.testing.assert_array_equal(sweep["uniform"], [distance_from_uniform(w) for w in weights])
    np.testing.assert_array_equal(sweep["input_gap"], np.max(np.abs(outputs - noisy), axis=1))
    np.testing.assert_array_equal(sweep["mean_gap"], np.max(np.abs(outputs - noisy.mean()), axis=1))


def test_the_sweep_runs_from_one_limit_to_the_other(signal):
    positions, _, noisy = signal
    sweep = temperature_limits.temperature_sweep(noisy, positions, TAUS)
    assert sweep["identity"][0] < 1e-30 and sweep["input_gap"][0] == 0, "the identity: nothing smoothed"
    assert sweep["uniform"][-1] < 1e-4 and sweep["mean_gap"][-1] < 1e-3, "uniform: a flat output"
    assert np.all(np.diff(sweep["identity"]) >= 0) and np.all(np.diff(sweep["uniform"]) <= 0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: temperature_limits.temperature_sweep([0.0, 1.0], [0.0, 1.0], []), "temperatures must hold"),
        (lambda: temperature_limits.temperature_sweep([0.0, 1.0], [0.0, 1.0], [0.1, -1.0]),
         "temperatures must all be positive"),
        (lambda: temperature_limits.temperature_sweep([[0.0, 1.0]], [0.0, 1.0], [0.1]), "signal must be 1-dimensional"),
        (lambda: temperature_limits.head_at_temperatures([0.0, 1.0], [0.0], [0.1]),
         "signal and positions must have the same length"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
