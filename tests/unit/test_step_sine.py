"""signals.step_sine: the clean step sine, its noise, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

import selfattention as sa
from selfattention.signals import step_sine


def test_clean_signal_is_a_sine_raised_from_the_jump_on():
    p, clean, noisy = step_sine(11, 0.0, jump=2.0, at=0.45)
    np.testing.assert_allclose(p, np.linspace(0, 1, 11))
    expected = np.sin(2 * np.pi * p) + np.where(p >= 0.45, 2.0, 0.0)
    np.testing.assert_allclose(clean, expected, atol=1e-15)
    np.testing.assert_array_equal(noisy, clean)


def test_a_negative_jump_is_a_drop_and_the_default_is_at_the_middle():
    p, clean, _ = step_sine(101, 0.0, jump=-1.0)
    assert clean[50] - np.sin(np.pi) == pytest.approx(-1.0) and clean[49] == pytest.approx(np.sin(2 * np.pi * p[49]))


def test_noise_is_the_same_as_noisy_sines():
    _, clean, noisy = step_sine(50, 0.4, rng=9)
    _, clean_sine, noisy_sine = sa.noisy_sine(50, 0.4, rng=9)
    np.testing.assert_allclose(noisy - clean, noisy_sine - clean_sine, atol=1e-15)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(n=0, sigma=0.1), "n must be at least 1"),
        (dict(n=5, sigma=-0.1), "sigma must not be negative"),
        (dict(n=5, sigma=0.1, jump=np.nan), "jump must be a finite real number"),
        (dict(n=5, sigma=0.1, jump="1"), "jump must be a finite real number"),
        (dict(n=5, sigma=0.1, at=True), "at must be a finite real number"),
        (dict(n=5, sigma=0.1, at=np.inf), "at must be a finite real number"),
    ],
)
def test_bad_input_names_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        step_sine(**kwargs)
