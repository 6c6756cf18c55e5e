"""studies.content_attention: step signals, errors near and away from the jump, the heads on them; bad input."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import average_atol, half_spread, rounding, square_scores_error

import selfattention as sa
from selfattention.bilateral import bilateral_head
from selfattention.signals import step_sine
from selfattention.studies import content_attention as ca


def test_step_signals_draw_jumps_in_range_and_two_independent_draws():
    signals = ca.step_signals(6, 40, 0.3, jump=2.0, low=0.3, high=0.6, rng=1)
    assert signals.clean.shape == signals.noisy.shape == signals.second.shape == (6, 40)
    assert np.all((signals.jumps >= 0.3) & (signals.jumps <= 0.6))
    for k, at in enumerate(signals.jumps):
        np.testing.assert_array_equal(signals.clean[k], step_sine(40, 0.0, jump=2.0, at=at)[1])  # the same call
    noise, second = signals.noisy - signals.clean, signals.second - signals.clean
    assert abs(np.corrcoef(noise.ravel(), second.ravel())[0, 1]) < 0.15
    again = ca.step_signals(6, 40, 0.3, jump=2.0, low=0.3, high=0.6, rng=1)
    np.testing.assert_array_equal(again.second, signals.second)  # the same draws through the same operations


def test_without_steps_keeps_the_noise_and_removes_the_jumps():
    signals = ca.step_signals(3, 40, 0.3, jump=2.0, rng=4)
    sines = ca.without_steps(signals)
    # The clean and noisy signals, the step taken out and put back, the two differences: 6 roundings on the
    # signals' size.
    scale = np.abs(signals.noisy).max() + np.abs(signals.clean).max()
    np.testing.assert_allclose(sines - np.sin(2 * np.pi * signals.positions), signals.noisy - signals.clean,
                               rtol=0, atol=rounding(6, scale))


def test_region_errors_split_the_tokens_by_their_distance_to_the_jump():
    signals = ca.step_signal(11, 0.0, jump=1.0, at=0.5, rng=0)  # positions 0, 0.1, ..., 1
    estimates = signals.clean.copy()
    estimates[0, 5] += 2.0  # p = 0.5, right at the jump
    errors = ca.region_errors(estimates, signals, width=0.05)
    assert errors["away"] == 0
    # Scaled errors, their squares, a mean of n of them, a root and the scale back: n + 4 roundings, relative.
    assert errors["near"] == pytest.approx(2.0, rel=rounding(1 + 4), abs=0)
    assert errors["whole"] == pytest.approx(2.0 / np.sqrt(11), rel=rounding(11 + 4), abs=0)


def test_weight_across_on_known_matrices():
    p = np.linspace(0, 1, 5)  # the jump at 0.5 separates indices 0, 1 from 2, 3, 4
    assert ca.weight_across(np.eye(5), p, 0.5, width=0.3) == 0
    # Sums of three or two weights of 0.2 (not dyadic), their mean: 5 roundings on at most 1 on each side.
    assert ca.weight_across(np.full((5, 5), 0.2), p, 0.5, width=0.3) == pytest.approx((0.6 + 0.4 + 0.4) / 3, rel=0,
                                                                                     abs=rounding(5))
    with pytest.raises(ValueError, match="no position lies within"):
        ca.weight_across(np.eye(5), p, 2.0)


def test_weight_across_with_distances_beyond_the_largest_double():
    """A query 3.6e308 from the jump is not near it: its distance overflows to inf, with no warning."""
    p = np.array([-1.7e308, 1.0, 1.7e308])  # the jump at the last: the first two queries lie before it
    weights = np.array([[1.0, 0.0, 0.0], [0.0, 0.5, 0.5], [0.0, 0.5, 0.5]])
    # The queries at 1 and at the jump are near it (1.7e308 and 0 from it), each with 0.5 across: exact.
    assert ca.weight_across(weights, p, 1.7e308, width=1.71e308) == 0.5


def test_the_engineered_heads_on_every_signal():
    signals = ca.step_signals(3, 30, 0.2, rng=2)
    gauss = ca.gaussian_outputs(signals, 0.01)
    np.testing.assert_array_equal(gauss[1], sa.gaussian_head(signals.noisy[1], signals.positions, 0.01)[0])  # same
    # Not rounding alone: the signal's term moves the scores by (s_i - s_j)**2 / 1e12 at most; both heads expand
    # the positions' square, the bilateral head the signal's too (its terms S**2 / 1e12), and folds 1 / tau in.
    s, p = signals.noisy, signals.positions
    P, S = half_spread(p), half_spread(s)
    gap = (2 * S) ** 2 / 1e12 + 2 * square_scores_error(P, 0.01) + square_scores_error(S, 1e12)
    gap += rounding(4, 4 * P**2 / 0.01)
    np.testing.assert_allclose(ca.bilateral_outputs(signals, 0.01, 1e12), gauss, rtol=0,
                               atol=average_atol(30, np.abs(s), gap))
    np.testing.assert_array_equal(ca.bilateral_outputs(signals, 0.01, 0.5)[2],  # the same call
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
