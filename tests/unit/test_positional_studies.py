"""The studies of positional encodings and masks: sinusoidal, rotary, ALiBi and causal heads on noisy sines.

Each study is checked against the package's heads called directly, or
against a formula written out here, and the claims of theory they rest on
(a half bell's mean, the Laplace kernel's neighbours at equal width, the
next-sample error's expectation) against dense grids or Monte Carlo.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import positions, signals_on_positions
from tolerances import average_atol

import selfattention as sa
from selfattention import positional
from selfattention.core import causal_mask
from selfattention.kernel import temperature_to_bandwidth
from selfattention.metrics import effective_neighbours, mean_offset, rmse
from selfattention.studies import alibi, causal, equal_width, rotary, sinusoidal

P, F, S = sa.noisy_sine(60, 0.3, rng=5)


# --- sinusoidal -------------------------------------------------------------------------------------


def test_the_cosine_scores_are_the_sum_of_cosines_of_the_differences():
    omega, xi = np.array([np.pi, 1.0]), np.array([3.0, -2.0])
    u = P[:, None] - P[None, :]
    expected = 3.0 * np.cos(np.pi * u) - 2.0 * np.cos(u)
    # Entries below 5 in size, each off by a few eps of it: 1e-14.
    np.testing.assert_allclose(sinusoidal.cosine_scores(P, omega, xi), expected, rtol=0, atol=1e-14)


def test_the_shift_gap_of_scores_near_the_largest_double_is_finite():
    """Scores of 1.5e308 that a huge shift turns negative differ by more than the largest double: halved first.

    The angles of positions shifted by 2**51 are rounded to a fraction of a unit, so the scores move by up to
    their own size, either way: the gap, relative to the largest score, lies between 0 and 2.
    """
    gap = sinusoidal.shift_gap(np.linspace(0, 1, 6), [np.pi], [1.5e308], 2.0**51)
    assert 0 < gap <= 2


def test_the_shift_gap_sees_a_head_that_is_not_shift_invariant(monkeypatch):
    """With a key encoded at twice its position, the score is no function of p_i - p_j: the gap is large."""
    real = sinusoidal.sinusoidal_encoding
    calls = []

    def skewed(p, omega):
        calls.append(1)
        return real(p * (1 + len(calls) % 2), omega)

    monkeypatch.setattr(sinusoidal, "sinusoidal_encoding", skewed)
    assert sinusoidal.shift_gap(P, [np.pi], [1.0], 0.3) > 0.1


def test_the_frequency_sweep_runs_the_matched_heads():
    tau = 0.005
    result = sinusoidal.frequency_sweep(S, F, P, [np.pi, 3 * np.pi], tau)
    gauss_out, gauss_w = sa.gaussian_head(S, P, tau)
    for k, omega in enumerate((np.pi, 3 * np.pi)):
        out, w = positional.sinusoidal_head(S, P, [omega], [2 / (tau * omega**2)])
        assert result["rmse"][k] == rmse(out, F)
        assert result["weight_gap"][k] == np.max(np.abs(w - gauss_w))
    assert result["gaussian_rmse"] == rmse(gauss_out, F)
    assert result["rmse"][1] > 3 * result["rmse"][0], "three pi aliases the book's positions"


def test_the_relative_scores_are_the_log_weights_relative_to_the_query():
    u, tau = np.array([0.0, 0.2, 1 / 3]), 0.01
    scores = sinusoidal.relative_scores(u, [3 * np.pi], tau)
    xi = 2 / (tau * 9 * np.pi**2)
    np.testing.assert_allclose(scores[0], xi * (np.cos(3 * np.pi * u) - 1), rtol=1e-15, atol=1e-15)
    assert scores[0, 0] == 0 and scores[0, 2] == pytest.approx(-2 * xi)


# --- rotary -------------------------------------------------------------------------------------


@given(positions, st.floats(-50.0, 50.0), st.integers(0, 100))
def test_random_projections_break_the_sinusoidal_head_and_not_the_rotary_one(p, shift, seed):
    gaps = rotary.random_projection_shift_gaps(p, [np.pi, 1.0], shift, rng=seed)
    # The rotated scores are off by about 8 eps (1 + max |omega p|) of the largest pair product: 1e-12 here.
    assert gaps["rotary"] <= 1e-11
    if p.size > 1 and np.ptp(p) > 0.1 and abs(np.sin(shift / 2)) > 0.1 and abs(np.sin(np.pi * shift / 2)) > 0.1:
        assert gaps["sinusoidal"] > 1e-3  # a shift of no whole period moves a random head's scores


def test_the_long_sine_is_sampled_as_densely_and_shares_the_books_noise():
    p, clean, noisy = rotary.long_sine(100, 0.3, 3.0, period=1.2, rng=7)
    assert p.size == 298 and p[-1] == 3.0
    np.testing.assert_allclose(np.diff(p), 1 / 99, rtol=1e-12)
    np.testing.assert_allclose(clean, np.sin(2 * np.pi * p / 1.2), rtol=0, atol=1e-14)
    _, book_clean, book_noisy = sa.noisy_sine(100, 0.3, rng=7)
    np.testing.assert_allclose(noisy[:100] - clean[:100], book_noisy - book_clean, rtol=0, atol=1e-15)


def test_the_long_sine_stays_accurate_far_along():
    p, clean, _ = rotary.long_sine(3, 0.0, 2.0**19 - 1, period=0.75, rng=1)  # about 2**20 samples, up to 2**19
    exact = np.array([np.sin(2 * np.pi * float((x % 0.75) / 0.75)) for x in p[-5:]])  # fmod by hand
    np.testing.assert_allclose(clean[-5:], exact, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="between 2 and 1048576 samples"):
        rotary.long_sine(3, 0.0, 2.0**20, rng=1)


def reference_return(omegas, tau, start, stop, steps=200001):
    """The largest relative weight on a dense grid, written out: one amplitude with xi sum(omega**2) = 2 / tau."""
    u = np.linspace(start, stop, steps)
    xi = 2 / (tau * np.sum(np.square(omegas)))
    log_weight = xi * (np.cos(np.outer(u, omegas)).sum(axis=1) - len(omegas))
    return float(np.exp(log_weight.max())), float(u[np.argmax(log_weight)])


@pytest.mark.parametrize("omegas", [[np.pi], [np.pi, np.pi / 7], [np.pi, np.pi / 2.7, 0.3], [2.0, 2.0 / np.sqrt(2)]])
def test_the_largest_return_is_the_dense_grids_and_never_below_it(omegas):
    """Against a grid 40 times denser than the scan's coarse one over a short reach (the refinement makes up for it)."""
    weight, distance = rotary.largest_return(omegas, 0.01, 1.0, 12.0)
    reference, where = reference_return(np.array(omegas), 0.01, 1.0, 12.0)
    assert weight >= reference * (1 - 1e-9), "the scan finds at least what the dense grid finds"
    # The dense grid's step, 5.5e-5, misses the peak by at most xi sum(omega**2) step**2 / 8 = 200 * 4e-10 in log.
    assert weight == pytest.approx(reference, rel=1e-6)
    assert 1.0 <= distance <= 12.0
    if weight < 1 - 1e-9:  # a single peak, not a tie of exact returns
        assert abs(distance - where) < 1e-2


