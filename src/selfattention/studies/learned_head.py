r"""A head that learns: gradient descent on the leave-one-out loss of one noisy sine.

The experiments of the chapter: training the head from small random
projections, reading a Gaussian band off the learned scores, comparing it
with the engineered head's temperatures, the leak that opens when the query
sees the value it must predict, and the projections' non-uniqueness.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import as_array, as_positive_scalar
from .bias_variance import expected_risk, refined_argmin
from ..head import positional_features
from ..kernel import DEFAULT_CANDIDATES, choose_temperature
from ..learning import FitResult, fit_head, learned_head, token_features

#: How far above the best engineered head's leave-one-out loss a learned head's may end, as a fraction.
LOSS_TOLERANCE = 0.02
#: Temperatures over which the ground-truth best temperature is located.
TRUTH_TEMPERATURES = np.logspace(-4, -1, 61)


@dataclass(frozen=True)
class Engineered:
    """The engineered head's temperatures for one noisy signal.

    Attributes
    ----------
    loo_temperature : float
        Chosen by leave-one-out on the grid (chapter 7's rule).
    loo_loss : float
        Its leave-one-out loss: the best engineered head's on the grid.
    best_temperature : float
        ``tau*``, the minimiser of the expected error against the ground truth.
    """

    loo_temperature: float
    loo_loss: float
    best_temperature: float


def engineered(positions, noisy, sigma, *, candidates=DEFAULT_CANDIDATES) -> Engineered:
    """The leave-one-out choice on ``candidates`` and ``tau*`` for the book's sine."""
    tau, scores = choose_temperature(noisy, positions, candidates)
    bias2, variance = expected_risk(len(positions), sigma, TRUTH_TEMPERATURES)
    return Engineered(tau, float(scores.min()), refined_argmin(TRUTH_TEMPERATURES, bias2 + variance))


def learn(positions, noisy, *, sees_value=False, centred=True, **kwargs) -> FitResult:
    r"""Train a head on the leave-one-out loss of one noisy signal.

    Parameters
    ----------
    positions, noisy : array_like, shape (n,)
    sees_value : bool
        Put the sample itself into the tokens, ``[s, pt, pt^2, 1]``: the leak.
    centred : bool
        Use ``pt = 2 p - 1`` (:func:`~selfattention.learning.token_features`);
        ``False`` uses ``[p, p^2, 1]`` (no leak possible then).
    **kwargs
        Passed to :func:`~selfattention.learning.fit_head`.
    """
    if centred:
        X = token_features(positions, noisy if sees_value else None)  # (n, 3) or (n, 4)
    elif sees_value:
        raise ValueError("sees_value needs centred features")
    else:
        X = positional_features(noisy, positions)[:, 1:]  # (n, 3): [p, p^2, 1]
    return fit_head(X, noisy, **kwargs)


def features_of(fit: FitResult, positions, noisy) -> np.ndarray:
    """The token rows a fit of :func:`learn` was trained on (told apart by their count)."""
    return token_features(positions, noisy if fit.W_Q.shape[0] == 4 else None)


def checkpoint_weights(fit: FitResult, positions, noisy) -> dict:
    """Step -> the masked attention matrix (n, n) at each checkpoint of a :func:`learn` fit."""
    X = features_of(fit, positions, noisy)
    return {t: learned_head(W_Q, W_K, X, noisy, leave_one_out=True)[1] for t, (W_Q, W_K) in fit.checkpoints.items()}


def row_gaussians(W_Q, W_K, positions):
    r"""Each query's Gaussian in key position, read off a learned position-only head.

    With tokens ``[pt, pt^2, 1]`` the score is quadratic in the key's position,
    :math:`e_{ij} = c_i + \alpha_i \tilde p_j + \beta_i \tilde p_j^2`. When
    :math:`\beta_i < 0` this is :math:`-(p_j - m_i)^2 / \tau_i` plus terms
    of ``i`` only, with :math:`\tau_i = -1/(4\beta_i)` (since
    :math:`\tilde p = 2p - 1`) and :math:`m_i = \tau_i (\alpha_i - 2\beta_i)`.

    Returns
    -------
    temperatures : ndarray, shape (n,)
        :math:`\tau_i`; ``inf`` or negative when the row is not a bump.
    centres : ndarray, shape (n,)
        :math:`m_i`, in positions.
    """
    X = token_features(positions)  # (n, 3)
    W_QK = as_array(W_Q, "W_Q", ndim=2) @ as_array(W_K, "W_K", ndim=2).T  # (3, 3)
    alpha, beta = X @ W_QK[:, 0], X @ W_QK[:, 1]  # (n,) each
    with np.errstate(divide="ignore"):
        tau = -1 / (4 * beta)
    return tau, tau * (alpha - 2 * beta)


def centred_scores(W_Q, W_K, X) -> np.ndarray:
    r"""``(n, n)``: the scores minus each query's score of itself, :math:`e_{ij} - e_{ii}`.

    Subtracting a number per row changes no weight (softmax's shift invariance).
    """
    X = as_array(X, "X", ndim=2)
    E = (X @ W_Q) @ (X @ W_K).T  # (n, n)
    return E - np.diag(E)[:, None]


def reparametrise(W_Q, W_K, G):
    r"""``(W_Q G, W_K G^{-T})``: other projections with the same product :math:`W_Q W_K^\top`."""
    G = as_array(G, "G", ndim=2)
    return W_Q @ G, W_K @ np.linalg.inv(G).T


def relative_gap(a, b) -> float:
    """``||a - b|| / ||b||`` (Frobenius norms)."""
    return float(np.linalg.norm(np.subtract(a, b)) / np.linalg.norm(b))


def gradient_descent_runs(positions, noisy, learning_rates, *, steps, rng=None) -> list[FitResult]:
    """Plain gradient descent (centred tokens) at each step size, from the same start."""
    rates = as_array(learning_rates, "learning_rates", ndim=1)
    return [learn(positions, noisy, optimizer="gd", learning_rate=as_positive_scalar(eta, "learning_rates"),
                  steps=steps, rng=rng) for eta in rates]


def favourite_keys(weights):
    """Each query's most attended key (n,) and the weight it gets (n,)."""
    w = as_array(weights, "weights", ndim=2)
    keys = np.argmax(w, axis=1)
    return keys, w[np.arange(w.shape[0]), keys]
