r"""Reading the induction circuit: the chapter's learned model, again, and its in-context learning along training.

:func:`chapter_fit` trains the model of the chapter "Heads that work
together" with that chapter's settings and seeds, so that another page
reads the same learned circuit without sharing state with it.
:func:`row_losses` gives the next-token loss of each row (and
:func:`row_loss_errors` the standard error of that mean), and
:func:`icl_scores` Olsson et al.'s (2022) in-context-learning score of each
checkpoint: the loss on a late token minus the loss on an early one.
"""

from __future__ import annotations

import numpy as np

from .. import defaults
from .._validation import as_count, as_counts, as_rng, as_token_ids, finite_result
from ..circuit_paths import ablated_scores
from ..training import CircuitFit, fit_circuit
from .induction import BATCH, HALF, LEARNING_RATE, PERIODS, STEPS, VOCABULARY, training_batches

#: The seeds of the chapter's batches and initial projections ("Heads that work together").
DATA_SEED, INIT_SEED = defaults.SEED + 3, defaults.SEED + 4


def chapter_fit(*, steps=STEPS, every=20, data_rng=DATA_SEED, init_rng=INIT_SEED) -> CircuitFit:
    """The learned model of the chapter "Heads that work together", trained again.

    :data:`~.induction.STEPS` steps of Adam on batches of
    :data:`~.induction.BATCH` sequences of ``2 HALF`` tokens repeating with
    a period of :data:`~.induction.PERIODS`, as that chapter trains it.

    Parameters
    ----------
    steps : int
        The chapter's :data:`~.induction.STEPS` by default; fewer give the
        same training's first steps.
    every : int
        Keep a checkpoint every ``every`` steps (step 0 and the last too),
        ``1 <= every <= steps``.
    data_rng, init_rng : int, numpy.random.Generator or None
        The batches' and the initial projections' randomness; the chapter's
        seeds by default.

    Returns
    -------
    CircuitFit
    """
    count = as_count(steps, "steps")
    gap = as_count(every, "every", maximum=count)
    data, init = as_rng(data_rng, "data_rng"), as_rng(init_rng, "init_rng")
    batches = training_batches(count, BATCH, 2 * HALF, PERIODS, VOCABULARY, rng=data)
    kept = sorted({*range(0, count + 1, gap), count})
    return fit_circuit(batches, VOCABULARY, learning_rate=LEARNING_RATE, rng=init, checkpoints=kept)


def row_losses(weights, sequences, vocabulary, *, ablation="none") -> np.ndarray:
    r"""The mean next-token cross-entropy of each row, over the sequences.

    Parameters
    ----------
    weights : sequence of two (W_Q, W_K, W_V, W_O)
    sequences : array_like of int, shape (count, n)
    vocabulary : int
    ablation : str
        As in :func:`~selfattention.circuit_paths.ablated_scores`.

    Returns
    -------
    ndarray, shape (n,)
        Entry ``r``: row ``r`` (row 0 the start marker) predicting token ``r``.
    """
    return finite_result(_token_losses(weights, sequences, vocabulary, ablation).mean(axis=0),
                         "weights: the losses overflow the double range")


def row_loss_errors(weights, sequences, vocabulary, *, ablation="none") -> np.ndarray:
    r"""The standard error of each row's mean loss (:func:`row_losses`), over the sequences.

    With :math:`\ell_{kr}` the loss of row :math:`r` in sequence :math:`k`
    of :math:`m`, and :math:`s_r` their sample standard deviation over
    :math:`k`, the error of their mean is :math:`s_r / \sqrt{m}`.

    Parameters
    ----------
    weights, sequences, vocabulary, ablation
        As in :func:`row_losses`; at least two sequences.

    Returns
    -------
    ndarray, shape (n,)
    """
    losses = _token_losses(weights, sequences, vocabulary, ablation)  # (count, n)
    if len(losses) < 2:
        raise ValueError("sequences must hold two sequences at least, for the spread of their losses")
    with np.errstate(over="ignore", invalid="ignore"):
        errors = losses.std(axis=0, ddof=1) / np.sqrt(len(losses))
    return finite_result(errors, "weights: the losses' spread overflows the double range")


def _token_losses(weights, sequences, vocabulary, ablation) -> np.ndarray:
    """The next-token cross-entropy of each row of each sequence, shape (count, n)."""
    ids = as_token_ids(sequences, "sequences", as_count(vocabulary, "vocabulary"), ndim=(2,))
    S = ablated_scores(weights, ids, vocabulary, ablation)[:, :-1]  # (count, n, d_vocab)
    S = S - S.max(axis=-1, keepdims=True)
    log_p = S - np.log(np.exp(S).sum(axis=-1, keepdims=True))
    return -np.take_along_axis(log_p, ids[..., None], axis=-1)[..., 0]  # (count, n)


def icl_scores(checkpoints, sequences, vocabulary, early, late) -> tuple[np.ndarray, np.ndarray]:
    """Olsson et al.'s in-context-learning score of each checkpoint: the loss at ``late`` minus at ``early``.

    Parameters
    ----------
    checkpoints : dict of int -> weights
        As ``CircuitFit.checkpoints``.
    sequences : array_like of int, shape (count, n)
    vocabulary : int
    early, late : int
        Rows (token positions) ``0 <= early < late < n``.

    Returns
    -------
    steps : ndarray of int, shape (m,)
    scores : ndarray, shape (m,)
        Negative when the late token is predicted better.
    """
    if not isinstance(checkpoints, dict) or not checkpoints:
        raise ValueError("checkpoints must be a non-empty mapping of steps to weights")
    steps = as_counts(sorted(checkpoints), "checkpoints", minimum=0)
    ids = as_token_ids(sequences, "sequences", as_count(vocabulary, "vocabulary"), ndim=(2,))
    if ids.shape[1] < 2:
        raise ValueError(f"sequences must hold two tokens at least, an early and a late one, got {ids.shape[1]}")
    e = as_count(early, "early", minimum=0, maximum=ids.shape[1] - 2)
    t = as_count(late, "late", minimum=e + 1, maximum=ids.shape[1] - 1)
    losses = [row_losses(checkpoints[s], ids, vocabulary) for s in steps]
    return np.array(steps), np.array([row[t] - row[e] for row in losses])

