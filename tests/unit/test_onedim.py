"""The 1-D head: scores are products of values, and it is blind to positions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tolerances import TINY, average_atol, rounding, softmax_rtol

import selfattention as sa
from selfattention.studies import onedim

values = hnp.arrays(np.float64, st.integers(2, 12), elements=st.floats(-3, 3))


def test_onedim_head_weights_are_softmax_of_c_times_value_products():
    x = np.array([0.5, -1.0, 2.0, 0.0])
    _, weights = onedim.onedim_head(x, w_q=2.0, w_k=1.5, temperature=3.0)
    c = 2.0 * 1.5 / 3.0
    # Dyadic values: the products are exact; the head divides its scaled scores (at most 8) by 3, once.
    np.testing.assert_allclose(weights, sa.softmax(c * np.outer(x, x)), rtol=softmax_rtol(4, rounding(1, 8.0)),
                               atol=TINY)


def test_onedim_head_output_is_the_weighted_average_of_scaled_values():
    x = np.array([0.5, -1.0, 2.0])
    output, weights = onedim.onedim_head(x, w_v=3.0)
    # The same weights and values (3 x is exact); a product of matrices or of a matrix and a vector: 2 n roundings.
    np.testing.assert_allclose(output, weights @ (3.0 * x), rtol=0, atol=rounding(2 * 3, 3.0 * np.abs(x).max()))


@given(values, st.floats(-4, 4), st.floats(0.1, 4), st.floats(0.1, 4))
def test_only_the_score_strength_matters(x, w_q, w_k, tau):
    c = w_q * w_k / tau  # the score strength
    _, w_a = onedim.onedim_head(x, w_q=w_q, w_k=w_k, temperature=tau)
    _, w_b = onedim.onedim_head(x, w_q=c)
    # Three products and a division on one side, c and two products on the other, the row maximum on both:
    # 8 roundings on the scaled scores, at most max|x|**2 |c|.
    gap = rounding(8, np.abs(x).max() ** 2 * abs(c))
    np.testing.assert_allclose(w_a, w_b, rtol=softmax_rtol(x.size, gap), atol=TINY)


@given(values, st.integers(0, 2**32 - 1))
def test_the_head_is_blind_to_positions(x, seed):
    order = np.random.default_rng(seed).permutation(x.size)
    out, _ = onedim.onedim_head(x)
    out_shuffled, _ = onedim.onedim_head(x[order])
    # The same scores, shuffled: only the sums run in another order.
    np.testing.assert_allclose(out_shuffled, out[order], rtol=0, atol=average_atol(x.size, np.abs(x)))


@given(values)
def test_output_is_one_nondecreasing_function_of_the_own_value(x):
    out, _ = onedim.onedim_head(x)  # c = 1 > 0
    order = np.argsort(x, kind="stable")
    # Each output is within half of two computations' gap of its exact, nondecreasing value.
    assert np.all(np.diff(out[order]) >= -average_atol(x.size, np.abs(x)))


@given(values, st.floats(-4, 4), st.floats(-2, 2))
def test_onedim_curve_is_the_heads_output_and_its_slope(x, c, w_v):
    output, _ = onedim.onedim_head(x, w_q=c, w_v=w_v)
    g, _ = onedim.onedim_curve(x, x, c, w_v)
    # The reference: the head itself. c x s against (x c)(x 1), then the row maximum: 6 roundings on
    # |c| max|x|**2; w_v multiplies the average on one side, the values on the other.
    gap = rounding(6, abs(c) * np.abs(x).max() ** 2)
    atol = average_atol(x.size, abs(w_v) * np.abs(x), gap) + rounding(1, abs(w_v) * np.abs(x).max())
    np.testing.assert_allclose(g, output, rtol=0, atol=atol)
    step, at = 1e-6, np.array([-0.7, 0.3])
    (up_1, up_2), _ = onedim.onedim_curve(x, at + step, c, w_v)
    (down_1, down_2), _ = onedim.onedim_curve(x, at - step, c, w_v)
    _, slope = onedim.onedim_curve(x, at, c, w_v)
    # Not rounding alone: central differences err by step**2 |g'''| / 6 (|c|**3 times moments of x: below 1e-7)
    # plus the rounding of g over the step (below 1e-7).
    np.testing.assert_allclose(slope, [(up_1 - down_1) / (2 * step), (up_2 - down_2) / (2 * step)], atol=1e-5)


def test_onedim_curve_at_zero_is_the_mean_with_slope_c_times_the_variance():
    x = np.array([0.5, -1.0, 2.0, 0.25])
    (g0,), (slope0,) = onedim.onedim_curve(x, [0.0], 1.5, w_v=2.0)
    # Uniform weights 1 / n (rounded) against numpy's mean: n + 2 roundings on 2 max|x|.
    assert g0 == pytest.approx(2.0 * x.mean(), rel=0, abs=rounding(4 + 2, 2.0 * np.abs(x).max()))
    # E[s**2] - E[s]**2 against the mean of squared deviations: 2 n + 4 roundings on c w_v max|x|**2.
    assert slope0 == pytest.approx(1.5 * 2.0 * x.var(), rel=0, abs=rounding(2 * 4 + 4, 3.0 * np.abs(x).max() ** 2))


def test_strength_sweep_matches_the_head_and_rmse():
    x = np.array([0.2, 1.1, -0.7, 0.4])
    truth = np.array([0.0, 1.0, -1.0, 0.5])
    errors = onedim.strength_sweep(x, truth, [0.0, 2.0])
    out, _ = onedim.onedim_head(x, w_q=2.0)
    # An RMSE moves by at most as much as its errors; at c = 0 the head's uniform average against numpy's mean
    # (n + 2 roundings on max|x|); the two RMSE formulas round n + 4 times on their result.
    mean_rmse = np.sqrt(np.mean((x.mean() - truth) ** 2))
    atol = rounding(4 + 2, np.abs(x).max()) + rounding(4 + 4, mean_rmse)
    assert errors[0] == pytest.approx(mean_rmse, rel=0, abs=atol)
    assert errors[1] == pytest.approx(np.sqrt(np.mean((out - truth) ** 2)), rel=rounding(4 + 4), abs=0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: onedim.onedim_head([]), "signal must hold at least one value"),
        (lambda: onedim.onedim_head([[1.0, 2.0]]), "signal must be 1-dimensional"),
        (lambda: onedim.onedim_head([1.0], w_q=[1.0, 2.0]), "w_q must be a real number"),
        (lambda: onedim.onedim_head([1.0], w_k=float("nan")), "w_k must be finite"),
        (lambda: onedim.onedim_head([1.0], temperature=0.0), "temperature must be positive"),
        (lambda: onedim.strength_sweep([1.0, 2.0], [1.0], [1.0]), "signal and clean"),
        (lambda: onedim.strength_sweep([1e308, 1e308], [-1e308, -1e308], [0.0]),
         "signal and clean: estimate and truth: their difference overflows"),
                (lambda: onedim.onedim_curve([], [0.0], 1.0), "signal must hold at least one value"),
        (lambda: onedim.onedim_curve([1.0], [[0.0]], 1.0), "values must be 1-dimensional"),
        (lambda: onedim.onedim_curve([1.0], [0.0], float("nan")), "strength must be finite"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
