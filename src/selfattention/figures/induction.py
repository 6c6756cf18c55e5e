"""Figures of :mod:`selfattention.studies.induction`: the stream, both layers' attention, training.

Drawn in the book's figure style (:mod:`._style`: at most 5.6 inches wide,
11-point text, at most two panels side by side), rows labelled by the
letters the sequence holds.
"""

from __future__ import annotations

import numpy as np

from .._validation import (
    InputTypeError,
    as_array,
    as_count,
    as_entries,
    as_labels,
    as_nonnegative_scalar,
    as_sequence,
    as_weights,
)
from ._style import COLORS, WEIGHTS_CMAP, WIDTH, book_figure, new_figure, shared_legend, ticks

#: The stream's subspaces, in order, and how a figure titles them.
SUBSPACES = ("token", "position", "previous", "prediction")


@book_figure
def plot_stream(stream, columns, labels):
    """The residual stream after both layers, one column group per subspace.

    Parameters
    ----------
    stream : array_like, shape (N, d)
        Rows of the stream, the columns already picked (``d`` of them).
    columns : dict of str -> int
        How many of the ``d`` columns each subspace of :data:`SUBSPACES`
        has, in that order.
    labels : sequence of str, length N
        The rows' symbols (the start marker first).

    Returns
    -------
    matplotlib.figure.Figure
    """
    X = as_array(stream, "stream", ndim=2)
    widths = _widths(columns, X.shape[1])
    rows = as_labels(labels, "labels", X.shape[0])
    fig = new_figure(WIDTH, 4.2)
    ax = fig.add_subplot()
    ax.imshow(X, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
    edges = np.cumsum(widths)[:-1] - 0.5
    for edge in edges:
        ax.axvline(edge, color=COLORS["clean"], lw=1.2)
    centres = np.cumsum(widths) - np.array(widths) / 2 - 0.5
    ax.set_xticks(centres, list(SUBSPACES))
    ax.set_yticks(range(len(rows)), rows)
    ax.set_ylabel("row of the stream (its letter)")
    ax.tick_params(length=0)
    return fig


def _widths(columns, total: int) -> list[int]:
    """The column counts of the four subspaces, which must add up to ``total``."""
    if not isinstance(columns, dict) or set(columns) != set(SUBSPACES):
        raise InputTypeError(f"columns must map each of {SUBSPACES} to a number of columns, got {columns!r}")
    widths = [columns[name] for name in SUBSPACES]
    if any(not isinstance(w, int) or isinstance(w, bool) or w < 1 for w in widths) or sum(widths) != total:
        raise ValueError(f"columns must be positive counts adding up to the stream's {total} columns, "
                         f"got {widths}")
    return widths


@book_figure
def plot_layers(weights, labels, *, titles=("layer 1", "layer 2")):
    """Two attention matrices side by side, rows and columns labelled by symbol.

    Parameters
    ----------
    weights : sequence of two array_like, shape (N, N)
    labels : sequence of str, length N
    titles : sequence of two str

    Returns
    -------
    matplotlib.figure.Figure
    """
    if len(as_sequence(weights, "weights")) != 2:
        raise ValueError(f"weights must hold two attention matrices, got {len(weights)}")
    mats = [as_weights(w, "weights", square=True) for w in weights]
    if mats[0].shape != mats[1].shape:
        raise ValueError(f"weights must be two matrices of one shape, got {mats[0].shape} and {mats[1].shape}")
    names = as_labels(labels, "labels", mats[0].shape[0])
    heads = as_labels(titles, "titles", 2)
    fig = new_figure(WIDTH, 3.3)
    for k, (A, title) in enumerate(zip(mats, heads, strict=True)):
        ax = fig.add_subplot(1, 2, k + 1)
        ax.imshow(A, cmap=WEIGHTS_CMAP, vmin=0, vmax=1, interpolation="nearest")
        ax.set_xticks(range(len(names)), names)
        ax.set_yticks(range(len(names)), names)
        ax.set_title(title)
        ax.set_xlabel("key $j$")
        if k == 0:
            ax.set_ylabel("query $i$")
        ax.tick_params(length=0)
    return fig


@book_figure
def plot_accuracy(accuracy, chance, half):
    """Next-token accuracy of each row, for several circuits, with chance marked.

    Parameters
    ----------
    accuracy : dict of str -> array_like, shape (2 half,)
        By circuit: the share of sequences in which row ``r`` (row 0 the
        start marker) predicts token ``r``.
    chance : float
        Drawn as a dotted line.
    half : int
        The length of each half: the repeat's rows are shaded.

    Returns
    -------
    matplotlib.figure.Figure
    """
    curves = _curves(accuracy, 2 * as_count(half, "half"))
    level = as_nonnegative_scalar(chance, "chance")
    fig = new_figure(WIDTH, 3.4)
    ax = fig.add_subplot()
    colors = (COLORS["output"], COLORS["noisy"], COLORS["accent"], COLORS["muted"])
    for (name, hits), color in zip(curves.items(), colors, strict=False):
        ax.plot(np.arange(hits.size), hits, "o-", color=color, lw=1.6, ms=4, label=name)
    ax.axhline(level, color=COLORS["clean"], ls=":", lw=1.2, label="chance")
    ax.axvspan(half + 0.5, 2 * half - 0.5, color=COLORS["muted"], alpha=0.15, lw=0)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("row (it predicts the next row's letter)")
    ax.set_ylabel("accuracy")
    ax.legend(loc="upper left", framealpha=0.9)
    return fig


def _curves(accuracy, length: int) -> dict:
    """A non-empty mapping of names to 1-D arrays of ``length`` values (``2 half``)."""
    if not isinstance(accuracy, dict) or not accuracy:
        raise InputTypeError(f"accuracy must be a non-empty mapping of names to curves, got {accuracy!r}")
    curves = as_entries(accuracy, "accuracy", list(accuracy))
    if any(c.shape != (length,) for c in curves.values()):
        raise ValueError(f"accuracy's curves must hold 2 half = {length} values each")
    return curves


@book_figure
def plot_circuit_training(losses, tracked, hand_built):
    """The loss of every step (left) and the heads' scores along training (right).

    Parameters
    ----------
    losses : array_like, shape (steps,)
    tracked : dict of str -> (array_like, array_like)
        By name: the steps measured and the values there (a score or an
        accuracy, in [0, 1]).
    hand_built : dict of str -> float
        The hand-built circuit's value of each tracked name, drawn dashed.

    Returns
    -------
    matplotlib.figure.Figure
    """
    L = as_array(losses, "losses", ndim=1)
    if not isinstance(tracked, dict) or not isinstance(hand_built, dict) or not tracked \
            or set(hand_built) != set(tracked):
        raise InputTypeError("tracked and hand_built must be mappings with the same names")
    fig = new_figure(WIDTH, 3.6)
    ax_l, ax_s = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    ax_l.plot(np.arange(L.size), L, "-", color=COLORS["noisy"], lw=0.8)
    ax_l.set_ylabel("loss $L$ of the batch")
    colors = (COLORS["output"], COLORS["accent"], COLORS["noisy"])
    for (name, (steps, values)), color in zip(tracked.items(), colors, strict=False):
        t, v = as_array(steps, "tracked", ndim=1), as_array(values, "tracked", ndim=1)
        ax_s.plot(t, v, "-", color=color, lw=1.6, label=name)
        ax_s.axhline(as_nonnegative_scalar(hand_built[name], "hand_built"), color=color, ls="--", lw=1)
    ax_s.set_ylim(-0.03, 1.03)
    for ax in (ax_l, ax_s):
        ax.set_xlabel("step $t$")
        ticks(ax)
    shared_legend(fig, [ax_s], ncols=1)
    return fig
