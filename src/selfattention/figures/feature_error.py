r"""Figures of :mod:`selfattention.studies.feature_error`: random features against what theory says of them."""

from __future__ import annotations

import numpy as np

from .._validation import as_array, as_counts, as_series
from ._style import COLORS, WIDTH, book_figure, new_figure, new_panels, shared_legend
from .cost import _log_ticks


@book_figure
def plot_uniform_errors(counts, measured, bound):
    r"""The largest error over all pairs (median and middle half over draws) and the bound's tolerance, against ``D``.

    A dotted guide falls as :math:`D^{-1/2}` from the first median.

    Parameters
    ----------
    counts : array_like, shape (k,)
    measured : array_like, shape (draws, k)
    bound : array_like, shape (k,)

    Returns
    -------
    matplotlib.figure.Figure
    """
    D, b = as_series(counts=counts, bound=bound)
    m = as_array(measured, "measured", ndim=2)
    if m.shape[1] != D.size or (D <= 0).any() or (m <= 0).any() or (b <= 0).any():
        raise ValueError(f"counts, measured and bound must be positive, measured with a column for each of the "
                         f"{D.size} counts, got shape {m.shape}")
    fig = new_figure(WIDTH, 3.2)
    ax = fig.add_subplot()
    low, mid, high = np.percentile(m, [25, 50, 75], axis=0)  # (k,) each
    ax.fill_between(D, low, high, color=COLORS["noisy"], alpha=0.2, lw=0)
    ax.loglog(D, mid, "o-", color=COLORS["noisy"], label="measured")
    ax.loglog(D, b, "s--", color=COLORS["accent"], label="bound, chance one half")
    ax.loglog(D, mid[0] * np.sqrt(D[0] / D), ":", color=COLORS["muted"], label=r"$D^{-1/2}$")
    _log_ticks(ax)
    ax.set_xlabel("frequencies, $D$")
    ax.set_ylabel("largest error over pairs")
    shared_legend(fig, ncols=3)
    return fig


@book_figure
def plot_ratio_spread(positions, counts, predicted, measured):
    r"""The spread of the cosine head's output along the positions, measured and predicted, one panel per ``D``.

    Parameters
    ----------
    positions : array_like, shape (n,)
    counts : sequence of int, length k
        One or two ``D``, one panel each.
    predicted, measured : array_like, shape (k, n)
        The delta method's standard deviations, and the measured ones.

    Returns
    -------
    matplotlib.figure.Figure
    """
    (p,) = as_series(positions=positions)
    D = np.array(as_counts(counts, "counts"))
    pred, meas = as_array(predicted, "predicted", ndim=2), as_array(measured, "measured", ndim=2)
    if not 1 <= D.size <= 2 or pred.shape != (D.size, p.size) or meas.shape != pred.shape:
        raise ValueError(f"predicted and measured must have a row for each of the one or two counts and a column "
                         f"for each of the {p.size} positions, got {pred.shape} and {meas.shape}")
    fig, axes = new_panels(D.size, height=2.8, sharey=True)
    for ax, count, row_p, row_m in zip(axes, D, pred, meas, strict=True):
        ax.semilogy(p, row_m, "o", ms=3, color=COLORS["noisy"], label="measured over draws")
        ax.semilogy(p, row_p, "-", color=COLORS["output"], label="delta method")
        ax.set_xticks(np.linspace(p.min(), p.max(), 3))  # three ticks: the panels' labels do not meet
        ax.set_xlabel("position $p_i$")
        ax.set_title(f"$D = {count:.0f}$")
    axes[0].set_ylabel("output's standard deviation")
    shared_legend(fig, axes[:1], ncols=2)
    return fig
