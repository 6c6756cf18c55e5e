r"""How far the induction circuit reaches, and when gradient descent grows it.

The chapter "Heads that work together" builds the circuit for sequences of
a few letters; these measures say where that circuit stops working and
what each head does without the other:

- :func:`knockout_by_vocabulary`: the accuracy on the repeat with both
  layers and with the first knocked out, for several vocabularies; the
  second head alone predicts the most frequent symbol so far, which is a
  good guess when the vocabulary is small against the half;
- :func:`accuracy_by_half`: the accuracy on the repeat, and the share of
  its rows whose symbol came more than once, for longer halves;
- :func:`match_weight`: the weight the induction head gives the one key
  that matches, from the last row of a sequence of :math:`N` tokens, which
  falls as :math:`\exp(\text{margin}) / (\exp(\text{margin}) + N)`;
- :func:`knockout_along_training` and :func:`drop_starts`: the learned
  first layer knocked out at each checkpoint of a training, and where the
  steepest fall of the loss starts at other seeds.
"""

from __future__ import annotations

import numpy as np

from .. import memory
from .._validation import as_count, as_counts, as_rng, naming
from ..circuit_learning import projections
from ..induction import MARGIN, hand_built_circuit, run_circuit
from ..tokens import repeated_sequences
from ..training import fit_circuit
from .induction import (
    BATCH,
    HALF,
    LEARNING_RATE,
    PERIODS,
    VOCABULARY,
    accuracy,
    ambiguity,
    steepest_drop,
    training_batches,
)


