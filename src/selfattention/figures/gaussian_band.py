"""Figures of the engineered head's Gaussian band and the width of its rows."""

from __future__ import annotations

import numpy as np

from .._validation import as_array, as_count, as_positive_scalar, as_series, as_temperatures
from ._style import COLORS, book_figure, new_figure, shared_legend
from .panels import draw_weights


@book_figure
def plot_attention_band(positions, weights, temperature, bandwidth):
    """The engineered head's attention matrix, with its predicted width.

    The heat map is the head's weights; the dashed lines mark
    ``p_j = p_i +/- h``, one standard deviation ``h = sqrt(tau / 2)`` of the
    Gaussian each row should be.

    Parameters
    ----------
    positions : ndarray, shape (n,)
    weights : ndarray, shape (n, n)
        The head's attention matrix, as from
        :func:`selfattention.studies.gaussian_band.band_weights`.
    temperature : float
        The temperature ``tau`` of ``weights``, for the title.
    bandwidth : float
        ``h``, as from :func:`selfattention.kernel.temperature_to_bandwidth`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    (p,) = as_series(positions=positions)
    temperature, h = as_positive_scalar(temperature, "temperature"), as_positive_scalar(bandwidth, "bandwidth")
    fig = new_figure(4.2, 3.7)
    ax = fig.subplots()
    im = draw_weights(ax, weights, p, title=f"attention weights, $\\tau = {temperature:g}$")
    for shift in (-h, h):
        ax.plot(p, p + shift, "--", color="white", lw=1, label=None)
    ax.set_xlim(p[0], p[-1])
    ax.set_ylim(p[-1], p[0])
    ax.text(0.97, 0.03, f"dashed: $p_j = p_i \\pm {h:.3f}$", transform=ax.transAxes,
            ha="right", va="bottom", color="white")
    fig.colorbar(im, ax=ax, shrink=0.9, label="weight $a_{ij}$")
    return fig


@book_figure
def plot_row_profiles(positions, temperatures, row, measured, predicted, bandwidths):
    """One row of the attention matrix at several temperatures.

    Dots: the row of the head's weights. Lines: the Gaussian of standard
    deviation ``sqrt(tau / 2)`` the trick predicts. Arrows span +/- one
    standard deviation.

    Parameters
    ----------
    positions : ndarray, shape (n,)
    temperatures : sequence of float, length m (at most 4)
    row : int
        The query ``i`` whose row is drawn.
    measured, predicted : ndarray, shape (m, n)
    bandwidths : ndarray, shape (m,)
        As from :func:`selfattention.studies.gaussian_band.row_profiles`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    (p,) = as_series(positions=positions)
    temperatures, bandwidths = as_temperatures(temperatures, "temperatures"), as_temperatures(bandwidths, "bandwidths")
    measured, predicted = as_array(measured, "measured", ndim=2), as_array(predicted, "predicted", ndim=2)
    row = as_count(row, "row", minimum=0)
    colors = (COLORS["noisy"], COLORS["output"], COLORS["accent"], COLORS["clean"])
    if len(temperatures) > len(colors):
        raise ValueError(f"temperatures must hold at most {len(colors)} values, got {len(temperatures)}")
    if row >= p.size or measured.shape != predicted.shape or measured.shape != (temperatures.size, p.size):
        raise ValueError("measured and predicted must be (len(temperatures), len(positions)) and row one of them")
    fig = new_figure(5.6, 3.4)
    ax = fig.subplots()
    for k, (tau, row_w, gauss, h) in enumerate(zip(temperatures, measured, predicted, bandwidths, strict=True)):
        color = colors[k]
        ax.plot(p, gauss, "-", color=color, lw=1.5,
                label=f"$\\tau = {tau:g}$: $\\sqrt{{\\tau/2}} = {h:.3f}$")
        ax.plot(p, row_w, "o", color=color, ms=3.5, mfc="none")
        y = gauss.max() * np.exp(-0.5)  # a Gaussian's height one sd from its centre
        ax.annotate("", xy=(p[row] - h, y), xytext=(p[row] + h, y),
                    arrowprops=dict(arrowstyle="<->", color=color, lw=1))
    ax.axvline(p[row], color=COLORS["muted"], lw=0.8, ls=":")
    ax.set_xlabel("key position $p_j$")
    ax.set_ylabel(f"weight $a_{{ij}}$, query $p_i = {p[row]:.2f}$")
    ax.set_title("a row of the matrix (dots), the Gaussian (lines)")
    shared_legend(fig, ncols=2)
    return fig
