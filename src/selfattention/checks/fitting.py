r"""Checks of what the reader writes to fit a head: leave-one-out, a gradient, content.

Each ``check_...`` takes the reader's function, runs it on seeded random
inputs against the package's own, prints one line and returns it as a
:class:`~selfattention.checks.Verdict`.
"""

from __future__ import annotations

import numpy as np

from .. import defaults
from ..bilateral import bilateral_head
from ..core import softmax
from ..head import gaussian_head
from ..in_context import one_step_prediction
from ..kernel import leave_one_out_scores
from ..learning import attention_loss_and_grad, loo_loss_and_grad
from ._verdicts import TIME_LIMIT, Exercise, as_result, documented, judge


def _loo_cases(rng):
    return [(rng.normal(size=n), np.sort(rng.uniform(0.0, 1.0, n)), tau)
            for n, tau in ((12, 0.01), (9, 0.05), (15, 0.003))]


def _masked_weights(p: np.ndarray, tau: float) -> np.ndarray:
    """(n, n): the head's weights with the diagonal masked, for the wrong answers."""
    scores = -((p[:, None] - p[None, :]) ** 2) / tau
    np.fill_diagonal(scores, -np.inf)
    return softmax(scores)


def _loo_faults(s, p, tau):
    masked = _masked_weights(p, tau)
    unmasked = gaussian_head(s, p, tau)[1]
    zeroed = unmasked - np.diag(np.diag(unmasked))  # the diagonal set to 0 after the softmax
    mse = float(np.mean((masked @ s - s) ** 2))
    return [
        ("a missing mask: no token may predict itself (-inf on the diagonal).",
         np.mean((unmasked @ s - s) ** 2)),
        ("a root: the error is the mean of the squares, with no square root.", np.sqrt(mse)),
        ("a scale: the mean over the N samples, not their sum.", mse * s.size),
        ("a normalisation: mask before the softmax, so rows still sum to 1.",
         np.mean((zeroed @ s - s) ** 2)),
    ]


LEAVE_ONE_OUT = Exercise(
    name="loo_error",
    cases=_loo_cases,
    answer=lambda call, s, p, tau: as_result(call(s.copy(), p.copy(), tau), "loo_error", (), "one number"),
    reference=lambda s, p, tau: leave_one_out_scores(s, p, [tau])[0],
    faults=_loo_faults,
    verified="the leave-one-out mean squared error",
    fallback="the error differs: mean of (s_i - sum_{j != i} a_ij s_j)**2.",
)


@documented
def check_leave_one_out(function, *, rng=defaults.SEED, time_limit=TIME_LIMIT):
    r"""Check ``function(signal, positions, tau)``, the leave-one-out error (a number) of the head at ``tau``."""
    return judge(LEAVE_ONE_OUT, function, rng, time_limit)


def _gradient_cases(rng):
    return [(*rng.normal(size=(2, d, d_k)), rng.normal(size=(n, d)), rng.normal(size=n))
            for n, d, d_k in ((10, 4, 3), (8, 3, 2))]


def _gradient_faults(W_Q, W_K, X, s):
    dW_Q = loo_loss_and_grad(W_Q, W_K, X, s)[1]
    return [
        ("a missing factor: dL/d output_i = (2 / N) (output_i - s_i).", dW_Q * s.size / 2),
        ("a transpose: that is dL/dW_K; for W_Q it is X^T (dL/dE) X W_K.", loo_loss_and_grad(W_Q, W_K, X, s)[2]),
        ("a missing mask: leave-one-out masks the diagonal (a_ii = 0).",
         attention_loss_and_grad(W_Q, W_K, X, s, targets=s)[1]),
    ]


