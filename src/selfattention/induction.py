r"""Two heads that work together: a previous-token head, then an induction head.

Each head is a :class:`~selfattention.multihead.Head` under the causal mask,
and its output projection :math:`W_O` adds what it returns to the residual
stream (:class:`~selfattention.tokens.Stream`). A :class:`Layer` is the pair.

Layer 1, the previous-token head, is the offset head of
:func:`~selfattention.head.gaussian_head_weights` at
:math:`\delta = -1 / N` (:math:`N` tokens after the start marker), one token back, read from the position
subspace, with a temperature so small that row :math:`i` puts nearly all its
weight on row :math:`i - 1`. Its values read the token subspace and its
:math:`W_O` writes them into the ``previous`` subspace: row :math:`i` of the
stream then holds :math:`o_{i-1}`.

Layer 2, the induction head, compares content: its query is the symbol
:math:`o_i`, its key the ``previous`` subspace that layer 1 wrote, so
:math:`q_i \cdot k_j = o_i \cdot o_{j-1} / \tau`, large where the token
before :math:`j` is the query's symbol. Its values read the symbol of key
:math:`j`, the one that followed, and its :math:`W_O` writes it into the
``prediction`` subspace, whose largest entry is the predicted next symbol.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import memory
from ._validation import (
    TINY,
    as_array,
    as_count,
    as_instances,
    as_positive_scalar,
    as_sequence,
    as_token_ids,
)
from .core import causal_mask
from .head import gaussian_head_weights
from .multihead import Head
from .tokens import Stream, residual_stream

#: The scaled score by which a hand-built head prefers the key it looks for
#: to the next best key (the book's choice, and the explorer's start).
MARGIN = 8.0


@dataclass(frozen=True, eq=False)
class Layer:
    r"""One head and the output projection that adds its output to the stream.

    Run on the stream ``X``, the layer adds ``head(X) @ W_O`` to it (the
    head under the causal mask).

    Attributes
    ----------
    head : Head
        Its ``d_model`` is the stream's width.
    W_O : ndarray, shape (d_v, d_model)
    """

    head: Head
    W_O: np.ndarray

    def __post_init__(self):
        head = as_instances([self.head], "head", Head)[0]
        W_O = np.array(as_array(self.W_O, "W_O", ndim=2), dtype=float)
        if W_O.shape != (head.d_v, head.d_model):
            raise ValueError(f"W_O must have shape {(head.d_v, head.d_model)} "
                             f"(d_v, d_model), got {W_O.shape}")
        W_O.flags.writeable = False
        object.__setattr__(self, "W_O", W_O)

    def __call__(self, X):
        """What the layer adds to the stream ``X`` (N, d_model), its weights (N, N)."""
        output, weights = self.head(X, mask=causal_mask(len(X)))
        return output @ self.W_O, weights  # (N, d_model), (N, N)


def _placed(rows: slice, block, d_model: int) -> np.ndarray:
    """(d_model, columns): ``block``'s rows put in the stream's ``rows``."""
    W = np.zeros((d_model, np.shape(block)[1]))
    W[rows] = block
    return W


def previous_token_layer(
    vocabulary, n_positions, margin=MARGIN
) -> Layer:
    r"""Layer 1: the offset head one token back, writing the symbol it finds.

    Its scores are :math:`-(p_i + \delta - p_j)^2` with
    :math:`\delta = -1/N`, from the position rows of
    :func:`~selfattention.head.gaussian_head_weights`, and its temperature
    is :math:`\tau = (1/N)^2 / \text{margin}`: the keys on either side
    of :math:`i - 1` score ``margin`` less, once scaled.

    Parameters
    ----------
    vocabulary : int
    n_positions : int
        The rows, :math:`N + 1`: the start marker and the :math:`N` tokens.
    margin : float
        ``> 0``.

    Returns
    -------
    Layer
    """
    stream = Stream(vocabulary)
    n = as_count(n_positions, "n_positions",
                 minimum=2)
    step = 1.0 / (n - 1)
    tau = _temperature(step**2, margin)
    # (4, 3) each, rows [s, p, p^2, 1]
    W_Q, W_K, _ = gaussian_head_weights(
        offset=-step)
    d = stream.d_model
    eye = np.eye(stream.vocabulary)
    pos, tok = stream.position, stream.token
    head = Head(_placed(pos, W_Q[1:], d),
                _placed(pos, W_K[1:], d),
                _placed(tok, eye, d),  # values
                tau)
    W_O = _placed(stream.previous, eye, d).T
    return Layer(head, W_O)


def induction_layer(
    vocabulary, margin=MARGIN
) -> Layer:
    r"""Layer 2: the head that finds where the current symbol came before.

    .. math:: q_i = o_i, \qquad k_j = o_{j-1}, \qquad
        \tau = 1 / \text{margin}

    (:math:`k_j` read from the ``previous`` subspace that layer 1 wrote).
    Its values are the symbols :math:`o_j`, written into ``prediction``.

    Parameters
    ----------
    vocabulary : int
    margin : float
        ``> 0``: a key whose previous symbol is the query's scores
        ``margin`` more, once scaled.

    Returns
    -------
    Layer
    """
    stream = Stream(vocabulary)
    d = stream.d_model
    eye = np.eye(stream.vocabulary)
    tau = _temperature(1.0, margin)
    tok, prev = stream.token, stream.previous
    # query: the symbol o_i; key: what layer 1
    # wrote, o_{j-1}; value: the symbol o_j
    head = Head(_placed(tok, eye, d),
                _placed(prev, eye, d),
                _placed(tok, eye, d), tau)
    W_O = _placed(stream.prediction, eye, d).T
    return Layer(head, W_O)


def _temperature(gap: float, margin) -> float:
    """``gap / margin``, refused by name unless a normal double: the head's temperature."""
    with np.errstate(over="ignore", under="ignore"):
        tau = gap / as_positive_scalar(margin, "margin")
    if not TINY <= tau < np.inf:
        raise ValueError(f"margin gives the temperature {tau!r}, which must be a positive normal double")
    return tau


