"""No silent NaN or inf: the cases of issue 14, each now a correct finite answer or a clear ValueError.

The property over every public function and the whole double range is in
``test_input_audit.py``; these are the calls the issue reported.
"""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import average_atol, mse_atol, rounding

import selfattention as sa
from selfattention import learning
from selfattention.studies import content_attention as ca
from selfattention.studies import jackknife as jk
from selfattention.studies import learned_head as lh
from selfattention.studies import noise2noise as n2n
from selfattention.studies.onedim import onedim_head
from selfattention.studies.power_laws import fit_power_law
from selfattention.studies.temperature_limits import temperature_sweep
from selfattention.training import FitResult, fit_head


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
    # The phase is reduced exactly (rational arithmetic); 2 pi times 1/4 and its sine round, on 1.
    assert clean[1] == pytest.approx(1.0, rel=0, abs=rounding(4))


def test_leave_one_out_of_a_huge_signal_is_the_scaled_one_or_refused():
    p, _, y = sa.noisy_sine(30, 0.3, rng=1)
    best, scores = sa.choose_temperature(y, p)
    huge_best, huge_scores = sa.choose_temperature(1e154 * y, p)  # each square overflows, the mean does not
    assert np.isfinite(huge_scores).all()
    # The package scales the signal by a power of two, exactly: the same computation but for the rounding of
    # 1e154 y (an ulp of each value, moving the predictions by as much), of 1e308 and of the division by it.
    scale = np.abs(y).max()
    atol = mse_atol(30, 2 * scale, average_atol(29, scale) + rounding(1, scale)) + rounding(2, scores)
    np.testing.assert_allclose(huge_scores / 1e308, scores, rtol=0, atol=atol)
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
        # A constant signal: the output is the constant (clipped to the values' range), its mean 6 copies
        # summed (scaled) and divided: n + 2 roundings on it.
        assert (sweep["mean_gap"] <= rounding(6 + 2, signal[0])).all()


# --- found by the audit in the functions of chapters 8 and 9 -------------------------------------


def test_a_fitted_prefactor_that_underflows_is_refused_by_the_callers_argument():
    """exp(-5280) is 0: PowerLaw refused it as 'prefactor', an argument the caller never passed.

    The prefactor is the law at n = 1 and sigma = 1, fitted from ns and sigmas as much as from best; in
    error_fits, best is a grid's (the input audit drew ns and sigmas near 1e300: 'best' named no argument).
    """
    best = [[1e-300, 1e-300], [1e300, 1e300]]
    with pytest.raises(ValueError, match=r"^ns, sigmas and best: the fitted prefactor exp\(-5280\)"):
        fit_power_law([10, 20], [0.1, 0.2], best)
    grids = {("one head", "measured"): ({"interior": best}, {"interior": [[0.1, 0.1], [0.2, 0.2]]})}
    with pytest.raises(ValueError, match=r"^grids: ns, sigmas and best: the fitted prefactor exp\(-5280\)"):
        jk.error_fits(grids, [10, 20], [0.1, 0.2])


def test_distances_and_gaps_near_the_largest_double_are_exact_not_inf():
    """|p_i - p_j| = 1.6e308 and ||a - b|| = 4e308 overflowed; scaled by a power of two they do not."""
    swap = np.array([[0.0, 1.0], [1.0, 0.0]])
    assert sa.metrics.mean_attended_distance(swap, [-8e307, 8e307]) == 1.6e308
    with pytest.raises(ValueError, match=r"^positions: "):
        sa.metrics.mean_attended_distance(swap, [-1e308, 1e308])
    assert lh.relative_gap(np.full(4, 1e308), np.full(4, -1e308)) == 2.0
    signals = ca.step_signals(2, 8, 0.2, rng=1)
    errors = ca.region_errors(signals.clean + 1e200, signals, width=0.2)
    # clean + 1e200 is 1e200; the RMSE of 16 errors of 1e200 (scaled, squared, averaged, rooted, scaled back).
    assert errors == pytest.approx({"whole": 1e200, "near": 1e200, "away": 1e200}, rel=rounding(16 + 4), abs=0)


def test_training_on_tokens_whose_scores_overflow_is_refused():
    X = learning.token_features(np.linspace(0, 1, 6)) * 1e200
    with pytest.raises(ValueError, match=r"overflows the double range"):
        learning.attention_loss_and_grad(np.ones((3, 2)), np.ones((3, 2)), X, np.zeros(6))


def test_temperatures_read_off_a_head_that_has_none_are_refused():
    """A zero entry of W_QK, or a row whose score is linear in the key, has no finite temperature."""
    with pytest.raises(ValueError, match=r"^fit: "):
        n2n.read_temperatures(FitResult(np.zeros((5, 2)), np.zeros((5, 2)), np.zeros(1), 0.0))
    with pytest.raises(ValueError, match=r"lambda_2 = 0"):
        lh.row_gaussians(np.eye(3), np.zeros((3, 3)), np.linspace(0, 1, 5))


def test_shifts_and_distances_that_overflow_are_refused_or_answered():
    """W + step past the largest double is refused by name; a jump 2e308 away is not near (it warned before)."""
    X = learning.token_features(np.linspace(0, 1, 6))
    W = np.zeros((3, 2))
    W[0, 0] = 1e308
    with pytest.raises(ValueError, match=r"^W_Q, W_K or step: an entry shifted by step overflows"):
        learning.numerical_gradient(W, np.zeros((3, 2)), X, np.zeros(6), step=1e308)
    np.testing.assert_array_equal(ca.near_jump([1e308, 0.5], [-1e308], 0.1), [[False, False]])


def test_a_step_size_that_makes_training_diverge_is_named():
    p, _, y = sa.noisy_sine(6, 0.3, rng=0)
    y[0] = 3.4e38
    with pytest.raises(ValueError, match=r"^learning_rate: training diverged"):
        fit_head(learning.token_features(p), y, steps=2, learning_rate=1e300, optimizer="gd", rng=1)
    with pytest.raises(ValueError, match=r"^learning_rates: "):
        lh.gradient_descent_runs(p, y, [0.1, 2.4e233], steps=2, rng=1)
