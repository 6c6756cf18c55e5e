"""No silent NaN or inf: the cases of issue 14, each now a correct finite answer or a clear ValueError.

The property over every public function and the whole double range is in
``test_input_audit.py``; these are the calls the issue reported.
"""

from __future__ import annotations

import numpy as np
import pytest

import selfattention as sa
from selfattention.studies.onedim import onedim_head
from selfattention.studies.temperature_limits import temperature_sweep


def test_a_tiny_bandwidth_gives_the_nearest_samples_mean_not_nan():
    """exp(-u**2 / 2) underflows for every sample at h = 1e-200; the limit h -> 0 is the nearest sample."""
    estimate, weights = sa.nadaraya_watson([0.5], [0.0, 1.0], [1.0, 2.0], 1e-200)
    np.testing.assert_array_equal(weights, [[0.5, 0.5]])  # two nearest samples, equally near
    np.testing.assert_array_equal(estimate, [1.5])
    estimate, weights = sa.nadaraya_watson([0.4, 0.9], [0.0, 1.0], [1.0, 2.0], 1e-200)
    np.testing.assert_array_equal(weights, [[1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_array_equal(estimate, [1.0, 2.0])


def test_a_huge_number_of_periods_gives_the_exact_sine():
    """1e308 is an even integer, so sin(2 pi 1e308 p) = 0 at p = 0, 1/2, 1; 1e15 + 1/4 periods end at sin(pi/2)."""
    _, clean, noisy = sa.noisy_sine(3, 0, periods=1e308)
    np.testing.assert_array_equal(clean, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(noisy, clean)
    _, clean, _ = sa.noisy_sine(2, 0, periods=1e15 + 0.25)  # representable: the doubles near 1e15 are 1/8 apart
    assert clean[1] == pytest.approx(1.0, abs=1e-12)


def test_leave_one_out_of_a_huge_signal_is_the_scaled_one_or_refused():
    p, _, y = sa.noisy_sine(30, 0.3, rng=1)
    best, scores = sa.choose_temperature(y, p)
    huge_best, huge_scores = sa.choose_temperature(1e154 * y, p)  # each square overflows, the mean does not
    assert np.isfinite(huge_scores).all()
    np.testing.assert_allclose(huge_scores, scores * 1e308, rtol=1e-12)
    assert huge_best == best
    spike = np.zeros(30)
    spike[0] = 1e200
    with pytest.raises(ValueError, match="signal"):
        sa.choose_temperature(spike, p)  # scores near 1e398 / 30: no double holds them


def test_a_position_whose_square_overflows_is_refused():
    with pytest.raises(ValueError, match="positions"):
        sa.positional_features([1.0], [1e200])


# --- found by test_input_audit's property over the whole double range ---------------------------


def test_a_huge_number_of_periods_at_position_zero_gives_zero():
    """2 pi f overflows to inf for f = 2.9e307, and inf * 0 is NaN: the phase f p must come first."""
    np.testing.assert_array_equal(sa.signals.sine(2.8611174857570283e307, np.zeros(6)), np.zeros(6))


def test_queries_that_overflow_are_refused_even_when_the_scores_would_not():
    """w_q x_i = 1.8e308 overflows although w_q w_k x_i x_j = 9.4e307 does not: the head computes w_q x_i first."""
    signal = [0.1, 0.75, -1.05105652]
    with pytest.raises(ValueError, match=r"^signal and w_q: "):
        onedim_head(signal, w_q=1.7103677176170938e308, w_k=-0.5, w_v=2.0, temperature=0.7)


def test_a_sweep_of_a_signal_near_the_largest_double_is_finite_or_refused():
    """The mean of six values of 9e307 overflowed in the sum (and the power of two above it in ldexp)."""
    signal = np.full(6, 8.98846567e307)
    try:
        sweep = temperature_sweep(signal, np.linspace(0, 1, 6), [0.001, 0.01, 0.1])
    except ValueError as exc:
        assert str(exc).startswith("signal")
    else:
        assert all(np.isfinite(column).all() for column in sweep.values())
        assert (sweep["mean_gap"] <= 1e-15 * signal[0]).all()  # a constant signal: the output is its mean
