"""selfattention.learning: the head's loss against its definition, the hand-derived gradient, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tolerances import average_atol, mse_atol, rounding

import selfattention as sa
from selfattention import learning

small = st.floats(min_value=-2.0, max_value=2.0, allow_nan=False)


@st.composite
def problems(draw):
    """Random projections, tokens (one signal or a batch), values and maybe targets."""
    b, n, d, d_k = draw(st.integers(1, 3)), draw(st.integers(2, 7)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    lead = (b,) if draw(st.booleans()) else ()
    W_Q, W_K = (draw(hnp.arrays(np.float64, (d, d_k), elements=small)) for _ in range(2))
    X = draw(hnp.arrays(np.float64, (*lead, n, d), elements=small))
    y = draw(hnp.arrays(np.float64, (*lead, n), elements=small))
    targets = draw(st.none() | hnp.arrays(np.float64, (*lead, n), elements=small))
    return W_Q, W_K, X, y, targets


def loss_by_loops(W_Q, W_K, X, y, targets):
    """The loss written from its definition, one query at a time (no shared code)."""
    X, y = np.atleast_3d(X) if X.ndim == 3 else X[None], np.atleast_2d(y)
    t = y if targets is None else np.atleast_2d(targets)
    total = 0.0
    for Xb, yb, tb in zip(X, y, t, strict=True):
        for i in range(len(yb)):
            keys = [j for j in range(len(yb)) if targets is not None or j != i]
            e = np.array([Xb[i] @ W_Q @ W_K.T @ Xb[j] for j in keys])
            a = np.exp(e - e.max()) / np.exp(e - e.max()).sum()
            total += (a @ yb[keys] - tb[i]) ** 2
    return total / y.size


def loss_atol(W_Q, W_K, X, values, score_gap=0.0):
    """How far two computations of the head's loss can be apart (n tokens, d features, d_k dimensions).

    A score ``x_i W_Q W_K^T x_j``, in any order, sums ``d * d_k * d`` products of four factors: 4 roundings
    each, with the sums, on ``|x_i| |W_Q| |W_K|^T |x_j|``; then the row maximum (4 more), the weighted
    averages and the mean of the squared residuals, at most twice ``max|values|`` (values and targets).
    ``score_gap`` adds what moves the scores otherwise.
    """
    Xa = np.abs(X).reshape(-1, X.shape[-1])
    scores = (Xa @ np.abs(W_Q) @ np.abs(W_K).T @ Xa.T).max()
    n, d = X.shape[-2], X.shape[-1]
    gap = rounding(4 * d * W_Q.shape[1] * d + 4, scores) + score_gap
    return mse_atol(np.size(values), 2 * np.abs(values).max(), average_atol(n, np.abs(values), gap))


def central_differences(W_Q, W_K, X, y, targets, h=1e-6):
    grads = []
    for k in range(2):
        g = np.zeros_like((W_Q, W_K)[k])
        for index in np.ndindex(g.shape):
            W = [[W_Q.copy(), W_K.copy()] for _ in range(2)]
            W[0][k][index] += h
            W[1][k][index] -= h
            g[index] = (loss_by_loops(*W[0], X, y, targets) - loss_by_loops(*W[1], X, y, targets)) / (2 * h)
        grads.append(g)
    return grads


@settings(max_examples=40, deadline=None)
@given(problems())
def test_loss_matches_its_definition_and_gradient_matches_central_differences(problem):
    W_Q, W_K, X, y, targets = problem
    loss, dW_Q, dW_K = learning.attention_loss_and_grad(W_Q, W_K, X, y, targets)
    values = y if targets is None else np.concatenate([np.ravel(y), np.ravel(targets)])  # residuals: values - targets
    assert abs(loss - loss_by_loops(W_Q, W_K, X, y, targets)) <= loss_atol(W_Q, W_K, X, values)
    nW_Q, nW_K = central_differences(W_Q, W_K, X, y, targets)
    # Not rounding alone: central differences err by h**2 |L'''| / 6 (h = 1e-6) plus the losses' rounding
    # over h; 1e-6 of the gradient's scale allows third derivatives up to 6e6 (scores of a few hundred).
    # Measured over 60 examples: below 6e-10.
    scale = max(1.0, np.abs(nW_Q).max(), np.abs(nW_K).max())
    np.testing.assert_allclose(dW_Q, nW_Q, atol=1e-6 * scale)
    np.testing.assert_allclose(dW_K, nW_K, atol=1e-6 * scale)


@settings(max_examples=15, deadline=None)
@given(problems())
def test_the_packages_numerical_gradient_agrees(problem):
    W_Q, W_K, X, y, targets = problem
    analytic = learning.attention_loss_and_grad(W_Q, W_K, X, y, targets)[1:]
    for a, b in zip(analytic, learning.numerical_gradient(W_Q, W_K, X, y, targets), strict=True):
        # Central differences, as in the test above (the package's step is 1e-6 too).
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6 * max(1.0, np.abs(b).max()))


def test_loo_loss_is_the_masked_head_through_attention():
    rng = np.random.default_rng(0)
    X, y, W_Q, W_K = rng.standard_normal((9, 3)), rng.standard_normal(9), *rng.standard_normal((2, 3, 2))
    prediction, weights = learning.learned_head(W_Q, W_K, X, y, leave_one_out=True)
    assert np.all(np.diag(weights) == 0)
    # learned_head runs attention, backprop its own forward pass: the same math in other orders.
    loss = learning.loo_loss_and_grad(W_Q, W_K, X, y)[0]
    assert abs(loss - np.mean((prediction - y) ** 2)) <= loss_atol(W_Q, W_K, X, y)
    output, _ = sa.attention(X @ W_Q, X @ W_K, y[:, None], 1.0)
    np.testing.assert_array_equal(learning.learned_head(W_Q, W_K, X, y)[0], output[:, 0])  # the same calls


def test_gradient_of_the_keys_constant_row_is_zero():
    """Each row of dL/dE sums to zero, so the key's constant feature gets no gradient."""
    rng = np.random.default_rng(1)
    p, y = np.linspace(0, 1, 15), rng.standard_normal(15)
    X = learning.token_features(p)  # last column is 1
    W_Q, W_K = rng.standard_normal((2, 3, 3))
    _, _, dW_K = learning.loo_loss_and_grad(W_Q, W_K, X, y)
    # Zero but for rounding: the row sums sum_j sum_i dL/de_ij q_i, n terms and then n, of the sizes
    # |dL/de_ij| |q_i|, with dL/de_ij = 2 (output_i - y_i) / n * a_ij (y_j - output_i).
    output, A = learning.learned_head(W_Q, W_K, X, y, leave_one_out=True)
    dE = np.abs(2 * (output - y) / 15)[:, None] * A * np.abs(y[None, :] - output[:, None])  # (n, n)
    terms = (dE.T @ np.abs(X @ W_Q)).sum(axis=0)  # (d_k,)
    assert np.all(np.abs(dW_K[-1]) <= rounding(2 * 15 + 2, terms))


