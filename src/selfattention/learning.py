r"""Learning the projections of one attention head by gradient descent.

The head scores key ``j`` for query ``i`` with the bilinear form
:math:`e_{ij} = x_i W_Q W_K^\top x_j^\top` (the temperature is folded into
the projections), takes the softmax over the keys the mask allows and
averages the values :math:`v_j`, which are the signal itself (:math:`W_V`
copies it and is not learned). The loss is the mean squared error against a
target, over ``B`` signals of ``N`` tokens each,

.. math:: L = \frac{1}{BN} \sum_{b,i} \Big(\text{output}_{bi} - t_{bi}\Big)^2,
    \qquad \text{output}_{bi} = \sum_j a_{bij} v_{bj} .

With no separate target the target is the signal itself and the diagonal is
masked: every sample is predicted from all the others (leave-one-out).
The gradient is written out by hand (backpropagation through the softmax);
the optimiser is Adam, also written out, or plain gradient descent.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._validation import as_array, as_count, as_positive_scalar
from .core import attention

#: Adam's decay rates of the running mean and mean square of the gradient, and its guard against 0.
ADAM = (0.9, 0.999, 1e-8)


@dataclass(frozen=True)
class FitResult:
    """A trained head.

    Attributes
    ----------
    W_Q, W_K : ndarray, shape (d, d_k)
        The learned projections.
    losses : ndarray, shape (steps,)
        ``losses[t]`` is the loss after ``t`` steps (``losses[0]``: the start).
    loss : float
        The loss of the returned projections, after all the steps.
    checkpoints : dict of int -> (ndarray, ndarray)
        ``(W_Q, W_K)`` after each requested number of steps.
    """

    W_Q: np.ndarray
    W_K: np.ndarray
    losses: np.ndarray
    loss: float
    checkpoints: dict = field(default_factory=dict)


def token_features(positions, signal=None, *, signal_square=False) -> np.ndarray:
    r"""Token rows for a learned head: ``[s, s**2, pt, pt**2, 1]``, ``pt = 2 p - 1``.

    The positions are centred on ``[-1, 1]``; on a symmetric grid ``pt`` and
    ``pt**2`` are uncorrelated, where ``p`` and ``p**2`` on ``[0, 1]`` are
    nearly collinear. Since the constant column is there, ``[pt, pt**2, 1]``
    is an invertible linear map of ``[p, p**2, 1]``: the heads the features
    can express are the same, only the path of gradient descent changes.

    Parameters
    ----------
    positions : array_like, shape (n,)
    signal : array_like, shape (n,) or (b, n), optional
        Adds the column ``s`` (and ``s**2`` with ``signal_square``) in front.
    signal_square : bool

    Returns
    -------
    X : ndarray, shape (n, d) or (b, n, d)
        ``d`` is 3 (positions only), 4 (with ``s``) or 5 (with ``s`` and ``s**2``).
    """
    p = as_array(positions, "positions", ndim=1)
    pt = 2 * p - 1  # (n,)
    columns = [pt, pt**2, np.ones_like(pt)]
    if signal is None:
        if signal_square:
            raise ValueError("signal_square needs a signal")
        return np.stack(columns, axis=-1)  # (n, 3)
    s = as_array(signal, "signal")
    if s.ndim not in (1, 2) or s.shape[-1] != p.size:
        raise ValueError(f"signal must have shape ({p.size},) or (b, {p.size}) to match positions, got {s.shape}")
    columns = [np.broadcast_to(c, s.shape) for c in columns]
    return np.stack([s, s**2, *columns] if signal_square else [s, *columns], axis=-1)


def _data(X, y, targets):
    """The training data, checked and batched: (b, n, d), (b, n), (b, n)."""
    X = as_array(X, "X")
    if X.ndim not in (2, 3) or X.shape[-2] < 2 or X.shape[-1] < 1:
        raise ValueError(f"X must have shape (n, d) or (b, n, d) with n >= 2, got {X.shape}")
    v = as_array(y, "y")
    t = v if targets is None else as_array(targets, "targets")
    for name, arr in (("y", v), ("targets", t)):
        if arr.shape != X.shape[:-1]:
            raise ValueError(f"{name} must have shape {X.shape[:-1]} to match X, got {arr.shape}")
    return (X, v, t) if X.ndim == 3 else (X[None], v[None], t[None])


def _projections(W_Q, W_K, d):
    W_Q = as_array(W_Q, "W_Q", ndim=2)
    W_K = as_array(W_K, "W_K", ndim=2)
    if W_Q.shape[0] != d or W_K.shape != W_Q.shape:
        raise ValueError(f"W_Q and W_K must both have shape ({d}, d_k), got {W_Q.shape} and {W_K.shape}")
    return W_Q, W_K


def attention_loss_and_grad(W_Q, W_K, X, y, targets=None):
    r"""The head's loss and its gradient with respect to both projections.

    Parameters
    ----------
    W_Q, W_K : array_like, shape (d, d_k)
    X : array_like, shape (n, d) or (b, n, d)
        Token features of one signal or of ``b`` signals.
    y : array_like, shape (n,) or (b, n)
        The values the head averages (the noisy signal).
    targets : array_like, same shape as ``y``, optional
        What the head must predict. When omitted, the target is ``y`` itself
        and the diagonal is masked (leave-one-out).

    Returns
    -------
    loss : float
    dW_Q, dW_K : ndarray, shape (d, d_k)
    """
    X, v, t = _data(X, y, targets)
    W_Q, W_K = _projections(W_Q, W_K, X.shape[-1])
    return backprop(W_Q, W_K, X, v, t, masked=targets is None)


def backprop(W_Q, W_K, X, v, t, *, masked):
    r"""Forward and backward pass of the head, on checked and batched arrays.

    Parameters
    ----------
    W_Q, W_K : ndarray, shape (d, d_k)
    X : ndarray, shape (b, n, d)
    v, t : ndarray, shape (b, n)
        Values and targets.
    masked : bool
        Mask the diagonal: no token attends to itself.

    Returns
    -------
    loss : float
    dW_Q, dW_K : ndarray, shape (d, d_k)
    """
    Q, K = X @ W_Q, X @ W_K  # (b, n, d_k) each
    E = Q @ K.transpose(0, 2, 1)  # (b, n, n): e_ij = q_i . k_j
    if masked:
        E[:, np.arange(E.shape[1]), np.arange(E.shape[1])] = -np.inf  # no token predicts itself
    E -= E.max(axis=-1, keepdims=True)
    A = np.exp(E, out=E)  # (b, n, n)
    A /= A.sum(axis=-1, keepdims=True)  # a_ij = softmax_j(e_ij)
    output = (A @ v[..., None])[..., 0]  # (b, n)
    error = output - t  # (b, n)
    dE = A * (v[:, None, :] - output[..., None])  # (b, n, n): a_ij (v_j - output_i)
    dE *= (2 * error / error.size)[..., None]  # dL/de_ij
    X2 = X.reshape(-1, X.shape[-1])  # (b n, d)
    dW_Q = X2.T @ (dE @ K).reshape(-1, K.shape[-1])  # (d, d_k) = sum over signals of X^T dL/dE K
    dW_K = X2.T @ (dE.transpose(0, 2, 1) @ Q).reshape(-1, Q.shape[-1])  # (d, d_k)
    return float(np.mean(error**2)), dW_Q, dW_K


def loo_loss_and_grad(W_Q, W_K, X, y):
    r"""Leave-one-out loss of the head with its diagonal masked, and its gradient.

    .. math:: L = \frac1N \sum_i \Big(s_i - \sum_{j \ne i} a_{ij} s_j\Big)^2,
        \qquad a_{ij} = \operatorname{softmax}_{j \ne i}(x_i W_Q W_K^\top x_j^\top)

    Parameters
    ----------
    W_Q, W_K : array_like, shape (d, d_k)
    X : array_like, shape (n, d)
    y : array_like, shape (n,)

    Returns
    -------
    loss : float
    dW_Q, dW_K : ndarray, shape (d, d_k)
    """
    return attention_loss_and_grad(W_Q, W_K, as_array(X, "X", ndim=2), as_array(y, "y", ndim=1))


def numerical_gradient(W_Q, W_K, X, y, targets=None, *, step=1e-6):
    r"""Central finite differences of the loss: an independent check of the hand-derived gradient.

    Each entry ``w`` of ``W_Q`` and ``W_K`` gets
    :math:`(L(w + h) - L(w - h)) / (2h)`, with every other entry fixed.

    Returns
    -------
    dW_Q, dW_K : ndarray, shape (d, d_k)
    """
    h = as_positive_scalar(step, "step")
    W = [as_array(W_Q, "W_Q", ndim=2), as_array(W_K, "W_K", ndim=2)]
    grads = [np.zeros_like(w) for w in W]
    for k, w in enumerate(W):
        for index in np.ndindex(w.shape):
            shifted = [[v.copy() for v in W] for _ in range(2)]
            shifted[0][k][index] += h
            shifted[1][k][index] -= h
            up, down = (attention_loss_and_grad(*pair, X, y, targets)[0] for pair in shifted)
            grads[k][index] = (up - down) / (2 * h)
    return grads[0], grads[1]


def learned_head(W_Q, W_K, X, y, *, leave_one_out=False):
    r"""Run a head with projections ``W_Q, W_K`` through :func:`~selfattention.core.attention`.

    Parameters
    ----------
    W_Q, W_K : array_like, shape (d, d_k)
    X : array_like, shape (n, d)
    y : array_like, shape (n,)
        The values (the signal).
    leave_one_out : bool
        Mask the diagonal, as in training without a separate target.

    Returns
    -------
    output : ndarray, shape (n,)
    weights : ndarray, shape (n, n)
    """
    X, v, _ = _data(as_array(X, "X", ndim=2), as_array(y, "y", ndim=1), None)
    W_Q, W_K = _projections(W_Q, W_K, X.shape[-1])
    mask = ~np.eye(X.shape[1], dtype=bool) if leave_one_out else None
    output, weights = attention(X[0] @ W_Q, X[0] @ W_K, v[0][:, None], 1.0, mask=mask)
    return output[:, 0], weights  # (n,), (n, n)


def fit_head(X, y, *, targets=None, d_k=3, steps=2000, learning_rate=0.1, init_scale=0.1,
             init=None, optimizer="adam", checkpoints=(), rng=None) -> FitResult:
    r"""Train ``W_Q, W_K`` from small random projections.

    Each step moves the projections against the gradient of
    :func:`attention_loss_and_grad`. Plain gradient descent steps by
    :math:`\eta` times the gradient; Adam divides each entry's running mean
    gradient by the root of its running mean square, so every entry moves
    by about :math:`\eta` per step, whatever the size of its gradient.

    Parameters
    ----------
    X, y, targets
        As in :func:`attention_loss_and_grad`.
    d_k : int
    steps : int
    learning_rate : float
        The step size :math:`\eta`.
    init_scale : float
        Standard deviation of the random initial entries.
    init : tuple of array_like, shape (d, d_k) each, optional
        Projections to start from; the random entries are added to them.
    optimizer : {"adam", "gd"}
    checkpoints : sequence of int
        Numbers of steps after which to keep a copy of the projections.
    rng : int, numpy.random.Generator or None
        Seed or generator of the initial projections.

    Returns
    -------
    FitResult
    """
    Xb, values, target = _data(X, y, targets)
    d_k, steps = as_count(d_k, "d_k"), as_count(steps, "steps")
    eta, scale = as_positive_scalar(learning_rate, "learning_rate"), as_positive_scalar(init_scale, "init_scale")
    if optimizer not in ("adam", "gd"):
        raise ValueError(f"optimizer must be 'adam' or 'gd', got {optimizer!r}")
    wanted = {as_count(c, "checkpoints", minimum=0) for c in checkpoints}
    gen = np.random.default_rng(rng)
    W = [scale * gen.standard_normal((Xb.shape[-1], d_k)) for _ in range(2)]
    if init is not None:
        start = _projections(*init, Xb.shape[-1])
        if start[0].shape[1] != d_k:
            raise ValueError(f"init must have d_k = {d_k} columns, got {start[0].shape[1]}")
        W = [w + s0 for w, s0 in zip(W, start, strict=True)]
    step = _adam(eta) if optimizer == "adam" else lambda t, k, g: eta * g
    losses, kept = np.empty(steps), {}
    for t in range(steps + 1):
        if t in wanted:
            kept[t] = (W[0].copy(), W[1].copy())
        loss, *grads = backprop(W[0], W[1], Xb, values, target, masked=targets is None)
        if t == steps:
            return FitResult(W[0], W[1], losses, loss, kept)
        losses[t] = loss
        for k, g in enumerate(grads):
            W[k] = W[k] - step(t, k, g)


def _adam(eta):
    """Adam's update for step ``t`` of parameter ``k``, keeping its running moments."""
    beta1, beta2, eps = ADAM
    moments = {}

    def update(t, k, g):
        m, s = moments.get(k, (0.0, 0.0))
        m, s = beta1 * m + (1 - beta1) * g, beta2 * s + (1 - beta2) * g**2
        moments[k] = m, s
        return eta * (m / (1 - beta1 ** (t + 1))) / (np.sqrt(s / (1 - beta2 ** (t + 1))) + eps)

    return update
