"""softmax and attention: properties, references and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special
from hypothesis import given
from hypothesis import strategies as st
from strategies import finite, matrices, moderate, qkv, temperatures
from tolerances import TINY, average_atol, rounding, softmax_rtol

import selfattention as sa


def slow_attention(Q, K, V, temperature):
    """Attention written as plain loops, straight from the definition."""
    n_q, n_k = len(Q), len(K)
    weights = np.zeros((n_q, n_k))
    for i in range(n_q):
        scores = [sum(Q[i][a] * K[j][a] for a in range(len(Q[i]))) / temperature for j in range(n_k)]
        top = max(scores)
        exps = [np.exp(s - top) for s in scores]
        weights[i] = [e / sum(exps) for e in exps]
    output = np.array([[sum(weights[i][j] * V[j][c] for j in range(n_k)) for c in range(len(V[0]))]
                       for i in range(n_q)])
    return output, weights


# --- softmax -----------------------------------------------------------------


@given(matrices(elements=finite))
def test_softmax_rows_are_probability_distributions(x):
    w = sa.softmax(x)
    assert np.all(w >= 0)
    # Normalising (n - 1 additions, a division) and summing again (n - 1): 2 n roundings on at most 1.
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=rounding(2 * x.shape[-1]))


@given(matrices(), moderate)
def test_softmax_is_unchanged_by_adding_a_constant_to_a_row(x, c):
    # x + c, m + c and their difference round on max|x| + |c|, and x - m once more: 4 roundings of the scores.
    gap = rounding(4, np.abs(x).max() + abs(c))
    np.testing.assert_allclose(sa.softmax(x + c), sa.softmax(x), rtol=softmax_rtol(x.shape[-1], gap), atol=TINY)


@given(matrices(), st.integers(0, 1))
def test_softmax_matches_scipy(x, axis):
    # Both compute exp(x - max) / sum: the subtraction rounds on 2 max|x| in each.
    rtol = softmax_rtol(x.shape[axis], rounding(2, 2 * np.abs(x).max()))
    np.testing.assert_allclose(sa.softmax(x, axis=axis), scipy.special.softmax(x, axis=axis), rtol=rtol, atol=TINY)


def test_softmax_does_not_overflow_on_huge_scores():
    w = sa.softmax([1e300, 0.0, -1e300])
    np.testing.assert_array_equal(w, [1.0, 0.0, 0.0])  # exp(0) / (1 + 0 + 0): exact


def test_softmax_of_very_negative_scores_is_finite():
    w = sa.softmax([-1e300, -1e300])
    np.testing.assert_array_equal(w, [0.5, 0.5])  # 1 / (1 + 1): exact


def test_softmax_of_extreme_gap_gives_zero_not_nan():
    w = sa.softmax([1.7e308, -1.7e308])  # the gap overflows to -inf: exp gives 0
    np.testing.assert_array_equal(w, [1.0, 0.0])


def test_softmax_gives_masked_scores_zero_weight():
    np.testing.assert_array_equal(sa.softmax([[0.0, -np.inf], [-np.inf, 1.0]]), [[1.0, 0.0], [0.0, 1.0]])


@pytest.mark.parametrize(
    ("x", "message"),
    [
        ([[0.0, 1.0], [-np.inf, -np.inf]], "entirely -inf"),
        ([0.0, np.nan], "NaN"),
        ([0.0, np.inf], "infinite"),
        (3.0, "at least one dimension"),
        ([["a", "b"]], "real numbers"),
    ],
)
def test_softmax_rejects_bad_input(x, message):
    with pytest.raises(ValueError, match=message):
        sa.softmax(x)


# --- attention ---------------------------------------------------------------


@given(qkv(elements=st.floats(-10, 10)), temperatures)
def test_attention_matches_a_slow_loop(qkv, temperature):
    Q, K, V = qkv
    output, weights = sa.attention(Q, K, V, temperature)
    ref_output, ref_weights = slow_attention(Q, K, V, temperature)
    n, d_k = K.shape
    # Scores: d_k products and additions on (|Q| |K|^T) / tau, then the row maximum and tau: 4 more on 2 max.
    gap = rounding(2 * d_k + 4, (np.abs(Q) @ np.abs(K).T).max() / temperature)
    np.testing.assert_allclose(weights, ref_weights, rtol=softmax_rtol(n, gap), atol=TINY)
    np.testing.assert_allclose(output, ref_output, rtol=0, atol=average_atol(n, np.abs(V), gap))


@given(qkv())
def test_attention_outputs_stay_within_the_range_of_each_value_column(qkv):
    Q, K, V = qkv
    output, _ = sa.attention(Q, K, V)
    # Exactly: attention clips its averages to each column's range (rounding alone could step out of it).
    assert np.all(output >= V.min(axis=0))
    assert np.all(output <= V.max(axis=0))


@given(qkv())
def test_attention_weights_are_row_stochastic_with_the_right_shapes(qkv):
    Q, K, V = qkv
    output, weights = sa.attention(Q, K, V)
    assert output.shape == (Q.shape[0], V.shape[1])
    assert weights.shape == (Q.shape[0], K.shape[0])
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=0, atol=rounding(2 * K.shape[0]))  # as for softmax


def test_attention_default_temperature_is_sqrt_dk():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    np.testing.assert_array_equal(sa.attention(Q, K, V)[1], sa.attention(Q, K, V, 2.0)[1])  # sqrt(4) is 2.0 exactly
    # scipy divides before subtracting the maximum: 2 roundings more on the scores Q K^T / 2 (4 products each).
    gap = rounding(2 * 4 + 4, (np.abs(Q) @ np.abs(K).T).max() / 2.0)
    np.testing.assert_allclose(sa.attention(Q, K, V)[1], scipy.special.softmax(Q @ K.T / 2.0, axis=1),
                               rtol=softmax_rtol(5, gap), atol=TINY)


def test_attention_mask_zeroes_masked_weights_and_renormalises():
    rng = np.random.default_rng(1)
    Q, K, V = rng.normal(size=(3, 2)), rng.normal(size=(3, 2)), rng.normal(size=(3, 1))
    mask = ~np.eye(3, dtype=bool)
    _, weights = sa.attention(Q, K, V, 1.0, mask=mask)
    np.testing.assert_array_equal(np.diag(weights), 0.0)  # exp(-inf) is 0 exactly
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=0, atol=rounding(2 * 3))  # as for softmax
    expected = scipy.special.softmax(np.where(mask, Q @ K.T, -np.inf), axis=1)
    gap = rounding(2 * 2 + 4, (np.abs(Q) @ np.abs(K).T).max())  # 2 products and sums a score, then the maximum
    np.testing.assert_allclose(weights, expected, rtol=softmax_rtol(3, gap), atol=TINY)


ONES = np.ones((2, 2))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(Q=np.ones((2, 3)), K=ONES, V=ONES), "Q and K must have the same number of columns"),
        (dict(Q=ONES, K=ONES, V=np.ones((3, 2))), "K and V must have the same number of rows"),
        (dict(Q=np.ones(2), K=ONES, V=ONES), "Q must be 2-dimensional"),
        (dict(Q=ONES, K=ONES, V=[[1.0, np.nan], [0.0, 0.0]]), "V contains NaN"),
        (dict(Q=ONES, K=[[np.inf, 0.0], [0.0, 0.0]], V=ONES), "K contains infinite"),
        (dict(Q=ONES, K=ONES, V=ONES, temperature=0.0), "temperature must be positive"),
        (dict(Q=ONES, K=ONES, V=ONES, temperature=-1.0), "temperature must not be negative"),
        (dict(Q=ONES, K=ONES, V=ONES, temperature=np.nan), "temperature must be finite"),
        (dict(Q=ONES, K=ONES, V=ONES, temperature=np.inf), "temperature must be finite"),
        (dict(Q=ONES, K=ONES, V=ONES, temperature="1"), "temperature must be a real number"),
        (dict(Q=ONES, K=ONES, V=ONES, mask=np.ones((2, 2))), "mask must be a boolean"),
        (dict(Q=ONES, K=ONES, V=ONES, mask=np.ones((2, 3), bool)), "mask must have shape"),
        (dict(Q=ONES, K=ONES, V=ONES, mask=np.array([[1, 1], [0, 0]], bool)), "no key to attend to"),
    ],
)
def test_attention_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        sa.attention(**kwargs)
