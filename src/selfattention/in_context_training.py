r"""A linear attention layer trained to read regression prompts: its loss and its gradient, by hand.

The layer of :func:`~selfattention.in_context.linear_attention_layer`, with
its two projections of the scores joined into :math:`W_{QK} = W_Q W_K^\top`
and the one column of :math:`W_V` the query's label reads, :math:`W_{V,s}`
(:math:`(d + 1) \times 1`), predicts for a prompt of tokens :math:`x_j =
[p_j, s_j]`, stacked as the :math:`N` rows of :math:`X`, and the query token
:math:`x_{N+1} = [p_{N+1}, 0]`

.. math:: \hat f(p_{N+1}) = -\frac{1}{N} \sum_{j \le N} \big(x_{N+1} W_{QK}\, x_j^\top\big)\, x_j W_{V,s}
    = -\,x_{N+1} W_{QK} \Big(\frac1N X^\top X\Big) W_{V,s},

minus the query's label after the layer, as
:func:`~selfattention.in_context.linear_stack_prediction` reads it. Over
:math:`m` prompts the loss :math:`L` is the mean of
:math:`(\hat f(p_{N+1}) - f(p_{N+1}))^2`, and its gradient, each sum over the prompts, is

.. math:: \frac{\partial L}{\partial W_{QK}} = -\frac2m \sum (\hat f(p_{N+1}) - f(p_{N+1}))\,
    x_{N+1}^\top \Big(\frac1N X^\top X\, W_{V,s}\Big)^\top,
    \qquad \frac{\partial L}{\partial W_{V,s}} = -\frac2m \sum (\hat f(p_{N+1}) - f(p_{N+1}))\,
    \frac1N X^\top X\, W_{QK}^\top x_{N+1}^\top .

:func:`fit_layer` follows it with the package's Adam
(:mod:`~selfattention.training`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import memory
from ._validation import as_array, as_count, as_positive_scalar, as_rng, finite_result, naming
from .training import _optimizer


class LayerFit(NamedTuple):
    """A trained layer: ``W_QK`` (d + 1, d + 1), ``w_V`` (d + 1,), and ``losses`` (steps + 1,), from the start."""

    W_QK: np.ndarray
    w_V: np.ndarray
    losses: np.ndarray


def _as_batch(inputs, labels, query, target=None, *, targeted=False):
    """Prompts checked: inputs (B, N, d), labels (B, N), query (B, d), target (B,); finite, B, N, d >= 1."""
    P = as_array(inputs, "inputs", ndim=3)
    y = as_array(labels, "labels", ndim=2)
    p = as_array(query, "query", ndim=2)
    if 0 in P.shape or y.shape != P.shape[:2] or p.shape != (P.shape[0], P.shape[2]):
        raise ValueError(f"inputs (B, N, d), labels (B, N) and query (B, d) must fit, not empty: "
                         f"{P.shape}, {y.shape}, {p.shape}")
    if target is None and not targeted:
        return P, y, p, None
    t = as_array(target, "target", ndim=1)
    if t.shape != (P.shape[0],):
        raise ValueError(f"target must hold one label per prompt ({P.shape[0]}), got shape {t.shape}")
    return P, y, p, t


def _moments(P, y, p):
    """The examples' second moments C (B, d + 1, d + 1) and the query tokens (B, d + 1)."""
    memory.require(8 * P.shape[0] * (P.shape[2] + 1) ** 2 * 3, "inputs", f"moments of {P.shape[0]} prompts")
    X = np.concatenate([P, y[..., None]], axis=2)  # (B, N, d + 1)
    with np.errstate(over="ignore", invalid="ignore"):
        C = finite_result(np.einsum("bna,bnc->bac", X, X) / X.shape[1], "inputs and labels: a moment overflows")
    return C, np.concatenate([p, np.zeros((len(p), 1))], axis=1)


def _as_layer(W_QK, w_V, size):
    W = as_array(W_QK, "W_QK", ndim=2)
    w = as_array(w_V, "w_V", ndim=1)
    if W.shape != (size, size) or w.shape != (size,):
        raise ValueError(f"W_QK must be ({size}, {size}) and w_V ({size},), got {W.shape} and {w.shape}")
    return W, w


