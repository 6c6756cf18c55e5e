r"""Two layers of heads taken apart: the prediction's paths, and ablations of the first layer.

With the attention matrices held as the run computed them, the prediction
subspace of the stream after two layers is a sum of four paths
(:func:`path_logits`, Elhage et al., 2021):

.. math:: X^{[2]} = X + A^{[1]} X W_{OV}^{[1]} + A^{[2]} X W_{OV}^{[2]}
    + A^{[2]} A^{[1]} X W_{OV}^{[1]} W_{OV}^{[2]},

direct, through layer 1 alone, through layer 2 alone, and through layer 1
then layer 2 (a "virtual head"). What layer 1 does to layer 2's *attention*
is in :math:`A^{[2]}`, which the split holds fixed; :func:`ablated_scores`
measures it by running layer 2 again with layer 1's output removed
(``"zero"``), replaced by its mean over the sequences (``"mean"``), hidden
from layer 2's keys only (``"keys"``), replaced by its mean for the keys
only (``"keys-mean"``) or hidden from its queries and values only
(``"queries-values"``). :func:`output_shares` tells where in the stream
layer 1 writes.
"""

from __future__ import annotations

import numpy as np

from . import memory
from ._validation import as_array, as_choice, as_count, as_token_ids, finite_result, power_of_two
from .circuit_learning import BYTES_PER_ENTRY, as_circuit
from .tokens import Stream, residual_stream

#: What :func:`ablated_scores` does to the first layer's output.
ABLATIONS = ("none", "zero", "mean", "keys", "keys-mean", "queries-values")
#: The stream's subspaces (:class:`~selfattention.tokens.Stream`), which :func:`output_shares` splits.
SUBSPACES = ("token", "position", "previous", "prediction")
#: The paths of :func:`path_logits`, in order.
PATHS = ("direct", "layer 1", "layer 2", "layer 1 then 2")


def _attention(Xq, Xk, W_Q, W_K) -> np.ndarray:
    """Causal softmax weights (count, N, N) of queries read from ``Xq`` and keys from ``Xk``."""
    E = (Xq @ W_Q) @ (Xk @ W_K).transpose(0, 2, 1)  # (count, N, N)
    E = np.where(np.tri(E.shape[-1], dtype=bool), E, -np.inf)
    E -= E.max(axis=-1, keepdims=True)
    A = np.exp(E)
    return A / A.sum(axis=-1, keepdims=True)


def _inputs(weights, sequences, vocabulary):
    """Checked layers (exactly two), the streams (count, N, d_model) and the token ids."""
    layers = as_circuit(weights, vocabulary)
    if len(layers) != 2:
        raise ValueError(f"weights must hold exactly two layers, got {len(layers)}")
    ids = as_token_ids(sequences, "sequences", Stream(vocabulary).vocabulary, ndim=(2,))
    X = residual_stream(ids, vocabulary)  # (count, N, d_model)
    memory.require_matrix(X.shape[1], X.shape[1], "sequences", count=2 * X.shape[0],
                          bytes_per_entry=BYTES_PER_ENTRY)
    return layers, X, ids


def path_logits(weights, sequences, vocabulary) -> dict[str, np.ndarray]:
    r"""The prediction subspace of two layers, split into the stream's four paths.

    The attention matrices are those of the whole run; the four parts
    (:data:`PATHS`) sum to the run's prediction scores.

    Parameters
    ----------
    weights : sequence of two (W_Q, W_K, W_V, W_O)
        As in :func:`~selfattention.circuit_learning.as_circuit`.
    sequences : array_like of int, shape (count, n)
    vocabulary : int

    Returns
    -------
    dict of str -> ndarray, shape (count, n + 1, d_vocab)
        Keyed by :data:`PATHS`.
    """
    ((Q1, K1, V1, O1), (Q2, K2, V2, O2)), X, _ = _inputs(weights, sequences, vocabulary)
    out = Stream(vocabulary).prediction
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        A1 = _attention(X, X, Q1, K1)  # (count, N, N)
        first = A1 @ X @ V1 @ O1  # (count, N, d_model): what layer 1 adds
        A2 = _attention(X + first, X + first, Q2, K2)
        parts = (X, first, A2 @ X @ V2 @ O2, A2 @ first @ V2 @ O2)
        paths = {name: finite_result(part[..., out], "weights: a path's scores overflow the double range")
                 for name, part in zip(PATHS, parts, strict=True)}
    return paths