def test_one_frequency_and_rational_ratios_repeat_exactly_and_an_irrational_one_only_nearly():
    assert rotary.largest_return([np.pi], 0.005, 1.0, 10.0) == pytest.approx((1.0, 2.0), abs=1e-12)
    weight, distance = rotary.largest_return([np.pi, np.pi / 100], 0.005, 1.0, 1000.0)
    assert distance == pytest.approx(200.0, abs=1e-9) and weight == pytest.approx(1.0, abs=1e-12)
    irrational = [np.pi, np.pi / 10000 ** (1 / 3), np.pi / 10000 ** (2 / 3)]
    reaches = [1e1, 1e2, 1e3, 1e4]
    weights = [rotary.largest_return(irrational, 0.005, 1.0, reach)[0] for reach in reaches]
    assert all(b >= a for a, b in itertools.pairwise(weights)), "closer the farther one looks"
    assert weights[-1] > 2 * weights[0] and weights[-1] < 1 - 1e-3, "closer, never back"


def test_the_largest_return_looks_only_beyond_the_span_and_within_the_reach():
    weight, distance = rotary.largest_return([np.pi], 0.005, 0.0, 0.5)
    assert (weight, distance) == (1.0, 0.0), "from distance 0 the query itself"
    weight, distance = rotary.largest_return([np.pi], 0.005, 0.5, 1.5)
    assert distance == 0.5 and weight == pytest.approx(np.exp(-2 / (0.005 * np.pi**2) * (1 - np.cos(np.pi / 2))))
    with pytest.raises(ValueError, match="reach"):
        rotary.largest_return([np.pi], 0.005, 1.0, 1.0)
    with pytest.raises(ValueError, match="frequencies and reach"):
        rotary.largest_return([np.pi], 0.005, 1.0, 1e12)


