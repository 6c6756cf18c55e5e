r"""The circuits view of two layers of heads (Elhage et al., 2021).

A head's score and what it writes are products of its projections. Over the
whole stream (``d_model`` wide, rows as row vectors) a head has two
:math:`d_{\text{model}} \times d_{\text{model}}` matrices,

.. math:: W_{QK} = W_Q W_K^\top, \qquad W_{OV} = W_V W_O,

the score of key :math:`x_j` from query :math:`x_i` being
:math:`x_i W_{QK} x_j^\top`, and what it adds to row :math:`i` being
:math:`\sum_j a_{ij} x_j W_{OV}`. Read through the stream's subspaces
(:class:`~selfattention.tokens.Stream`) they are matrices over the
vocabulary: :func:`qk_circuit` and :func:`ov_circuit`.

A second-layer head reads what the first wrote through its queries, keys or
values: Q-, K- and V-composition. :func:`composition_scores` measures each
as Elhage et al. do, :math:`\lVert M \rVert_F / (\lVert W_{QK} \text{ or }
W_{OV} \rVert_F \lVert W_{OV}^{[1]} \rVert_F)`. :func:`~selfattention.circuit_paths.path_logits` splits
the prediction into the stream's paths, and :func:`~selfattention.circuit_paths.ablated_scores` runs the
second layer with the first layer's output removed, averaged, or hidden
from only some of its inputs (both in :mod:`~selfattention.circuit_paths`).
"""

from __future__ import annotations

import numpy as np

from . import memory
from ._validation import as_array, as_choice, as_count, as_rng, finite_result, power_of_two
from .circuit_learning import as_circuit
from .tokens import Stream

#: The subspaces a circuit can be read through (:class:`~selfattention.tokens.Stream`).
SUBSPACES = ("token", "previous", "prediction")


def _layer(weights, vocabulary, layer: int):
    """The checked projections of layer ``layer`` (0 the first) and the stream's layout."""
    layers = as_circuit(weights, vocabulary)
    k = as_count(layer, "layer", minimum=0, maximum=len(layers) - 1)
    return layers[k], Stream(vocabulary)


def qk_circuit(weights, layer, vocabulary, *, query="token", key="token") -> np.ndarray:
    r"""A head's scores over the vocabulary: :math:`W_Q[\text{query}]\, W_K[\text{key}]^\top`.

    Entry ``(a, b)`` is the score a query holding symbol ``a`` in the
    ``query`` subspace gives a key holding symbol ``b`` in the ``key``
    subspace (one-hot rows there, nothing elsewhere).

    Parameters
    ----------
    weights : sequence of (W_Q, W_K, W_V, W_O)
        As in :func:`~selfattention.circuit_learning.as_circuit`.
    layer : int
        0 for the first layer.
    vocabulary : int
    query, key : {"token", "previous", "prediction"}

    Returns
    -------
    ndarray, shape (d_vocab, d_vocab)
    """
    (W_Q, W_K, _, _), stream = _layer(weights, vocabulary, layer)
    rows_q = getattr(stream, as_choice(query, "query", SUBSPACES))
    rows_k = getattr(stream, as_choice(key, "key", SUBSPACES))
    with np.errstate(over="ignore", invalid="ignore"):
        M = W_Q[rows_q] @ W_K[rows_k].T  # (d_vocab, d_vocab)
    return finite_result(M, "weights: the QK circuit overflows the double range")


def ov_circuit(weights, layer, vocabulary, *, read="token", write="prediction") -> np.ndarray:
    r"""What a head writes over the vocabulary: :math:`W_V[\text{read}]\, W_O[:, \text{write}]`.

    Row ``a`` is what the head adds to the ``write`` subspace for each unit
    of weight on a key holding symbol ``a`` in the ``read`` subspace.

    Parameters
    ----------
    weights, layer, vocabulary
        As in :func:`qk_circuit`.
    read, write : {"token", "previous", "prediction"}

    Returns
    -------
    ndarray, shape (d_vocab, d_vocab)
    """
    (_, _, W_V, W_O), stream = _layer(weights, vocabulary, layer)
    rows = getattr(stream, as_choice(read, "read", SUBSPACES))
    columns = getattr(stream, as_choice(write, "write", SUBSPACES))
    with np.errstate(over="ignore", invalid="ignore"):
        M = W_V[rows] @ W_O[:, columns]  # (d_vocab, d_vocab)
    return finite_result(M, "weights: the OV circuit overflows the double range")


def copying_score(matrix) -> float:
    r"""Elhage et al.'s copying score of a square circuit: its eigenvalues' sum over the sum of their moduli.

    The eigenvalues of a matrix that copies (raises the
    symbol it reads) are positive: the score is 1 for the identity, -1 for
    its negative, near 0 for a matrix with no preference.

    Parameters
    ----------
    matrix : array_like, shape (d, d)

    Returns
    -------
    float
    """
    M = as_array(matrix, "matrix", ndim=2)
    if M.shape[0] != M.shape[1] or M.size == 0:
        raise ValueError(f"matrix must be square and non-empty, got shape {M.shape}")
    scale = np.abs(M).max()
    if scale == 0:
        raise ValueError("matrix must not be all zeros: its copying score is undefined")
    eigenvalues = np.linalg.eigvals(M / scale)  # (d,): scaled, so no overflow
    total = np.abs(eigenvalues).sum()
    if total == 0:
        raise ValueError("matrix must have a nonzero eigenvalue: its copying score is undefined")
    return float(eigenvalues.sum().real / total)


