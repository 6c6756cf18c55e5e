"""studies.content_attention: step signals, errors near and away from the jump, the heads on them; bad input."""

from __future__ import annotations

import numpy as np
import pytest

import selfattention as sa
from selfattention.bilateral import bilateral_head
from selfattention.signals import step_sine
from selfattention.studies import content_attention as ca


def test_step_signals_draw_jumps_in_range_and_two_independent_draws():
    signals = ca.step_signals(6, 40, 0.3, jump=2.0, low=0.3, high=0.6, rng=1)
    assert signals.clean.shape == signals.noisy.shape == signals.second.shape == (6, 40)
    assert np.all((signals.jumps >= 0.3) & (signals.jumps <= 0.6))
    for k, at in enumerate(signals.jumps):
        np.testing.assert_allclose(signals.clean[k], step_sine(40, 0.0, jump=2.0, at=at)[1])
    noise, second = signals.noisy - signals.clean, signals.second - signals.clean
    assert abs(np.corrcoef(noise.ravel(), second.ravel())[0, 1]) < 0.15
    again = ca.step_signals(6, 40, 0.3, jump=2.0, low=0.3, high=0.6, rng=1)
    np.testing.assert_array_equal(again.second, signals.second)


def test_without_steps_keeps_the_noise_and_removes_the_jumps():
    signals = ca.step_signals(3, 40, 0.3, jump=2.0, rng=4)
    sines = ca.without_steps(signals)
    np.testing.assert_allclose(sines - np.sin(2 * np.pi * signals.positions), signals.noisy - signals.clean,
                               atol=1e-14)


def test_region_errors_split_the_tokens_by_their_distance_to_the_jump():
    signals = ca.step_signal(11, 0.0, jump=1.0, at=0.5, rng=0)  # positions 0, 0.1, ..., 1
    estimates = signals.clean.copy()
    estimates[0, 5] += 2.0  # p = 0.5, right at the jump
    errors = ca.region_errors(estimates, signals, width=0.05)
    assert errors["away"] == 0 and errors["near"] == pytest.approx(2.0)
    assert errors["whole"] == pytest.approx(2.0 / np.sqrt(11))


def test_weight_across_on_known_matrices():
    p = np.linspace(0, 1, 5)  # the jump at 0.5 separates indices 0, 1 from 2, 3, 4
    assert ca.weight_across(np.eye(5), p, 0.5, width=0.3) == 0
    assert ca.weight_across(np.full((5, 5), 0.2), p, 0.5, width=0.3) == pytest.approx((0.6 + 0.4 + 0.4) / 3)
    with pytest.raises(ValueError, match="no position lies within"):
        ca.weight_across(np.eye(5), p, 2.0)


def test_the_engineered_heads_on_every_signal():
    signals = ca.step_signals(3, 30, 0.2, rng=2)
    gauss = ca.gaussian_outputs(signals, 0.01)
    np.testing.assert_allclose(gauss[1], sa.gaussian_head(signals.noisy[1], signals.positions, 0.01)[0])
    np.testing.assert_allclose(ca.bilateral_outputs(signals, 0.01, 1e12), gauss, atol=1e-9)
    np.testing.assert_allclose(ca.bilateral_outputs(signals, 0.01, 0.5)[2],
                               bilateral_head(signals.noisy[2], signals.positions, 0.01, 0.5)[0])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ca.step_signals(0, 10, 0.1), "count must be at least 1"),
        (lambda: ca.step_signals(2, 10, 0.1, low=0.8, high=0.2), "low and high must satisfy"),
        (lambda: ca.step_signals(2, 10, 0.1, high=1.5), "low and high must satisfy"),
        (lambda: ca.step_signals(2, 10, -0.1), "sigma must not be negative"),
        (lambda: ca.near_jump([0.0, 1.0], [0.5], width=0), "width must be positive"),
        (lambda: ca.region_errors(np.zeros(3), ca.step_signal(3, 0.1)), "estimates must be 2-dimensional"),
        (lambda: ca.step_signal(5, 0.1, at=np.nan), "at must be finite"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
