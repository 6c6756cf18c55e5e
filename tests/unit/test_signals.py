"""noisy_sine, unit_noise and step_sine: shapes, reproducibility and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import rounding

import selfattention as sa
from selfattention.signals import step_sine


def test_noisy_sine_shapes_positions_and_clean_signal():
    p, clean, noisy = sa.noisy_sine(5, 0.0, rng=0)
    np.testing.assert_array_equal(p, [0, 0.25, 0.5, 0.75, 1])  # dyadic: exact
    np.testing.assert_array_equal(clean, np.sin(2 * np.pi * p))  # one period: the same operations
    np.testing.assert_array_equal(noisy, clean)  # clean + 0 * z


def test_noisy_sine_periods():
    p, clean, _ = sa.noisy_sine(9, 0.0, periods=2, rng=0)
    # The package reduces the phase 2 p modulo 1 exactly; 4 pi p rounds 4 pi and the product, on 4 pi; the
    # two sines are 1 ulp each.
    np.testing.assert_allclose(clean, np.sin(4 * np.pi * p), rtol=0, atol=rounding(2, 4 * np.pi) + rounding(2))


def test_noise_has_the_requested_standard_deviation():
    _, clean, noisy = sa.noisy_sine(20000, 0.7, rng=3)
    assert abs(np.std(noisy - clean) - 0.7) < 0.02  # not rounding: 20000 draws, a standard error of 0.0035


def test_same_seed_same_noise_and_generators_are_accepted():
    a = sa.noisy_sine(50, 0.3, rng=42)[2]
    b = sa.noisy_sine(50, 0.3, rng=np.random.default_rng(42))[2]
    c = sa.noisy_sine(50, 0.3, rng=43)[2]
    np.testing.assert_array_equal(a, b)  # the same draws through the same operations
    assert not np.array_equal(a, c)


def test_noise_is_a_prefix_of_the_longest_draw():
    """The in-page explorer relies on this: one exported draw serves every n."""
    z = sa.unit_noise(1000, 7)
    for n in (1, 13, 100, 999):
        _, clean, noisy = sa.noisy_sine(n, 0.4, rng=7)
        np.testing.assert_array_equal(noisy, clean + 0.4 * z[:n])  # the same operations on the same draws


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


# --- the step sine -----------------------------------------------------------------


def test_step_sine_is_a_sine_raised_from_the_jump_on():
    p, clean, noisy = step_sine(11, 0.0, jump=2.0, at=0.45)
    np.testing.assert_array_equal(p, np.linspace(0, 1, 11))  # noisy_sine's positions
    expected = np.sin(2 * np.pi * p) + np.where(p >= 0.45, 2.0, 0.0)
    np.testing.assert_array_equal(clean, expected)  # one period, a jump of 2 * 1 or 2 * 0: the same operations
    np.testing.assert_array_equal(noisy, clean)


def test_a_negative_jump_is_a_drop_and_the_default_is_at_the_middle():
    p, clean, _ = step_sine(101, 0.0, jump=-1.0)
    # sin(pi) is 1.2e-16, not 0, on either side: 3 roundings on 1.
    assert clean[50] - np.sin(np.pi) == pytest.approx(-1.0, rel=0, abs=rounding(3))
    assert clean[49] == np.sin(2 * np.pi * p[49])  # before the jump: the same operations


def test_step_sine_noise_is_the_same_as_noisy_sines():
    _, clean, noisy = step_sine(50, 0.4, rng=9)
    _, clean_sine, noisy_sine = sa.noisy_sine(50, 0.4, rng=9)
    # The step added to both and the differences: 2 roundings on max|noisy| on either side.
    np.testing.assert_allclose(noisy - clean, noisy_sine - clean_sine, rtol=0, atol=rounding(2, np.abs(noisy).max()))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(n=0, sigma=0.1), "n must be at least 1"),
        (dict(n=5, sigma=-0.1), "sigma must not be negative"),
        (dict(n=5, sigma=0.1, jump=np.nan), "jump must be finite"),
        (dict(n=5, sigma=0.1, jump="1"), "jump must be a real number"),
        (dict(n=5, sigma=0.1, at=True), "at must be a real number"),
        (dict(n=5, sigma=0.1, at=np.inf), "at must be finite"),
    ],
)
def test_step_sine_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        step_sine(**kwargs)
