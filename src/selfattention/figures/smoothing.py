"""Figures of the noisy sine and of the engineered head smoothing it."""

from __future__ import annotations

from .._validation import InputTypeError, as_series
from ._style import WIDTH, book_figure, new_figure, shared_legend
from .panels import draw_signal, draw_weights


@book_figure
def plot_noisy_signal(positions, clean, noisy):
    """The noisy sine: ground truth dashed, observations as dots.

    Parameters
    ----------
    positions, clean, noisy : ndarray, shape (n,)

    Returns
    -------
    matplotlib.figure.Figure
    """
    positions, clean, noisy = as_series(positions=positions, clean=clean, noisy=noisy)
    fig = new_figure(WIDTH, 2.7)
    ax = fig.add_subplot()
    draw_signal(ax, positions, clean, noisy, legend=None)
    shared_legend(fig, ncols=2)
    return fig


@book_figure
def plot_smoothing(positions, clean, noisy, output, weights, *, title=None):
    """The engineered head at work: signal panel and attention matrix.

    Left: ground truth (dashed), noisy observations (dots), attention output
    (solid), their legend under both panels. Right: the attention matrix,
    row ``i`` = how much token ``i`` attends to every token.

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
    positions, clean, noisy, output = as_series(positions=positions, clean=clean, noisy=noisy, output=output)
    if title is not None and not isinstance(title, str):
        raise InputTypeError(f"title must be a string or None, got {title!r}")
    fig = new_figure(WIDTH, 3.0 if title else 2.75)
    ax_sig, ax_w = fig.subplots(1, 2, width_ratios=(1.35, 1))
    draw_signal(ax_sig, positions, clean, noisy, output, dot_alpha=0.6, legend=None)
    im = draw_weights(ax_w, weights, positions, title="")
    fig.colorbar(im, ax=ax_w, shrink=0.9, label="weight $a_{ij}$")
    shared_legend(fig, [ax_sig])
    if title:
        fig.suptitle(title)
    return fig
