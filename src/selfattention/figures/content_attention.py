"""Figures of :mod:`selfattention.studies.content_attention`: heads on sines with a jump."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._validation import (
    InputTypeError,
    as_array,
    as_labels,
    as_nonnegative_scalar,
    as_positive_scalar,
    as_real_scalar,
    as_series,
    as_weights,
)
from ._style import COLORS, WIDTH, book_figure, new_figure, shared_legend
from .panels import draw_matrix, draw_signal, draw_weights


def _signal_panel(ax, positions, clean, noisy, outputs, jump, width):
    """Ground truth, samples, and one or two outputs, with the tokens near the jump shaded."""
    ax.axvspan(jump - width, jump + width, color=COLORS["muted"], alpha=0.2, lw=0, label="near the jump")
    (first, output), *others = outputs.items()
    draw_signal(ax, positions, clean, noisy, output, output_label=first, dot_alpha=0.5, legend=None)
    for label, other in others:
        ax.plot(positions, other, "-", color=COLORS["accent"], lw=2, label=label)


@book_figure
def plot_blur(positions, clean, noisy, output, *, jump, width):
    """A step sine, its samples and the Gaussian head's output.

    Parameters
    ----------
    positions, clean, noisy, output : ndarray, shape (n,)
    jump : float
        Where the signal jumps.
    width : float
        Tokens closer than this to the jump are shaded as "near the jump".

    Returns
    -------
    matplotlib.figure.Figure
    """
    positions, clean, noisy, output = as_series(positions=positions, clean=clean, noisy=noisy, output=output)
    jump, width = as_real_scalar(jump, "jump"), as_positive_scalar(width, "width")
    fig = new_figure(WIDTH, 3.3)
    _signal_panel(fig.subplots(), positions, clean, noisy, {"Gaussian head": output}, jump, width)
    shared_legend(fig, ncols=2)
    return fig


@book_figure
def plot_two_heads(positions, clean, noisy, outputs, weights, *, jump, width, window=(0.3, 0.7)):
    """Two heads on the same step sine: their outputs above, their attention matrices around the jump below.

    Parameters
    ----------
    positions, clean, noisy : ndarray, shape (n,)
    outputs : dict of str -> ndarray, shape (n,)
        Two heads' outputs, by name.
    weights : dict of str -> ndarray, shape (n, n)
        The same two heads' attention matrices.
    jump, width : float
        As in :func:`plot_blur`.
    window : tuple of float
        The range of positions (queries and keys) the attention matrices show.

    Returns
    -------
    matplotlib.figure.Figure
    """
    positions, clean, noisy = as_series(positions=positions, clean=clean, noisy=noisy)
    outputs = _as_two(outputs, "outputs", positions.size, weights=False)
    weights = _as_two(weights, "weights", positions.size, weights=True)
    jump, width = as_real_scalar(jump, "jump"), as_positive_scalar(width, "width")
    window = as_array(window, "window", ndim=1)
    if window.shape != (2,) or not window[0] < window[1]:
        raise ValueError(f"window must be a range (low, high) with low < high, got {window}")
    fig = new_figure(WIDTH, 6.2)
    panels = fig.subplot_mosaic([["s", "s"], ["a", "b"]], height_ratios=(1, 1.15))
    ax_s, ax_w = panels["s"], [panels["a"], panels["b"]]
    _signal_panel(ax_s, positions, clean, noisy, outputs, jump, width)
    shared_legend(fig, [ax_s], where="above")
    inside = (positions >= window[0]) & (positions <= window[1])  # (n,)
    for ax, (name, w) in zip(ax_w, weights.items(), strict=True):
        draw_weights(ax, w[np.ix_(inside, inside)], positions[inside], title=name)
        ax.axhline(jump, color="white", ls=":", lw=0.8)
        ax.axvline(jump, color="white", ls=":", lw=0.8)
    ax_w[1].set_ylabel("")
    return fig


@book_figure
def plot_errors(errors, W_QK, labels):
    r"""Errors of several heads near the jump and away from it (top), and a learned :math:`W_{QK}` (bottom).

    Parameters
    ----------
    errors : dict of str -> dict
        For each head, its ``{"near": rmse, "away": rmse}``.
    W_QK : ndarray, shape (d, d)
        The content-aware head's learned product :math:`W_Q W_K^\top`.
    labels : sequence of str, length d
        The token features.

    Returns
    -------
    matplotlib.figure.Figure
    """
    errors = _as_errors(errors)
    W_QK = as_array(W_QK, "W_QK", ndim=2)
    labels = as_labels(labels, "labels", W_QK.shape[0])
    if W_QK.shape != (len(labels),) * 2:
        raise ValueError(f"W_QK must be square, one row and column per label, got {W_QK.shape}")
    fig = new_figure(WIDTH, 7.4)
    ax_b, ax_m = fig.subplots(2, 1, height_ratios=(1, 1.25))
    _error_bars(ax_b, errors)
    draw_matrix(ax_m, W_QK, sqrt_scale=True)
    ax_m.set_xticks(range(len(labels)), labels=labels)
    ax_m.set_yticks(range(len(labels)), labels=labels)
    ax_m.set_title("learned $W_Q W_K^\\top$ (rows: query, columns: key)")
    return fig


def _error_bars(ax, errors):
    """A pair of bars per head: its error near the jump and away from it, values written on top."""
    names = list(errors)
    x = np.arange(len(names))
    for offset, region, color, label in ((-0.2, "near", COLORS["output"], "near the jump"),
                                         (0.2, "away", COLORS["noisy"], "away from it")):
        bars = ax.bar(x + offset, [errors[name][region] for name in names], width=0.4, color=color, label=label)
        ax.bar_label(bars, fmt="%.2f")
    ax.set_xticks(x, labels=names)
    ax.set_ylabel("RMSE against $f$")
    ax.margins(y=0.15)
    ax.legend()


def _as_two(x, name: str, n: int, *, weights: bool) -> dict:
    """Two heads' outputs, shape (n,) each, or attention matrices, shape (n, n) each, by name."""
    if not isinstance(x, Mapping) or len(x) != 2 or not all(isinstance(key, str) for key in x):
        raise InputTypeError(f"{name} must map two heads' names to their {name}, got {x!r}")
    checked = {key: as_weights(m, f"{name}[{key!r}]") if weights else as_array(m, f"{name}[{key!r}]", ndim=1)
               for key, m in x.items()}
    shape = (n, n) if weights else (n,)
    if any(m.shape != shape for m in checked.values()):
        raise ValueError(f"{name} must have shape {shape} for the {n} positions")
    return checked


def _as_errors(x) -> dict:
    """For each head (by name), its errors ``{"near": rmse, "away": rmse}``, finite and >= 0."""
    if not isinstance(x, Mapping) or not x:
        raise InputTypeError(f"errors must be a non-empty mapping of heads to their errors, got {x!r}")
    checked = {}
    for head, pair in x.items():
        if not isinstance(head, str) or not isinstance(pair, Mapping) or {"near", "away"} - set(pair):
            raise ValueError(f"errors must map each head's name to {{'near': rmse, 'away': rmse}}, got {x!r}")
        checked[head] = {region: as_nonnegative_scalar(pair[region], f"errors[{head!r}][{region!r}]")
                         for region in ("near", "away")}
    return checked