@given(signals_on_positions(min_size=1, max_size=15), st.floats(0.0, 2.0))
def test_the_far_share_sums_the_weights_beyond_the_distance(sig_pos, distance):
    _, p = sig_pos
    _, w = sa.gaussian_head(np.zeros_like(p), p, 0.5)
    expected = [sum(w[i, j] for j in range(p.size) if abs(p[i] - p[j]) > distance) for i in range(p.size)]
    np.testing.assert_allclose(rotary.far_share(w, p, distance), expected, rtol=0, atol=1e-15)


# --- ALiBi --------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [5, 40])
def test_the_ranks_are_three_two_and_full(n):
    p = np.sort(np.random.default_rng(n).uniform(0, 1, n))
    ranks = alibi.score_ranks(p, np.pi)
    assert (ranks["gaussian"], ranks["cosine"], ranks["laplace"]) == (3, 2, n)
    assert 0 < ranks["laplace_smallest"] < 1


def test_the_loo_comparison_is_choose_temperature_for_both_kernels():
    result = alibi.loo_comparison(S, F, P)
    tau, _ = sa.choose_temperature(S, P)
    laplace, _ = sa.choose_temperature(S, P, kernel="laplace")
    assert result["temperature"] == tau and result["slope"] == 1 / laplace
    assert result["alibi_rmse"] == rmse(positional.alibi_head(S, P, 1 / laplace)[0], F)
    gaussian, alibi_errors = alibi.other_draws(60, 0.3, [5])
    assert (gaussian[0], alibi_errors[0]) == (result["gaussian_rmse"], result["alibi_rmse"])


def test_both_kernels_break_a_tie_of_leave_one_out_by_the_widest_kernel():
    """With two samples each is predicted by the other whatever the kernel: every candidate ties, the largest wins."""
    p, f, s = sa.noisy_sine(2, 0.3, rng=4)
    result = alibi.loo_comparison(s, f, p, [0.01, 0.1, 1.0])
    assert result["temperature"] == 1.0, "the largest tied temperature"
    assert result["slope"] == 1.0, "the reciprocal of the largest tied candidate: the smallest slope"


def test_at_equal_width_the_neighbours_ratio_tends_to_root_two_over_pi_as_the_grid_gets_denser():
    """h = 0.05 fixed, 5, 20 and 80 spacings wide: the middle rows' ratio closes in on sqrt(2 / pi)."""
    rows = [alibi.neighbours_at_equal_width(np.linspace(0, 1, n), 0.005) for n in (101, 401, 1601)]
    gaps = [abs(row["laplace"] / row["gaussian"] - np.sqrt(2 / np.pi)) for row in rows]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-3 * np.sqrt(2 / np.pi)


