"""Kernel regression: the Nadaraya-Watson estimator and the leave-one-out scores and choice."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import signals_on_positions
from tolerances import (
    TINY,
    assert_close,
    average_atol,
    half_spread,
    mse_atol,
    rounding,
    softmax_rtol,
    square_gap,
    square_scores_error,
)

import selfattention as sa
from selfattention import core, defaults, kernel, metrics

BOOK_TAUS = np.logspace(-3, 1, 9)


def gap(p, tau):
    """The head's expanded square against Nadaraya-Watson's direct one, on the centred positions' scale.

    Nadaraya-Watson divides by ``h = sqrt(tau / 2)`` rather than by ``tau``: ``h`` and ``tau = 2 h**2``
    are a square root or a square apart, 3 roundings more on the scaled scores (at most ``4 P**2 / tau``).
    """
    P = half_spread(p)
    return square_gap(P, tau) + rounding(3, 4 * P**2 / tau)


@pytest.fixture(scope="module")
def book_signal():
    return sa.noisy_sine(defaults.N, defaults.SIGMA, rng=defaults.SEED)


# --- the equivalence ----------------------------------------------------------


@pytest.mark.parametrize("tau", BOOK_TAUS)
def test_nadaraya_watson_is_the_head_to_rounding_on_the_book_signal(book_signal, tau):
    p, _, y = book_signal
    head_out, head_w = sa.gaussian_head(y, p, tau)
    nw_out, nw_w = sa.nadaraya_watson(p, p, y, kernel.temperature_to_bandwidth(tau))
    np.testing.assert_allclose(nw_out, head_out, rtol=0, atol=average_atol(len(p), np.abs(y), gap(p, tau)))
    np.testing.assert_allclose(nw_w, head_w, rtol=softmax_rtol(len(p), gap(p, tau)), atol=TINY)


@given(signals_on_positions(), st.floats(0.03, 30.0))
def test_nadaraya_watson_equals_the_head_on_any_signal(sig_pos, h):
    y, p = sig_pos
    nw_out, _ = sa.nadaraya_watson(p, p, y, h)
    tau = 2 * h**2
    head_out, _ = sa.gaussian_head(y, p, tau)
    np.testing.assert_allclose(nw_out, head_out, rtol=0, atol=average_atol(len(p), np.abs(y), gap(p, tau)))


def test_nadaraya_watson_uses_no_attention_code(monkeypatch, book_signal):
    def forbidden(*args, **kwargs):
        raise AssertionError("nadaraya_watson must not call the attention code")

    monkeypatch.setattr(core, "attention", forbidden)
    monkeypatch.setattr(core, "softmax", forbidden)
    p, _, y = book_signal
    estimate, weights = sa.nadaraya_watson([0.5, 0.123], p, y, 0.05)
    assert estimate.shape == (2,) and weights.shape == (2, len(p))
    # Normalising (n - 1 additions, a division) and summing again (n - 1): 2 n roundings on at most 1.
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=0, atol=rounding(2 * len(p)))


def test_nadaraya_watson_at_a_query_between_samples_is_a_weighted_mean():
    estimate, weights = sa.nadaraya_watson([0.5], [0.0, 1.0], [2.0, 4.0], 0.3)
    np.testing.assert_array_equal(weights, [[0.5, 0.5]])  # two equal distances: exp(0) / (1 + 1), exactly
    np.testing.assert_array_equal(estimate, [3.0])  # 0.5 * 2 + 0.5 * 4: exact


@given(st.floats(1e-4, 1e2))
def test_temperature_to_bandwidth_inverts_tau_equals_2_h_squared(h):
    # h**2, 2 h**2, / 2 (exact) and the square root: 3 roundings, relative to h.
    assert kernel.temperature_to_bandwidth(2 * h**2) == pytest.approx(h, rel=rounding(3), abs=0)


@given(st.floats(1e-6, 1e2))
def test_bandwidth_to_temperature_inverts_temperature_to_bandwidth(tau):
    # tau / 2 and doubling are exact; the root and the square round, 2 roundings relative (the root's twice).
    assert kernel.bandwidth_to_temperature(kernel.temperature_to_bandwidth(tau)) == pytest.approx(tau, rel=rounding(2),
                                                                                                  abs=0)


def test_bandwidth_to_temperature_gives_rows_of_that_width():
    """The head at tau = 2 h**2 has rows of standard deviation h (a dense grid, the middle row)."""
    p = np.linspace(0.0, 1.0, 1001)
    _, weights = sa.gaussian_head(np.zeros_like(p), p, kernel.bandwidth_to_temperature(0.05))
    # Not rounding: the sums over the grid (spacing 1e-3) approximate the Gaussian's integrals.
    assert metrics.row_moments(weights[500:501], p)[1][0] == pytest.approx(0.05, rel=1e-6)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sa.nadaraya_watson([0.0], [0.0, 1.0], [1.0], 0.1), "x and y must have the same length"),
        (lambda: sa.nadaraya_watson([0.0], [], [], 0.1), "x must hold at least one sample"),
        (lambda: sa.nadaraya_watson([0.0], [0.0], [1.0], 0.0), "bandwidth must be positive"),
        (lambda: sa.nadaraya_watson([[0.0]], [0.0], [1.0], 0.1), "x_query must be 1-dimensional"),
        (lambda: kernel.temperature_to_bandwidth(-1.0), "temperature must not be negative"),
        (lambda: kernel.bandwidth_to_temperature(0.0), "bandwidth must be positive"),
        (lambda: sa.choose_temperature([1.0, 2.0], [0.0, 1.0], []), "candidates must hold at least one"),
        (lambda: sa.choose_temperature([1.0, 2.0], [0.0, 1.0], [0.1, 0.0]), "candidates must all be positive"),
        (lambda: sa.choose_temperature([1.0, 2.0], [0.0], [0.1]), "signal and positions must have the same length"),
        (lambda: sa.choose_temperature([[1.0, 2.0]], [0.0, 1.0]), "signal must be 1-dimensional"),
        (lambda: kernel.leave_one_out_scores([1.0], [0.0]), "n >= 2"),
    ],
)
def test_kernel_functions_reject_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- leave-one-out --------------------------------------------------------------


def masked_head_leave_one_out(y, p, tau):
    """One temperature at a time: the head with its diagonal masked, as the chapter defines it."""
    off_diagonal = ~np.eye(len(y), dtype=bool)  # (n, n)
    prediction, _ = sa.gaussian_head(y, p, tau, mask=off_diagonal)
    return float(np.mean((y - prediction) ** 2))


def literal_leave_one_out(y, p, tau):
    """Remove each sample in turn and estimate it from the rest, by the formula."""
    h = kernel.temperature_to_bandwidth(tau)
    errors = []
    for i in range(len(y)):
        rest = np.arange(len(y)) != i
        estimate, _ = sa.nadaraya_watson([p[i]], p[rest], y[rest], h)
        errors.append((y[i] - estimate[0]) ** 2)
    return float(np.mean(errors))


def loo_atol(y, p, taus, *, against_the_head):
    """How far the package's leave-one-out errors can be from the masked head's, or from the literal ones'.

    The package squares the centred differences directly (centring: 1 rounding more on ``4 P**2 / tau``);
    the masked head expands the square; the literal estimates are Nadaraya-Watson's (``h``: 3 more).
    """
    P, n = half_spread(p), len(y)
    package = np.array([square_scores_error(P, tau, expanded=False) + rounding(1, 4 * P**2 / tau) for tau in taus])
    other = np.array([square_scores_error(P, tau, expanded=against_the_head) for tau in taus])
    if not against_the_head:
        other += rounding(3, 4 * P**2 / taus)
    # Each prediction averages n - 1 values; the residuals are at most twice max|y|.
    return np.array([mse_atol(n, 2 * np.abs(y).max(), average_atol(n - 1, np.abs(y), gap))
                     for gap in package + other])


def test_leave_one_out_is_the_head_with_its_diagonal_masked(book_signal):
    p, _, y = book_signal
    taus = np.logspace(-4, 1, 11)
    scores = kernel.leave_one_out_scores(y, p, taus)
    masked = [masked_head_leave_one_out(y, p, tau) for tau in taus]
    literal = [literal_leave_one_out(y, p, tau) for tau in taus]
    assert_close(scores, masked, loo_atol(y, p, taus, against_the_head=True))
    assert_close(scores, literal, loo_atol(y, p, taus, against_the_head=False))


def test_leave_one_out_scores_batches_signals_and_blocks_of_candidates(monkeypatch):
    p = np.linspace(0, 1, 40)
    signals = np.array([sa.noisy_sine(40, s, rng=3)[2] for s in (0.1, 0.5, 1.0)])  # (3, 40)
    taus = np.logspace(-5, 0, 23)
    together = kernel.leave_one_out_scores(signals, p, taus)
    monkeypatch.setattr(kernel, "_BLOCK", 40 * 40 * 5)  # blocks of 5 candidates
    in_blocks = kernel.leave_one_out_scores(signals, p, taus)
    one_by_one = np.array([kernel.leave_one_out_scores(y, p, taus) for y in signals])
    assert together.shape == (3, 23)
    # The same scores and exponentials; the products with the signals and the sums are blocked otherwise.
    scale = np.abs(signals).max()
    atol = mse_atol(40, 2 * scale, average_atol(39, scale))
    np.testing.assert_allclose(in_blocks, together, rtol=0, atol=atol)
    np.testing.assert_allclose(one_by_one, together, rtol=0, atol=atol)


def test_without_the_mask_the_smallest_temperature_always_wins(book_signal):
    p, _, y = book_signal
    taus = np.logspace(-6, 1, 29)
    unmasked = [np.mean((y - sa.gaussian_head(y, p, tau)[0]) ** 2) for tau in taus]
    masked = kernel.leave_one_out_scores(y, p, taus)
    assert np.argmin(unmasked) == 0
    assert 0 < np.argmin(masked) < len(taus) - 1


def test_choose_temperature_returns_the_candidate_with_the_lowest_score(book_signal):
    p, _, y = book_signal
    best, scores = sa.choose_temperature(y, p)
    assert scores.shape == kernel.DEFAULT_CANDIDATES.shape
    assert best == kernel.DEFAULT_CANDIDATES[np.argmin(scores)]
    assert_close(scores.min(), masked_head_leave_one_out(y, p, best), loo_atol(y, p, [best], against_the_head=True))
    best_of_two, _ = sa.choose_temperature(y, p, [best, best])
    assert best_of_two == best


@settings(max_examples=20)
@given(st.integers(3, 60), st.floats(0.05, 1.0), st.integers(0, 2**32 - 1))
def test_choose_temperature_picks_the_masked_heads_best(n, sigma, seed):
    p, _, y = sa.noisy_sine(n, sigma, rng=seed)
    taus = np.logspace(-5, 1, 13)
    best, scores = sa.choose_temperature(y, p, taus)
    loop = np.array([masked_head_leave_one_out(y, p, tau) for tau in taus])
    assert_close(scores, loop, loo_atol(y, p, taus, against_the_head=True))  # the scores are the masked head's
    least = scores.min()  # and the rule, applied to them, is exact:
    assert scores[taus == best][0] <= least * (1 + kernel.TIE_TOLERANCE), "the choice is tied with the least error"
    assert (scores[taus > best] > least * (1 + kernel.TIE_TOLERANCE)).all(), "no larger temperature is as good"


def test_leave_one_out_estimates_noise_plus_error_on_average():
    """E[LOO(tau)] ~ sigma**2 + MSE(tau): the claim that makes the rule work."""
    from selfattention.studies import bias_variance as bv

    n, sigma, taus = 100, 0.3, np.array([1e-3, 3e-3, 1e-2, 3e-2])
    p = np.linspace(0, 1, n)
    signals = np.array([sa.noisy_sine(n, sigma, rng=seed)[2] for seed in range(200)])
    mean_loo = kernel.leave_one_out_scores(signals, p, taus).mean(axis=0)  # (4,)
    expected = sigma**2 + sum(bv.expected_risk(n, sigma, taus))
    # Not rounding: 200 draws of 100 squared residuals leave the mean a standard error near 1% of sigma**2,
    # and leaving sample i out changes its estimate by O(1/n).
    np.testing.assert_allclose(mean_loo, expected, rtol=0.05)



def test_the_default_candidates_are_the_same_without_numpys_simd_loops():
    """The explorer embeds the candidates of the machine that built the site; the widget computes its own.

    np.logspace gave 5 of them one ulp apart with numpy's AVX2 and AVX512 loops switched off.
    """
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    off = " ".join(target for target in __cpu_dispatch__ if __cpu_features__.get(target))
    env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": off}
    code = "from selfattention import kernel; print(kernel.DEFAULT_CANDIDATES.tobytes().hex())"
    there = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert there.stdout.strip() == kernel.DEFAULT_CANDIDATES.tobytes().hex()
    assert kernel.DEFAULT_CANDIDATES[[0, 120, 140]].tolist() == [1e-6, 1.0, 10.0]


@pytest.mark.parametrize(("n", "sigma"), [(5, 0.6), (6, 0.0), (8, 0.3), (20, 0.1), (50, 0.0), (100, 0.0)])
def test_on_a_rounding_tie_the_largest_temperature_wins(n, sigma):
    """Errors within a relative 1e-9 differ by rounding only: the largest tied tau (the smoothest output) wins.

    On a tie the first candidate used to win, and which one that was depended
    on rounding, so the explorer and the package could disagree.
    """
    p, _, y = sa.noisy_sine(n, sigma, rng=defaults.SEED)
    best, scores = sa.choose_temperature(y, p)
    tied = scores <= scores.min() * (1 + 1e-9)
    assert tied.sum() > 1, "a tie"
    assert best == kernel.DEFAULT_CANDIDATES[tied].max()
    assert kernel.pick_temperature(scores, kernel.DEFAULT_CANDIDATES) == best
    batch = np.array([scores, scores[::-1]])  # rows of several signals; reversed candidates
    np.testing.assert_array_equal(kernel.pick_temperature(batch, kernel.DEFAULT_CANDIDATES),
                                  [best, kernel.DEFAULT_CANDIDATES[tied[::-1]].max()])
