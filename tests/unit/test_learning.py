"""selfattention.learning: the head's loss against its definition, the hand-derived gradient, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

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
    assert loss == pytest.approx(loss_by_loops(W_Q, W_K, X, y, targets), rel=1e-10, abs=1e-12)
    nW_Q, nW_K = central_differences(W_Q, W_K, X, y, targets)
    scale = max(1.0, np.abs(nW_Q).max(), np.abs(nW_K).max())
    np.testing.assert_allclose(dW_Q, nW_Q, atol=1e-6 * scale)
    np.testing.assert_allclose(dW_K, nW_K, atol=1e-6 * scale)


@settings(max_examples=15, deadline=None)
@given(problems())
def test_the_packages_numerical_gradient_agrees(problem):
    W_Q, W_K, X, y, targets = problem
    analytic = learning.attention_loss_and_grad(W_Q, W_K, X, y, targets)[1:]
    for a, b in zip(analytic, learning.numerical_gradient(W_Q, W_K, X, y, targets), strict=True):
        np.testing.assert_allclose(a, b, atol=1e-6 * max(1.0, np.abs(b).max()))


def test_loo_loss_is_the_masked_head_through_attention():
    rng = np.random.default_rng(0)
    X, y, W_Q, W_K = rng.standard_normal((9, 3)), rng.standard_normal(9), *rng.standard_normal((2, 3, 2))
    prediction, weights = learning.learned_head(W_Q, W_K, X, y, leave_one_out=True)
    assert np.all(np.diag(weights) == 0)
    assert learning.loo_loss_and_grad(W_Q, W_K, X, y)[0] == pytest.approx(np.mean((prediction - y) ** 2), rel=1e-12)
    output, _ = sa.attention(X @ W_Q, X @ W_K, y[:, None], 1.0)
    np.testing.assert_allclose(learning.learned_head(W_Q, W_K, X, y)[0], output[:, 0])


def test_gradient_of_the_keys_constant_row_is_zero():
    """Each row of dL/dE sums to zero, so the key's constant feature gets no gradient."""
    rng = np.random.default_rng(1)
    p, y = np.linspace(0, 1, 15), rng.standard_normal(15)
    X = learning.token_features(p)  # last column is 1
    _, _, dW_K = learning.loo_loss_and_grad(*rng.standard_normal((2, 3, 3)), X, y)
    assert np.abs(dW_K[-1]).max() < 1e-15 * 1e3


@given(hnp.arrays(np.float64, (3, 3), elements=st.floats(-3, 3)))
def test_reparametrised_projections_give_the_same_loss(G):
    assume(np.linalg.svd(G, compute_uv=False).min() > 0.1)
    rng = np.random.default_rng(2)
    X, y, W_Q, W_K = rng.standard_normal((8, 4)), rng.standard_normal(8), *rng.standard_normal((2, 4, 3))
    loss = learning.loo_loss_and_grad(W_Q, W_K, X, y)[0]
    assert learning.loo_loss_and_grad(W_Q @ G, W_K @ np.linalg.inv(G).T, X, y)[0] == pytest.approx(loss, rel=1e-9)


def test_token_features_columns_and_batches():
    p = np.array([0.0, 0.5, 1.0])
    np.testing.assert_allclose(learning.token_features(p), [[-1, 1, 1], [0, 0, 1], [1, 1, 1]])
    np.testing.assert_allclose(learning.token_features(p, [2.0, 3.0, 4.0])[:, 0], [2, 3, 4])
    X = learning.token_features(p, np.ones((5, 3)), signal_square=True)
    assert X.shape == (5, 3, 5)
    np.testing.assert_allclose(X[0, 1], [1, 1, 0, 0, 1])


def test_centred_tokens_are_an_invertible_map_of_the_engineered_heads_tokens():
    p = np.linspace(0, 1, 11)
    raw = sa.positional_features(np.zeros_like(p), p)[:, 1:]  # [p, p^2, 1]
    T = np.linalg.lstsq(raw, learning.token_features(p), rcond=None)[0]  # (3, 3)
    np.testing.assert_allclose(raw @ T, learning.token_features(p), atol=1e-12)
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
        (lambda: learning.learned_head(**{**GOOD, "y": np.ones((1, 4))}), "y must be 1-dimensional"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