def diagonal_summary(matrix) -> dict[str, float]:
    r"""How much a square circuit's diagonal stands out: its mean, the other entries' and the rows it tops.

    A circuit that copies (or matches) each symbol with itself has a
    diagonal above the other entries of its row; one that writes no copy has
    a diagonal no larger than the rest.

    Parameters
    ----------
    matrix : array_like, shape (d, d)
        ``d >= 2``, so that each row has entries off the diagonal.

    Returns
    -------
    dict
        ``"diagonal"``: the mean of the diagonal entries; ``"off"`` and
        ``"off_abs"``: the mean of the other entries and of their absolute
        values; ``"argmax"``: how many rows are largest on the diagonal (an
        int).
    """
    M = as_array(matrix, "matrix", ndim=2)
    if M.shape[0] != M.shape[1] or M.shape[0] < 2:
        raise ValueError(f"matrix must be square, at least 2 x 2, got shape {M.shape}")
    d, scale = M.shape[0], power_of_two(np.abs(M).max())  # dividing by a power of two is exact
    off = M[~np.eye(d, dtype=bool)] / scale  # (d (d - 1),): scaled, so no mean overflows
    return {"diagonal": float(scale * (np.diag(M) / scale).mean()), "off": float(scale * off.mean()),
            "off_abs": float(scale * np.abs(off).mean()), "argmax": int((M.argmax(axis=1) == np.arange(d)).sum())}


def composition_scores(weights, vocabulary) -> dict[str, float]:
    r"""Q-, K- and V-composition of the second layer's head with the first's (Elhage et al., 2021).

    With :math:`W_{OV}^{[1]} = W_V^{[1]} W_O^{[1]}` and the second head's
    :math:`W_{QK}^{[2]}`, :math:`W_{OV}^{[2]}` (all
    :math:`d_{\text{model}} \times d_{\text{model}}`, rows acting on row vectors),

    .. math:: K = \frac{\lVert W_{QK}^{[2]} W_{OV}^{[1]\top} \rVert_F}
        {\lVert W_{QK}^{[2]} \rVert_F \lVert W_{OV}^{[1]} \rVert_F},\quad
        Q = \frac{\lVert W_{OV}^{[1]} W_{QK}^{[2]} \rVert_F}{\cdots},\quad
        V = \frac{\lVert W_{OV}^{[1]} W_{OV}^{[2]} \rVert_F}
        {\lVert W_{OV}^{[1]} \rVert_F \lVert W_{OV}^{[2]} \rVert_F}.

    Each is at most 1, and 0 when the second head's queries, keys or values
    read none of what the first head writes.

    Parameters
    ----------
    weights : sequence of (W_Q, W_K, W_V, W_O)
        At least two layers; the first two are composed.
    vocabulary : int

    Returns
    -------
    dict with keys "Q", "K", "V"
    """
    layers = as_circuit(weights, vocabulary)
    if len(layers) < 2:
        raise ValueError("weights must hold two layers to compose")
    (_, _, V1, O1), (Q2, K2, V2, O2) = layers[0], layers[1]
    scaled = [W / max(np.abs(W).max(), np.finfo(float).tiny) for W in (V1, O1, Q2, K2, V2, O2)]
    OV1, QK2, OV2 = scaled[0] @ scaled[1], scaled[2] @ scaled[3].T, scaled[4] @ scaled[5]  # (d, d) each
    pairs = {"Q": (OV1 @ QK2, QK2), "K": (QK2 @ OV1.T, QK2), "V": (OV1 @ OV2, OV2)}
    return {name: _ratio(np.linalg.norm(M), np.linalg.norm(OV1) * np.linalg.norm(W))
            for name, (M, W) in pairs.items()}


def _ratio(top: float, bottom: float) -> float:
    """``top / bottom``, 0 when ``bottom`` is 0: a head that writes or reads nothing composes with nothing."""
    return float(top / bottom) if bottom > 0 else 0.0


def composition_baseline(vocabulary, d_head, draws, *, rng=None) -> dict[str, float]:
    """The mean composition scores of two layers of random projections, the scores' baseline.

    Each draw's projections have independent standard normal entries, at the
    shapes of a circuit of ``d_head``-wide heads on the stream of
    ``vocabulary`` symbols (:func:`composition_scores` is unchanged by
    their scale).

    Parameters
    ----------
    vocabulary, d_head, draws : int
    rng : int, numpy.random.Generator or None

    Returns
    -------
    dict with keys "Q", "K", "V"
    """
    d, h = Stream(vocabulary).d_model, as_count(d_head, "d_head")
    count, gen = as_count(draws, "draws"), as_rng(rng)
    memory.require(8 * 8 * d * max(d, h), "d_head", f"a random circuit of heads {h} wide")  # one draw at a time
    memory.require(8 * 3 * count, "draws", f"the scores of {count} draws")
    shapes = [(d, h), (d, h), (d, h), (h, d)]
    drawn = np.empty((count, 3))  # (draws, 3): Q, K, V
    for row in drawn:
        scores = composition_scores([[gen.standard_normal(s) for s in shapes] for _ in range(2)], vocabulary)
        row[:] = scores["Q"], scores["K"], scores["V"]
    return {name: float(mean) for name, mean in zip("QKV", drawn.mean(axis=0), strict=True)}
