"""noisy_sine and unit_noise: shapes, reproducibility and bad input."""

from __future__ import annotations

import numpy as np
import pytest

import selfattention as sa


def test_noisy_sine_shapes_positions_and_clean_signal():
    p, clean, noisy = sa.noisy_sine(5, 0.0, rng=0)
    np.testing.assert_allclose(p, [0, 0.25, 0.5, 0.75, 1])
    np.testing.assert_allclose(clean, np.sin(2 * np.pi * p), atol=1e-15)
    np.testing.assert_array_equal(noisy, clean)


def test_noisy_sine_periods():
    p, clean, _ = sa.noisy_sine(9, 0.0, periods=2, rng=0)
    np.testing.assert_allclose(clean, np.sin(4 * np.pi * p), atol=1e-15)


def test_noise_has_the_requested_standard_deviation():
    _, clean, noisy = sa.noisy_sine(20000, 0.7, rng=3)
    assert abs(np.std(noisy - clean) - 0.7) < 0.02


def test_same_seed_same_noise_and_generators_are_accepted():
    a = sa.noisy_sine(50, 0.3, rng=42)[2]
    b = sa.noisy_sine(50, 0.3, rng=np.random.default_rng(42))[2]
    c = sa.noisy_sine(50, 0.3, rng=43)[2]
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_noise_is_a_prefix_of_the_longest_draw():
    """The in-page explorer relies on this: one exported draw serves every n."""
    z = sa.unit_noise(1000, 7)
    for n in (1, 13, 100, 999):
        _, clean, noisy = sa.noisy_sine(n, 0.4, rng=7)
        np.testing.assert_allclose(noisy, clean + 0.4 * z[:n], rtol=0, atol=1e-15)


def test_single_sample():
    p, _, _ = sa.noisy_sine(1, 0.0)
    np.testing.assert_array_equal(p, [0.0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(n=0, sigma=0.1), "n must be at least 1"),
        (dict(n=2.5, sigma=0.1), "n must be an integer"),
        (dict(n=10, sigma=-0.1), "sigma must not be negative"),
        (dict(n=10, sigma=np.nan), "sigma must be finite"),
        (dict(n=10, sigma=0.1, periods=np.inf), "periods must be finite"),
    ],
)
def test_noisy_sine_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        sa.noisy_sine(**kwargs)