def knockout_by_vocabulary(vocabularies, half, count, *, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """The hand-built circuit's accuracy on the repeat, whole and with layer 1 knocked out, per vocabulary.

    Parameters
    ----------
    vocabularies : sequence of int
        Each at least 2.
    half, count : int
        The repeated sequences' half length and number, for each vocabulary.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    both, knocked : ndarray, shape (len(vocabularies),)
    """
    sizes, half = as_counts(vocabularies, "vocabularies", minimum=2), as_count(half, "half", minimum=2)
    gen, both, knocked = as_rng(rng), [], []
    for vocabulary in sizes:
        sequences = repeated_sequences(count, half, vocabulary, rng=gen)  # (count, 2 half)
        with naming("vocabularies", "vocabulary"):
            circuit = projections(hand_built_circuit(vocabulary, 2 * half + 1))
        both.append(accuracy(circuit, sequences, vocabulary, half)[1])
        knocked.append(accuracy(circuit, sequences, vocabulary, half, knocked_out=[0])[1])
    return np.array(both), np.array(knocked)


def accuracy_by_half(halves, vocabulary, rows, *, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """The hand-built circuit's accuracy on the repeat, and the share of ambiguous rows, per half length.

    Each half gets enough repeated sequences for at least ``rows`` rows of
    the repeat (``half - 1`` a sequence), the circuit built for its length.

    Parameters
    ----------
    halves : sequence of int
        Each at least 2.
    vocabulary, rows : int
    rng : int, numpy.random.Generator or None

    Returns
    -------
    repeat, ambiguous : ndarray, shape (len(halves),)
        The accuracy on the repeat, and the share of its rows whose symbol
        came more than once in the first half (:func:`~.induction.ambiguity`).
    """
    lengths, rows = as_counts(halves, "halves", minimum=2), as_count(rows, "rows")
    gen, repeat, ambiguous = as_rng(rng), [], []
    for half in lengths:
        count = -(-rows // (half - 1))  # sequences enough for ``rows`` rows of the repeat
        memory.require(8 * count * 2 * half, "rows and halves", f"{count} sequences of {2 * half} tokens")
        with naming("halves", "half"):
            sequences = repeated_sequences(count, half, vocabulary, rng=gen)  # (count, 2 half)
        circuit = projections(hand_built_circuit(vocabulary, 2 * half + 1))
        repeat.append(accuracy(circuit, sequences, vocabulary, half)[1])
        ambiguous.append(ambiguity(sequences, half).mean())
    return np.array(repeat), np.array(ambiguous)


def match_weight(vocabulary, length, margin=MARGIN) -> float:
    r"""The weight the induction head gives, from the last of ``length`` tokens, to the one key that matches.

    The sequence holds symbol 0 first and last and the other symbols in
    turn between, so that the last row's symbol came once before: key
    :math:`2`, after it, scores ``margin`` more than the other
    :math:`N` keys, and gets about
    :math:`\exp(\text{margin}) / (\exp(\text{margin}) + N)`, with
    :math:`N` = ``length``.

    Parameters
    ----------
    vocabulary, length : int
        At least 2 and 3.
    margin : float
        As in :func:`~selfattention.induction.hand_built_circuit`.

    Returns
    -------
    float
    """
    vocabulary, length = as_count(vocabulary, "vocabulary", minimum=2), as_count(length, "length", minimum=3)
    memory.require_matrix(length + 1, length + 1, "length", count=4)  # each layer's scores and weights
    middle = 1 + np.arange(length - 2) % (vocabulary - 1)  # (length - 2,): the symbols 1 .. V - 1 in turn
    sequence = np.concatenate([[0], middle, [0]])  # (length,)
    run = run_circuit(sequence, hand_built_circuit(vocabulary, length + 1, margin))
    return float(run.weights[1][-1, 2])


def knockout_along_training(checkpoints, sequences, vocabulary, half) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The accuracy on the repeat of each checkpoint, whole and with its first layer knocked out.

    Parameters
    ----------
    checkpoints : dict of int -> weights
        As ``CircuitFit.checkpoints``.
    sequences : array_like of int, shape (count, 2 half)
    vocabulary, half : int

    Returns
    -------
    steps : ndarray of int, shape (m,)
    both, knocked : ndarray, shape (m,)
    """
    if not isinstance(checkpoints, dict) or not checkpoints:
        raise ValueError("checkpoints must be a non-empty mapping of steps to weights")
    steps = as_counts(sorted(checkpoints), "checkpoints", minimum=0)
    both = [accuracy(checkpoints[t], sequences, vocabulary, half)[1] for t in steps]
    knocked = [accuracy(checkpoints[t], sequences, vocabulary, half, knocked_out=[0])[1] for t in steps]
    return np.array(steps), np.array(both), np.array(knocked)


def drop_starts(seeds, steps, window) -> np.ndarray:
    """The first step of the steepest fall of the loss (:func:`~.induction.steepest_drop`), per seed.

    Each seed trains the chapter's model (:data:`~.induction.VOCABULARY`,
    :data:`~.induction.HALF`, :data:`~.induction.PERIODS`,
    :data:`~.induction.BATCH`, :data:`~.induction.LEARNING_RATE`) for
    ``steps`` steps, its batches and its initial projections drawn from two
    streams spawned from the seed.

    Parameters
    ----------
    seeds : sequence of int
        Each ``>= 0``.
    steps, window : int
        ``steps >= 2 window``.

    Returns
    -------
    ndarray of int, shape (len(seeds),)
    """
    seeds, steps = as_counts(seeds, "seeds", minimum=0), as_count(steps, "steps")
    if steps < 2 * as_count(window, "window"):
        raise ValueError(f"steps must be at least 2 window = {2 * window}, got {steps}")
    starts = []
    for seed in seeds:
        data, init = np.random.SeedSequence(seed).spawn(2)
        batches = training_batches(steps, BATCH, 2 * HALF, PERIODS, VOCABULARY, rng=np.random.default_rng(data))
        fit = fit_circuit(batches, VOCABULARY, learning_rate=LEARNING_RATE, rng=np.random.default_rng(init))
        starts.append(steepest_drop(fit.losses, window)[0])
    return np.array(starts, dtype=int)
