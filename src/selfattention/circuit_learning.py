r"""Learning a circuit: the next-token loss of layers of heads, and its gradient by hand.

Each layer is one head under the causal mask with free projections
``(W_Q, W_K, W_V, W_O)`` and temperature 1 (a learned :math:`W_Q` absorbs
it), adding its output to the residual stream
(:class:`~selfattention.tokens.Stream`). After the last layer the
``prediction`` subspace of row :math:`i` holds the scores of the symbol
after token :math:`i`, and the loss is the cross-entropy of the true next
symbols, over the ``n`` rows of each of ``count`` sequences that have a
next token:

.. math:: L = -\frac{1}{\text{count}\; n} \sum \log
    \operatorname{softmax}(\text{scores}_i)[\text{next symbol}].

:func:`circuit_backprop` runs the layers forward on a batch and the chain
rule backward: through the cross-entropy, then each layer from the last,
the gradient of the stream flowing both straight down the residual
connection and through the head's queries, keys and values.
"""

from __future__ import annotations

import numpy as np

from . import memory
from ._validation import (
    as_array,
    as_difference_step,
    as_instances,
    as_sequence,
    as_token_ids,
    finite_result,
    naming,
)
from .induction import Layer, _layer_indices
from .multihead import Head
from .tokens import Stream, residual_stream

#: Bytes per entry of the (count, N, N) arrays one layer holds for the backward pass.
BYTES_PER_ENTRY = 48


def as_circuit(weights, vocabulary) -> list[tuple[np.ndarray, ...]]:
    """Layers' projections ``[(W_Q, W_K, W_V, W_O), ...]``, checked against the stream's width.

    Parameters
    ----------
    weights : sequence of sequences of four array_like
        (d_model, d_k), (d_model, d_k), (d_model, d_v), (d_v, d_model) per layer.
    vocabulary : int
        ``d_model = 3 vocabulary + 3``.

    Returns
    -------
    list of tuples of ndarray
    """
    d = Stream(vocabulary).d_model
    layers = as_sequence(weights, "weights")
    if not len(layers):
        raise ValueError("weights must hold at least one layer (W_Q, W_K, W_V, W_O)")
    checked = []
    for layer in layers:
        if len(as_sequence(layer, "weights")) != 4:
            raise ValueError(f"weights must hold layers of four projections (W_Q, W_K, W_V, W_O), got {len(layer)}")
        W_Q, W_K, W_V, W_O = (as_array(w, "weights", ndim=2) for w in layer)
        if W_Q.shape[0] != d or W_K.shape != W_Q.shape or W_V.shape[0] != d or W_O.shape != W_V.shape[::-1]:
            raise ValueError(f"weights must have shapes ({d}, d_k) twice, ({d}, d_v) and (d_v, {d}) for a "
                             f"vocabulary of {vocabulary}; got {W_Q.shape}, {W_K.shape}, {W_V.shape}, {W_O.shape}")
        checked.append((W_Q, W_K, W_V, W_O))
    return checked


def circuit_loss_and_grad(weights, sequences, vocabulary):
    """The circuit's next-token loss on a batch of sequences, and its gradient.

    Parameters
    ----------
    weights : sequence of (W_Q, W_K, W_V, W_O)
        One tuple per layer: (d_model, d_k), (d_model, d_k), (d_model, d_v),
        (d_v, d_model), with ``d_model = 3 vocabulary + 3``.
    sequences : array_like of int, shape (count, n)
    vocabulary : int

    Returns
    -------
    loss : float
    grads : list of tuples of ndarray
        Shaped as ``weights``.
    """
    layers = as_circuit(weights, vocabulary)
    ids = as_token_ids(sequences, "sequences", Stream(vocabulary).vocabulary,
                       ndim=(2,))
    with naming("sequences", "tokens"):
        X = residual_stream(ids, vocabulary)
    return _backprop(layers, X, ids, "sequences", "weights")  # the stream's entries are 0, 1 and positions


def circuit_backprop(weights, X, targets):
    r"""Forward and backward pass of the layers on a batch of streams.

    Parameters
    ----------
    weights : sequence of (W_Q, W_K, W_V, W_O)
        As in :func:`circuit_loss_and_grad`.
    X : array_like, shape (count, N, d_model)
        The streams before the first layer
        (:func:`~selfattention.tokens.residual_stream`).
    targets : array_like of int, shape (count, N - 1)
        Row ``i``'s next symbol.

    Returns
    -------
    loss : float
    grads : list of tuples of ndarray, shaped as ``weights``
    """
    layers, X, targets = _checked_batch(weights, X, targets)
    return _backprop(layers, X, targets, "X", "weights or X")