@given(hnp.arrays(np.float64, (3, 3), elements=st.floats(-3, 3)))
def test_reparametrised_projections_give_the_same_loss(G):
    assume(np.linalg.svd(G, compute_uv=False).min() > 0.1)
    rng = np.random.default_rng(2)
    X, y, W_Q, W_K = rng.standard_normal((8, 4)), rng.standard_normal(8), *rng.standard_normal((2, 4, 3))
    loss = learning.loo_loss_and_grad(W_Q, W_K, X, y)[0]
    G_inv = np.linalg.inv(G)
    W_Q2, W_K2 = W_Q @ G, W_K @ G_inv.T
    # The same scores, but for G's computed inverse (G G^-1 = I to 3 cond(G) eps, LU's residual) and the
    # products with G and G^-1 (2 * 3 roundings each on |W| |G| |G^-1| |W|): on the terms' sizes.
    terms = (np.abs(X) @ np.abs(W_Q) @ np.abs(G) @ np.abs(G_inv) @ np.abs(W_K).T @ np.abs(X).T).max()
    atol = loss_atol(W_Q, W_K, X, y, score_gap=rounding(3 * np.linalg.cond(G) + 12, terms))
    assert abs(learning.loo_loss_and_grad(W_Q2, W_K2, X, y)[0] - loss) <= atol


