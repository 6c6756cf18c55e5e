"""selfattention.random_features and positive_features: the heads from random features.

Each head is checked against an independent ``n x n`` computation of the
kernel it estimates (cosines of the differences, or the bumps written out),
with tolerances derived from the computation; the estimates against the
exact kernel by their variance (Bochner's theorem), on fixed seeds.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tolerances import EPS, assert_close

import selfattention as sa
from selfattention import positional, positive_features, random_features
from selfattention.head import centre_positions

TAU = 0.005


def book_signal(n=100):
    positions, clean, noisy = sa.noisy_sine(n, 0.3, rng=1729)
    return positions, clean, noisy


# --- the features ------------------------------------------------------------------------------


def test_the_features_are_the_sinusoidal_encoding_over_the_root_of_d():
    p, _, _ = book_signal(30)
    omega = random_features.gaussian_frequencies(7, TAU, 3)
    expected = positional.sinusoidal_encoding(p, omega) / np.sqrt(7)
    np.testing.assert_array_equal(random_features.fourier_features(p, omega), expected)


def test_a_product_of_features_is_the_mean_cosine_of_the_difference():
    p = centre_positions(book_signal(25)[0])
    omega = random_features.gaussian_frequencies(40, TAU, 4)
    psi = random_features.fourier_features(p, omega)  # (n, 2D)
    u = p[:, None] - p[None, :]
    mean_cosine = np.mean(np.cos(omega[:, None, None] * u), axis=0)
    # Each cosine of an angle omega p (at most |omega| max|p| = A) is off by its rounding and the angle's, about
    # (A + 1) EPS; the difference u rounds once more: 4 (A + 1) EPS bounds the gap of one mean cosine.
    A = float(np.max(omega) * np.max(np.abs(p)))
    np.testing.assert_allclose(psi @ psi.T, mean_cosine, rtol=0, atol=8 * (2 * A + 1) * EPS)


def test_the_frequencies_have_the_variance_two_over_tau():
    """E[omega**2] = 2 / tau; the mean of D squares has standard deviation sqrt(2 / D) (2 / tau)."""
    D = 100_000
    omega = random_features.gaussian_frequencies(D, TAU, 11)
    assert (omega > 0).all()
    assert np.mean(omega**2) == pytest.approx(2 / TAU, abs=5 * np.sqrt(2 / D) * 2 / TAU)


def test_the_mean_cosine_converges_to_the_gaussian_kernel():
    """Each entry's error is at most 5 of its standard deviations, sqrt(Var cos(omega u) / D), Var <= 1/2."""
    p = np.linspace(-0.2, 0.2, 15)
    D = 50_000
    psi = random_features.fourier_features(p, random_features.gaussian_frequencies(D, TAU, 5))
    kernel = np.exp(-((p[:, None] - p[None, :]) ** 2) / TAU)
    u2 = (p[:, None] - p[None, :]) ** 2
    std = np.sqrt((0.5 + 0.5 * np.exp(-4 * u2 / TAU) - np.exp(-2 * u2 / TAU)) / D)
    assert_close(psi @ psi.T, kernel, 5 * std + 1e-12)


# --- the cosine head ---------------------------------------------------------------------------


def reference_head(signal, positions, omega):
    """The estimated n x n kernel written out as mean cosines of the differences, then normalised row by row."""
    p = centre_positions(positions)
    K = np.mean(np.cos(omega[:, None, None] * (p[:, None] - p[None, :])), axis=0)  # (n, n)
    return K @ signal / K.sum(axis=1), K.sum(axis=1), K


def head_bound(signal, positions, omega, denominators):
    """How far the head and the reference can be apart: both kernels' entries off by e (as above), the sums over
    n keys of 2 D terms rounding on their sizes; a ratio num / den moves by (d_num + |out| d_den) / (|den| - d_den)."""
    p = centre_positions(positions)
    A = float(np.max(omega) * np.max(np.abs(p)))
    e = 8 * (2 * A + 1) * EPS + 4 * omega.size * len(p) * EPS
    d_num, d_den = e * np.sum(np.abs(signal)), e * len(p)
    out = np.abs(reference_head(signal, positions, omega)[0])
    return (d_num + out * d_den) / (np.abs(denominators) - d_den)


def test_the_head_is_the_normalised_estimated_kernel():
    p, _, s = book_signal()
    omega = random_features.gaussian_frequencies(256, TAU, 8)
    output, denominators = random_features.random_feature_head(s, p, omega)
    expected, sums, _ = reference_head(s, p, omega)
    assert_close(denominators, sums, 1e-9 * len(p))
    assert_close(output, expected, head_bound(s, p, omega, denominators))


