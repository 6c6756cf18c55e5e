r"""A head that learns: gradient descent on the leave-one-out loss of one noisy sine.

The experiments: training the head from small random
projections, reading a Gaussian band off the learned scores, comparing it
with the engineered head's temperatures, the leak that opens when the query
sees the value it must predict, and the projections' non-uniqueness.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import memory
from .._validation import (
    as_array,
    as_flag,
    as_instance,
    as_nonnegative_scalar,
    as_positive_scalar,
    as_projections,
    as_series,
    finite_result,
    naming,
    power_of_two,
)
from ..head import positional_features
from ..kernel import DEFAULT_CANDIDATES, choose_temperature
from ..learning import learned_head, token_features
from ..training import FitResult, fit_head
from .bias_variance import expected_risk, refined_argmin

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
        Chosen by leave-one-out on the grid (:func:`~selfattention.kernel.choose_temperature`).
    loo_loss : float
        Its leave-one-out loss: the best engineered head's on the grid.
    best_temperature : float
        ``tau*``, the minimiser of the expected error against the ground truth.
    """

    loo_temperature: float
    loo_loss: float
    best_temperature: float

    def __post_init__(self):
        as_positive_scalar(self.loo_temperature, "loo_temperature")
        as_nonnegative_scalar(self.loo_loss, "loo_loss")
        as_positive_scalar(self.best_temperature, "best_temperature")