def ablated_scores(weights, sequences, vocabulary, ablation="none") -> np.ndarray:
    """The prediction scores of two layers with the first layer's output ablated.

    ``"zero"`` leaves layer 1's output out of the stream; ``"mean"``
    replaces it, row by row, by its mean over the sequences; ``"keys"``
    hides it from layer 2's keys only, ``"keys-mean"`` gives layer 2's keys
    its mean instead (row by row, over the sequences), and
    ``"queries-values"`` hides it from layer 2's queries and values only (it
    stays in the stream in these three).

    Parameters
    ----------
    weights, sequences, vocabulary
        As in :func:`path_logits`.
    ablation : {"none", "zero", "mean", "keys", "keys-mean", "queries-values"}

    Returns
    -------
    ndarray, shape (count, n + 1, d_vocab)
    """
    how = as_choice(ablation, "ablation", ABLATIONS)
    ((Q1, K1, V1, O1), (Q2, K2, V2, O2)), X, _ = _inputs(weights, sequences, vocabulary)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        first = _attention(X, X, Q1, K1) @ X @ V1 @ O1  # (count, N, d_model)
        if how in ("zero", "mean"):
            first = np.zeros_like(first) + (first.mean(axis=0) if how == "mean" else 0.0)
        X1 = X + first
        k = {"keys": X, "keys-mean": X + first.mean(axis=0)}.get(how, X1)  # what layer 2's keys read
        q, k = (X, X1) if how == "queries-values" else (X1, k)
        X2 = X1 + _attention(q, k, Q2, K2) @ q @ V2 @ O2  # values read as the queries do
        scores = X2[..., Stream(vocabulary).prediction]
    return finite_result(scores, "weights: the ablated circuit's scores overflow the double range")


def output_shares(weights, sequences, vocabulary) -> dict[str, float]:
    r"""Where the first layer writes: the share of its output's squared norm in each of the stream's subspaces.

    With :math:`Y = A^{[1]} X W_{OV}^{[1]}` the first layer's output over
    all the sequences' rows, the share of a subspace :math:`S` (its columns)
    is :math:`\sum Y_{\cdot S}^2 / \sum Y^2`; the shares of
    :data:`SUBSPACES` sum to 1.

    Parameters
    ----------
    weights, sequences, vocabulary
        As in :func:`path_logits`.

    Returns
    -------
    dict of str -> float
        Keyed by :data:`SUBSPACES`.
    """
    ((Q1, K1, V1, O1), _), X, _ = _inputs(weights, sequences, vocabulary)
    stream = Stream(vocabulary)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        Y = _attention(X, X, Q1, K1) @ X @ V1 @ O1  # (count, N, d_model)
        Y = Y / power_of_two(np.abs(Y).max())  # exact; no square overflows
        squares = {name: float((Y[..., getattr(stream, name)] ** 2).sum()) for name in SUBSPACES}
    total = finite_result(sum(squares.values()), "weights: layer 1's output overflows the double range")
    if total == 0:
        raise ValueError("weights: the first layer writes nothing, so its output has no shares")
    return {name: square / total for name, square in squares.items()}


def repeat_accuracy(scores, sequences, half) -> float:
    """The share of the repeat's rows (after its first) whose largest score is the next token.

    Parameters
    ----------
    scores : array_like, shape (count, 2 half + 1, d_vocab)
        As from :func:`ablated_scores` (row 0 the start marker).
    sequences : array_like of int, shape (count, 2 half)
    half : int

    Returns
    -------
    float
        Over rows ``half + 1 .. 2 half - 1``, as
        :func:`~selfattention.studies.induction.halves` counts them.
    """
    half = as_count(half, "half", minimum=2)
    S = as_array(scores, "scores", ndim=3)
    ids = as_token_ids(sequences, "sequences", S.shape[-1], ndim=(2,))
    if ids.shape[1] != 2 * half or S.shape[:2] != (ids.shape[0], 2 * half + 1):
        raise ValueError(f"scores must have shape (count, 2 half + 1, d_vocab) and sequences (count, 2 half) "
                         f"for half = {half}, got {S.shape} and {ids.shape}")
    rows = np.arange(half + 1, 2 * half)
    return float((S[:, rows].argmax(axis=-1) == ids[:, rows]).mean())