def test_other_draws_scored_together_are_each_draws_loo_comparison():
    seeds = [5, 6, 7, 8]
    gaussian, alibi_errors = alibi.other_draws(60, 0.3, seeds)
    for k, seed in enumerate(seeds):
        p, f, s = sa.noisy_sine(60, 0.3, rng=seed)
        one = alibi.loo_comparison(s, f, p)
        # Leave-one-out scores of a stack against one signal differ by rounding, far inside the tie rule's
        # 1e-9: the same choices, then the same heads on the same draw.
        assert (gaussian[k], alibi_errors[k]) == (one["gaussian_rmse"], one["alibi_rmse"])


def test_at_equal_width_a_laplace_row_averages_root_two_over_pi_as_many_samples():
    """On a dense grid, far from the ends: 2 sqrt(2) h against 2 sqrt(pi) h samples per unit of position."""
    p = np.linspace(0, 1, 2001)
    tau = 2e-4  # h = 0.01, 20 spacings
    equal = alibi.neighbours_at_equal_width(p, tau)
    h = temperature_to_bandwidth(tau)
    assert equal["slope"] == pytest.approx(np.sqrt(2) / h)
    assert equal["gaussian"] == pytest.approx(2 * np.sqrt(np.pi) * h * 2000, rel=1e-3)
    assert equal["laplace"] / equal["gaussian"] == pytest.approx(np.sqrt(2 / np.pi), rel=0.01)
    _, laplace = positional.alibi_head(np.zeros(2001), p, equal["slope"])
    offsets = p - p[1000]
    assert np.sum(laplace[1000] * offsets**2) == pytest.approx(h**2, rel=0.01), "the same standard deviation"


# --- three kernels of one width ------------------------------------------------------------------


def test_the_equal_width_errors_are_those_of_the_three_heads_run_on_each_draw():
    tau, h = 0.005, temperature_to_bandwidth(0.005)
    errors = equal_width.errors_on_draws(60, 0.3, tau, [5, 8])
    assert set(errors) == {"gaussian", "cosine", "laplace"}
    for k, seed in enumerate((5, 8)):
        p, f, s = sa.noisy_sine(60, 0.3, rng=seed)
        heads = {"gaussian": sa.gaussian_head(s, p, tau)[0],
                 "cosine": positional.sinusoidal_head(s, p, [np.pi], [2 / (tau * np.pi**2)])[0],
                 "laplace": positional.alibi_head(s, p, np.sqrt(2) / h)[0]}
        for name, output in heads.items():
            # The same weights; the averages are summed in another order (one matrix product for every draw).
            assert errors[name][k] == pytest.approx(rmse(output, f), rel=0, abs=average_atol(60, s)), name


# --- causal -------------------------------------------------------------------------------------


def test_the_offset_sweep_measures_each_causal_head():
    sweep = causal.offset_sweep(S, F, P, 0.005, [0.0, 0.05], row=40)
    mask = causal_mask(60)
    for k, delta in enumerate((0.0, 0.05)):
        out, w = sa.gaussian_head(S, P, 0.005, offset=delta, mask=mask)
        assert sweep["lag"][k] == -mean_offset(w, P)[40]
        assert sweep["neighbours"][k] == effective_neighbours(w)[40]
        assert sweep["rmse"][k] == rmse(out, F)


_MAX = np.finfo(float).max
_SIX = np.linspace(0.0, 1.0, 6)


@pytest.mark.parametrize(
    "call",
    [
        lambda s, f: sinusoidal.frequency_sweep(s, f, _SIX, [1.0, 3.0], 0.05),
        lambda s, f: causal.offset_sweep(s, f, _SIX, 0.05, [0.0, 0.1]),
        lambda s, f: causal.next_token(s, f, _SIX),
    ],
    ids=["frequency_sweep", "offset_sweep", "next_token"],
)
def test_an_error_beyond_the_double_range_names_signal_and_clean(call):
    # A head's output is an average of signal, near 1.8e308, and clean is near -1e292: their difference
    # overflows in rmse, whose message named its own arguments (the input audit drew these values).
    with pytest.raises(ValueError, match=r"^signal and clean: .*overflows the double range"):
        call(np.full(6, _MAX), np.full(6, -1e292))


