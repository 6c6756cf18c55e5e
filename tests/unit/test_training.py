"""selfattention.training: gradient descent and Adam take the steps they should, deterministically."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import rounding

import selfattention as sa
from selfattention import learning, training


def fit_small(rng, steps=30, **kwargs):
    p, _, y = sa.noisy_sine(20, 0.3, rng=0)
    return training.fit_head(learning.token_features(p), y, steps=steps, rng=rng, **kwargs)


def test_fit_is_deterministic_for_a_seed_and_accepts_generators():
    a, b = fit_small(5), fit_small(np.random.default_rng(5))
    np.testing.assert_array_equal(a.W_Q, b.W_Q)  # the same operations on the same numbers, in one process
    np.testing.assert_array_equal(a.losses, b.losses)
    assert not np.array_equal(a.W_Q, fit_small(6).W_Q)


@pytest.mark.parametrize("optimizer", ["adam", "gd"])
def test_fit_records_one_loss_per_step_and_the_checkpoints(optimizer):
    fit = fit_small(3, optimizer=optimizer, checkpoints=(0, 10, 30))
    p, _, y = sa.noisy_sine(20, 0.3, rng=0)
    X = learning.token_features(p)
    assert fit.losses.shape == (30,)
    W_Q0, W_K0 = fit.checkpoints[0]
    # Exact: fit_head and loo_loss_and_grad run the same backprop on the same arrays.
    assert fit.losses[0] == learning.loo_loss_and_grad(W_Q0, W_K0, X, y)[0]
    assert fit.losses[10] == learning.loo_loss_and_grad(*fit.checkpoints[10], X, y)[0]
    np.testing.assert_array_equal(fit.checkpoints[30][0], fit.W_Q)
    assert fit.loss == learning.loo_loss_and_grad(fit.W_Q, fit.W_K, X, y)[0]
    assert fit.loss < fit.losses[0]


def test_start_from_given_projections():
    start = fit_small(3)
    fit = fit_small(4, init=(start.W_Q, start.W_K), init_scale=1e-12, steps=1, checkpoints=(0,))
    # The start is init + 1e-12 z, z normal draws (below 6 in size: each is beyond 6 with probability 2e-9).
    moved = 6e-12
    np.testing.assert_allclose(fit.checkpoints[0][0], start.W_Q, rtol=0, atol=moved + rounding(1, start.W_Q))
    p, _, y = sa.noisy_sine(20, 0.3, rng=0)
    _, dW_Q, dW_K = learning.loo_loss_and_grad(start.W_Q, start.W_K, learning.token_features(p), y)
    # To first order the loss moves by at most |gradient|_1 times the move of the entries; each of the two
    # losses rounds about 4 n times (weighted averages, the mean of squares) on squared errors below (2 max|y|)**2.
    first_order = moved * (np.abs(dW_Q).sum() + np.abs(dW_K).sum())
    assert abs(fit.losses[0] - start.loss) <= first_order + rounding(4 * 20, (2 * np.abs(y).max()) ** 2)


def test_plain_gradient_descent_takes_the_step_it_is_told():
    p, _, y = sa.noisy_sine(12, 0.3, rng=0)
    X = learning.token_features(p)
    fit = training.fit_head(X, y, steps=1, learning_rate=0.5, optimizer="gd", rng=1, checkpoints=(0,))
    W_Q0, W_K0 = fit.checkpoints[0]
    _, dW_Q, dW_K = learning.loo_loss_and_grad(W_Q0, W_K0, X, y)
    # w - eta g: a product and a difference, each rounded on at most |w| + eta |g|.
    np.testing.assert_allclose(fit.W_Q, W_Q0 - 0.5 * dW_Q, rtol=0, atol=rounding(2, np.abs(W_Q0) + 0.5 * np.abs(dW_Q)))
    np.testing.assert_allclose(fit.W_K, W_K0 - 0.5 * dW_K, rtol=0, atol=rounding(2, np.abs(W_K0) + 0.5 * np.abs(dW_K)))


def test_adams_first_step_moves_every_entry_by_eta():
    p, _, y = sa.noisy_sine(12, 0.3, rng=0)
    X = learning.token_features(p)
    fit = training.fit_head(X, y, steps=1, learning_rate=0.01, rng=1, checkpoints=(0,))
    g = learning.loo_loss_and_grad(*fit.checkpoints[0], X, y)[1]
    # The first step is eta g / (|g| + 1e-8): short of eta by 1e-8 / |g| relative; then a dozen roundings.
    np.testing.assert_allclose(np.abs(fit.W_Q - fit.checkpoints[0][0]), 0.01,
                               rtol=1e-8 / np.abs(g).min() + rounding(12, 1 + np.abs(fit.W_Q).max() / 0.01))


GOOD = dict(X=np.ones((4, 3)), y=np.ones(4))
W = np.ones((3, 2))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: training.fit_head(**GOOD, d_k=0), "d_k must be at least 1"),
        (lambda: training.fit_head(**GOOD, steps=1.5), "steps must be an integer"),
        (lambda: training.fit_head(**GOOD, learning_rate=0), "learning_rate must be positive"),
        (lambda: training.fit_head(**GOOD, init_scale=-1), "init_scale must not be negative"),
        (lambda: training.fit_head(**GOOD, optimizer="sgd"), "optimizer must be"),
        (lambda: training.fit_head(**GOOD, checkpoints=[-1]), "checkpoints must be at least 0"),
        (lambda: training.fit_head(**GOOD, d_k=3, init=(W, W)), "init must have"),
        (lambda: training.fit_head(**GOOD, init=(W, np.ones((3, 3)))), "W_Q and W_K must both"),
        (lambda: training.fit_head(np.ones((4,)), GOOD["y"]), "X must have shape"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_adam_matches_the_update_rule_written_out(monkeypatch):
    """Three steps against Adam as Kingma and Ba write it, on the gradients the package computed.

    The gradients fit_head computed are replayed, not computed again at the
    written-out iterates: the keys' constant row has a gradient that is zero
    but for rounding (a softmax ignores a shift of its scores), which Adam
    divides by its 1e-8 and so multiplies by 5e6; one ulp anywhere upstream
    (Adam's own arithmetic, in another order) changes that noise and the next
    iterate by 1e-13 (issue 19). What the test checks is the update rule.
    """
    p, _, y = sa.noisy_sine(12, 0.3, rng=0)
    X = learning.token_features(p)
    calls = []

    def recorded(W_Q, W_K, *args, **kwargs):
        result = learning.backprop(W_Q, W_K, *args, **kwargs)
        calls.append(((W_Q.copy(), W_K.copy()), result[1:]))
        return result

    monkeypatch.setattr(training, "backprop", recorded)
    eta = 0.05
    fit = training.fit_head(X, y, steps=3, learning_rate=eta, rng=2, checkpoints=(0,))
    W = list(fit.checkpoints[0])
    # Each step rounds a dozen times (moments, bias corrections, root, quotient, update) on the entries
    # of W and on steps at most eta (1 - beta1) / sqrt(1 - beta2) = 3.2 eta (Kingma and Ba, section 2.1).
    tolerance = rounding(12 * 3, np.abs(W).max() + 3.2 * eta)
    m, v = [np.zeros_like(w) for w in W], [np.zeros_like(w) for w in W]
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    for t, (at, grads) in enumerate(calls[:3], start=1):
        np.testing.assert_allclose(at, W, rtol=0, atol=tolerance)  # the gradient was taken at Adam's iterate
        for k, g in enumerate(grads):
            m[k] = beta1 * m[k] + (1 - beta1) * g
            v[k] = beta2 * v[k] + (1 - beta2) * g * g
            W[k] = W[k] - eta * (m[k] / (1 - beta1**t)) / (np.sqrt(v[k] / (1 - beta2**t)) + eps)
    assert len(calls) == 4  # three steps, and the loss of the last projections
    np.testing.assert_allclose(fit.W_Q, W[0], rtol=0, atol=tolerance)
    np.testing.assert_allclose(fit.W_K, W[1], rtol=0, atol=tolerance)
