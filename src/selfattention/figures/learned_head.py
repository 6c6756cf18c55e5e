"""Figures of :mod:`selfattention.studies.learned_head`: a head trained on the leave-one-out loss."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .._validation import (
    InputTypeError,
    as_array,
    as_counts,
    as_labels,
    as_positive_scalar,
    as_series,
    as_weights,
)
from ._style import COLORS, WIDTH, book_figure, new_figure, new_panels, shared_legend, ticks
from .panels import draw_matrix, draw_signal, draw_weights


@book_figure
def plot_training(losses, *, engineered_loss, noise_variance, leak_losses=None):
    """The leave-one-out loss over the training steps.

    Parameters
    ----------
    losses : ndarray, shape (steps,)
        ``losses[t]``: the loss after ``t`` steps.
    engineered_loss : float
        The best engineered head's loss, drawn as a dashed line.
    noise_variance : float
        ``sigma**2``, drawn as a dotted line.
    leak_losses : ndarray, shape (steps,), optional
        The losses of a head whose query sees its own sample.

    Returns
    -------
    matplotlib.figure.Figure
    """
    losses = _as_losses(losses, "losses")
    leak_losses = None if leak_losses is None else _as_losses(leak_losses, "leak_losses")
    engineered_loss = as_positive_scalar(engineered_loss, "engineered_loss")
    noise_variance = as_positive_scalar(noise_variance, "noise_variance")
    fig = new_figure(WIDTH, 3.6)
    ax = fig.subplots()
    steps = np.arange(len(losses))
    ax.semilogy(steps, losses, "-", color=COLORS["output"], lw=2, label="learned head, positions only")
    if leak_losses is not None:
        ax.semilogy(np.arange(len(leak_losses)), leak_losses, "-", color=COLORS["noisy"], lw=2,
                    label="learned head whose query sees $s_i$")
    ax.axhline(engineered_loss, color=COLORS["clean"], ls="--", lw=1.2, label="best engineered head")
    ax.axhline(noise_variance, color=COLORS["muted"], ls=":", lw=1.5, label="noise variance $\\sigma^2$")
    ax.set_xlabel("training step $t$")
    ax.set_ylabel("leave-one-out loss $L$")
    shared_legend(fig, ncols=2)
    return fig


@book_figure
def plot_checkpoints(positions, weights_by_step):
    """The (masked) attention matrix at a few training steps, in reading order, two a row.

    Parameters
    ----------
    positions : ndarray, shape (n,)
    weights_by_step : dict of int -> ndarray, shape (n, n)

    Returns
    -------
    matplotlib.figure.Figure
    """
    (positions,) = as_series(positions=positions)
    weights_by_step = _as_weights_by_step(weights_by_step, positions.size)
    count = len(weights_by_step)
    fig, axes = new_panels(count, height=2.55, width=WIDTH if count > 1 else 2.9)
    for k, (ax, (step, weights)) in enumerate(zip(axes, sorted(weights_by_step.items()), strict=True)):
        draw_weights(ax, weights, positions, title=f"after {step} steps")
        if k % 2:
            ax.set_ylabel("")
        if k < count - 2:
            ax.set_xlabel("")
    return fig


@book_figure
def plot_learned_scores(positions, scores, centred, engineered, queries, temperatures, *, loo_temperature,
                        best_temperature, other_temperatures=()):
    r"""Learned scores against the engineered ones, and the learned temperature along the signal.

    Parameters
    ----------
    positions : ndarray, shape (n,)
    scores, centred : ndarray, shape (n, n)
        The learned scores :math:`e_{ij}` and :math:`e_{ij} - e_{ii}`.
    engineered : ndarray, shape (n, n)
        The engineered head's scores divided by its temperature, :math:`-(p_i - p_j)^2/\tau`.
    queries : sequence of int
        The rows drawn in the first two panels.
    temperatures : ndarray, shape (n,)
        Each query's temperature :math:`\tau(p_i)` read off the learned head.
    loo_temperature, best_temperature : float
        Drawn as horizontal lines in the third panel.
    other_temperatures : sequence of ndarray, shape (n,)
        :math:`\tau(p_i)` of heads learned on other noise draws, drawn faintly.

    Returns
    -------
    matplotlib.figure.Figure
    """
    positions, temperatures = as_series(positions=positions, temperatures=temperatures)
    scores, centred, engineered = (_as_square(m, name, positions.size) for m, name in
                                   ((scores, "scores"), (centred, "centred"), (engineered, "engineered")))
    queries = _as_rows(queries, positions.size)
    loo_temperature = as_positive_scalar(loo_temperature, "loo_temperature")
    best_temperature = as_positive_scalar(best_temperature, "best_temperature")
    other_temperatures = _as_others(other_temperatures, positions.size)
    fig = new_figure(WIDTH, 6.0)
    panels = fig.subplot_mosaic([["raw", "centred"], ["tau", "tau"]], height_ratios=(1, 1))
    _score_rows(panels["raw"], positions, scores, engineered, queries, "learned $e_{ij}$")
    _score_rows(panels["centred"], positions, centred, engineered, queries, "learned $e_{ij} - e_{ii}$")
    panels["raw"].set_ylabel("score")
    shared_legend(fig, [panels["raw"]], ncols=2, where="above")
    _temperature_panel(panels["tau"], positions, temperatures, other_temperatures, (loo_temperature, best_temperature))
    shared_legend(fig, [panels["tau"]], ncols=2)
    return fig


def _temperature_panel(ax, positions, temperatures, others, references):
    """The learned temperature along the signal (others faint), over the leave-one-out and best ones."""
    for k, other in enumerate(others):
        ax.semilogy(positions, other, "-", color=COLORS["muted"], lw=1, alpha=0.6,
                    label="other noise draws" if k == 0 else None)
    ax.semilogy(positions, temperatures, "-", color=COLORS["output"], lw=2, label="learned $\\tau(p_i)$")
    ax.axhline(references[0], color=COLORS["noisy"], ls="-", lw=1, label="leave-one-out $\\tau$")
    ax.axhline(references[1], color=COLORS["clean"], ls="--", lw=1, label="best $\\tau^*$")
    ax.set_xlabel("query position $p_i$")
    ax.set_ylabel("temperature")
    ax.set_title("temperature read off the learned head")


def _score_rows(ax, positions, learned, engineered, queries, title):
    """Rows ``queries`` of a learned score matrix (solid) over the engineered ones (dashed)."""
    colors = (COLORS["noisy"], COLORS["output"], COLORS["accent"])
    for i, color in zip(queries, colors, strict=False):
        ax.plot(positions, learned[i], "-", color=color, lw=2, label=f"learned, $p_i = {positions[i]:.2f}$")
        ax.plot(positions, engineered[i], "--", color=COLORS["clean"], lw=1, label="$-(p_i - p_j)^2/\\tau$")
    low = 1.5 * engineered[queries[len(queries) // 2]].max() - 12
    ax.set_ylim(bottom=low, top=max(learned[queries].max(), 0) + 3)
    ax.set_title(title)
    ax.set_xlabel("key position $p_j$")
    ticks(ax)


@book_figure
def plot_leak(positions, clean, noisy, prediction, weights):
    """What the leaking head does: its predictions, and its attention matrix.

    Parameters
    ----------
    positions, clean, noisy, prediction : ndarray, shape (n,)
        ``prediction``: the leave-one-out output of the leaking head.
    weights : ndarray, shape (n, n)

    Returns
    -------
    matplotlib.figure.Figure
    """
    positions, clean, noisy, prediction = as_series(positions=positions, clean=clean, noisy=noisy,
                                                    prediction=prediction)
    fig = new_figure(WIDTH, 3.0)
    ax_s, ax_w = fig.subplots(1, 2, width_ratios=(1.35, 1))
    draw_signal(ax_s, positions, clean, noisy, dot_size=4.0, legend=None)
    ax_s.plot(positions, prediction, "x", color=COLORS["output"], ms=5, label="prediction from the other samples")
    im = draw_weights(ax_w, weights, positions, title="the leaking head")
    fig.colorbar(im, ax=ax_w, shrink=0.9, label="weight $a_{ij}$")
    shared_legend(fig, [ax_s], ncols=2)
    return fig


@book_figure
def plot_products(query_projections, products, labels):
    r"""Two trained heads: their :math:`W_Q` differ, their :math:`W_{QK} = W_Q W_K^\top` agree.

    Parameters
    ----------
    query_projections : sequence of two ndarray, shape (d, d_k)
        :math:`W_Q` of each head.
    products : sequence of two ndarray, shape (d, d)
        :math:`W_Q W_K^\top` of each head.
    labels : sequence of str, length d
        The names of the token features (rows).

    Returns
    -------
    matplotlib.figure.Figure
    """
    query_projections = _as_pair(query_projections, "query_projections")
    products = _as_pair(products, "products")
    labels = as_labels(labels, "labels", products[0].shape[0])
    if query_projections[0].shape[0] != len(labels) or products[0].shape != (len(labels),) * 2:
        raise ValueError(f"query_projections and products must have {len(labels)} rows, one per label")
    fig, axes = new_panels(4, height=2.4)
    pairs = [(query_projections, "$W_Q$", "{:.1f}"), (products, "$W_Q W_K^\\top$", "{:.0f}")]
    for pair, (matrices, name, fmt) in enumerate(pairs):
        limit = max(np.abs(m).max() for m in matrices)  # both panels of a pair share one colour scale
        for start, matrix in enumerate(matrices):
            ax = axes[2 * pair + start]
            draw_matrix(ax, matrix, limit=limit, fmt=fmt)
            ax.set_yticks(range(len(labels)), labels=labels)
            ax.set_xticks(range(matrix.shape[1]), labels=labels if pair else range(1, matrix.shape[1] + 1))
            ax.set_title(f"{name}, start {start + 1}")
            if start:
                ax.set_yticklabels([])
    return fig


def _as_losses(x, name: str) -> np.ndarray:
    """Losses over the steps: a non-empty 1-D array of positive numbers (drawn on a log scale)."""
    (losses,) = as_series(**{name: x})
    if (losses <= 0).any():
        raise ValueError(f"{name} must be positive (drawn on a log scale)")
    return losses


def _as_weights_by_step(x, n: int) -> dict:
    """A non-empty mapping of step numbers to (n, n) attention matrices."""
    if not isinstance(x, Mapping) or not x:
        raise InputTypeError(f"weights_by_step must be a non-empty mapping of steps to weights, got {x!r}")
    steps = as_counts(list(x), "weights_by_step", minimum=0)
    return {step: _as_square(x[step], f"weights_by_step[{step}]", n, weights=True) for step in steps}


def _as_square(x, name: str, n: int, *, weights: bool = False) -> np.ndarray:
    """An (n, n) matrix of scores, or of attention weights."""
    m = as_weights(x, name) if weights else as_array(x, name, ndim=2)
    if m.shape != (n, n):
        raise ValueError(f"{name} must have shape ({n}, {n}) for the positions, got {m.shape}")
    return m


def _as_rows(queries, n: int) -> list[int]:
    """Row numbers below ``n``."""
    rows = as_counts(queries, "queries", minimum=0)
    if max(rows) >= n:
        raise ValueError(f"queries must be rows below {n}, got {max(rows)}")
    return rows


def _as_others(x, n: int) -> np.ndarray:
    """Other heads' temperatures along the signal: shape (k, n), possibly k = 0."""
    others = as_array(x, "other_temperatures")
    others = others.reshape(0, n) if others.size == 0 else others
    if others.ndim != 2 or others.shape[1] != n:
        raise ValueError(f"other_temperatures must have shape (k, {n}), got {others.shape}")
    return others


def _as_pair(x, name: str) -> list[np.ndarray]:
    """Two matrices of one shape."""
    if isinstance(x, str | bytes | Mapping) or not isinstance(x, Sequence) or len(x) != 2:
        raise InputTypeError(f"{name} must be a pair of matrices, got {x!r}")
    pair = [as_array(m, f"{name}[{k}]", ndim=2) for k, m in enumerate(x)]
    if pair[0].shape != pair[1].shape or pair[0].size == 0:
        raise ValueError(f"{name} must be two non-empty matrices of one shape, got {pair[0].shape} and {pair[1].shape}")
    return pair