def hand_built_circuit(vocabulary, n_positions, margin=MARGIN) -> list[Layer]:
    """The two layers: :func:`previous_token_layer`, then :func:`induction_layer`.

    Parameters
    ----------
    vocabulary, n_positions, margin
        As in :func:`previous_token_layer`; ``margin`` is both heads'.

    Returns
    -------
    list of Layer, length 2
    """
    return [previous_token_layer(vocabulary, n_positions, margin),
            induction_layer(vocabulary, margin)]


@dataclass(frozen=True)
class CircuitRun:
    """What a circuit did to one sequence.

    Attributes
    ----------
    streams : ndarray, shape (layers + 1, N, d_model)
        The residual stream before the first layer and after each.
    weights : ndarray, shape (layers, N, N)
        Each layer's attention matrix.
    scores : ndarray, shape (N, d_vocab)
        The ``prediction`` subspace of the last stream: row ``i`` scores
        the symbol after row ``i``.
    """

    streams: np.ndarray
    weights: np.ndarray
    scores: np.ndarray

    @property
    def predicted(self) -> np.ndarray:
        """The symbol each row predicts next, shape (N,) (the first of ties)."""
        return np.argmax(self.scores, axis=1)


def run_circuit(tokens, layers, *, knocked_out=()) -> CircuitRun:
    """Run layers on a sequence, each adding its output to the stream.

    Parameters
    ----------
    tokens : array_like of int, shape (n,)
    layers : sequence of Layer
        All of one stream's width, ``3 d_vocab + 3``.
    knocked_out : sequence of int
        Layers (0 for the first) whose output is not added: an ablation.

    Returns
    -------
    CircuitRun
    """
    layers = as_instances(layers, "layers", Layer)
    vocabulary = _vocabulary_of(layers)
    off = _layer_indices(knocked_out, len(layers))
    ids = as_token_ids(tokens, "tokens", vocabulary)  # (n,): one sequence
    _require_run(ids.size + 1, len(layers), layers[0].head.d_model)
    X = residual_stream(ids, vocabulary)  # (N, d_model)
    streams, weights = [X], []
    for k, layer in enumerate(layers):
        added, A = layer(X)  # (N, d_model), (N, N)
        X = X if k in off else X + added
        streams.append(X)
        weights.append(A)
    scores = X[:, Stream(vocabulary).prediction]  # (N, d_vocab)
    return CircuitRun(np.stack(streams), np.stack(weights), scores)