def test_token_features_columns_and_batches():
    p = np.array([0.0, 0.5, 1.0])
    # Dyadic positions: 2 p - 1 and its square are exact.
    np.testing.assert_array_equal(learning.token_features(p), [[-1, 1, 1], [0, 0, 1], [1, 1, 1]])
    np.testing.assert_array_equal(learning.token_features(p, [2.0, 3.0, 4.0])[:, 0], [2, 3, 4])
    X = learning.token_features(p, np.ones((5, 3)), signal_square=True)
    assert X.shape == (5, 3, 5)
    np.testing.assert_array_equal(X[0, 1], [1, 1, 0, 0, 1])


def test_centred_tokens_are_an_invertible_map_of_the_engineered_heads_tokens():
    p = np.linspace(0, 1, 11)
    raw = sa.positional_features(np.zeros_like(p), p)[:, 1:]  # [p, p^2, 1]
    T = np.linalg.lstsq(raw, learning.token_features(p), rcond=None)[0]  # (3, 3)
    # An exact fit: LAPACK's least squares is backward stable, its residual a small multiple of m n eps
    # (m = 11, n = 3) of |raw| |T| + |F|; the product raw @ T rounds 6 times more.
    atol = rounding(3 * 11 * 3 + 6, np.abs(raw) @ np.abs(T) + np.abs(learning.token_features(p)))
    np.testing.assert_allclose(raw @ T, learning.token_features(p), rtol=0, atol=atol)
    assert abs(np.linalg.det(T)) > 1


GOOD = dict(W_Q=np.ones((3, 2)), W_K=np.ones((3, 2)), X=np.ones((4, 3)), y=np.ones(4))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: learning.attention_loss_and_grad(**{**GOOD, "X": np.ones(4)}), "X must have shape"),
        (lambda: learning.attention_loss_and_grad(**{**GOOD, "X": np.ones((1, 3))}), "X must have shape"),
        (lambda: learning.attention_loss_and_grad(**{**GOOD, "y": np.ones(5)}), "y must have shape"),
        (lambda: learning.attention_loss_and_grad(**GOOD, targets=np.ones(3)), "targets must have shape"),
        (lambda: learning.attention_loss_and_grad(**{**GOOD, "W_Q": np.ones((2, 2))}), "W_Q and W_K must both"),
        (lambda: learning.attention_loss_and_grad(**{**GOOD, "W_K": np.ones((3, 1))}), "W_Q and W_K must both"),
        (lambda: learning.attention_loss_and_grad(**{**GOOD, "y": [1, 2, np.nan, 4]}), "y contains NaN"),
        (lambda: learning.loo_loss_and_grad(**{**GOOD, "X": np.ones((2, 4, 3))}), "X must be 2-dimensional"),
        (lambda: learning.token_features([0.0, 1.0], [1.0, 2.0, 3.0]), "signal must have shape"),
        (lambda: learning.token_features([0.0, 1.0], signal_square=True), "signal_square needs a signal"),
        (lambda: learning.numerical_gradient(**GOOD, step=0), "step must be positive"),
        (lambda: learning.numerical_gradient(**GOOD, step=5e-324), "step must be at least 1.49e-08"),
        (lambda: learning.numerical_gradient(**GOOD, step=1e308), "step must be at most 1 "),
        (lambda: learning.learned_head(**{**GOOD, "y": np.ones((1, 4))}), "y must be 1-dimensional"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
