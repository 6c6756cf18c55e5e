"""Positional encodings and masks: the sinusoidal, rotary and ALiBi heads, the bias and the causal mask of attention.

References are written out here with no attention code (loops over the
pairs, explicit 2 x 2 rotations, kernel smoothers); properties are checked
with hypothesis over random positions, shifts, frequencies and amplitudes.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import positions, qkv, signals_on_positions, temperatures

import selfattention as sa
from selfattention import kernel, metrics, positional
from selfattention.core import causal_mask

EPS = np.finfo(float).eps
frequencies = hnp.arrays(np.float64, st.integers(1, 3), elements=st.floats(0.1, 10.0))


def kernel_smoother(signal, positions, score):
    """``sum_j w_ij s_j`` with ``w_ij`` proportional to ``exp(score(p_i - p_j))``, pair by pair."""
    n = len(signal)
    weights = np.empty((n, n))
    for i in range(n):
        e = np.array([score(positions[i] - positions[j]) for j in range(n)])
        k = np.exp(e - e.max())
        weights[i] = k / k.sum()
    return weights @ signal, weights


def cosine_score(omegas, xis):
    return lambda u: sum(xi * np.cos(omega * u) for omega, xi in zip(omegas, xis, strict=True))


# --- the sinusoidal head ------------------------------------------------------------------------


def test_the_encoding_is_cosine_and_sine_of_each_frequency():
    p, omega = np.array([0.0, 0.25, 1.0]), np.array([np.pi, 2.0])
    expected = np.column_stack([np.cos(np.pi * p), np.sin(np.pi * p), np.cos(2 * p), np.sin(2 * p)])
    np.testing.assert_array_equal(positional.sinusoidal_encoding(p, omega), expected)


@given(positions, frequencies, st.floats(-100.0, 100.0))
def test_the_sinusoidal_score_is_unchanged_by_a_shift_of_every_position(p, omega, shift):
    """Its scores depend on p_i - p_j only, to rounding.

    Each entry of the encoding is off by at most eps (1 + |omega p|) (the angle rounded, then its cosine);
    a score sums 2F such products times xi, so it is off by at most about 4 eps (1 + max |omega p|)
    of sum |xi|, the largest score. Here |omega p| <= 10 * 102: the bound is 1e-12 of the largest score.
    """
    xi = np.linspace(1.0, 2.0, omega.size)
    from selfattention.studies.sinusoidal import shift_gap

    assert shift_gap(p, omega, xi, shift) <= 1e-12


@given(signals_on_positions(min_size=2, max_size=12), frequencies, st.floats(0.1, 20.0))
def test_the_sinusoidal_head_is_a_kernel_smoother_of_a_sum_of_cosines(sig_pos, omega, scale):
    signal, p = sig_pos
    xi = scale * np.linspace(1.0, -0.5, omega.size)  # a negative amplitude rides on the query's sign
    output, weights = positional.sinusoidal_head(signal, p, omega, xi)
    ref_output, ref_weights = kernel_smoother(signal, p, cosine_score(omega, xi))
    # The scores are below 20 * 3 in size: their rounding (about 1e-13 of 60) moves the weights by less than 1e-11.
    np.testing.assert_allclose(weights, ref_weights, rtol=0, atol=1e-11)
    np.testing.assert_allclose(output, ref_output, rtol=0, atol=1e-11 * (1 + np.abs(signal).max()))


def test_the_sinusoidal_projections_route_each_pair_to_its_own_dimensions():
    W_Q, W_K, W_V = positional.sinusoidal_head_weights([4.0, -9.0])
    assert W_Q.shape == W_K.shape == (5, 4) and W_V.shape == (5, 1)
    np.testing.assert_array_equal(np.diag(W_K[1:]), [2.0, 2.0, 3.0, 3.0])
    np.testing.assert_array_equal(np.diag(W_Q[1:]), [2.0, 2.0, -3.0, -3.0])
    np.testing.assert_array_equal(W_Q[0], 0.0)  # the signal never reaches the scores
    np.testing.assert_array_equal(W_V[:, 0], [1, 0, 0, 0, 0])


@pytest.mark.parametrize("omega", [np.pi, np.pi / 4, 0.05])
def test_the_matched_cosine_approaches_the_gaussian_band_as_the_frequency_falls(omega):
    p, tau = np.linspace(0, 1, 60), 0.005
    _, gauss = sa.gaussian_head(np.zeros(60), p, tau)
    _, cosine = positional.sinusoidal_head(np.zeros(60), p, [omega], [positional.gaussian_amplitude(omega, tau)])
    # The first difference is the quartic xi omega**4 u**4 / 24 = omega**2 u**4 / (12 tau): within the band
    # (u <= 3 h) it is below omega**2 81 tau / 48, which bounds the change of the weights, relatively.
    assert np.max(np.abs(cosine - gauss)) <= omega**2 * 81 * tau / 48 * gauss.max()


def test_the_matched_amplitude_is_two_over_tau_omega_squared():
    assert positional.gaussian_amplitude(np.pi, 0.005) == 2 / (0.005 * np.pi**2)
    with pytest.raises(ValueError, match="frequency and temperature"):
        positional.gaussian_amplitude(1e-160, 1e-5)


@pytest.mark.parametrize("frequency, temperature", [(1e308, 0.05), (1e154, 1.0), (1e150, 1e10)])
def test_an_amplitude_below_the_normal_doubles_is_refused_by_name(frequency, temperature):
    # 2 / (tau omega**2) is 0 or subnormal here: a zero amplitude makes the head uniform (returned as 0.0 before).
    with pytest.raises(ValueError, match=r"frequency and temperature: .* underflows"):
        positional.gaussian_amplitude(frequency, temperature)
    assert positional.gaussian_amplitude(1e153, 0.5) >= np.finfo(float).tiny  # 4e-306: still a normal double


@given(positions)
def test_at_the_alias_free_frequency_the_cosine_falls_over_the_whole_span(p):
    assume(np.ptp(p) > 1e-3)
    omega = positional.alias_free_frequency(p)
    assert omega * np.ptp(p) == pytest.approx(np.pi, rel=1e-15)
    u = np.linspace(0, np.ptp(p), 200)
    assert np.all(np.diff(np.cos(omega * u)) <= 1e-15)  # non-increasing: no distance aliases another
    beyond = np.cos(1.01 * omega * u)
    assert beyond[-1] > beyond.min(), "a little beyond it, the far end rises again"


def test_the_alias_free_frequency_needs_two_positions():
    with pytest.raises(ValueError, match="two different positions"):
        positional.alias_free_frequency([0.3, 0.3])


def test_the_transformers_frequencies_are_vaswanis():
    """1 / 10000**(2 i / d_model) for i = 0, ..., d_model / 2 - 1, written out one at a time."""
    d_model = 512
    reference = [1 / 10000 ** (2 * i / d_model) for i in range(d_model // 2)]
    omega = positional.transformer_frequencies(d_model // 2)
    # Two roundings of the exponent and pow's ulp on each side: a few EPS relative to each frequency.
    np.testing.assert_allclose(omega, reference, rtol=8 * EPS * np.log(10000), atol=0)
    assert omega[0] == 1.0 and np.all(np.diff(omega) < 0)
    ratios = omega[1:] / omega[:-1]
    np.testing.assert_allclose(ratios, 10000 ** (-1 / 256), rtol=16 * EPS * np.log(10000), atol=0)  # geometric
    np.testing.assert_allclose(positional.transformer_frequencies(3, base=8.0), [1.0, 0.5, 0.25], rtol=4 * EPS, atol=0)


@pytest.mark.parametrize("base", [1.0, 0.5])
def test_the_transformers_frequencies_refuse_a_base_at_which_they_would_not_fall(base):
    with pytest.raises(ValueError, match="base must be greater than 1"):
        positional.transformer_frequencies(4, base=base)


# --- rotary encodings ---------------------------------------------------------------------------


def rotate_by_loops(vectors, p, omega):
    """Each pair of coordinates times the 2 x 2 rotation by omega p, one row and one pair at a time."""
    out = np.empty_like(vectors)
    for i in range(vectors.shape[0]):
        for n, w in enumerate(omega):
            angle = w * p[i]
            R = np.array([[np.cos(angle), np.sin(angle)], [-np.sin(angle), np.cos(angle)]])
            out[i, 2 * n : 2 * n + 2] = vectors[i, 2 * n : 2 * n + 2] @ R
    return out


@given(st.integers(1, 8).flatmap(lambda n: st.tuples(
    hnp.arrays(np.float64, (n, 4), elements=st.floats(-10, 10)),
    hnp.arrays(np.float64, n, elements=st.floats(-5, 5)))), st.floats(0.1, 10.0), st.floats(0.1, 10.0))
def test_rotate_is_a_rotation_of_each_pair(vectors_positions, w1, w2):
    V, p = vectors_positions
    rotated = positional.rotate(V, p, [w1, w2])
    np.testing.assert_allclose(rotated, rotate_by_loops(V, p, [w1, w2]), rtol=0, atol=1e-12 * (1 + np.abs(V).max()))
    np.testing.assert_allclose(np.hypot(rotated[:, 0::2], rotated[:, 1::2]), np.hypot(V[:, 0::2], V[:, 1::2]),
                               rtol=1e-13, atol=1e-300)  # a rotation keeps every pair's length


@given(st.integers(1, 6).flatmap(lambda n: st.tuples(
    hnp.arrays(np.float64, (n, 4), elements=st.floats(-10, 10)),
    hnp.arrays(np.float64, (n, 4), elements=st.floats(-10, 10)),
    hnp.arrays(np.float64, n, elements=st.floats(-5, 5)))), frequencies.filter(lambda w: w.size == 2),
    st.floats(-100.0, 100.0))
def test_rotated_scores_are_unchanged_by_a_shift_of_every_position_whatever_the_vectors(qkp, omega, shift):
    """The exactness that sets RoPE apart: any queries and keys, not only hand-set ones.

    Each rotated coordinate is off by at most about 2 eps (1 + |omega p|) times its pair's length (the angle
    rounded, its cosine and sine, two products); a score of two pairs of lengths up to L is then off by at most
    about 8 eps (1 + max |omega p|) L**2 per pair. With |omega p| <= 10 * 105 that is 2e-12 of 2 L**2 per pair,
    while the scores' scale is the sum of |q| |k| over pairs: the test allows 1e-11 of it.
    """
    Q, K, p = qkp
    before = positional.rotate(Q, p, omega) @ positional.rotate(K, p, omega).T
    after = positional.rotate(Q, p + shift, omega) @ positional.rotate(K, p + shift, omega).T
    scale = np.sum(np.abs(Q)) * np.sum(np.abs(K)) + 1e-300
    assert np.max(np.abs(after - before)) <= 1e-11 * scale


@given(signals_on_positions(min_size=2, max_size=12), frequencies, st.floats(0.1, 20.0))
def test_the_rotary_head_has_the_sinusoidal_heads_weights(sig_pos, omega, scale):
    signal, p = sig_pos
    xi = scale * np.linspace(1.0, -0.5, omega.size)
    out_r, w_r = positional.rotary_head(signal, p, omega, xi)
    out_s, w_s = positional.sinusoidal_head(signal, p, omega, xi)
    # Both compute the same cosines of the same angles; only the order of the products can differ.
    np.testing.assert_allclose(w_r, w_s, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out_r, out_s, rtol=0, atol=1e-12 * (1 + np.abs(signal).max()))


def test_the_rotary_tokens_do_not_widen_with_the_frequencies():
    for count in (1, 4):
        W_Q, W_K, W_V = positional.rotary_head_weights(np.ones(count))
        assert W_Q.shape == W_K.shape == (2, 2 * count) and W_V.shape == (2, 1)
        assert positional.sinusoidal_head_weights(np.ones(count))[0].shape == (1 + 2 * count, 2 * count)


def test_far_from_the_origin_the_cosine_heads_centre_their_positions():
    """Before centring, the angle omega p at 1e8 is off by about eps 1e8 omega: the weights by 1e-6 and more."""
    p = np.arange(64) / 64  # dyadic: adding 2**27 to it is exact, and so is centring
    signal = np.sin(2 * np.pi * p)
    omega, xi = [np.pi], [positional.gaussian_amplitude(np.pi, 0.005)]
    _, near = positional.sinusoidal_head(signal, p, omega, xi)
    for head in (positional.sinusoidal_head, positional.rotary_head):
        _, far = head(signal, p + 2.0**27, omega, xi)  # dyadic: the shift is exact
        np.testing.assert_allclose(far, near, rtol=0, atol=1e-13)


def test_the_cosine_heads_refuse_amplitudes_whose_rounding_moves_the_weights():
    p = np.linspace(0, 1, 20)
    with pytest.raises(ValueError, match=r"amplitudes up to 1e\+14 .* could move the weights by more than 1e-06"):
        positional.sinusoidal_head(np.zeros(20), p, [np.pi], [1e14])
    with pytest.raises(ValueError, match="could move the weights"):
        positional.rotary_head(np.zeros(20), p * 1e12, [1.0], [1e6])
    positional.rotary_head(np.zeros(20), p, [np.pi], [1e3])  # a large amplitude whose rounding is harmless


@pytest.mark.parametrize("head", [positional.sinusoidal_head, positional.rotary_head])
def test_the_cosine_heads_refuse_amplitudes_whose_scores_overflow_by_name(head):
    """Each amplitude is finite but their sum, which bounds the scores, is not: amplitudes are named, not Q and K."""
    p = np.linspace(0, 1, 6)
    with pytest.raises(ValueError, match=r"^amplitudes: the sum of their sizes"):
        head(np.zeros(6), p, [np.pi, 1.0], [9e307, -9e307])


@given(st.integers(2, 30), frequencies, st.floats(-50.0, 50.0), st.floats(0.5, 1e4))
def test_the_rounding_bound_of_the_cosine_scores_holds(n, omega, centre, scale):
    """The bound eta of the refusal, checked against scores computed in extended precision."""
    p = centre + np.linspace(-1.0, 1.0, n)
    xi = scale * np.linspace(1.0, 0.3, omega.size)
    centred = sa.head.centre_positions(p)
    E = positional.sinusoidal_encoding(centred, omega)  # as the head computes them
    W_Q, W_K, _ = positional.sinusoidal_head_weights(xi)
    scores = (E @ W_Q[1:]) @ (E @ W_K[1:]).T
    u = centred.astype(np.longdouble)
    exact = sum(np.longdouble(r) * np.cos(np.longdouble(w) * (u[:, None] - u[None, :])) for w, r in zip(omega, xi,
                                                                                                      strict=True))
    P = np.max(np.abs(centred))
    eta = (8 + 2 * omega.size) * EPS * np.sum(np.abs(xi) * (1 + omega * P))
    assert np.max(np.abs(scores - exact)) <= eta


# --- ALiBi ----------------------------------------------------------------------------------------


@given(signals_on_positions(min_size=2, max_size=12), st.floats(0.0, 50.0))
def test_the_alibi_head_is_a_laplace_kernel_smoother(sig_pos, b):
    signal, p = sig_pos
    output, weights = positional.alibi_head(signal, p, b)
    ref_output, ref_weights = kernel_smoother(signal, p, lambda u: -b * abs(u))
    # The scores are differences of centred positions times b <= 50 * 4: rounded to 1e-13 at most.
    np.testing.assert_allclose(weights, ref_weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(output, ref_output, rtol=0, atol=1e-12 * (1 + np.abs(signal).max()))


def test_the_alibi_bias_is_zero_on_the_diagonal_and_falls_with_the_distance():
    bias = positional.alibi_bias([0.0, 0.5, 2.0], 3.0)
    np.testing.assert_array_equal(bias, [[0, -1.5, -6], [-1.5, 0, -4.5], [-6, -4.5, 0]])
    np.testing.assert_array_equal(positional.alibi_bias([0.0, 1.0], 0.0), 0.0)
    with pytest.raises(ValueError, match="slope and positions: the bias"):
        positional.alibi_bias([0.0, 1e300], 1e10)


def test_the_alibi_slope_is_the_inverse_of_the_laplace_temperature():
    p, _, s = sa.noisy_sine(40, 0.3, rng=3)
    tau, _ = kernel.choose_temperature(s, p, kernel="laplace")
    taus = kernel.DEFAULT_CANDIDATES
    loo = []
    for t in taus:  # leave-one-out of the ALiBi head, written out with its mask
        _, w = positional.alibi_head(s, p, 1 / t, mask=~np.eye(40, dtype=bool))
        loo.append(np.mean((w @ s - s) ** 2))
    np.testing.assert_allclose(kernel.leave_one_out_scores(s, p, kernel="laplace"), loo, rtol=1e-9)
    assert tau == kernel.pick_temperature(loo, taus)


def test_an_alibi_slope_is_refused_where_the_rounding_of_the_distances_matters():
    """Centred, two positions 1e-3 apart near 5e7 carry their gap to a relative 1e-5: times b = 1e3, 1e-5 in a score."""
    positions = [0.0, 1e8, 1e8 + 1e-3]
    with pytest.raises(ValueError, match=r"slope 1e\+03 is too large for positions spanning 1e\+08"):
        positional.alibi_head([1.0, 2.0, 3.0], positions, 1e3)
    _, weights = positional.alibi_head([1.0, 2.0, 3.0], positions, 1.0)  # a gentler slope: 1e-8 in a score, accepted
    np.testing.assert_allclose(weights[1:, 1:] / weights[1:, 1:].sum(axis=1, keepdims=True), 0.5, atol=1e-3)


# --- attention's bias and the causal mask ----------------------------------------------------------


@given(qkv(), temperatures, st.data())
def test_attention_with_a_bias_is_the_softmax_of_the_scaled_scores_plus_the_bias(qkv, tau, data):
    Q, K, V = qkv
    bias = data.draw(hnp.arrays(np.float64, (Q.shape[0], K.shape[0]), elements=st.floats(-50, 50)))
    output, weights = sa.attention(Q, K, V, tau, bias=bias)
    scores = Q @ K.T
    # The row maximum first (as softmax may), so that a bias of 1e-3 next to scaled scores of 1e9 is not rounded
    # away: what is left is exact scipy on numbers whose rounding is relative, 1e-9 covers it.
    expected = scipy.special.softmax((scores - scores.max(axis=1, keepdims=True)) / tau + bias, axis=1)
    np.testing.assert_allclose(weights, expected, rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(output, expected @ V, rtol=1e-9, atol=1e-9 * (1 + np.abs(V).max()))


@given(qkv(), st.data())
def test_a_number_added_to_a_row_of_the_bias_changes_nothing(qkv, data):
    Q, K, V = qkv
    bias = data.draw(hnp.arrays(np.float64, (Q.shape[0], K.shape[0]), elements=st.floats(-50, 50)))
    shift = data.draw(hnp.arrays(np.float64, (Q.shape[0], 1), elements=st.floats(-1e6, 1e6)))
    _, weights = sa.attention(Q, K, V, 1.0, bias=bias)
    _, shifted = sa.attention(Q, K, V, 1.0, bias=bias + shift)
    np.testing.assert_allclose(shifted, weights, rtol=0, atol=1e-9)  # the row's bias is brought back to max 0


def test_a_minus_infinite_bias_masks_exactly_and_a_bias_cannot_overflow():
    Q, K, V = np.ones((2, 1)), np.ones((3, 1)), np.arange(3.0)[:, None]
    _, weights = sa.attention(Q, K, V, 1.0, bias=[[0.0, -np.inf, 0.0], [-np.inf, 1e308, -1e308]])
    np.testing.assert_array_equal(weights, [[0.5, 0.0, 0.5], [0.0, 1.0, 0.0]])
    with pytest.raises(ValueError, match="mask and bias: a query is left with no key"):
        sa.attention(Q, K, V, bias=np.full((2, 3), -np.inf))
    with pytest.raises(ValueError, match="bias must have shape"):
        sa.attention(Q, K, V, bias=np.zeros((3, 2)))


def test_the_causal_mask_is_the_lower_triangle():
    mask = causal_mask(4)
    np.testing.assert_array_equal(mask, [[j <= i for j in range(4)] for i in range(4)])


@given(signals_on_positions(min_size=1, max_size=20), st.floats(1e-3, 1.0), st.floats(-0.5, 0.5))
def test_a_causal_head_gives_every_later_key_exactly_zero_weight(sig_pos, tau, delta):
    signal, p = sig_pos
    output, weights = sa.gaussian_head(signal, p, tau, offset=delta, mask=causal_mask(p.size))
    assert np.all(weights[np.triu_indices(p.size, 1)] == 0.0)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=1e-12)
    assert output[0] == signal[0], "the first token sees itself only"


@given(signals_on_positions(min_size=2, max_size=20), st.floats(0.0, 30.0))
def test_a_causal_alibi_head_sees_only_the_past(sig_pos, b):
    signal, p = sig_pos
    _, weights = positional.alibi_head(signal, p, b, mask=causal_mask(p.size))
    assert np.all(weights[np.triu_indices(p.size, 1)] == 0.0)


# --- the mean offset ---------------------------------------------------------------------------


@given(signals_on_positions(min_size=1, max_size=15), st.floats(1e-3, 1.0))
def test_the_mean_offset_is_where_each_row_looks_relative_to_its_query(sig_pos, tau):
    _, p = sig_pos
    _, weights = sa.gaussian_head(np.zeros_like(p), p, tau, mask=causal_mask(p.size))
    expected = [sum(weights[i, j] * (p[j] - p[i]) for j in range(p.size)) for i in range(p.size)]
    np.testing.assert_allclose(metrics.mean_offset(weights, p), expected, rtol=0, atol=1e-13)


def test_a_symmetric_row_has_no_offset_and_a_causal_row_looks_behind():
    p = np.linspace(0, 1, 101)
    _, both = sa.gaussian_head(np.zeros(101), p, 0.002)
    _, past = sa.gaussian_head(np.zeros(101), p, 0.002, mask=causal_mask(101))
    assert abs(metrics.mean_offset(both, p)[50]) < 1e-15
    assert metrics.mean_offset(past, p)[50] < -0.02


# --- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: positional.sinusoidal_encoding([0.0], [0.0]), "frequencies must be a non-empty list of positive"),
        (lambda: positional.sinusoidal_encoding([0.0], []), "frequencies must be a non-empty"),
        (lambda: positional.sinusoidal_head_weights([]), "amplitudes must hold at least one"),
        (lambda: positional.sinusoidal_head([0.0, 1.0], [0.0, 1.0], [1.0, 2.0], [1.0]),
         "frequencies and amplitudes must have the same length"),
        (lambda: positional.rotate(np.ones((2, 3)), [0.0, 1.0], [1.0]), r"vectors must have shape .* \(2, 2\)"),
        (lambda: positional.rotate(np.ones((1, 2)), [1e300], [1e10]), "positions and frequencies: an angle"),
        (lambda: positional.alibi_head([1.0], [0.0], -1.0), "slope must not be negative"),
        (lambda: causal_mask(0), "n must be at least 1"),
        (lambda: metrics.mean_offset(np.eye(2), [0.0, 1.0, 2.0]), "weights must have shape"),
        (lambda: kernel.choose_temperature([1.0, 2.0], [0.0, 1.0], kernel="cosine"), "kernel must be one of"),
    ],
)
def test_bad_input_is_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()