def layer_predictions(W_QK, w_V, inputs, labels, query) -> np.ndarray:
    r"""Each prompt's prediction :math:`\hat f(p_{N+1}) = -x_{N+1} W_{QK} \big(\frac1N X^\top X\big) W_{V,s}`.

    Parameters
    ----------
    W_QK : array_like, shape (d + 1, d + 1)
    w_V : array_like, shape (d + 1,)
    inputs : array_like, shape (B, N, d)
    labels : array_like, shape (B, N)
    query : array_like, shape (B, d)

    Returns
    -------
    predictions : ndarray, shape (B,)
    """
    P, y, p, _ = _as_batch(inputs, labels, query)
    W, w = _as_layer(W_QK, w_V, P.shape[2] + 1)
    C, z = _moments(P, y, p)
    with np.errstate(over="ignore", invalid="ignore"):
        return finite_result(-np.einsum("ba,ac,bce,e->b", z, W, C, w), "W_QK and w_V: a prediction overflows")


def layer_loss_and_grad(W_QK, w_V, inputs, labels, query, target):
    r"""The mean squared error of :func:`layer_predictions` against ``target``, and its gradient.

    Parameters
    ----------
    W_QK : array_like, shape (d + 1, d + 1)
        The scores' joined projections :math:`W_Q W_K^\top`.
    w_V : array_like, shape (d + 1,)
        The column :math:`W_{V,s}` of :math:`W_V` that the query's label reads.
    inputs : array_like, shape (B, N, d)
        The ``B`` prompts' example inputs :math:`p_j`.
    labels : array_like, shape (B, N)
        Their labels :math:`s_j`.
    query : array_like, shape (B, d)
        Each prompt's query input :math:`p_{N+1}`.
    target : array_like, shape (B,)
        Each query's true label :math:`f(p_{N+1})`.

    Returns
    -------
    loss : float
    dW_QK : ndarray, shape (d + 1, d + 1)
    dw_V : ndarray, shape (d + 1,)
    """
    P, y, p, t = _as_batch(inputs, labels, query, target, targeted=True)
    W, w = _as_layer(W_QK, w_V, P.shape[2] + 1)
    return _loss_and_grad(W, w, *_moments(P, y, p), t)


def _loss_and_grad(W_QK, w_V, C, z, t):
    """:func:`layer_loss_and_grad` from the prompts' moments C (m, d + 1, d + 1) and query tokens z (m, d + 1)."""
    with np.errstate(over="ignore", invalid="ignore"):
        u = C @ w_V  # (m, d + 1): (1/N) X^T X W_{V,s}, prompt by prompt
        g = z @ W_QK  # (m, d + 1): x_{N+1} W_QK
        residual = -np.einsum("ba,ba->b", g, u) - t  # (m,)
        r = 2 * residual / len(t)  # (m,): dL / d prediction
        dW_QK = -np.einsum("b,ba,bc->ac", r, z, u)
        dw_V = -np.einsum("b,bac,bc->a", r, C, g)
        loss = float(np.mean(residual**2))
    return tuple(finite_result(v, _DIVERGED) for v in (loss, dW_QK, dw_V))


#: What the loss says when it leaves the double range.
_DIVERGED = "W_QK, w_V, inputs, labels and target: the loss or its gradient overflows"


def fit_layer(inputs, labels, query, target, *, steps=500, learning_rate=0.01, init_scale=0.1, rng=None):
    r"""Train ``W_QK`` and ``w_V`` with Adam from small random entries, on all the prompts at every step.

    Parameters
    ----------
    inputs, labels, query, target
        As in :func:`layer_loss_and_grad`: ``B`` prompts and their queries' true labels.
    steps : int
    learning_rate : float
        Adam's step size.
    init_scale : float
        Standard deviation of the random initial entries.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    LayerFit
    """
    P, y, p, t = _as_batch(inputs, labels, query, target, targeted=True)
    T, size = as_count(steps, "steps"), P.shape[2] + 1
    memory.require(8 * (T + 1), "steps", f"the losses of {T} steps")
    gen, scale = as_rng(rng), as_positive_scalar(init_scale, "init_scale")
    with np.errstate(over="ignore"):
        W = [finite_result(scale * gen.standard_normal(shape), "init_scale: the initial layer overflows")
             for shape in ((size, size), size)]
    update = _optimizer("adam", as_positive_scalar(learning_rate, "learning_rate"))
    losses, moments = np.empty(T + 1), _moments(P, y, p)  # the moments are the same at every step
    for step in range(T + 1):
        with naming("init_scale or learning_rate", "W_QK", "w_V"):
            losses[step], *grads = _loss_and_grad(*W, *moments, t)
        if step < T:
            with np.errstate(over="ignore", invalid="ignore"):  # reported by name below
                W = [w - update(step, k, g) for k, (w, g) in enumerate(zip(W, grads, strict=True))]
            finite_result(np.concatenate([w.ravel() for w in W]),
                          f"learning_rate: training diverged (the layer overflows at step {step + 1})")
    return LayerFit(W[0], W[1], losses)
