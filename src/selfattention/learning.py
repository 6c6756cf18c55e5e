r"""Learning the projections of one attention head by gradient descent.

The head scores key ``j`` for query ``i`` with the bilinear form
:math:`e_{ij} = x_i W_Q W_K^\top x_j^\top` (the temperature is folded into
the projections), takes the softmax over the keys the mask allows and
averages the values :math:`v_j`, which are the signal itself (:math:`W_V`
copies it and is not learned). The loss is the mean squared error against a
target, over every token of every signal in a batch of ``n_signals`` signals of ``N`` tokens each,

.. math:: L = \frac{1}{n_{\text{signals}} N} \sum_{\text{signals}} \sum_i \Big(\text{output}_i - \text{target}_i\Big)^2,
    \qquad \text{output}_i = \sum_j a_{ij} v_j \text{ within each signal}.

With no separate target the target is the signal itself and the diagonal is
masked: every sample is predicted from all the others (leave-one-out).
The gradient is written out by hand (backpropagation through the softmax);
:mod:`~selfattention.training` follows it downhill.
"""

from __future__ import annotations

import numpy as np

from . import memory
from ._validation import (
    as_array,
    as_difference_step,
    as_flag,
    as_projections,
    as_token_batch,
    finite_result,
    naming,
)
from .core import attention

#: Bytes per entry of the (n_signals, n, n) arrays :func:`backprop` holds at its peak: the weights, the derivative
#: of the loss by the scores, and a temporary product of the two.
BYTES_PER_ENTRY = 32


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
    signal : array_like, shape (n,) or (n_signals, n), optional
        Adds the column ``s`` (and ``s**2`` with ``signal_square``) in front.
    signal_square : bool

    Returns
    -------
    X : ndarray, shape (n, d) or (n_signals, n, d)
        ``d`` is 3 (positions only), 4 (with ``s``) or 5 (with ``s`` and ``s**2``).
    """
    p = as_array(positions, "positions", ndim=1)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported by name below
        pt = 2 * p - 1  # (n,)
        columns = [pt, pt**2, np.ones_like(pt)]
    if as_flag(signal_square, "signal_square") and signal is None:
        raise ValueError("signal_square needs a signal")
    if signal is not None:
        s = as_array(signal, "signal")
        if s.ndim not in (1, 2) or s.shape[-1] != p.size:
            raise ValueError(f"signal must have shape ({p.size},) or (n_signals, {p.size}) to match positions, "
                             f"got {s.shape}")
        with np.errstate(over="ignore"):
            columns = [s, s**2, *columns] if signal_square else [s, *columns]
        columns = [np.broadcast_to(c, s.shape) for c in columns]
    return finite_result(np.stack(columns, axis=-1), "positions or signal: the features (squares) overflow "
                         "the double range")  # (n, d) or (n_signals, n, d)


def attention_loss_and_grad(W_Q, W_K, X, y, targets=None):
    r"""The head's loss and its gradient with respect to both projections.

    Parameters
    ----------
    W_Q, W_K : array_like, shape (d, d_k)
    X : array_like, shape (n, d) or (n_signals, n, d)
        Token features of one signal or of ``n_signals`` signals.
    y : array_like, shape (n,) or (n_signals, n)
        The values the head averages (the noisy signal).
    targets : array_like, same shape as ``y``, optional
        What the head must predict. When omitted, the target is ``y`` itself
        and the diagonal is masked (leave-one-out).

    Returns
    -------
    loss : float
    dW_Q, dW_K : ndarray, shape (d, d_k)
    """
    X, v, target = as_token_batch(X, y, targets)
    return backprop(W_Q, W_K, X, v, target, masked=targets is None)


def backprop(W_Q, W_K, X, v, targets, *, masked):
    r"""Forward and backward pass of the head, on a batch of signals (its arguments checked).

    Parameters
    ----------
    W_Q, W_K : ndarray, shape (d, d_k)
    X : ndarray, shape (n_signals, n, d)
    v, targets : ndarray, shape (n_signals, n)
        The values the head averages and what it must predict.
    masked : bool
        Mask the diagonal: no token attends to itself.

    Returns
    -------
    loss : float
    dW_Q, dW_K : ndarray, shape (d, d_k)

    Raises
    ------
    ValueError
        On bad input, if the (n_signals, n, n) arrays need more memory than
        :mod:`selfattention.memory` allows, or if the loss or its gradient overflows.
    """
    W_Q, W_K, X, v, targets, masked = _checked_batch(
        W_Q, W_K, X, v, targets, masked
    )
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: named below
        Q, K = X @ W_Q, X @ W_K  # (n_signals, n, d_k) each
        E = Q @ K.transpose(0, 2, 1)  # (n_signals, n, n): e_ij = q_i . k_j
        if masked:  # no token predicts itself
            diagonal = np.arange(E.shape[1])
            E[:, diagonal, diagonal] = -np.inf
        E -= E.max(axis=-1, keepdims=True)
        A = np.exp(E, out=E)  # (n_signals, n, n)
        A /= A.sum(axis=-1, keepdims=True)  # a_ij = softmax_j(e_ij)
        output = (A @ v[..., None])[..., 0]  # (n_signals, n)
        error = output - targets  # (n_signals, n)
        dE = A * (v[:, None, :] - output[..., None])  # a_ij (v_j - output_i)
        dE *= (2 * error / error.size)[..., None]  # dL/de_ij
        X2 = X.reshape(-1, X.shape[-1])  # (n_signals n, d)
        # (d, d_k) each: the sums over the signals of X^T dL/dE K and
        # of X^T (dL/dE)^T Q
        dW_Q = X2.T @ (dE @ K).reshape(-1, K.shape[-1])
        dW_K = X2.T @ (dE.transpose(0, 2, 1) @ Q).reshape(-1, Q.shape[-1])
        loss = float(np.mean(error**2))
    return _finite_loss(loss, dW_Q, dW_K)


def _checked_batch(W_Q, W_K, X, v, targets, masked):
    """:func:`backprop`'s arguments checked: shapes (d, d_k) twice, (n_signals, n, d), (n_signals, n) twice, a flag."""
    X = as_array(X, "X", ndim=3)
    if X.shape[1] < 2 or X.shape[2] < 1:
        raise ValueError(f"X must have shape (n_signals, n, d) with n >= 2 and d >= 1, got {X.shape}")
    v, targets = as_array(v, "v"), as_array(targets, "targets")
    for name, arr in (("v", v), ("targets", targets)):
        if arr.shape != X.shape[:-1]:
            raise ValueError(f"{name} must have shape {X.shape[:-1]} to match X, got {arr.shape}")
    memory.require_matrix(X.shape[1], X.shape[1], "X", count=X.shape[0], bytes_per_entry=BYTES_PER_ENTRY)
    return (*as_projections(W_Q, W_K, X.shape[-1]), X, v, targets, as_flag(masked, "masked"))


