"""Figures of the noisy sine and of the engineered head smoothing it."""

from __future__ import annotations

from types import MappingProxyType

from .._validation import InputTypeError, as_series
from ._style import new_figure
from .panels import draw_signal, draw_weights

#: The smoothing figure's legend sits over a dense cloud of dots: a near-opaque frame.
_OPAQUE_LEGEND = MappingProxyType({"loc": "upper right", "fontsize": "small", "framealpha": 0.9})


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
    fig = new_figure(7.0, 3.0)
    ax = fig.add_subplot()
    draw_signal(ax, positions, clean, noisy)
    return fig


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
    positions, clean, noisy, output = as_series(positions=positions, clean=clean, noisy=noisy, output=output)
    if title is not None and not isinstance(title, str):
        raise InputTypeError(f"title must be a string or None, got {title!r}")
    fig = new_figure(9.5, 3.8)
    ax_sig, ax_w = fig.subplots(1, 2, width_ratios=(1.6, 1))
    draw_signal(ax_sig, positions, clean, noisy, output, dot_alpha=0.6, legend=_OPAQUE_LEGEND)
    im = draw_weights(ax_w, weights, positions)
    fig.colorbar(im, ax=ax_w, shrink=0.9, label="weight $a_{ij}$")
    if title:
        fig.suptitle(title)
    return fig