def _backprop(layers, X, targets, size: str, values: str):
    """:func:`circuit_backprop` on checked arguments; errors name ``size`` (memory) and ``values`` (overflow)."""
    memory.require_matrix(X.shape[1], X.shape[1], size, count=X.shape[0] * len(layers),
                          bytes_per_entry=BYTES_PER_ENTRY)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        streams, caches = _forward(layers, X)
        loss, d_scores = _cross_entropy(streams[-1], targets)
        d_stream = np.zeros_like(X)  # (count, N, d_model): dL/d(stream)
        d_stream[:, :-1, Stream((X.shape[-1] - 3) // 3).prediction] = d_scores
        grads = []
        for layer, cache in zip(layers[::-1], caches[::-1], strict=True):
            layer_grads, dX = _layer_backward(d_stream, layer, cache)
            grads.append(layer_grads)
            d_stream = d_stream + dX  # straight down, and through the head
    message = f"{values}: the circuit's loss or its gradient overflows the double range"
    finite_result(np.array([loss]), message)
    return loss, [tuple(finite_result(g, message) for g in layer) for layer in grads[::-1]]


def _checked_batch(weights, X, targets):
    """:func:`circuit_backprop`'s arguments, checked: layers, streams (count, N, d_model), targets (count, N - 1)."""
    X = as_array(X, "X", ndim=3)
    vocabulary = (X.shape[-1] - 3) // 3
    if X.shape[1] < 2 or vocabulary < 1 or X.shape[-1] != 3 * vocabulary + 3:
        raise ValueError(f"X must have shape (count, N, 3 d_vocab + 3) with N >= 2, got {X.shape}")
    ids = as_token_ids(targets, "targets", vocabulary, ndim=(2,))
    if ids.shape != (X.shape[0], X.shape[1] - 1):
        raise ValueError(f"targets must have shape {(X.shape[0], X.shape[1] - 1)} to match X, got {ids.shape}")
    return as_circuit(weights, vocabulary), X, ids


def _forward(layers, X, knocked_out=frozenset()):
    """The streams after each layer, and what each layer's backward pass needs."""
    bias = np.where(np.tri(X.shape[1], dtype=bool), 0.0, -np.inf)  # causal
    streams, caches = [X], []
    for k, layer in enumerate(layers):
        added, cache = _layer_forward(X, layer, bias)
        X = X if k in knocked_out else X + added
        streams.append(X)
        caches.append(cache)
    return streams, caches


def _layer_forward(X, layer, bias):
    """One head under the causal mask, times W_O: what it adds to ``X``."""
    W_Q, W_K, W_V, W_O = layer
    count, N, d = X.shape
    flat = X.reshape(-1, d)  # (count N, d_model)
    Q, K, V = ((flat @ P).reshape(count, N, -1) for P in (W_Q, W_K, W_V))
    E = Q @ K.transpose(0, 2, 1) + bias  # (count, N, N): e_ij, masked
    E -= E.max(axis=-1, keepdims=True)
    A = np.exp(E, out=E)
    A /= A.sum(axis=-1, keepdims=True)  # (count, N, N): a_ij
    AV = A @ V  # (count, N, d_v): the head's output
    added = (AV.reshape(count * N, -1) @ W_O).reshape(count, N, d)
    return added, (flat, Q, K, V, A, AV)


def _cross_entropy(X, targets):
    """The mean next-token cross-entropy of the streams, and its gradient by the scores."""
    S = X[:, :-1, Stream((X.shape[-1] - 3) // 3).prediction]  # (count, N - 1, d_vocab)
    S = S - S.max(axis=-1, keepdims=True)
    log_p = S - np.log(np.exp(S).sum(axis=-1, keepdims=True))
    rows = np.arange(S.shape[0])[:, None], np.arange(S.shape[1])[None, :]
    loss = -float(log_p[(*rows, targets)].mean())
    d_scores = np.exp(log_p)  # softmax, then minus the one-hot target
    d_scores[(*rows, targets)] -= 1.0
    return loss, d_scores / targets.size


def _layer_backward(d_added, layer, cache):
    """From dL/d(what the layer added) to its gradients and dL/dX through its head."""
    W_Q, W_K, W_V, W_O = layer
    flat, Q, K, V, A, AV = cache
    # rows: N + 1, the start marker too
    count, rows, d = d_added.shape
    d_added = d_added.reshape(count * rows, d)
    AV_rows = AV.reshape(count * rows, -1)
    dW_O = AV_rows.T @ d_added  # (d_v, d_model)
    d_AV = d_added @ W_O.T
    d_AV = d_AV.reshape(count, rows, -1)
    # (count, N + 1, N + 1)
    dA = d_AV @ V.transpose(0, 2, 1)
    # (count, N + 1, d_v)
    dV = A.transpose(0, 2, 1) @ d_AV
    # the softmax's
    sums = (A * dA).sum(axis=-1, keepdims=True)
    dE = A * (dA - sums)
    # (count, N + 1, d_k) each
    dQ, dK = dE @ K, dE.transpose(0, 2, 1) @ Q
    dQ, dK, dV = (m.reshape(count * rows, -1)
                  for m in (dQ, dK, dV))
    grads = (flat.T @ dQ, flat.T @ dK,
             flat.T @ dV, dW_O)
    # (count (N + 1), d_model)
    dX = dQ @ W_Q.T + dK @ W_K.T + dV @ W_V.T
    return grads, dX.reshape(count, rows, d)


def numerical_circuit_gradient(weights, sequences, vocabulary, *, step=1e-6):
    r"""Central finite differences of :func:`circuit_loss_and_grad`'s loss, entry by entry.

    Each entry :math:`\theta` of every projection gets
    :math:`(L(\theta + \Delta) - L(\theta - \Delta)) / (2\Delta)`.

    Parameters
    ----------
    weights, sequences, vocabulary
        As in :func:`circuit_loss_and_grad`.
    step : float
        :math:`\Delta`, from :math:`\sqrt{\mathrm{eps}}\, s` to :math:`s`, with
        :math:`s` the largest entry's magnitude (or 1) and
        :math:`\mathrm{eps} = 2^{-52}`: below, the rounding of the losses
        and of the shifted entries takes most of the difference's digits
        (at the smallest steps, all of them: a gradient of zeros); above,
        the difference spans more than the entries and measures no
        derivative at them.

    Returns
    -------
    list of tuples of ndarray, shaped as ``weights``
    """
    layers = [list(layer) for layer in as_circuit(weights, vocabulary)]
    eps = as_difference_step(step, "step", [w for layer in layers for w in layer])
    grads = [[np.zeros_like(w) for w in layer] for layer in layers]
    for k, layer in enumerate(layers):
        for m, W in enumerate(layer):
            for index in np.ndindex(W.shape):
                grads[k][m][index] = _difference(layers, (k, m, index), eps, sequences, vocabulary)
    return [tuple(g) for g in grads]


def _difference(layers, where, eps, sequences, vocabulary) -> float:
    """(L(theta + eps) - L(theta - eps)) / (2 eps) for the entry ``where``."""
    k, m, index = where
    losses = []
    for sign in (1, -1):
        shifted = [list(layer) for layer in layers]
        W = shifted[k][m].copy()
        with np.errstate(over="ignore"):
            W[index] += sign * eps
        shifted[k][m] = finite_result(W, "weights or step: an entry shifted by step overflows")
        losses.append(circuit_loss_and_grad(shifted, sequences, vocabulary)[0])
    with np.errstate(over="ignore", invalid="ignore"):
        return float(finite_result(np.array([(losses[0] - losses[1]) / (2 * eps)]),
                                   "step: the finite differences overflow (a larger step is needed)")[0])


def circuit_forward(weights, sequences, vocabulary, *, knocked_out=()):
    """The layers run on a batch at once: each row's predicted symbol and the attention matrices.

    The same arithmetic as :func:`circuit_backprop`'s forward pass; an
    ablation (``knocked_out``, as in :func:`~selfattention.induction.run_circuit`)
    leaves a layer's output out of the stream.

    Parameters
    ----------
    weights, sequences, vocabulary
        As in :func:`circuit_loss_and_grad`.
    knocked_out : sequence of int
        Layers (0 for the first) whose output is not added.

    Returns
    -------
    predicted : ndarray of int, shape (count, N)
    attention : ndarray, shape (layers, count, N, N)
    """
    layers = as_circuit(weights, vocabulary)
    ids = as_token_ids(sequences, "sequences", Stream(vocabulary).vocabulary, ndim=(2,))
    X = residual_stream(ids, vocabulary)
    memory.require_matrix(X.shape[1], X.shape[1], "sequences", count=X.shape[0] * len(layers),
                          bytes_per_entry=BYTES_PER_ENTRY)
    off = _layer_indices(knocked_out, len(layers))
    with np.errstate(over="ignore", invalid="ignore"):
        streams, caches = _forward(layers, X, off)
    message = "weights: the circuit's streams or weights overflow the double range"
    attention = finite_result(np.stack([cache[4] for cache in caches]), message)
    scores = finite_result(streams[-1], message)[..., Stream(vocabulary).prediction]
    return np.argmax(scores, axis=-1), attention


def projections(layers) -> list[tuple[np.ndarray, ...]]:
    """Hand-built :class:`~selfattention.induction.Layer` objects as projections at temperature 1.

    Each head's :math:`W_Q` is divided by its temperature, so that
    :func:`circuit_forward` and :func:`circuit_loss_and_grad` run it.
    """
    return [(layer.head.W_Q / layer.head.temperature, layer.head.W_K, layer.head.W_V, layer.W_O)
            for layer in as_instances(layers, "layers", Layer)]


def as_layers(weights, vocabulary) -> list[Layer]:
    """Learned projections as :class:`~selfattention.induction.Layer` objects at temperature 1.

    Parameters
    ----------
    weights, vocabulary
        As in :func:`as_circuit`.

    Returns
    -------
    list of Layer
    """
    return [Layer(Head(W_Q, W_K, W_V, 1.0), W_O) for W_Q, W_K, W_V, W_O in as_circuit(weights, vocabulary)]