def _require_run(N: int, count: int, d_model: int) -> None:
    """Refuse, naming ``tokens``, a run whose streams and weights (kept, then stacked) pass the memory limit."""
    kept = 2 * 8 * N * ((count + 1) * d_model + count * N)  # the streams and the (N, N) weights, twice
    memory.require(kept + memory.BYTES_PER_ENTRY * N * N, "tokens",  # and one attention at its peak
                   f"a run of {count} layers on {N} rows (n = {N - 1} tokens)")


def _vocabulary_of(layers) -> int:
    """The vocabulary whose stream the layers read (all must agree)."""
    widths = {layer.head.d_model for layer in layers}
    if len(widths) != 1 or (widths.pop() - 3) % 3:
        raise ValueError("layers must all read one stream of width 3 d_vocab + 3")
    return (layers[0].head.d_model - 3) // 3


def _layer_indices(knocked_out, count: int) -> set[int]:
    """``knocked_out`` as a set of layer indices in ``[0, count)``."""
    return {as_count(k, "knocked_out", minimum=0, maximum=count - 1)
            for k in as_sequence(knocked_out, "knocked_out")}


def previous_token_score(weights) -> float:
    r"""The mean weight that rows :math:`i \ge 1` give to row :math:`i - 1`.

    Row 1, the first token's, gives its weight to the start marker's row 0.

    Parameters
    ----------
    weights : array_like, shape (N, N) or (count, N, N)
    """
    A = _weights(weights)
    rows = np.arange(1, A.shape[-1])
    return float(A[:, rows, rows - 1].mean())


def prefix_matching_score(weights, half) -> float:
    r"""The mean weight that the repeat's rows give to the row after the same symbol half a sequence earlier.

    For a sequence whose second half repeats the first (``half`` tokens
    each, rows ``1 .. 2 half`` after the start marker), row
    :math:`r > \text{half}` holds the symbol of row :math:`r - \text{half}`;
    the score is the mean of :math:`a_{r, r - \text{half} + 1}`. Where the
    symbol came twice in the first half, that row need not follow its first
    occurrence: it follows the occurrence whose successor comes next.

    Parameters
    ----------
    weights : array_like, shape (N, N) or (count, N, N), N = 2 half + 1
    half : int
    """
    A = _weights(weights)
    half = as_count(half, "half")
    if A.shape[-1] != 2 * half + 1:
        raise ValueError(f"weights must have 2 half + 1 = {2 * half + 1} rows "
                         f"for half = {half}, got {A.shape[-1]}")
    rows = np.arange(half + 1, 2 * half + 1)
    return float(A[:, rows, rows - half + 1].mean())


def _weights(weights) -> np.ndarray:
    """Attention matrices, (count, N, N), N >= 2, each row summing to 1."""
    A = as_array(weights, "weights")
    if A.ndim not in (2, 3) or A.shape[-1] != A.shape[-2] or A.shape[-1] < 2:
        raise ValueError(f"weights must have shape (N, N) or (count, N, N) with N >= 2, got {A.shape}")
    if (A < 0).any() or (A > 1).any() or not np.allclose(A.sum(axis=-1), 1.0, rtol=0, atol=1e-6):
        raise ValueError("weights must be attention matrices: rows of non-negative weights summing to 1")
    return A.reshape(-1, *A.shape[-2:])
