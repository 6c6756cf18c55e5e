"""Figures of the smoothing chapter."""

from __future__ import annotations

import numpy as np

from ._style import COLORS, draw_weights, new_figure


def plot_smoothing(positions, clean, noisy, output, weights, *, title=None):
    """The engineered head at work: signal panel and attention matrix.

    Left: ground truth (dashed), noisy observations (dots), attention output
    (solid). Right: the attention matrix, row ``i`` = how much token ``i``
    attends to every token.

    Parameters
    ----------
    positions, clean, noisy, output : ndarray, shape (n,)
    weights : ndarray, shape (n, n)
    title : str, optional
        A title for the whole figure.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig = new_figure(9.5, 3.8)
    ax_sig, ax_w = fig.subplots(1, 2, width_ratios=(1.6, 1))
    ax_sig.plot(positions, clean, "--", color=COLORS["clean"], lw=1.2, label="ground truth")
    ax_sig.plot(positions, noisy, "o", color=COLORS["noisy"], ms=3, alpha=0.6, label="noisy input")
    ax_sig.plot(positions, output, "-", color=COLORS["output"], lw=2, label="attention output")
    ax_sig.set_xlabel("position $p$")
    ax_sig.set_ylabel("value")
    ax_sig.legend(loc="upper right", fontsize="small", framealpha=0.9)
    im = draw_weights(ax_w, np.asarray(weights), np.asarray(positions))
    fig.colorbar(im, ax=ax_w, shrink=0.9, label="weight $w_{ij}$")
    if title:
        fig.suptitle(title)
    return fig
