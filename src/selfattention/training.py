r"""Training a head's projections: gradient descent and Adam, written out.

Each step moves the projections against the gradient of the loss: ``W_Q``
and ``W_K`` of one head (:func:`fit_head`, the gradient of
:func:`~selfattention.learning.backprop`), or ``W_Q``, ``W_K``, ``W_V`` and
``W_O`` of every layer of a circuit (:func:`fit_circuit`, the gradient of
:func:`~selfattention.circuit_learning.circuit_backprop`). Plain gradient descent steps by
:math:`\eta` times the gradient. Adam keeps, for every entry :math:`\theta`,
running means of its gradient and of the gradient's square, at step :math:`t`

.. math:: \text{mean}_t = 0.9\, \text{mean}_{t-1} + 0.1\, \frac{\partial L}{\partial \theta}, \qquad
    \text{square}_t = 0.999\, \text{square}_{t-1} + 0.001\, \Big(\frac{\partial L}{\partial \theta}\Big)^2,

corrects their start at 0 (it divides them by :math:`1 - 0.9^t` and
:math:`1 - 0.999^t`) and steps by :math:`\eta` times the corrected mean over
the square root of the corrected square plus :math:`10^{-8}`: about
:math:`\eta` per entry, whatever the size of its gradient.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from . import memory, work
from ._validation import (
    InputTypeError,
    as_array,
    as_choice,
    as_count,
    as_counts,
    as_nonnegative_scalar,
    as_positive_scalar,
    as_projections,
    as_rng,
    as_sequence,
    as_token_batch,
    as_token_ids,
    finite_result,
    naming,
)
from .learning import backprop

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

    def __post_init__(self):
        d = as_array(self.W_Q, "W_Q", ndim=2).shape[0]
        as_projections(self.W_Q, self.W_K, d)
        as_array(self.losses, "losses", ndim=1)
        as_nonnegative_scalar(self.loss, "loss")
        if not isinstance(self.checkpoints, Mapping):
            raise InputTypeError(f"checkpoints must be a mapping of steps to (W_Q, W_K), got {self.checkpoints!r}")
        for step, pair in self.checkpoints.items():
            as_count(step, "checkpoints", minimum=0)
            if len(as_sequence(pair, "checkpoints")) != 2:
                raise ValueError(f"checkpoints must map steps to pairs (W_Q, W_K), got {len(pair)} items at {step}")
            with naming("checkpoints", "W_Q", "W_K", "W_Q and W_K"):
                as_projections(*pair, d)


def fit_head(X, y, *, targets=None, d_k=3, steps=2000, learning_rate=0.1, init_scale=0.1,
             init=None, optimizer="adam", checkpoints=(), rng=None) -> FitResult:
    r"""Train ``W_Q, W_K`` from small random projections.

    Parameters
    ----------
    X, y, targets
        As in :func:`~selfattention.learning.attention_loss_and_grad`: tokens
        (n, d) or (n_signals, n, d), values and targets (n,) or (n_signals, n). Without
        ``targets`` the loss is leave-one-out (the diagonal is masked).
    d_k : int
    steps : int
    learning_rate : float
        The step size :math:`\eta`.
    init_scale : float
        Standard deviation of the random initial entries.
    init : tuple of array_like, shape (d, d_k) each, optional
        Projections to start from; the random entries are added to them.
    optimizer : {"adam", "gd"}
        Adam, or plain gradient descent.
    checkpoints : sequence of int
        Numbers of steps after which to keep a copy of the projections.
    rng : int, numpy.random.Generator or None
        Seed or generator of the initial projections.

    Returns
    -------
    FitResult
    """
    Xb, values, target = as_token_batch(X, y, targets)
    d_k, steps = as_count(d_k, "d_k"), as_count(steps, "steps")
    (n_signals, n, d) = Xb.shape
    # 8 bytes each: the losses; a dozen (d, d_k) arrays (projections, gradients, Adam's moments, the
    # updates); the queries, the keys and their two gradients, (n_signals, n, d_k) each.
    memory.require(8 * (steps + 12 * d * d_k + 4 * n_signals * n * d_k), "steps and d_k",
                   f"{steps} steps of projections of dimension {d_k}")
    W = _start(d, d_k, as_positive_scalar(init_scale, "init_scale"), init, rng)
    update = _optimizer(optimizer, as_positive_scalar(learning_rate, "learning_rate"))
    wanted = _steps_to_keep(checkpoints)
    losses, kept = np.empty(steps), {}
    for t in range(steps + 1):
        if t in wanted:
            kept[t] = (W[0].copy(), W[1].copy())
        with naming("learning_rate", "W_Q", "W_K"):
            loss, *grads = backprop(W[0], W[1], Xb, values, target, masked=targets is None)
        if t == steps:
            return FitResult(W[0], W[1], losses, loss, kept)
        losses[t] = loss
        with np.errstate(over="ignore", invalid="ignore"):  # reported by name below
            W = [w - update(t, k, g) for k, (w, g) in enumerate(zip(W, grads, strict=True))]
        finite_result(np.hstack(W), f"learning_rate: training diverged (the projections overflow at step {t + 1})")


def _steps_to_keep(checkpoints) -> set[int]:
    """The checkpoints, a possibly empty sequence of step numbers ``>= 0``, as a set."""
    if not len(as_sequence(checkpoints, "checkpoints")):
        return set()
    return set(as_counts(checkpoints, "checkpoints", minimum=0))


def _start(d, d_k, scale, init, rng) -> list[np.ndarray]:
    """The initial ``[W_Q, W_K]``, (d, d_k) each: random entries, added to ``init`` when given."""
    gen = as_rng(rng)
    with np.errstate(over="ignore"):
        W = [finite_result(scale * gen.standard_normal((d, d_k)), "init_scale: the initial projections overflow")
             for _ in range(2)]
    if init is None:
        return W
    if len(as_sequence(init, "init")) != 2:
        raise ValueError(f"init must be a pair (W_Q, W_K), got {len(init)} items")
    with naming("init", "W_Q", "W_K", "W_Q and W_K"):
        start = as_projections(*init, d)
    if start[0].shape[1] != d_k:
        raise ValueError(f"init must have d_k = {d_k} columns, got {start[0].shape[1]}")
    return [w + s0 for w, s0 in zip(W, start, strict=True)]


def _optimizer(name, eta):
    """The update ``(t, k, gradient) -> step`` of parameter ``k`` at step ``t``."""
    if as_choice(name, "optimizer", ("adam", "gd")) == "gd":
        return lambda t, k, g: eta * g
    beta1, beta2, eps = ADAM
    moments = {}

    def update(t, k, g):
        m, s = moments.get(k, (0.0, 0.0))
        m, s = beta1 * m + (1 - beta1) * g, beta2 * s + (1 - beta2) * g**2
        moments[k] = m, s
        return eta * (m / (1 - beta1 ** (t + 1))) / (np.sqrt(s / (1 - beta2 ** (t + 1))) + eps)

    return update


@dataclass(frozen=True)
class CircuitFit:
    """A trained circuit of layers (:mod:`~selfattention.circuit_learning`).

    Attributes
    ----------
    weights : list of tuples (W_Q, W_K, W_V, W_O)
        The learned projections, one tuple per layer.
    losses : ndarray, shape (steps,)
        ``losses[t]``: the loss on batch ``t``, before step ``t`` changed the weights.
    checkpoints : dict of int -> list of tuples
        The weights after each requested number of steps.
    """

    weights: list
    losses: np.ndarray
    checkpoints: dict = field(default_factory=dict)


def fit_circuit(batches, vocabulary, *, layers=2, d_head=None, learning_rate=0.02, init_scale=0.1,
                checkpoints=(), rng=None) -> CircuitFit:
    r"""Train a circuit of heads from small random projections, one batch of sequences a step, with Adam.

    Parameters
    ----------
    batches : array_like of int, shape (steps, count, n)
        The sequences of each step.
    vocabulary : int
    layers : int
        The number of layers, one head each.
    d_head : int, optional
        ``d_k = d_v`` of every head; ``vocabulary`` when omitted.
    learning_rate, init_scale, rng
        As in :func:`fit_head`.
    checkpoints : sequence of int
        Numbers of steps after which to keep a copy of the weights.

    Returns
    -------
    CircuitFit
    """
    from .circuit_learning import _backprop
    from .tokens import Stream, residual_stream

    stream = Stream(vocabulary)
    ids = as_token_ids(batches, "batches", stream.vocabulary, ndim=(3,))
    shape = _circuit_shapes(stream.d_model, as_count(layers, "layers"),
                            stream.vocabulary if d_head is None else as_count(d_head, "d_head"), ids.shape)
    W = _random_circuit(shape, layers, init_scale, rng)
    update = _optimizer("adam", as_positive_scalar(learning_rate, "learning_rate"))
    wanted, kept, losses = _steps_to_keep(checkpoints), {}, np.empty(len(ids))
    for t in range(len(ids) + 1):
        if t in wanted:
            kept[t] = [tuple(w.copy() for w in layer) for layer in W]
        if t == len(ids):
            return CircuitFit([tuple(layer) for layer in W], losses, kept)
        with naming("init_scale or learning_rate", "weights"):
            losses[t], grads = _backprop(W, residual_stream(ids[t], vocabulary), ids[t], "batches", "weights")
        W = _updated(W, grads, lambda key, g, t=t: update(t, key, g), t)


def _random_circuit(shape, layers: int, init_scale, rng) -> list[list[np.ndarray]]:
    """Each layer's (W_Q, W_K, W_V, W_O), entries drawn from N(0, init_scale**2)."""
    gen, scale = as_rng(rng), as_positive_scalar(init_scale, "init_scale")
    with np.errstate(over="ignore"):
        return [[finite_result(scale * gen.standard_normal(s), "init_scale: the initial projections overflow")
                 for s in shape] for _ in range(layers)]