def _finite_loss(loss, dW_Q, dW_K):
    """``(loss, dW_Q, dW_K)``, or a ValueError naming the arguments when one of them is not finite."""
    message = "W_Q, W_K, X, y (v) or targets: the head's loss or its gradient overflows the double range"
    finite_result(np.array([loss]), message)
    return loss, finite_result(dW_Q, message), finite_result(dW_K, message)


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

    Each entry :math:`\theta` of ``W_Q`` and ``W_K`` gets
    :math:`(L(\theta + \Delta) - L(\theta - \Delta)) / (2\Delta)`, with every other entry fixed.

    Parameters
    ----------
    W_Q, W_K, X, y, targets
        As in :func:`attention_loss_and_grad`.
    step : float
        The shift :math:`\Delta`, from :math:`\sqrt{\mathrm{eps}}\, s` to
        :math:`s`, with :math:`s` the largest entry's magnitude (or 1) and
        :math:`\mathrm{eps} = 2^{-52}`: below, rounding takes most of the
        difference's digits (at the smallest steps, all of them: zeros);
        above, the difference measures no derivative at the entries.

    Returns
    -------
    dW_Q, dW_K : ndarray, shape (d, d_k)
    """
    W = [as_array(W_Q, "W_Q", ndim=2), as_array(W_K, "W_K", ndim=2)]
    eps = as_difference_step(step, "step", W)
    grads = [np.zeros_like(w) for w in W]
    for k, w in enumerate(W):
        for index in np.ndindex(w.shape):
            shifted = [[v.copy() for v in W] for _ in range(2)]
            with np.errstate(over="ignore"):
                shifted[0][k][index] += eps
                shifted[1][k][index] -= eps
            finite_result(np.array([shifted[0][k][index], shifted[1][k][index]]),
                          "W_Q, W_K or step: an entry shifted by step overflows the double range")
            up, down = (attention_loss_and_grad(*pair, X, y, targets)[0] for pair in shifted)
            with np.errstate(over="ignore"):
                grads[k][index] = (up - down) / (2 * eps)
    message = "step: the finite differences overflow the double range (a larger step is needed)"
    return finite_result(grads[0], message), finite_result(grads[1], message)


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
    X, v, _ = as_token_batch(as_array(X, "X", ndim=2), as_array(y, "y", ndim=1))
    W_Q, W_K = as_projections(W_Q, W_K, X.shape[-1])
    memory.require_matrix(X.shape[1], X.shape[1], "X")
    mask = ~np.eye(X.shape[1], dtype=bool) if as_flag(leave_one_out, "leave_one_out") else None
    with np.errstate(over="ignore", invalid="ignore"):
        Q, K = X[0] @ W_Q, X[0] @ W_K  # (n, d_k) each
    finite_result(np.hstack([Q, K]), "X, W_Q or W_K: the queries or keys overflow the double range")
    with naming("X", "Q and K", "Q", "K"):
        output, weights = attention(Q, K, v[0][:, None], 1.0, mask=mask)
    return output[:, 0], weights  # (n,), (n, n)
