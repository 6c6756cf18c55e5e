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
from selfattention.studies import in_context_risks as risks


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
    guess, weights = ic.softmax_head(P, y, p, tau)
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
    np.testing.assert_allclose(study.kernel_batch(b, [0.9])[0], [ic.softmax_head(*s, 0.9)[0] for s in singles],
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
    assert abs(one_step / risks.one_step_risk(eta, n, d, sigma) - 1) < 0.05
    least = np.mean((study.least_squares_batch(b) - b.target) ** 2)
    assert abs(least / risks.least_squares_risk(n, d, sigma) - 1) < 0.1  # heavier-tailed: 10 %
    best, risk = risks.best_one_step(n, d, sigma)
    assert type(best) is float and type(risk) is float  # Python floats: a glued np.float64 cannot be formatted
    assert risk == pytest.approx(risks.one_step_risk(best, n, d, sigma), rel=1e-12)
    assert risks.one_step_risk(best * 1.01, n, d, sigma) > risk < risks.one_step_risk(best * 0.99, n, d, sigma)


def monte_carlo(values):
    """The mean of ``values`` over their first axis and its standard error (valid when their variance is finite)."""
    return np.mean(values, axis=0), np.std(values, axis=0, ddof=1) / np.sqrt(len(values))


@pytest.mark.parametrize(("n", "d", "sigma"), [(2, 8, 1.0), (3, 9, 0.5), (2, 5, 0.0), (3, 5, 0.0)])
def test_least_squares_with_fewer_examples_than_dimensions_matches_a_monte_carlo(n, d, sigma):
    """(d - N) + sigma^2 N / (d - N - 1), within 5 standard errors of a mean over 40000 prompts.

    The squared error's variance is finite when the inverse of the N x N matrix of dot products has a second
    moment, d - N - 3 > 0 (as here; without noise always): the standard error of the sample is then a valid
    measure, and 5 of them a bound a right formula passes but by chance once in millions.
    """
    b = study.linear_tasks(40000, n, d, noise=sigma, rng=n + d)
    mean, se = monte_carlo((study.least_squares_batch(b) - b.target) ** 2)
    expected = risks.least_squares_risk(n, d, sigma)
    assert expected == (d - n) + sigma**2 * n / (d - n - 1)
    assert abs(mean - expected) < 5 * se


def test_least_squares_expected_error_is_infinite_within_one_of_d():
    """d - 1 <= N <= d + 1 with noise: refused by name; without noise, d - N below d and 0 from d on."""
    for n in (4, 5, 6):
        with pytest.raises(ValueError, match=r"examples.*infinite"):
            risks.least_squares_risk(n, 5, 0.25)
        assert risks.least_squares_risk(n, 5, 0.0) == max(5 - n, 0)
    assert risks.least_squares_risk(3, 5, 0.25) == 2 + 0.0625 * 3 and risks.least_squares_risk(7, 5, 0.25) == 0.0625 * 5


def test_the_step_s_second_moments_are_those_its_risk_uses():
    """E Sigma-hat = I and E Sigma-hat^2 = (N + d + 1) / N I, over 200000 prompts, within 5 standard errors.

    Entries of Sigma-hat^2 are degree-4 polynomials of normal inputs: every moment is finite, so the sample's
    standard error is valid. The traces pool the diagonal (a standard error of about 0.2 % of
    d (N + d + 1) / N); 5 of them, over the traces and the 2 d^2 entries, a right formula fails by chance once in
    millions.
    """
    n, d = 4, 3
    P = study.linear_tasks(200000, n, d, rng=11).inputs  # (B, N, d)
    S = np.einsum("bnr,bnc->brc", P, P) / n  # (B, d, d)
    for moments, scale in ((S, 1.0), (S @ S, (n + d + 1) / n)):
        mean, se = monte_carlo(moments)
        assert np.all(np.abs(mean - scale * np.eye(d)) < 5 * se)
        trace, trace_se = monte_carlo(np.trace(moments, axis1=1, axis2=2))
        assert abs(trace - scale * d) < 5 * trace_se


def test_each_step_multiplies_the_distance_to_least_squares_by_its_factors():
    """Along each eigenvector of (1/N) sum_j p_j^T p_j, phi_{t+1} - phi_hat = (1 - eta lam) (phi_t - phi_hat)."""
    P, y, _ = prompt(12, 3)
    eta = 0.9
    factors = ic.step_factors(P, eta)
    lam, V = np.linalg.eigh(P.T @ P / len(P))
    np.testing.assert_allclose(factors, 1 - eta * lam, rtol=0, atol=rounding(4 * 12, eta * lam.max()))
    phi_hat = np.linalg.lstsq(P, y, rcond=None)[0]
    phis = ic.gradient_descent(P, y, eta, 3)
    for t in range(3):
        scale = np.abs((phis[t] - phi_hat) @ V).max()
        np.testing.assert_allclose((phis[t + 1] - phi_hat) @ V, factors * ((phis[t] - phi_hat) @ V), rtol=0,
                                   atol=rounding(100, scale))  # a few hundred roundings of the distance's size
    assert np.all(np.diff(factors) <= 0), "the smallest eigenvalue first"


def test_the_errors_prompt_by_prompt_average_to_the_curves():
    validation, test = study.linear_tasks(50, 6, 2, noise=0.1, rng=1), study.linear_tasks(50, 6, 2, noise=0.1, rng=2)
    result = study.error_curves(validation, test, [0.3, 0.6], [0.5, 1.0])
    for name, each in result["squared errors"].items():
        assert each.shape == (50,) and result[name] == np.mean(each)
    np.testing.assert_array_equal(result["squared errors"]["least squares"],
                                  (study.least_squares_batch(test) - test.target) ** 2)


def test_compare_errors_reads_the_typical_prompt_and_the_worst():
    first, second = [1.0, 5.0, 0.1, 0.4, 2.0], [2.0, 2.0, 2.0, 0.3, 2.0]  # a tie last: not below
    result = study.compare_errors(first, second)
    assert result["medians"] == (1.0, 2.0)
    assert result["first below"] == 0.4
    assert result["top share"] == 5.0 / 8.5
    assert study.compare_errors(first, second, top=2)["top share"] == 7.0 / 8.5
    gap = np.subtract(first, second)  # (-1, 3, -1.9, 0.1, 0): mean 0.04
    assert result["difference"] == pytest.approx(gap.mean(), rel=1e-12)
    assert result["difference se"] == pytest.approx(gap.std(ddof=1) / np.sqrt(5), rel=1e-12)
    with pytest.raises(ValueError, match="at least 2 prompts"):
        study.compare_errors([1.0], [2.0])
    with pytest.raises(ValueError, match="first and second"):
        study.compare_errors([-1.0, 1.0], [1.0, 1.0])


def test_wins_from_is_the_first_count_of_a_lead_that_is_never_lost():
    counts = [2, 3, 4, 5, 6]
    assert study.wins_from(counts, [3, 1, 3, 1, 1], [2, 2, 2, 2, 2]) == 5  # ahead at 3, behind at 4, ahead from 5
    assert study.wins_from(counts, [1] * 5, [2] * 5) == 2
    with pytest.raises(ValueError, match="first must be below second"):
        study.wins_from(counts, [1, 1, 1, 1, 3], [2] * 5)
    with pytest.raises(ValueError, match="counts must increase"):
        study.wins_from([2, 2, 3], [1] * 3, [2] * 3)


def test_the_sines_baselines_match_their_definitions():
    """Predicting 0, and each sine's best line, averaged by quadrature over amplitude, phase and input.

    Gauss-Legendre with 8 nodes integrates the amplitude's square exactly; the phase is averaged at 64 equally
    spaced points, exact for these trigonometric polynomials of degree 2 in it; and each sine's mean square and
    best line are computed on a midpoint grid of 2048 inputs, whose error for these smooth functions is of the order
    of (2 pi)^2 / (24 * 2048^2), below 1e-6.
    """
    nodes, weights = np.polynomial.legendre.leggauss(8)
    lo, hi = study.AMPLITUDES
    mean_square = np.sum(weights * ((lo + hi) / 2 + (hi - lo) / 2 * nodes) ** 2) / 2  # E amplitude^2
    phase = 2 * np.pi * np.arange(64) / 64
    p = (np.arange(2048) + 0.5) / 2048
    f = np.sin(2 * np.pi * p + phase[:, None])  # (phases, grid), amplitude 1
    line = np.column_stack([np.ones_like(p), p])  # (grid, 2)
    residual = f - (f @ np.linalg.pinv(line).T) @ line.T  # each sine less its best line
    assert abs(mean_square * np.mean(f**2) - risks.sine_zero_error()) < 1e-6
    assert abs(mean_square * np.mean(residual**2) - risks.sine_line_error()) < 1e-6
    assert risks.sine_line_error() < risks.sine_zero_error()


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
        ic.softmax_head(*prompt(), temperature)
