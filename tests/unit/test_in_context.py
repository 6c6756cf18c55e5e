"""The heads that learn from a prompt: Nadaraya-Watson, one step of gradient descent, T layers, the trained layer."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from tolerances import rounding

import selfattention as sa
from selfattention import in_context as ic
from selfattention import in_context_symbolic as ics
from selfattention import in_context_training as ict
from selfattention.studies import in_context as study


def prompt(n=12, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(size=n), rng.normal(size=d)


# --- the softmax head --------------------------------------------------------------------------------


def test_the_kernel_heads_scores_are_minus_the_squared_distance():
    P, y, p = prompt()
    tokens = ic.kernel_tokens(P, y, p)
    W_Q, W_K, W_V = ic.kernel_head_weights(3)
    scores = (tokens[-1] @ W_Q) @ (tokens[:-1] @ W_K).T  # (N,)
    np.testing.assert_allclose(scores, -np.sum((P - p) ** 2, axis=1), rtol=0, atol=rounding(20, 30))
    np.testing.assert_array_equal(tokens[:-1] @ W_V, y[:, None])


@pytest.mark.parametrize("d", [1, 2, 4])
def test_the_kernel_head_is_nadaraya_watson_in_any_dimension(d):
    """An independent estimate: exp(-|p - p_j|^2 / tau) normalised, in plain numpy (shifted by its largest)."""
    P, y, p = prompt(15, d, seed=d)
    tau = 0.7
    log_k = -np.sum((P - p) ** 2, axis=1) / tau
    k = np.exp(log_k - log_k.max())
    guess, weights = ic.kernel_head(P, y, p, tau)
    np.testing.assert_allclose(weights, k / k.sum(), rtol=1e-12, atol=1e-15)
    assert abs(guess - k @ y / k.sum()) < 1e-12
    if d == 1:
        estimate, _ = sa.nadaraya_watson(p, P[:, 0], y, np.sqrt(tau / 2))
        assert abs(guess - estimate[0]) < 1e-12


# --- one step, T steps, T layers --------------------------------------------------------------------


def test_one_step_is_the_first_step_of_gradient_descent_and_one_layer():
    P, y, p = prompt()
    eta = 0.3
    phi_1 = ic.gradient_descent(P, y, eta, 1)[1]
    np.testing.assert_allclose(phi_1, eta * (y @ P) / len(y), rtol=1e-13)  # -eta * (-(1/N) sum y_j p_j)
    assert abs(ic.one_step_prediction(P, y, p, eta) - phi_1 @ p) < 1e-13
    assert abs(ic.linear_stack_prediction(P, y, p, eta, 1)[0] - phi_1 @ p) < 1e-13


def test_gradient_descent_steps_on_the_least_squares_loss():
    """Each step against the gradient of L(phi) = 1/(2N) sum (p_j . phi - y_j)^2, by central differences."""
    P, y, _ = prompt()
    eta = 0.2
    phis = ic.gradient_descent(P, y, eta, 3)

    def loss(phi):
        return np.sum((P @ phi - y) ** 2) / (2 * len(y))

    for t in range(3):
        h = 1e-6
        grad = np.array([(loss(phis[t] + h * e) - loss(phis[t] - h * e)) / (2 * h) for e in np.eye(3)])
        np.testing.assert_allclose(phis[t + 1], phis[t] - eta * grad, rtol=0, atol=1e-8)


@pytest.mark.parametrize(("n", "d", "T"), [(8, 2, 2), (20, 5, 6), (5, 3, 12)])
def test_t_layers_are_t_steps(n, d, T):
    """von Oswald et al. 2023, Proposition 1: the query holds -phi_T . p, the examples their residuals."""
    P, y, p = prompt(n, d, seed=n)
    eta = 0.4
    phis = ic.gradient_descent(P, y, eta, T)
    prediction, tokens = ic.linear_stack_prediction(P, y, p, eta, T)
    assert abs(prediction - phis[-1] @ p) < 1e-12
    np.testing.assert_allclose(tokens[:-1, -1], y - P @ phis[-1], rtol=0, atol=1e-12)


@pytest.mark.parametrize(("n", "d"), [(1, 1), (3, 2), (4, 3)])
def test_sympy_shows_the_head_is_the_step(n, d):
    derived = ics.one_step_derivation(n, d)
    assert derived["difference"] == 0
    P, y = ics._prompt(n, d)
    expected = -sum((y[j] * P[j, :] for j in range(n)), sp.zeros(1, d)).T / n
    assert sp.simplify(derived["gradient"] - expected) == sp.zeros(d, 1)


def test_least_squares_solves_the_normal_equations():
    P, y, p = prompt(20, 3)
    phi = np.linalg.solve(P.T @ P, P.T @ y)
    assert abs(ic.least_squares_prediction(P, y, p) - phi @ p) < 1e-12
    few = prompt(2, 5)
    shortest = np.linalg.pinv(few[0]) @ few[1]
    assert abs(ic.least_squares_prediction(*few) - shortest @ few[2]) < 1e-12


# --- the trained layer ---------------------------------------------------------------------------


def batch(seed=1):
    return study.linear_tasks(6, 5, 2, noise=0.1, rng=seed)


def test_the_layer_in_its_joined_form_is_the_hand_built_layer():
    b = batch()
    eta = 0.6
    W_Q, W_K, W_V = ic.gd_layer_weights(2, eta)
    joined = ict.layer_predictions(W_Q @ W_K.T, W_V[:, -1], *b[:3])
    stacked = [ic.linear_stack_prediction(P, y, p, eta, 1)[0] for P, y, p in zip(*b[:3], strict=True)]
    np.testing.assert_allclose(joined, stacked, rtol=0, atol=1e-13)


def test_the_layers_gradient_matches_finite_differences():
    b = batch()
    rng = np.random.default_rng(2)
    W, w = rng.normal(size=(3, 3)), rng.normal(size=3)
    _, dW, dw = ict.layer_loss_and_grad(W, w, *b)
    h = 1e-6  # central differences: error of order h^2 (curvature) plus rounding / h, near 1e-9 here
    for index in np.ndindex(3, 3):
        step = np.zeros((3, 3))
        step[index] = h
        numeric = (ict.layer_loss_and_grad(W + step, w, *b)[0] - ict.layer_loss_and_grad(W - step, w, *b)[0]) / (2 * h)
        assert abs(numeric - dW[index]) < 1e-6
    for k in range(3):
        step = np.eye(3)[k] * h
        numeric = (ict.layer_loss_and_grad(W, w + step, *b)[0] - ict.layer_loss_and_grad(W, w - step, *b)[0]) / (2 * h)
        assert abs(numeric - dw[k]) < 1e-6


def test_the_layers_gradient_matches_sympys_derivative():
    """An independent reference: the loss written out in symbols, differentiated by sympy, then evaluated."""
    b = study.linear_tasks(2, 3, 1, noise=0.1, rng=3)
    W_sym = sp.Matrix(2, 2, lambda a, c: sp.Symbol(f"W{a}{c}"))
    w_sym = sp.Matrix(2, 1, lambda a, _: sp.Symbol(f"w{a}"))
    loss = 0
    for P, y, p, t in zip(*b, strict=True):
        query = sp.Matrix([[p[0], 0]])
        tokens = [sp.Matrix([[P[j, 0], y[j]]]) for j in range(3)]
        update = sum(((query * W_sym * x.T)[0] * (x * w_sym)[0] for x in tokens), 0) / 3
        loss += (-update - t) ** 2 / 2
    rng = np.random.default_rng(4)
    W, w = rng.normal(size=(2, 2)), rng.normal(size=2)
    values = {**{W_sym[a, c]: W[a, c] for a in range(2) for c in range(2)}, **{w_sym[a]: w[a] for a in range(2)}}
    value, dW, dw = ict.layer_loss_and_grad(W, w, *b)
    assert abs(float(loss.subs(values)) - value) < 1e-12
    for a in range(2):
        assert abs(float(sp.diff(loss, w_sym[a]).subs(values)) - dw[a]) < 1e-12
        for c in range(2):
            assert abs(float(sp.diff(loss, W_sym[a, c]).subs(values)) - dW[a, c]) < 1e-12


def test_fitting_lowers_the_loss_and_is_reproducible():
    b = study.linear_tasks(200, 10, 2, noise=0.1, rng=5)
    first = ict.fit_layer(*b, steps=60, learning_rate=0.02, rng=6)
    again = ict.fit_layer(*b, steps=60, learning_rate=0.02, rng=6)
    assert first.losses[-1] < first.losses[0] / 2
    np.testing.assert_array_equal(first.W_QK, again.W_QK)
    assert first.losses[-1] == ict.layer_loss_and_grad(first.W_QK, first.w_V, *b)[0]


# --- the study ------------------------------------------------------------------------------------


def test_the_batches_are_the_single_prompt_functions():
    b = study.linear_tasks(5, 7, 3, noise=0.2, rng=7)
    singles = list(zip(*b[:3], strict=True))
    np.testing.assert_allclose(study.one_step_batch(b, [0.4])[0], [ic.one_step_prediction(*s, 0.4) for s in singles],
                               rtol=0, atol=1e-13)
    np.testing.assert_allclose(study.least_squares_batch(b), [ic.least_squares_prediction(*s) for s in singles],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(study.kernel_batch(b, [0.9])[0], [ic.kernel_head(*s, 0.9)[0] for s in singles],
                               rtol=0, atol=1e-12)


def test_the_tasks_are_drawn_from_the_seed_with_clean_targets():
    a, b = study.linear_tasks(3, 4, 2, noise=0.5, rng=8), study.linear_tasks(3, 4, 2, noise=0.5, rng=8)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    clean = study.linear_tasks(3, 4, 2, noise=0.0, rng=8)
    np.testing.assert_array_equal(clean.target, a.target)  # the noise reaches the examples only
    sines = study.sine_tasks(50, 6, noise=0.0, rng=9)
    np.testing.assert_array_equal(sines.inputs[..., 1], 1.0)
    assert np.all((0 <= sines.inputs[..., 0]) & (sines.inputs[..., 0] <= 1))
    assert np.abs(sines.target).max() <= 1.5


@pytest.mark.parametrize(("n", "eta"), [(10, 0.3), (20, 0.7)])
def test_the_risk_formulas_match_a_monte_carlo(n, eta):
    """20000 prompts: the mean of a squared error whose relative spread is about 1.5, so about 1 % (5 % bound)."""
    d, sigma = 3, 0.5
    b = study.linear_tasks(20000, n, d, noise=sigma, rng=n)
    one_step = np.mean((study.one_step_batch(b, [eta])[0] - b.target) ** 2)
    assert abs(one_step / study.one_step_risk(eta, n, d, sigma) - 1) < 0.05
    least = np.mean((study.least_squares_batch(b) - b.target) ** 2)
    assert abs(least / study.least_squares_risk(n, d, sigma) - 1) < 0.1  # heavier-tailed: 10 %
    best, risk = study.best_one_step(n, d, sigma)
    assert type(best) is float and type(risk) is float  # Python floats: a glued np.float64 cannot be formatted
    assert risk == pytest.approx(study.one_step_risk(best, n, d, sigma), rel=1e-12)
    assert study.one_step_risk(best * 1.01, n, d, sigma) > risk < study.one_step_risk(best * 0.99, n, d, sigma)


# --- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("change", "name"), [
    ({"labels": np.zeros(5)}, "labels"),
    ({"inputs": np.zeros((0, 3)), "labels": np.zeros(0)}, "empty"),
    ({"inputs": np.full((12, 3), np.nan)}, "inputs"),
    ({"labels": np.full(12, np.inf)}, "labels"),
    ({"query": np.zeros(2)}, "query"),
    ({"eta": 0.0}, "eta"),
    ({"eta": -1.0}, "eta"),
])
def test_bad_prompts_are_refused_by_name(change, name):
    P, y, p = prompt()
    kwargs = {"inputs": P, "labels": y, "query": p, "eta": 0.5, **change}
    with pytest.raises(ValueError, match=name):
        ic.one_step_prediction(**kwargs)


@pytest.mark.parametrize("temperature", [0.0, -0.1, np.inf])
def test_a_non_positive_or_infinite_temperature_is_refused(temperature):
    with pytest.raises(ValueError, match="temperature"):
        ic.kernel_head(*prompt(), temperature)
