"""Measures of error and of attention: rmse, entropy, the softmax's derivative, effective
neighbours, distances from the identity and from uniform, local share, most attended, shrunk share,
the moments of a row."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import matrices
from tolerances import TINY, rounding

import selfattention as sa
from selfattention import metrics


def test_rmse():
    assert metrics.rmse([1.0, 3.0], [1.0, 1.0]) == pytest.approx(np.sqrt(2.0), rel=rounding(2), abs=0)  # two roots
    assert metrics.rmse([2.0, 2.0], [2.0, 2.0]) == 0.0


@given(hnp.arrays(np.float64, st.integers(1, 20), elements=st.floats(-10, 10)), st.floats(-5, 5))
def test_rmse_of_a_constant_offset_is_its_size(truth, offset):
    # truth + offset - truth is offset to two roundings on |truth| + |offset|; the mean of n squares and its
    # root round n + 3 times more on |offset|.
    atol = rounding(2, np.abs(truth).max() + abs(offset)) + rounding(len(truth) + 3, abs(offset))
    assert metrics.rmse(truth + offset, truth) == pytest.approx(abs(offset), rel=0, abs=atol)


def test_entropy_of_uniform_and_one_hot_rows():
    w = np.array([[0.25, 0.25, 0.25, 0.25], [0.0, 1.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]])
    # Four logarithms of 1 ulp (2 roundings each), scaled exactly, summed: n + 3 roundings on log 4.
    np.testing.assert_allclose(metrics.entropy(w), [np.log(4), 0.0, np.log(2)], rtol=0, atol=rounding(4 + 3, np.log(4)))


@given(matrices())
def test_entropy_of_softmax_rows_lies_between_zero_and_log_n(x):
    h = metrics.entropy(sa.softmax(x))
    n = x.shape[1]
    assert np.all(h >= 0)  # exactly: every a log a of a weight in [0, 1] is <= 0
    # Above log n by the rounding of the n terms, their logarithms and the reference's (n + 4 on log n), and by
    # the rows' sums' distance from 1 (2 n eps, times log n): 3 n + 4 roundings on max(log n, 1).
    assert np.all(h <= np.log(n) + rounding(3 * n + 4, max(np.log(n), 1.0)))


def test_effective_neighbours_limits():
    n = 7
    np.testing.assert_array_equal(metrics.effective_neighbours(np.eye(n)), 1.0)  # 1 / (1 + 0 + ...): exact
    # 1 / n, its n squares, their sum and the reciprocal: n + 3 roundings, relative to the result.
    np.testing.assert_allclose(metrics.effective_neighbours(np.full((n, n), 1 / n)), n, rtol=rounding(n + 3), atol=0)
    half = np.kron(np.eye(2), np.full((3, 3), 1 / 3))  # two blocks of 3 tokens each
    np.testing.assert_allclose(metrics.effective_neighbours(half), 3.0, rtol=rounding(6 + 3), atol=0)


def test_distances_from_the_two_limits():
    n = 5
    assert metrics.distance_from_identity(np.eye(n)) == 0.0
    assert metrics.distance_from_uniform(np.full((n, n), 1 / n)) == 0.0
    # |1/n - 1| on both sides: 1 / n and the difference, 2 roundings on 1.
    assert metrics.distance_from_identity(np.full((n, n), 1 / n)) == pytest.approx(1 - 1 / n, rel=0, abs=rounding(2))
    assert metrics.distance_from_uniform(np.eye(n)) == pytest.approx(1 - 1 / n, rel=0, abs=rounding(2))


@given(matrices(elements=st.floats(-20, 20)))
def test_jacobian_norm_is_the_size_of_the_softmaxs_derivative(e):
    a = sa.softmax(e)  # (rows, n)
    explicit = np.array([np.linalg.norm(np.diag(row) - np.outer(row, row)) for row in a])  # diag(a) - a^T a
    jacobian = metrics.jacobian_norm(a)
    # ||J||**2 two ways: the package's sums of a_j**2, with a cancellation in its pairs term, and the n**2
    # squared entries: n**2 + 2 n + 8 roundings on the sizes of all those terms; the roots then differ by
    # |x - y| / (sqrt(x) + sqrt(y)).
    n, b = a.shape[1], np.sort(a**2, axis=1)
    rest = b[:, :-1].sum(axis=1)
    terms = np.sum((a - a**2) ** 2, axis=1) + 2 * b[:, -1] * rest + rest**2 + np.sum(b**2, axis=1) + explicit**2
    atol = rounding(n * n + 2 * n + 8, 1.0) * terms / np.maximum(jacobian + explicit, TINY)
    assert np.all(np.abs(jacobian - explicit) <= atol)


def test_jacobian_norm_is_the_derivative_of_the_packages_softmax():
    e = np.random.default_rng(0).standard_normal(7) * 3  # one row of scores
    step = 1e-6
    J = np.column_stack([(sa.softmax(e + step * u) - sa.softmax(e - step * u)) / (2 * step) for u in np.eye(7)])
    # Not rounding alone: central differences err by step**2 |a'''| / 6 (below 1e-12) plus the weights' rounding
    # over the step (9 eps / 2e-6 an entry: 1e-9, 1e-8 in the norm at worst).
    assert metrics.jacobian_norm(sa.softmax(e)[None, :])[0] == pytest.approx(np.linalg.norm(J), rel=1e-6)


def test_jacobian_norm_of_one_hot_and_uniform_rows():
    n = 16
    np.testing.assert_array_equal(metrics.jacobian_norm(np.eye(3)), 0.0)  # saturated: nothing moves
    # n = 16: 1 / n and its powers are exact, so both sides round one square root of 15 / 256.
    assert metrics.jacobian_norm(np.full((1, n), 1 / n))[0] == np.sqrt((1 - 1 / n) / n)


def test_shrunk_share_counts_strictly_smaller_magnitudes():
    assert metrics.shrunk_share([0.5, -2.0, 1.0, 0.0], [1.0, 1.0, -1.0, -0.1]) == 2 / 4  # a count over 4: exact
    assert metrics.shrunk_share([1.0], [1.0]) == 0.0, "equal magnitude is not shrunk"


def test_most_attended_is_the_largest_or_smallest_value_for_the_onedim_head():
    from selfattention.studies.onedim import onedim_head

    x = np.array([0.3, -2.0, 1.0, 2.5, -0.4])
    _, weights = onedim_head(x)
    expected = np.where(x > 0, np.argmax(x), np.argmin(x))
    np.testing.assert_array_equal(metrics.most_attended(weights), expected)


def test_local_share_of_uniform_and_identity_weights():
    p = np.linspace(0.0, 1.0, 11)  # spacing 0.1
    uniform = np.full((11, 11), 1 / 11)
    assert metrics.local_share(np.eye(11), p, 0.0) == 1.0
    # Row sums of 11 entries (1 / 11 or 0), their mean over 11 rows: 23 roundings on at most 1.
    assert metrics.local_share(uniform, p, 0.0) == pytest.approx(1 / 11, rel=0, abs=rounding(23))
    # Within 0.1: 2 neighbours at the two ends, 3 elsewhere.
    assert metrics.local_share(uniform, p, 0.1 + 1e-9) == pytest.approx((2 * 2 + 9 * 3) / 121, rel=0, abs=rounding(23))


def test_mean_attended_distance_of_known_matrices():
    p = np.linspace(0, 1, 5)
    assert metrics.mean_attended_distance(np.eye(5), p) == 0
    flipped = np.stack([np.eye(5), np.eye(5)[::-1]])  # a batch: itself, and the mirror token
    assert metrics.mean_attended_distance(flipped, p) == np.mean(np.abs(p - p[::-1])) / 2  # dyadic: exact
    uniform = np.full((101, 101), 1 / 101)
    # The mean distance between points of a grid of n on [0, 1] is (n + 1) / (3 n) (1/3 as n grows); the grid
    # (2 roundings a distance), the products and the sums of 101 terms over 101 rows round on at most 1.
    mean = metrics.mean_attended_distance(uniform, np.linspace(0, 1, 101))
    assert mean == pytest.approx(102 / 303, rel=0, abs=rounding(2 + 1 + 101 + 101))


def test_row_moments_of_known_rows():
    p = np.array([0.0, 0.25, 1.0])
    centres, spreads = metrics.row_moments([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]], p)
    # Exactly: dyadic positions and weights; the offsets from the middle, their power-of-two scale, the products,
    # the sums and the root of 1/16 are all exact.
    np.testing.assert_array_equal(centres, [0.125, 1.0])
    np.testing.assert_array_equal(spreads, [0.125, 0.0])


@pytest.mark.parametrize("shift", [0.0, 1e6])
def test_row_moments_of_a_gaussian_row_are_its_centre_and_bandwidth(shift):
    """Against nadaraya_watson's weights, written from the kernel's formula: a dense grid, far from the ends."""
    p = np.linspace(0.0, 1.0, 2001) + shift
    h = 0.04
    _, weights = sa.nadaraya_watson([0.4 + shift], p, np.zeros_like(p), h)  # (1, n)
    centres, spreads = metrics.row_moments(weights, p)
    # the sums approximate the Gaussian's integrals; the tails beyond 10 h (the ends) weigh exp(-50)
    assert centres[0] == pytest.approx(0.4 + shift, abs=1e-9)
    assert spreads[0] == pytest.approx(h, rel=1e-6)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: metrics.rmse([1.0], [1.0, 2.0]), "estimate and truth must have the same length"),
        (lambda: metrics.rmse([], []), "estimate must hold at least one value"),
        (lambda: metrics.entropy([[0.5, -0.5]]), "weights must lie in \\[0, 1\\]"),
        (lambda: metrics.entropy([0.5, 0.5]), "weights must be 2-dimensional"),
        (lambda: metrics.distance_from_identity(np.ones((2, 3))), "weights must be a non-empty square"),
        (lambda: metrics.distance_from_uniform(np.ones(3)), "weights must be 2-dimensional"),
        (lambda: metrics.effective_neighbours([[np.nan]]), "weights contains NaN"),
        (lambda: metrics.most_attended(np.ones(3)), "weights must be 2-dimensional"),
        (lambda: metrics.local_share(np.eye(2), [0.0, 1.0, 2.0], 0.1), "weights must have shape"),
        (lambda: metrics.local_share(np.eye(2), [0.0, 1.0], -0.1), "radius must not be negative"),
        (lambda: metrics.jacobian_norm([[1.5, -0.5]]), r"weights must lie in \[0, 1\]"),
        (lambda: metrics.jacobian_norm([0.5, 0.5]), "weights must be 2-dimensional"),
        (lambda: metrics.shrunk_share([1.0], [1.0, 2.0]), "output and signal must have the same length"),
        (lambda: metrics.shrunk_share([], []), "signal must hold at least one value"),
        (lambda: metrics.mean_attended_distance(np.eye(4), np.ones(5)), "weights must have shape"),
        (lambda: metrics.mean_attended_distance(np.ones(5), np.ones(5)), "weights must have shape"),
        (lambda: metrics.row_moments(np.eye(2), [0.0, 1.0, 2.0]), "weights must have one column per position"),
        (lambda: metrics.row_moments([[0.5, 0.6]], [0.0, 1.0]), "weights must"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