def engineered(positions, noisy, sigma, *, candidates=DEFAULT_CANDIDATES) -> Engineered:
    """The engineered head's best temperatures for one noisy sine.

    Parameters
    ----------
    positions, noisy : array_like, shape (n,)
        A noisy ``sin(2 pi p)`` sampled evenly on [0, 1].
    sigma : float
        Its noise standard deviation (for ``tau*``, against the ground truth).
    candidates : array_like, shape (m,)
        The temperatures leave-one-out chooses from.

    Returns
    -------
    Engineered
    """
    with naming("noisy", "signal"):
        tau, scores = choose_temperature(noisy, positions, candidates)
    bias2, variance = expected_risk(len(positions), sigma, TRUTH_TEMPERATURES)
    try:
        best = refined_argmin(TRUTH_TEMPERATURES, bias2 + variance)
    except ValueError as exc:
        raise ValueError(f"sigma: for sigma = {sigma!r} the best temperature lies outside "
                         f"TRUTH_TEMPERATURES ({exc})") from exc
    return Engineered(tau, float(scores.min()), best)


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
        Passed to :func:`~selfattention.training.fit_head`.
    """
    sees_value, centred = as_flag(sees_value, "sees_value"), as_flag(centred, "centred")
    noisy = as_array(noisy, "noisy", ndim=1)  # one signal: fit_head would take a batch of them
    if sees_value and not centred:
        raise ValueError("sees_value needs centred features")
    with naming("noisy", "signal", "y"):
        if centred:
            X = token_features(positions, noisy if sees_value else None)  # (n, 3) or (n, 4)
        else:
            X = positional_features(noisy, positions)[:, 1:]  # (n, 3): [p, p^2, 1]
        return fit_head(X, noisy, **kwargs)


def features_of(fit: FitResult, positions, noisy) -> np.ndarray:
    """The token rows a fit of :func:`learn` with centred positions was trained on.

    Parameters
    ----------
    fit : FitResult
        Its ``W_Q`` has 4 rows when the tokens held the sample, 3 otherwise.
    positions, noisy : array_like, shape (n,)

    Returns
    -------
    ndarray, shape (n, 3) or (n, 4)
    """
    fit = as_instance(fit, "fit", FitResult)
    positions, noisy = as_series(positions=positions, noisy=noisy)
    return token_features(positions, noisy if fit.W_Q.shape[0] == 4 else None)


def checkpoint_weights(fit: FitResult, positions, noisy) -> dict:
    """The masked attention matrix at each checkpoint of a :func:`learn` fit.

    Parameters
    ----------
    fit : FitResult
    positions, noisy : array_like, shape (n,)
        The signal it was trained on.

    Returns
    -------
    dict of int -> ndarray, shape (n, n)
        Step -> attention matrix, with a zero diagonal.
    """
    X = features_of(fit, positions, noisy)
    with naming("noisy", "y"), naming("fit or positions", "X"):
        return {t: learned_head(W_Q, W_K, X, noisy, leave_one_out=True)[1] for t, (W_Q, W_K) in fit.checkpoints.items()}


def row_gaussians(W_Q, W_K, positions):
    r"""Each query's Gaussian in key position, read off a learned position-only head.

    With tokens ``[pt, pt^2, 1]`` (``pt = 2 p - 1``) the score is quadratic in
    the key's position,
    :math:`e_{ij} = (\text{terms of } i) + \lambda_1(p_i)\, \tilde p_j + \lambda_2(p_i)\, \tilde p_j^2`.
    When :math:`\lambda_2(p_i) < 0` this is :math:`-(p_j - \mu(p_i))^2 / \tau(p_i)`
    plus terms of ``i`` only, with :math:`\tau(p_i) = -1/(4\lambda_2(p_i))` and
    :math:`\mu(p_i) = \tau(p_i)\,(\lambda_1(p_i) - 2\lambda_2(p_i))`.

    Parameters
    ----------
    W_Q, W_K : array_like, shape (3, d_k)
        Projections of a head on tokens ``[pt, pt^2, 1]``.
    positions : array_like, shape (n,)

    Returns
    -------
    temperatures : ndarray, shape (n,)
        :math:`\tau(p_i)`; negative when the row is not a bump.
    centres : ndarray, shape (n,)
        :math:`\mu(p_i)`, in positions.

    Raises
    ------
    ValueError
        When a row has :math:`\lambda_2(p_i) = 0` exactly (its score is linear
        in the key: no temperature), or the temperatures overflow.
    """
    X = token_features(positions)  # (n, 3)
    W_Q, W_K = as_projections(W_Q, W_K, 3)
    with np.errstate(all="ignore"):  # reported by name below
        W_QK = W_Q @ W_K.T  # (3, 3)
        lam1, lam2 = X @ W_QK[:, 0], X @ W_QK[:, 1]  # (n,) each
        tau = -1 / (4 * lam2)
        centres = tau * (lam1 - 2 * lam2)
    message = "W_Q, W_K or positions: a row's score is linear in the key (lambda_2 = 0) or overflows"
    return finite_result(tau, message), finite_result(centres, message)


def centred_scores(W_Q, W_K, X) -> np.ndarray:
    r"""The scores minus each query's score of itself, :math:`e_{ij} - e_{ii}`.

    Subtracting a number per row changes no weight (softmax's shift invariance).

    Parameters
    ----------
    W_Q, W_K : array_like, shape (d, d_k)
    X : array_like, shape (n, d)

    Returns
    -------
    ndarray, shape (n, n)
    """
    X = as_array(X, "X", ndim=2)
    W_Q, W_K = as_projections(W_Q, W_K, X.shape[1])
    memory.require_matrix(X.shape[0], X.shape[0], "X", bytes_per_entry=16)
    with np.errstate(all="ignore"):  # reported by name below
        E = (X @ W_Q) @ (X @ W_K).T  # (n, n)
        centred = E - np.diag(E)[:, None]
    return finite_result(centred, "W_Q, W_K or X: the scores overflow the double range")


def reparametrise(W_Q, W_K, G):
    r"""Other projections with the same product: :math:`(W_Q G,\ W_K G^{-\top})`.

    Parameters
    ----------
    W_Q, W_K : array_like, shape (d, d_k)
    G : array_like, shape (d_k, d_k)
        Invertible.

    Returns
    -------
    W_Q_G, W_K_G : ndarray, shape (d, d_k)
    """
    W_Q, W_K = as_projections(W_Q, W_K, as_array(W_Q, "W_Q", ndim=2).shape[0])
    G = as_array(G, "G", ndim=2)
    if G.shape != (W_Q.shape[1],) * 2:
        raise ValueError(f"G must have shape (d_k, d_k) = {(W_Q.shape[1],) * 2}, got {G.shape}")
    with np.errstate(all="ignore"):  # reported by name below
        try:
            pair = W_Q @ G, W_K @ np.linalg.inv(G).T  # (d, d_k) each
        except np.linalg.LinAlgError as exc:
            raise ValueError(f"G must be invertible ({exc})") from exc
    message = "W_Q, W_K or G: the new projections overflow the double range (G nearly singular?)"
    return finite_result(pair[0], message), finite_result(pair[1], message)


def relative_gap(a, b) -> float:
    """How far ``a`` is from ``b``, relative to ``b``: ``||a - b|| / ||b||`` (Frobenius norms).

    Parameters
    ----------
    a, b : array_like, same shape
        ``b`` not all zero.

    Returns
    -------
    float
    """
    a, b = as_array(a, "a"), as_array(b, "b")
    if a.shape != b.shape or not b.any():
        raise ValueError(f"a and b must have the same shape and b must not be all zero, got {a.shape} and {b.shape}")
    scale = power_of_two(max(float(np.max(np.abs(a))), float(np.max(np.abs(b)))))  # exact: no norm overflows
    with np.errstate(all="ignore"):
        gap = float(np.linalg.norm(a / scale - b / scale) / np.linalg.norm(b / scale))
    return float(finite_result(gap, "b: it is too small beside a for their ratio to be a double"))


def gradient_descent_runs(positions, noisy, learning_rates, *, steps, rng=None) -> list[FitResult]:
    """Plain gradient descent (centred tokens) at each step size, from the same start.

    Parameters
    ----------
    positions, noisy : array_like, shape (n,)
    learning_rates : array_like, shape (r,)
        The step sizes ``eta > 0``.
    steps : int
    rng : int, numpy.random.Generator or None
        The seed of the (shared) start.

    Returns
    -------
    list of FitResult, one per step size
    """
    rates = as_array(learning_rates, "learning_rates", ndim=1)
    with naming("noisy", "signal", "y"), naming("learning_rates", "learning_rate"):
        return [learn(positions, noisy, optimizer="gd", learning_rate=as_positive_scalar(eta, "learning_rates"),
                      steps=steps, rng=rng) for eta in rates]