def test_the_blocks_change_nothing_but_rounding():
    """Over 4096 tokens the sums are built block by block; the result is the one-block computation."""
    p, _, s = book_signal(5000)
    omega = random_features.gaussian_frequencies(16, TAU, 2)
    psi = random_features.fourier_features(centre_positions(p), omega)  # (n, 2D), at once
    sums = psi @ (psi.T @ np.column_stack([s, np.ones_like(s)]))  # (n, 2)
    output, denominators = random_features.random_feature_head(s, p, omega)
    # Each column sum S_r of n features (each at most 1 / sqrt(D)) rounds n times on at most n / sqrt(D), either
    # way; a row's dot product with S (2 D terms, sizes summing to at most 2 n) rounds 2 D times on 2 n, either way:
    # the two denominators differ by at most 2 D (1 / sqrt(D)) 2 n**2 EPS / sqrt(D) + 8 n D EPS.
    n, D = len(p), omega.size
    d_den = (4 * n**2 + 8 * n * D) * EPS
    assert_close(denominators, sums[:, 1], d_den)
    d_num = d_den * np.max(np.abs(s))
    assert_close(output, sums[:, 0] / sums[:, 1],
                 (d_num + np.abs(sums[:, 0] / sums[:, 1]) * d_den) / (np.abs(sums[:, 1]) - d_den))


def test_few_frequencies_can_leave_a_denominator_at_or_below_zero_and_the_output_outside_the_signal():
    p, _, s = book_signal()
    rng = np.random.default_rng(0)
    seen = False
    for _ in range(50):
        output, denominators = random_features.random_feature_head(
            s, p, random_features.gaussian_frequencies(4, TAU, rng))
        if (denominators <= 0).any():
            seen = True
            assert np.max(np.abs(output)) > np.max(np.abs(s)), "not a weighted average any more"
            break
    assert seen


# --- positive features -------------------------------------------------------------------------


def reference_positive_head(signal, positions, tau, centres, log_weights):
    """The bumps written out, unstabilised (moderate inputs only), their n x n products normalised."""
    mid = np.min(positions) / 2 + np.max(positions) / 2
    p, c = positions - mid, centres - mid
    phi = np.exp(log_weights - 2 * (p[:, None] - c[None, :]) ** 2 / tau)  # (n, D)
    K = phi @ phi.T
    return K @ signal / K.sum(axis=1)


#: The least temperature at which the reference's products of bumps stay normal doubles: a position and a centre
#: lie at most 1.5 apart, so a product is at least exp(-4 * 1.5**2 / tau - 10), which underflows to zero below
#: tau = 9 / 698 = 0.0129 (at tau = 0.0117 a row of products summed to 0; the package's head, stabilised, did not).
REFERENCE_MIN_TAU = 0.02


@given(st.integers(2, 20), st.integers(1, 12), st.floats(REFERENCE_MIN_TAU, 1.0), st.data())
def test_the_positive_head_is_the_normalised_product_of_bumps(n, D, tau, data):
    p = np.sort(data.draw(hnp.arrays(np.float64, n, elements=st.floats(0, 1))))
    s = data.draw(hnp.arrays(np.float64, n, elements=st.floats(-3, 3)))
    c = data.draw(hnp.arrays(np.float64, D, elements=st.floats(-0.5, 1.5)))
    lam = data.draw(hnp.arrays(np.float64, D, elements=st.floats(-5, 5)))
    output = positive_features.positive_feature_head(s, p, tau, c, lam)
    expected = reference_positive_head(s, p, tau, c, lam)
    # Sums of positive terms keep a relative accuracy of (terms) EPS; each bump's exponent (at most 2 / tau + 10
    # in size) rounds by EPS of it, so each term by (2 / tau + 10) EPS: the ratio by twice both, times max|s|.
    relative = 4 * ((n + D + 4) + 2 * (2 / tau + 10)) * EPS
    assert_close(output, expected, relative * np.max(np.abs(s)) + 1e-300)


