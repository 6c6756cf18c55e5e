"""selfattention.learning: the hand-derived gradient, training, and bad input."""

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


def test_centred_tokens_are_an_invertible_map_of_chapter_4s():
    p = np.linspace(0, 1, 11)
    raw = sa.positional_features(np.zeros_like(p), p)[:, 1:]  # [p, p^2, 1]
    T = np.linalg.lstsq(raw, learning.token_features(p), rcond=None)[0]  # (3, 3)
    np.testing.assert_allclose(raw @ T, learning.token_features(p), atol=1e-12)
    assert abs(np.linalg.det(T)) > 1


def fit_small(rng, steps=30, **kwargs):
    p, _, y = sa.noisy_sine(20, 0.3, rng=0)
    return learning.fit_head(learning.token_features(p), y, steps=steps, rng=rng, **kwargs)


def test_fit_is_deterministic_for_a_seed_and_accepts_generators():
    a, b = fit_small(5), fit_small(np.random.default_rng(5))
    np.testing.assert_array_equal(a.W_Q, b.W_Q)
    np.testing.assert_array_equal(a.losses, b.losses)
    assert not np.array_equal(a.W_Q, fit_small(6).W_Q)


@pytest.mark.parametrize("optimizer", ["adam", "gd"])
def test_fit_records_one_loss_per_step_and_the_checkpoints(optimizer):
    fit = fit_small(3, optimizer=optimizer, checkpoints=(0, 10, 30))
    p, _, y = sa.noisy_sine(20, 0.3, rng=0)
    X = learning.token_features(p)
    assert fit.losses.shape == (30,)
    W_Q0, W_K0 = fit.checkpoints[0]
    assert fit.losses[0] == learning.loo_loss_and_grad(W_Q0, W_K0, X, y)[0]
    assert fit.losses[10] == learning.loo_loss_and_grad(*fit.checkpoints[10], X, y)[0]
    np.testing.assert_array_equal(fit.checkpoints[30][0], fit.W_Q)
    assert fit.loss == learning.loo_loss_and_grad(fit.W_Q, fit.W_K, X, y)[0]
    assert fit.loss < fit.losses[0]


def test_start_from_given_projections():
    start = fit_small(3)
    fit = fit_small(4, init=(start.W_Q, start.W_K), init_scale=1e-12, steps=1, checkpoints=(0,))
    np.testing.assert_allclose(fit.checkpoints[0][0], start.W_Q, atol=1e-10)
    assert fit.losses[0] == pytest.approx(start.loss, rel=1e-9)


def test_plain_gradient_descent_takes_the_step_it_is_told():
    p, _, y = sa.noisy_sine(12, 0.3, rng=0)
    X = learning.token_features(p)
    fit = learning.fit_head(X, y, steps=1, learning_rate=0.5, optimizer="gd", rng=1, checkpoints=(0,))
    W_Q0, W_K0 = fit.checkpoints[0]
    _, dW_Q, dW_K = learning.loo_loss_and_grad(W_Q0, W_K0, X, y)
    np.testing.assert_allclose(fit.W_Q, W_Q0 - 0.5 * dW_Q)
    np.testing.assert_allclose(fit.W_K, W_K0 - 0.5 * dW_K)


def test_adams_first_step_moves_every_entry_by_eta():
    p, _, y = sa.noisy_sine(12, 0.3, rng=0)
    fit = learning.fit_head(learning.token_features(p), y, steps=1, learning_rate=0.01, rng=1, checkpoints=(0,))
    np.testing.assert_allclose(np.abs(fit.W_Q - fit.checkpoints[0][0]), 0.01, rtol=1e-3)


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
        (lambda: learning.fit_head(GOOD["X"], GOOD["y"], d_k=0), "d_k must be at least 1"),
        (lambda: learning.fit_head(GOOD["X"], GOOD["y"], steps=1.5), "steps must be an integer"),
        (lambda: learning.fit_head(GOOD["X"], GOOD["y"], learning_rate=0), "learning_rate must be positive"),
        (lambda: learning.fit_head(GOOD["X"], GOOD["y"], init_scale=-1), "init_scale must not be negative"),
        (lambda: learning.fit_head(GOOD["X"], GOOD["y"], optimizer="sgd"), "optimizer must be"),
        (lambda: learning.fit_head(GOOD["X"], GOOD["y"], checkpoints=[-1]), "checkpoints must be at least 0"),
        (lambda: learning.fit_head(GOOD["X"], GOOD["y"], d_k=3, init=(GOOD["W_Q"], GOOD["W_K"])), "init must have"),
        (lambda: learning.token_features([0.0, 1.0], [1.0, 2.0, 3.0]), "signal must have shape"),
        (lambda: learning.token_features([0.0, 1.0], signal_square=True), "signal_square needs a signal"),
        (lambda: learning.numerical_gradient(**GOOD, step=0), "step must be positive"),
        (lambda: learning.learned_head(**{**GOOD, "y": np.ones((1, 4))}), "y must be 1-dimensional"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