def _updated(W, grads, step, t: int) -> list[list[np.ndarray]]:
    """Every projection moved by ``step((layer, index), gradient)``; refused by name if one overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        W = [[w - step((k, m), g) for m, (w, g) in enumerate(zip(layer, layer_grads, strict=True))]
             for k, (layer, layer_grads) in enumerate(zip(W, grads, strict=True))]
    finite_result(np.concatenate([w.ravel() for layer in W for w in layer]),
                  f"learning_rate: training diverged (the projections overflow at step {t + 1})")
    return W


def _circuit_shapes(d_model: int, layers: int, d_head: int, batches: tuple) -> list[tuple[int, int]]:
    """The shapes of one layer's (W_Q, W_K, W_V, W_O), after checking the memory and the work of the training.

    Per layer, at the peak: the projections six times over (themselves, their gradients, Adam's two
    moments, the update and its temporaries), what the backward pass keeps of the batch (its streams,
    queries, keys, values and outputs, and 48 bytes an entry of its ``(count, N, N)`` weights, as
    :func:`~selfattention.circuit_learning.circuit_backprop` budgets), and 8 KiB for Python's objects
    (some 40 small arrays). Measured in all: 8.6 to 12 KiB a layer at 12 x 2 projections and a batch
    of 2 x 5 rows, against 17 KiB budgeted; ``tests/unit/test_circuit_learning.py`` checks the budget
    against the measured peak. The work: every step scores ``count N**2`` pairs a layer.
    """
    from .circuit_learning import BYTES_PER_ENTRY

    steps, count, N = batches[0], batches[1], batches[2] + 1
    params = 8 * 4 * d_model * d_head  # one layer's four projections
    kept = 8 * count * N * (2 * d_model + 4 * d_head) + BYTES_PER_ENTRY * count * N * N
    memory.require(layers * (6 * params + kept + 2**13), "batches, layers and d_head",
                   f"{layers} layers of heads of width {d_head} on {count} streams of {N} rows of width {d_model}")
    work.require_work(steps * layers * count * N * N, "batches and layers",
                      f"{steps} steps of {layers} layers on {count} sequences of {N} rows")
    return [(d_model, d_head), (d_model, d_head), (d_model, d_head), (d_head, d_model)]