@given(st.integers(1, 30), st.integers(1, 20), st.floats(1e-4, 10.0), st.data())
def test_the_positive_head_is_a_weighted_average_whatever_its_centres(n, D, tau, data):
    """Every weight is positive: the output lies within the signal's range (to rounding), every denominator > 0."""
    p = data.draw(hnp.arrays(np.float64, n, elements=st.floats(-1, 1)))
    s = data.draw(hnp.arrays(np.float64, n, elements=st.floats(-10, 10)))
    c = data.draw(hnp.arrays(np.float64, D, elements=st.floats(-1, 1)))
    try:
        output = positive_features.positive_feature_head(s, p, tau, c)
    except ValueError as exc:  # a position no bump reaches
        assert "centres" in str(exc)
        return
    spread = np.max(np.abs(s)) * 8 * (n + D) * EPS
    assert (output >= s.min() - spread).all() and (output <= s.max() + spread).all()


def test_the_performers_features_are_weighted_bumps():
    p = np.linspace(-0.5, 0.5, 11)
    centres, log_weights = positive_features.performer_centres(6, TAU, 3)
    omega = 4 * centres / TAU  # the bump at omega tau / 4
    performer = omega[None, :] * p[:, None] - 2 * p[:, None] ** 2 / TAU  # log exp(omega p - 2 p**2 / tau)
    bumps = log_weights - 2 * (p[:, None] - centres) ** 2 / TAU
    np.testing.assert_allclose(bumps, performer, rtol=0, atol=64 * EPS * (2 / TAU + np.max(np.abs(omega))))
    np.testing.assert_allclose(log_weights, 2 * centres**2 / TAU, rtol=4 * EPS)


def test_the_performers_origin_moves_the_centres_and_keeps_the_weights():
    """Features of p - origin: the centres shift by origin, the log-weights stay those of the offsets."""
    at_zero = positive_features.performer_centres(6, TAU, 3)
    moved = positive_features.performer_centres(6, TAU, 3, origin=0.5)
    np.testing.assert_array_equal(moved[0], at_zero[0] + 0.5)
    np.testing.assert_array_equal(moved[1], at_zero[1])


def test_the_performers_centres_have_variance_tau_over_eight():
    D = 100_000
    centres, _ = positive_features.performer_centres(D, TAU, 12)
    assert np.mean(centres**2) == pytest.approx(TAU / 8, abs=5 * np.sqrt(2 / D) * TAU / 8)


def test_spread_centres_cover_the_positions_and_three_root_tau_beyond():
    p = book_signal()[0]
    centres = positive_features.spread_centres(10_000, p, TAU, 1)
    margin = 3 * np.sqrt(TAU)
    assert centres.min() >= -margin and centres.max() <= 1 + margin
    assert centres.min() < -margin + 0.01 and centres.max() > 1 + margin - 0.01
    assert np.mean(centres) == pytest.approx(0.5, abs=0.02)


@pytest.mark.parametrize(("call", "word"), [
    (lambda: random_features.gaussian_frequencies(0, TAU), "count"),
    (lambda: random_features.random_feature_head([1.0, 2.0], [0.0, 1.0], [np.inf]), "frequencies"),
    (lambda: random_features.random_feature_head([1.0, 2.0], [0.0, 1.0], [-1.0]), "frequencies"),
    (lambda: random_features.random_feature_head([1.0, 2.0], [0.0, 1.0], []), "frequencies"),
    (lambda: random_features.fourier_features([0.0, 1e300], [1e10]), "positions and frequencies"),
    (lambda: positive_features.positive_feature_head([1.0], [0.0], TAU, []), "centres"),
    (lambda: positive_features.positive_feature_head([1.0], [0.0], TAU, [0.0], [1.0, 2.0]), "log_weights"),
    (lambda: positive_features.positive_feature_head([1.0], [0.0], 1e-300, [1e200]), "centres"),
    (lambda: positive_features.spread_centres(-1, [0.0], TAU), "count"),
    (lambda: positive_features.performer_centres(3, 0.0), "temperature"),
])
def test_bad_input_is_refused_by_name(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_bumps_that_underflow_everywhere_still_weigh_the_nearest_key_most():
    """exp(-2 (p - c)**2 / tau) is below the smallest double at every position (exponents -1800 to -5000), but
    each feature's largest is taken out first: one bump, so every query averages with the key weights
    exp(-2 (p_j - c)**2 / tau), which give the key nearest the centre all but exp(-600) of the weight."""
    s = np.array([1.0, 2.0, 3.0])
    output = positive_features.positive_feature_head(s, [0.0, 0.1, 0.2], 1e-4, [0.5])
    np.testing.assert_allclose(output, 3.0, rtol=0, atol=1e-12)