GRADIENT = Exercise(
    name="grad_W_Q",
    cases=_gradient_cases,
    answer=lambda call, W_Q, W_K, X, s: as_result(call(W_Q.copy(), W_K.copy(), X.copy(), s.copy()),
                                                  "grad_W_Q", W_Q.shape, "dL/dW_Q"),
    reference=lambda W_Q, W_K, X, s: loo_loss_and_grad(W_Q, W_K, X, s)[1],
    faults=_gradient_faults,
    verified="dL/dW_Q of the leave-one-out loss, entry by entry",
    fallback="the gradient differs: X^T (dL/dE) X W_K, dL/dE as in the table.",
)


@documented
def check_gradient(function, *, rng=defaults.SEED, time_limit=TIME_LIMIT):
    r"""Check ``function(W_Q, W_K, X, s)``, the gradient (d, d_k) of the leave-one-out loss with respect to ``W_Q``."""
    return judge(GRADIENT, function, rng, time_limit)


def _bilateral_cases(rng):
    return [(rng.normal(size=n), np.sort(rng.uniform(0.0, 1.0, n)), tau, tau_s)
            for n, tau, tau_s in ((10, 0.02, 0.5), (13, 0.05, 0.2))]


def _bilateral_faults(s, p, tau, tau_s):
    position = -((p[:, None] - p[None, :]) ** 2)
    value = -((s[:, None] - s[None, :]) ** 2)
    return [
        ("a missing term: the score also holds -(s_i - s_j)**2 / tau_s.", softmax(position / tau)),
        ("a sign: the value term is subtracted, -(s_i - s_j)**2 / tau_s.", softmax(position / tau - value / tau_s)),
        ("swapped temperatures: tau_p divides the positions' term.",
         softmax(position / tau_s + value / tau)),
    ]


BILATERAL = Exercise(
    name="bilateral_weights",
    cases=_bilateral_cases,
    answer=lambda call, s, p, tau, tau_s: as_result(call(s.copy(), p.copy(), tau, tau_s), "bilateral_weights",
                                                    (s.size, s.size), "the weights"),
    reference=lambda s, p, tau, tau_s: bilateral_head(s, p, tau, tau_s)[1],
    faults=_bilateral_faults,
    verified="every weight of the bilateral head",
    fallback="the weights differ: softmax of both terms, each over its own tau.",
)


@documented
def check_bilateral(function, *, rng=defaults.SEED, time_limit=TIME_LIMIT):
    r"""Check ``function(signal, positions, tau, tau_s)``, the bilateral head's weights (n, n)."""
    return judge(BILATERAL, function, rng, time_limit)


def _step_cases(rng):
    return [(rng.normal(size=(n, d)), rng.normal(size=n), rng.normal(size=d), eta)
            for n, d, eta in ((7, 3, 0.5), (12, 2, 0.8), (5, 4, 1.3))]


def _step_faults(P, y, p, eta):
    right = one_step_prediction(P, y, p, eta)
    return [
        ("a scale: the loss's 1/N makes the step a mean over the N examples.", right * y.size),
        ("a sign: the step goes against the gradient, which is -mean(s_j p_j).", -right),
        ("a missing query: the prediction is phi_1 . p_{N+1}.",
         eta * np.mean(y * np.sum(P * P, axis=1))),
        ("a factor 2: the loss's 1/2 cancels the 2 of the square's derivative.", right / 2),
    ]


ONE_STEP = Exercise(
    name="one_step",
    cases=_step_cases,
    answer=lambda call, P, y, p, eta: as_result(call(P.copy(), y.copy(), p.copy(), eta), "one_step", (),
                                                "one number"),
    reference=lambda P, y, p, eta: np.asarray(one_step_prediction(P, y, p, eta)),
    faults=_step_faults,
    verified="the prediction of one step of gradient descent from 0",
    fallback="the prediction differs: (eta / N) sum_j s_j (p_j . p_{N+1}).",
)


@documented
def check_one_step(function, *, rng=defaults.SEED, time_limit=TIME_LIMIT):
    r"""Check ``function(inputs, labels, query, eta)``, one step of gradient descent's prediction (a number)."""
    return judge(ONE_STEP, function, rng, time_limit)
