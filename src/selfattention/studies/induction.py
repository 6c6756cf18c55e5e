r"""Heads that work together: the induction circuit by hand and by gradient descent.

The chapter's sequences are random tokens whose second half repeats the
first (:func:`~selfattention.tokens.repeated_sequences`). A row of the first
half must guess: the next token is independent of everything before it. A
row of the repeat can find the symbol it holds earlier in the sequence and
predict what followed it there. :func:`accuracy` measures both halves;
:func:`ambiguity` splits the repeat's rows by whether their symbol came once
or more than once before.

:func:`training_batches` draws the sequences on which
:func:`~selfattention.training.fit_circuit` trains the two-layer model of
:mod:`~selfattention.circuit_learning`, sequences that repeat with one of
several periods (one period alone can be solved by position:
:func:`positional_shortcut`); :func:`track` measures the weights it keeps
along the way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import memory
from .._validation import as_array, as_count, as_counts, as_rng, as_token_ids, finite_result
from ..circuit_learning import as_circuit, circuit_forward
from ..head import gaussian_head_weights
from ..induction import Layer, _temperature, prefix_matching_score, previous_token_score
from ..multihead import Head
from ..tokens import Stream, periodic_sequences

#: The chapter's vocabulary (the letters a to z), half length and training set-up.
VOCABULARY = 26
HALF = 6
PERIODS = (4, 5, 6)
BATCH = 32
STEPS = 600
LEARNING_RATE = 0.02


def halves(hits, half) -> tuple[float, float]:
    """The mean of ``hits`` (one value per row, shape (2 half,)) over each half.

    The first half is rows ``1 .. half - 1`` (tokens 2 to ``half``), the
    repeat rows ``half + 1 .. 2 half - 1`` (tokens ``half + 2`` to
    ``2 half``): the start marker's row, which predicts the first token, and
    row ``half``, which predicts the repeat's first, are in neither.

    Parameters
    ----------
    hits : array_like, shape (2 half,)
        One value per row (the start marker's first), as from :func:`hits`.
    half : int

    Returns
    -------
    first, repeat : float
    """
    half = as_count(half, "half", minimum=2)
    h = as_array(hits, "hits", ndim=1)
    if h.size != 2 * half:
        raise ValueError(f"hits must hold 2 half = {2 * half} values, got {h.size}")
    with np.errstate(over="ignore"):
        means = np.array([h[1:half].mean(), h[half + 1:].mean()])
    first, repeat = finite_result(means, "hits: their means overflow the double range")
    return float(first), float(repeat)


def hits(weights, sequences, vocabulary, *, knocked_out=()) -> np.ndarray:
    """Whether each row predicts the next token.

    Parameters
    ----------
    weights : sequence of (W_Q, W_K, W_V, W_O)
        The circuit (:func:`~selfattention.circuit_learning.as_circuit`).
    sequences : array_like of int, shape (count, n)
    vocabulary : int
    knocked_out : sequence of int
        Layers left out (:func:`~selfattention.circuit_learning.circuit_forward`).

    Returns
    -------
    ndarray of bool, shape (count, n)
        Entry ``(k, r)``: row ``r`` of sequence ``k`` (row 0 the start
        marker) predicts its token ``r``.
    """
    ids = as_token_ids(sequences, "sequences", as_count(vocabulary, "vocabulary"), ndim=(2,))
    predicted, _ = circuit_forward(weights, ids, vocabulary, knocked_out=knocked_out)
    return predicted[:, :-1] == ids  # (count, n)


def accuracy(weights, sequences, vocabulary, half, *, knocked_out=()) -> tuple[float, float]:
    """Next-token accuracy on the first half and on the repeat (:func:`halves`).

    Parameters
    ----------
    weights, sequences, vocabulary, knocked_out
        As in :func:`hits`; the sequences repeat their first ``half`` tokens.
    half : int

    Returns
    -------
    first, repeat : float
    """
    return halves(hits(weights, sequences, vocabulary, knocked_out=knocked_out).mean(axis=0), half)


def ambiguity(sequences, half) -> np.ndarray:
    """For each row of the repeat, whether its symbol came more than once in the first half.

    Parameters
    ----------
    sequences : array_like of int, shape (count, 2 half)
    half : int

    Returns
    -------
    ndarray of bool, shape (count, half - 1)
        Rows ``half + 1 .. 2 half - 1``; ``False`` where the symbol came once,
        so that one earlier row follows it.
    """
    half = as_count(half, "half", minimum=2)
    ids = as_token_ids(sequences, "sequences", np.iinfo(np.intp).max, ndim=(2,))
    if ids.shape[1] != 2 * half:
        raise ValueError(f"sequences must have 2 half = {2 * half} tokens, got {ids.shape[1]}")
    first, repeat = ids[:, :half], ids[:, half:2 * half - 1]  # the rows' symbols
    return (repeat[:, :, None] == first[:, None, :]).sum(axis=2) > 1


def split_by_ambiguity(weights, sequences, vocabulary, half) -> tuple[float, float]:
    """Accuracy on the repeat's rows whose symbol came once, and more than once, before.

    Parameters
    ----------
    weights, sequences, vocabulary, half
        As in :func:`accuracy`.

    Returns
    -------
    once, more : float
        Each over the rows of its kind; the sequences must hold both.
    """
    correct = hits(weights, sequences, vocabulary)[:, as_count(half, "half") + 1:]
    twice = ambiguity(sequences, half)
    if twice.all() or not twice.any():
        raise ValueError("sequences must hold rows of both kinds: symbols that came once, and more than once")
    return float(correct[~twice].mean()), float(correct[twice].mean())


def composed_scores(weights, vocabulary) -> np.ndarray:
    r"""The second layer's score of a key, by symbols, through what the first layer wrote.

    Entry ``(a, b)``: the score layer 2 gives, from a query holding symbol
    ``a``, to what layer 1 writes when it reads symbol ``b`` alone (the key's
    predecessor),
    :math:`x_i W_Q^{[2]} W_K^{[2]\top} (x_{j-1} W_V^{[1]} W_O^{[1]})^\top`,
    for rows :math:`x_i` and :math:`x_{j-1}` of the stream that hold only
    those one-hot symbols, in the token subspace.
    The hand-built circuit's is the margin times the identity.

    Parameters
    ----------
    weights : sequence of (W_Q, W_K, W_V, W_O)
        At least two layers; the first two are composed.
    vocabulary : int

    Returns
    -------
    ndarray, shape (d_vocab, d_vocab)
    """
    layers = as_circuit(weights, vocabulary)
    if len(layers) < 2:
        raise ValueError("weights must hold two layers to compose")
    token = Stream(vocabulary).token
    (_, _, W_V1, W_O1), (W_Q2, W_K2, _, _) = layers[0], layers[1]
    with np.errstate(over="ignore", invalid="ignore"):
        written = W_V1[token] @ W_O1  # (d_vocab, d_model): layer 1's output per symbol
        M = W_Q2[token] @ (written @ W_K2).T  # (d_vocab, d_vocab)
    if not np.isfinite(M).all():
        raise ValueError("weights: the composed scores overflow the double range")
    return M


def positional_shortcut(vocabulary, half, margin=8.0) -> Layer:
    r"""One head that predicts a repeat of ``half`` tokens by position alone.

    The offset head of :func:`~selfattention.head.gaussian_head_weights` at
    :math:`\delta = -(\text{half} - 1)/N`, :math:`N = 2\,\text{half}` tokens,
    copying the symbol it finds into ``prediction``: on a repeat of that
    length the row ``half - 1`` back follows the same symbol half a sequence
    earlier.

    Parameters
    ----------
    vocabulary, half : int
    margin : float
        As in :func:`~selfattention.induction.previous_token_layer`.

    Returns
    -------
    Layer
    """
    stream, half = Stream(vocabulary), as_count(half, "half")
    step = 1.0 / (2 * half)
    W_Q, W_K, _ = gaussian_head_weights(offset=-(half - 1) * step)
    d, eye = stream.d_model, np.eye(stream.vocabulary)
    place = np.zeros((d, 3)), np.zeros((d, 3)), np.zeros((d, stream.vocabulary))
    place[0][stream.position], place[1][stream.position] = W_Q[1:], W_K[1:]
    place[2][stream.token] = eye
    W_O = np.zeros((stream.vocabulary, d))
    W_O[:, stream.prediction] = eye
    return Layer(Head(*place, _temperature(step**2, margin)), W_O)


def training_batches(steps, batch, length, periods, vocabulary, *, rng=None) -> np.ndarray:
    """The sequences of every step, each repeating with a period drawn from ``periods``.

    Parameters
    ----------
    steps, batch, length : int
    periods : sequence of int
    vocabulary : int
    rng : int, numpy.random.Generator or None

    Returns
    -------
    ndarray of int, shape (steps, batch, length)
    """
    steps, batch = as_count(steps, "steps"), as_count(batch, "batch")
    memory.require(8 * steps * batch * as_count(length, "length"), "steps, batch and length",
                   f"{steps} batches of {batch} sequences")
    gen = as_rng(rng)
    return np.stack([periodic_sequences(batch, length, periods, vocabulary, rng=gen) for _ in range(steps)])


@dataclass(frozen=True)
class Tracked:
    """Measures of a circuit's checkpoints on held-out repeated sequences.

    Attributes
    ----------
    steps : ndarray of int, shape (m,)
    previous, prefix, repeat : ndarray, shape (m,)
        Layer 1's previous-token score, layer 2's prefix-matching score and
        the accuracy on the repeat, after each number of steps.
    """

    steps: np.ndarray
    previous: np.ndarray
    prefix: np.ndarray
    repeat: np.ndarray


def track(checkpoints, sequences, vocabulary, half) -> Tracked:
    """Measure each checkpoint of a training on held-out repeated sequences.

    Parameters
    ----------
    checkpoints : dict of int -> weights
        As ``CircuitFit.checkpoints``.
    sequences : array_like of int, shape (count, 2 half)
    vocabulary, half : int

    Returns
    -------
    Tracked
    """
    if not isinstance(checkpoints, dict) or not checkpoints:
        raise ValueError("checkpoints must be a non-empty mapping of steps to weights")
    steps = as_counts(sorted(checkpoints), "checkpoints", minimum=0)
    rows = []
    for step in steps:
        predicted, A = circuit_forward(checkpoints[step], sequences, vocabulary)
        ok = (predicted[:, :-1] == np.asarray(sequences)).mean(axis=0)
        rows.append((previous_token_score(A[0]), prefix_matching_score(A[1], half), halves(ok, half)[1]))
    return Tracked(np.array(steps), *np.array(rows).T)


def steepest_drop(losses, window) -> tuple[int, float, float]:
    """Where the mean loss over ``window`` steps falls most from one window to the next.

    Parameters
    ----------
    losses : array_like, shape (steps,)
    window : int

    Returns
    -------
    start : int
        The first step of the window before the drop.
    before, after : float
        The mean losses of the two windows.
    """
    L, w = as_array(losses, "losses", ndim=1), as_count(window, "window")
    if L.size < 2 * w:
        raise ValueError(f"losses must hold at least 2 window = {2 * w} values, got {L.size}")
    with np.errstate(over="ignore", invalid="ignore"):
        means = np.convolve(L / w, np.ones(w), mode="valid")  # means[t]: steps t .. t + w - 1
        drops = finite_result(means[:-w] - means[w:], "losses: their means overflow the double range")
    start = int(np.argmax(drops))
    return start, float(means[start]), float(means[start + w])