@given(st.floats(1e-4, 0.05), st.floats(0.0, 0.2), st.floats(0.0, 0.2))
def test_an_offset_ahead_shortens_the_lag_and_the_average(tau, first, second):
    """Weights exp(-(d + delta)**2 / tau) on d >= 0 fall faster as delta grows: less lag, fewer neighbours."""
    low, high = sorted((first, second))
    sweep = causal.offset_sweep(np.zeros(60), np.zeros(60), P, tau, [low, high])
    # Both are sums of 60 positive terms computed to a few eps: 1e-12 absolute covers their rounding.
    assert sweep["lag"][1] <= sweep["lag"][0] + 1e-12
    assert sweep["neighbours"][1] <= sweep["neighbours"][0] + 1e-12


def test_a_causal_half_bell_lags_by_h_root_two_over_pi_on_a_dense_grid():
    p = np.linspace(0, 1, 4001)
    tau = 0.005
    lag = causal.offset_sweep(np.zeros(4001), np.zeros(4001), p, tau, [0.0])["lag"][0]
    assert lag == pytest.approx(temperature_to_bandwidth(tau) * np.sqrt(2 / np.pi), rel=0.01)


def test_the_matching_temperature_averages_as_many_samples():
    tau, delta = 0.005, 0.09
    narrow = causal.matching_temperature(P, tau, delta, row=30)
    target = causal.offset_sweep(S, F, P, tau, [delta], row=30)["neighbours"][0]
    found = causal.offset_sweep(S, F, P, narrow, [0.0], row=30)["neighbours"][0]
    assert narrow < tau
    assert found == pytest.approx(target, rel=1e-6)  # bisection to 1e-9 in log tau; N_eff is smooth in it
    with pytest.raises(ValueError, match="offset must not be negative"):
        causal.matching_temperature(P, tau, -0.1)


def test_the_delayed_error_is_against_the_sine_moved_by_the_lag():
    assert causal.delayed_rmse(np.sin(2 * np.pi * (P - 0.04)), P, 0.04) == 0.0
    assert causal.delayed_rmse(F, P, 0.0) == 0.0
    assert causal.delayed_rmse(F, P, 0.04) == pytest.approx(rmse(F, np.sin(2 * np.pi * (P - 0.04))))


def test_the_next_token_error_is_the_causal_heads_miss_of_the_next_sample():
    taus = [0.001, 0.01]
    errors = causal.next_token_errors(S, P, taus)
    for k, tau in enumerate(taus):
        out, _ = sa.gaussian_head(S, P, tau, mask=causal_mask(60))
        expected = np.mean([(out[i] - S[i + 1]) ** 2 for i in range(59)])
        assert errors[k] == pytest.approx(expected, rel=1e-13)
    result = causal.next_token(S, F, P, taus)
    assert result["temperature"] == taus[int(np.argmin(errors))]
    assert result["rmse_noisy"] == pytest.approx(np.sqrt(np.min(errors)), rel=1e-12)
    assert result["rmse_copy"] == rmse(S[:-1], S[1:])


def test_the_next_sample_error_is_on_average_the_clean_error_plus_sigma_squared():
    """No row sees the sample it predicts: the cross term vanishes on average (400 noise draws)."""
    sigma, tau, n = 0.3, 0.002, 60
    noisy, clean_error = [], []
    for seed in range(400):
        p, f, s = sa.noisy_sine(n, sigma, rng=seed)
        out, _ = sa.gaussian_head(s, p, tau, mask=causal_mask(n))
        noisy.append(np.mean((out[:-1] - s[1:]) ** 2))
        clean_error.append(np.mean((out[:-1] - f[1:]) ** 2))
    # Each mean of 59 squared misses has a spread of about 0.02; over 400 draws, the means' error is 0.001.
    assert np.mean(noisy) == pytest.approx(np.mean(clean_error) + sigma**2, abs=0.005)
