"""The engineered head: features, weights, scores and the smoother it is."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import positions, signals_on_positions, temperatures
from tolerances import TINY, average_atol, half_spread, rounding, softmax_rtol, square_gap, square_scores_error

import selfattention as sa
from selfattention.head import attention_matrices, fixed_divisor_weights


def head_gap(p, tau, offset=0.0):
    """How far the head's scaled scores can be from those of the square written out on the raw positions.

    Written out, ``p_i - p_j`` rounds on its own size (twice the half spread at most), but ``p_i + delta``
    first rounds on ``max|p| + |delta|``.
    """
    direct = half_spread(p) if offset == 0 else np.abs(p).max() + abs(offset)
    return square_scores_error(half_spread(p, offset), tau) + square_scores_error(direct, tau, expanded=False)


def gaussian_kernel_smoother(signal, positions, temperature, offset=0.0):
    """A Gaussian kernel smoother centred at ``p_i + offset``, written directly, with no attention code."""
    out = np.empty(len(signal))
    for i, p_i in enumerate(positions):
        d2 = (p_i + offset - positions) ** 2
        k = np.exp(-(d2 - np.min(d2)) / temperature)
        out[i] = np.sum(k * signal) / np.sum(k)
    return out


def test_positional_features_columns():
    X = sa.positional_features([5.0, 6.0, 7.0], [0.0, 0.5, 2.0])
    np.testing.assert_array_equal(X, [[5, 0, 0, 1], [6, 0.5, 0.25, 1], [7, 2, 4, 1]])  # dyadic squares: exact


def test_gaussian_head_weights_shapes_and_values():
    W_Q, W_K, W_V = sa.gaussian_head_weights()
    assert (W_Q.shape, W_K.shape, W_V.shape) == ((4, 3), (4, 3), (4, 1))
    np.testing.assert_array_equal(W_V[:, 0], [1, 0, 0, 0])
    np.testing.assert_allclose(W_Q[1, 0] * W_K[1, 0], 2.0, rtol=0, atol=rounding(2, 2.0))  # sqrt(2) rounded, squared


@given(positions)
def test_the_d_k_2_head_scores_differ_by_a_term_of_the_query_alone(p):
    X = sa.positional_features(np.zeros_like(p), p)
    W_Q, W_K, _ = sa.gaussian_head_weights(d_k=2)
    assert W_Q.shape == W_K.shape == (4, 2)
    scores = (X @ W_Q) @ (X @ W_K).T
    P = np.abs(p).max()  # not centred: the terms are as large as max|p|**2
    atol = square_gap(P)  # both sides' roundings on P**2
    np.testing.assert_allclose(scores, -((p[:, None] - p[None, :]) ** 2) + p[:, None] ** 2, rtol=0, atol=atol)


@given(signals_on_positions(min_size=2), temperatures)
def test_the_d_k_2_head_gives_the_same_weights(sig_pos, tau):
    signal, p = sig_pos
    X = sa.positional_features(signal, p)
    W_Q, W_K, W_V = sa.gaussian_head_weights(d_k=2)
    _, two = sa.attention(X @ W_Q, X @ W_K, X @ W_V, tau)
    _, three = sa.gaussian_head(signal, p, tau)
    # Two expanded squares: on the raw positions (d_k = 2) and on the centred ones (the head).
    gap = square_scores_error(np.abs(p).max(), tau) + square_scores_error(half_spread(p), tau)
    np.testing.assert_allclose(two, three, rtol=softmax_rtol(len(p), gap), atol=TINY)


@given(signals_on_positions(), temperatures)
def test_scaling_W_Q_by_sqrt_d_k_over_tau_is_the_temperature(sig_pos, tau):
    signal, p = sig_pos
    X = sa.positional_features(signal, p)
    W_Q, W_K, W_V = fixed_divisor_weights(tau)
    output, weights = sa.attention(X @ W_Q, X @ W_K, X @ W_V)  # divides by sqrt(d_k), as a transformer
    book_output, book_weights = sa.gaussian_head(signal, p, tau)
    # Two expanded squares (raw and centred positions); sqrt(3) / tau in W_Q and the division by sqrt(3)
    # round 4 times more on the scaled scores, at most 4 P**2 / tau.
    P = np.abs(p).max()
    gap = square_scores_error(P, tau) + square_scores_error(half_spread(p), tau) + rounding(4, 4 * P**2 / tau)
    np.testing.assert_allclose(weights, book_weights, rtol=softmax_rtol(len(p), gap), atol=TINY)
    np.testing.assert_allclose(output[:, 0], book_output, rtol=0, atol=average_atol(len(p), np.abs(signal), gap))


@given(positions)
def test_engineered_scores_are_minus_squared_distance(p):
    X = sa.positional_features(np.zeros_like(p), p)
    W_Q, W_K, _ = sa.gaussian_head_weights()
    scores = (X @ W_Q) @ (X @ W_K).T
    P = np.abs(p).max()  # not centred: the terms are as large as max|p|**2
    atol = square_gap(P)  # both sides' roundings on P**2
    np.testing.assert_allclose(scores, -((p[:, None] - p[None, :]) ** 2), rtol=0, atol=atol)


@given(signals_on_positions(), temperatures)
def test_gaussian_head_equals_a_directly_written_kernel_smoother(sig_pos, tau):
    signal, p = sig_pos
    output, weights = sa.gaussian_head(signal, p, tau)
    assert output.shape == (len(p),) and weights.shape == (len(p), len(p))
    atol = average_atol(len(p), np.abs(signal), head_gap(p, tau))  # averages of weights within the scores' gap
    np.testing.assert_allclose(output, gaussian_kernel_smoother(signal, p, tau), rtol=0, atol=atol)


def test_gaussian_head_on_a_constant_signal_returns_it():
    p = np.linspace(0, 1, 20)
    output, _ = sa.gaussian_head(np.full(20, 3.5), p, 0.01)
    np.testing.assert_array_equal(output, 3.5)  # exactly: attention clips its averages to the values' range


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sa.positional_features([1.0, 2.0], [0.0]), "signal and positions must have the same length"),
        (lambda: sa.positional_features([], []), "at least one value"),
        (lambda: sa.positional_features([[1.0]], [0.0]), "signal must be 1-dimensional"),
        (lambda: sa.positional_features([1.0], [np.nan]), "positions contains NaN"),
        (lambda: sa.gaussian_head([1.0], [0.0], 0), "temperature must be positive"),
        (lambda: sa.gaussian_head([1.0], [0.0], -2.0), "temperature must not be negative"),
        (lambda: sa.gaussian_head([np.inf], [0.0], 1.0), "signal contains infinite"),
        (lambda: sa.gaussian_head_weights(d_k=4), "d_k must be 3 or 2, got 4"),
        (lambda: sa.gaussian_head_weights(d_k=2.0), "d_k must be 3 or 2, got 2.0"),
        (lambda: sa.gaussian_head_weights(d_k=True), "d_k must be 3 or 2, got True"),
        (lambda: fixed_divisor_weights(0.0), "temperature must be positive"),
    ],
)
def test_head_rejects_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()



@pytest.mark.parametrize("offset", [0.0, 0.1, -0.07])
def test_attention_matrices_are_the_heads_weights_at_each_temperature(offset):
    p, _, s = sa.noisy_sine(50, 0.3, rng=2)
    taus = [1e-3, 0.01, 0.3]
    A = attention_matrices(p, taus, offset=offset)
    assert A.shape == (3, 50, 50)
    for k, tau in enumerate(taus):
        # The same operations on the same numbers (the head's scores do not depend on its signal): the same bits.
        np.testing.assert_array_equal(A[k], sa.gaussian_head(s, p, tau, offset=offset)[1])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: attention_matrices([0.0, 1.0], []), "temperatures must hold at least one"),
        (lambda: attention_matrices([0.0, 1.0], [0.1, -1.0]), "temperatures must all be positive"),
        (lambda: attention_matrices([0.0, np.inf], [0.1]), "positions contains infinite"),
        (lambda: attention_matrices([0.0, 1e6, 1e6 + 1e-3], [1e4, 1.0]), "temperatures: temperature 1 is too small"),
    ],
)
def test_attention_matrices_refuse_what_the_head_refuses_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()

# --- far from the origin: the expanded square cancels, unless the positions are centred -------------

#: A dyadic grid: adding 1e6, 1e8 or 2**40 to it is exact, so the shifted head must equal the head.
GRID = np.arange(64) / 64
SIGNAL = np.sin(2 * np.pi * GRID) + 0.3 * np.random.default_rng(7).standard_normal(64)


@pytest.mark.parametrize("offset", [1e6, 1e8, 2.0**40])
def test_far_from_the_origin_the_head_is_still_nadaraya_watson(offset):
    """Before centring, the weights were off by 0.69 at 1e6 and by 1.0 at 1e8 (p**2 cancels)."""
    tau = 1e-3
    shifted = GRID + offset
    output, weights = sa.gaussian_head(SIGNAL, shifted, tau)
    h = sa.kernel.temperature_to_bandwidth(tau)
    reference, reference_weights = sa.nadaraya_watson(shifted, shifted, SIGNAL, h)
    # The head's expanded square on the centred positions against the reference's direct square.
    gap = square_gap(half_spread(GRID), tau)
    np.testing.assert_allclose(weights, reference_weights, rtol=softmax_rtol(64, gap), atol=TINY)
    np.testing.assert_allclose(output, reference, rtol=0, atol=average_atol(64, np.abs(SIGNAL), gap))
    # Exactly, on a dyadic grid: the shift and the centring are exact, so the head computes on the same numbers,
    _, near_weights = sa.gaussian_head(SIGNAL, GRID, tau)
    np.testing.assert_array_equal(weights, near_weights)
    # and so does the reference: the distances of the shifted grid are exact (the reference is accurate there).
    near_reference, _ = sa.nadaraya_watson(GRID, GRID, SIGNAL, h)
    np.testing.assert_array_equal(reference, near_reference)


def test_centring_keeps_the_scores_and_shrinks_the_terms():
    from selfattention import head, symbolic

    centred = head.centre_positions(GRID + 1e6)
    np.testing.assert_array_equal(np.diff(centred), np.diff(GRID))
    assert centred.min() == -centred.max() == -(GRID[-1] - GRID[0]) / 2
    assert symbolic.numeric_score_error(GRID + 1e6, centre=False) > 1e-6  # the terms are 1e12, the scores < 1
    P = half_spread(GRID)  # centred, the shifted grid's differences are exact
    assert symbolic.numeric_score_error(GRID + 1e6) <= square_gap(P)


def test_a_spread_too_wide_for_the_temperature_is_refused_not_rounded():
    """Centring removes an offset, not a spread: two close positions far from a third still cancel."""
    positions = [0.0, 1e6, 1e6 + 1e-3]
    with pytest.raises(ValueError, match=r"temperature 1e-06 is too small for positions spanning 1e\+06"):
        sa.gaussian_head([1.0, 2.0, 3.0], positions, 1e-6)
    with pytest.raises(ValueError, match=r"a temperature of 3.55e\+03 or more is safe"):
        sa.gaussian_head([1.0, 2.0, 3.0], positions, 1.0)  # the pair's weights would be off by about 1e-4
    output, _ = sa.gaussian_head([1.0, 2.0, 3.0], positions, 1e4)  # as the message says: safe
    atol = average_atol(3, 3.0, head_gap(positions, 1e4))  # terms of 2.5e11 rounded, over tau = 1e4: about 1e-6
    np.testing.assert_allclose(output, sa.nadaraya_watson(positions, positions, [1.0, 2.0, 3.0], np.sqrt(5e3))[0],
                               rtol=0, atol=atol)


@given(positions, st.floats(-3.0, 3.0))
def test_an_offset_makes_the_scores_minus_the_squared_distance_from_p_i_plus_delta(p, delta):
    X = sa.positional_features(np.zeros_like(p), p)
    W_Q, W_K, _ = sa.gaussian_head_weights(offset=delta)
    scores = (X @ W_Q) @ (X @ W_K).T  # (n, n)
    # Each score sums terms as large as P**2 = (max|p| + |delta|)**2 (not centred), each rounded to eps of its size.
    P = np.abs(p).max() + abs(delta)
    atol = square_gap(P)
    np.testing.assert_allclose(scores, -((p[:, None] + delta - p[None, :]) ** 2), rtol=0, atol=atol)


@given(signals_on_positions(min_size=2), temperatures, st.floats(-0.5, 0.5))
def test_the_offset_head_is_a_kernel_smoother_centred_at_p_i_plus_delta(sig_pos, tau, delta):
    signal, p = sig_pos
    output, weights = sa.gaussian_head(signal, p, tau, offset=delta)
    reference = gaussian_kernel_smoother(signal, p, tau, offset=delta)
    atol = average_atol(len(p), np.abs(signal), head_gap(p, tau, delta))  # averages of weights within the gap
    np.testing.assert_allclose(output, reference, rtol=0, atol=atol)
    # Normalising (n - 1 additions, a division) and summing again (n - 1): 2 n roundings on at most 1.
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=0, atol=rounding(2 * len(p)))


def test_an_offset_ahead_or_behind_moves_each_row_s_peak_by_delta():
    p = np.linspace(0.0, 1.0, 101)
    for delta in (0.2, -0.2):
        _, weights = sa.gaussian_head(np.zeros_like(p), p, 1e-3, offset=delta)
        inside = np.abs(p + delta - 0.5) < 0.25  # rows whose p_i + delta is well inside the positions
        # The peak p_j and p_i + delta are both a few roundings on 1.2 from the exact grid point.
        np.testing.assert_allclose(p[weights[inside].argmax(axis=1)], p[inside] + delta, rtol=0, atol=rounding(4, 1.2))


def test_offset_zero_is_the_centred_head_exactly():
    p = np.linspace(-1.0, 2.0, 40)
    s = np.cos(3 * p)
    np.testing.assert_array_equal(sa.gaussian_head(s, p, 0.02, offset=0.0)[1], sa.gaussian_head(s, p, 0.02)[1])
    assert all(np.array_equal(a, b) for a, b in zip(sa.gaussian_head_weights(offset=0.0), sa.gaussian_head_weights(),
                                                     strict=True))


@pytest.mark.parametrize("offset", [np.nan, np.inf, True, "0.1", 1e200])
def test_a_bad_offset_is_refused_by_name(offset):
    with pytest.raises((ValueError, TypeError), match="offset"):
        sa.gaussian_head([0.0, 1.0], [0.0, 1.0], 0.1, offset=offset)


def test_an_offset_far_from_the_positions_counts_in_the_rounding_check():
    """Queries at p_i + delta carry terms as large as delta**2: the refusal covers them, not only the spread."""
    positions, signal = [0.0, 1e-3], [1.0, 2.0]
    sa.gaussian_head(signal, positions, 2e3)  # P = 5e-4: safe
    with pytest.raises(ValueError, match=r"positions spanning 0.001 with offset 1e\+06"):
        sa.gaussian_head(signal, positions, 2e3, offset=1e6)  # P**2 = 1e12: a row could move by about 3e-6


@pytest.mark.parametrize("matrices", [False, True], ids=["gaussian_head", "attention_matrices"])
def test_a_query_beyond_the_reach_is_refused_naming_positions_and_offset(matrices):
    """The widest positions (centred: -5e153 and 5e153) with the offset that takes a query to the reach.

    At the reach their scores, -(5e153 + delta + 5e153)**2 = -1.37e308 at most, are finite (warnings are
    errors here); beyond it they overflowed (the input audit drew offset 1e154: matmul's warning, or
    an error naming the internal Q and K).
    """
    positions, delta = [-5e153, 5e153], sa.head.MAX_REACH - 5e153

    def run(offset):
        if matrices:
            return attention_matrices(positions, [1e308], offset=offset)[0]
        return sa.gaussian_head([1.0, 2.0], positions, 1e308, offset=offset)[1]

    assert np.isfinite(run(delta)).all() and np.isfinite(run(-delta)).all()
    for offset in (1.01 * delta, -1e154):
        with pytest.raises(ValueError, match=r"^positions and offset: a query p_i \+ offset lies"):
            run(offset)
