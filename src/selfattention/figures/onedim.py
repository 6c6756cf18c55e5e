"""Figures of the one-dimensional head: what it does to the noisy sine, and its error."""

from __future__ import annotations

from .._validation import as_nonnegative_scalar, as_series
from ._style import COLORS, WIDTH, book_figure, new_figure, shared_legend
from .panels import draw_signal, draw_weights


@book_figure
def plot_onedim_head(positions, clean, noisy, output, weights):
    """The 1-D head on the noisy sine: output, attention matrix, output vs value.

    Top: ground truth, noisy input and the head's output against position,
    their legend above. Bottom left: the attention matrix (row ``i`` = query
    ``i``). Bottom right: each token's output against its own input value;
    the points fall on one curve because the output depends on nothing else.

    Parameters
    ----------
    positions, clean, noisy, output : ndarray, shape (n,)
    weights : ndarray, shape (n, n)

    Returns
    -------
    matplotlib.figure.Figure
    """
    positions, clean, noisy, output = as_series(positions=positions, clean=clean, noisy=noisy, output=output)
    fig = new_figure(WIDTH, 5.4)
    axes = fig.subplot_mosaic([["sig", "sig"], ["w", "val"]], height_ratios=(1, 1.25))
    ax_sig, ax_w, ax_val = axes["sig"], axes["w"], axes["val"]
    draw_signal(ax_sig, positions, clean, noisy, output, legend=None)
    shared_legend(fig, [ax_sig], where="above")
    draw_weights(ax_w, weights, positions, title="")
    points = ax_val.scatter(noisy, output, c=positions, cmap="plasma", s=10)
    fig.colorbar(points, ax=ax_val, label="position $p_i$")
    ax_val.set_xlabel("input value $x_i$")
    ax_val.set_ylabel("output$_i$")
    ax_val.set_title("output vs own value")
    return fig


@book_figure
def plot_strength_sweep(strengths, errors, noisy_error, band_error=None):
    """Error of the 1-D head for every score strength ``c = w_q w_k / tau``.

    Parameters
    ----------
    strengths, errors : ndarray, shape (m,)
        As passed to and returned by :func:`selfattention.studies.onedim.strength_sweep`.
    noisy_error : float
        RMSE of the noisy input itself (a horizontal line).
    band_error : float, optional
        RMSE of a position-aware head, for comparison (another line).

    Returns
    -------
    matplotlib.figure.Figure
    """
    strengths, errors = as_series(strengths=strengths, errors=errors)
    noisy_error = as_nonnegative_scalar(noisy_error, "noisy_error")
    band_error = None if band_error is None else as_nonnegative_scalar(band_error, "band_error")
    fig = new_figure(WIDTH, 3.0)
    ax = fig.add_subplot()
    ax.plot(strengths, errors, "-", color=COLORS["output"], lw=2, label="1-D head output")
    ax.axhline(noisy_error, ls="--", color=COLORS["noisy"], label="noisy input")
    if band_error is not None:
        ax.axhline(band_error, ls=":", color=COLORS["accent"], lw=2, label="position-aware head")
    ax.set_yscale("log")
    ax.set_xlabel("score strength $c = w_q w_k / \\tau$")
    ax.set_ylabel("RMSE against $f$")
    ax.legend()
    return fig
