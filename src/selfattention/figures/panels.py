"""The panels the book's figures share: a signal, an attention matrix, a matrix of numbers.

Every figure that draws a sine, its noisy samples or a smoothed output draws
them with :func:`draw_signal`, every figure of an attention matrix with
:func:`draw_weights`, and every learned matrix with its entries written in
with :func:`draw_matrix`, so that one look (colours, line styles, labels)
runs through the book. The keyword arguments tune the sizes to the panel's space;
text takes the figure style's size (:mod:`._style`: the figure function is a
:func:`~._style.book_figure`), never a smaller one.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from .._validation import (
    InputTypeError,
    as_array,
    as_flag,
    as_nonnegative_scalar,
    as_positive_scalar,
    as_series,
    as_weights,
)
from ._style import COLORS, WEIGHTS_CMAP, as_axes, ticks

#: The legend of a signal panel that has the room for one.
LEGEND = MappingProxyType({"loc": "upper right"})
#: Small signal panels side by side (``draw_signal(..., **SMALL_PANEL)``):
#: smaller dots; the row's first panel carries the y label and
#: a :data:`SMALL_LEGEND`.
SMALL_PANEL = MappingProxyType({"dot_size": 2.5, "dot_alpha": 0.6, "line_width": 1.8, "ylabel": None})
SMALL_LEGEND = MappingProxyType({"loc": "lower left", "framealpha": 0.9})


def draw_signal(ax, positions, clean, noisy=None, output=None, *, output_label="attention output",
                dot_size=3.0, dot_alpha=0.7, line_width=2.0, ylabel="value", legend=LEGEND):
    """Draw a signal panel: ground truth dashed, noisy samples as dots, output solid.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    positions, clean : array_like, shape (n,)
    noisy, output : array_like, shape (n,), optional
        Drawn when given.
    output_label : str
        The output's legend entry.
    dot_size, dot_alpha : float
        Marker size and opacity of the noisy samples.
    line_width : float
        Width of the output's line.
    ylabel : str or None
        The y-axis label; None leaves it unset (for panels that share one).
    legend : mapping or None
        Keyword arguments of :meth:`~matplotlib.axes.Axes.legend`; None draws no legend.
    """
    ax = as_axes(ax)
    positions, clean, noisy, output = as_series(("noisy", "output"), positions=positions, clean=clean, noisy=noisy,
                                                output=output)
    dot_size, line_width = as_nonnegative_scalar(dot_size, "dot_size"), as_nonnegative_scalar(line_width, "line_width")
    if not 0 <= as_nonnegative_scalar(dot_alpha, "dot_alpha") <= 1:
        raise ValueError(f"dot_alpha must lie in [0, 1], got {dot_alpha!r}")
    for name, value in (("output_label", output_label), ("ylabel", ylabel)):
        if not isinstance(value, str) and not (value is None and name == "ylabel"):
            raise InputTypeError(f"{name} must be a string, got {value!r}")
    if legend is not None and not isinstance(legend, Mapping):
        raise InputTypeError(f"legend must be a mapping of legend() arguments or None, got {legend!r}")
    ax.plot(positions, clean, "--", color=COLORS["clean"], lw=1.2, label="ground truth")
    if noisy is not None:
        ax.plot(positions, noisy, "o", color=COLORS["noisy"], ms=dot_size, alpha=dot_alpha, label="noisy input")
    if output is not None:
        ax.plot(positions, output, "-", color=COLORS["output"], lw=line_width, label=output_label)
    ax.set_xlabel("position $p$")
    ticks(ax)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if legend is not None:
        ax.legend(**legend)


def draw_weights(ax, weights, positions=None, *, title="Attention weights"):
    """Draw an attention matrix as a square heat map, row i = query i.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    weights : array_like, shape (n, n)
        An attention matrix, or a square block of one (rows may then sum to less than 1).
    positions : array_like, shape (n,), optional
        When given, the axes are labelled in positions instead of indices.
    title : str

    Returns
    -------
    matplotlib.image.AxesImage
    """
    ax, weights = as_axes(ax), as_weights(weights, "weights", block=True)
    if not isinstance(title, str):
        raise InputTypeError(f"title must be a string, got {title!r}")
    extent = None
    if positions is not None:
        (positions,) = as_series(positions=positions)
        if weights.shape != (positions.size, positions.size):
            raise ValueError(f"weights must have shape (n, n) for the {positions.size} positions, got {weights.shape}")
        extent = (positions[0], positions[-1], positions[-1], positions[0])
    im = ax.imshow(weights, cmap=WEIGHTS_CMAP, extent=extent, interpolation="nearest", aspect="equal")
    ax.set_title(title)
    if positions is not None:
        ticks(ax, y=True)
    ax.set_xlabel("key position $p_j$" if positions is not None else "key $j$")
    ax.set_ylabel("query position $p_i$" if positions is not None else "query $i$")
    return im


def draw_matrix(ax, matrix, *, limit=None, fmt="{:.3g}", sqrt_scale=False):
    """Draw a matrix of signed numbers as a diverging colour map, its entries written in.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    matrix : array_like, shape (r, c)
    limit : float, optional
        The largest absolute value of the colour scale; the matrix's own when
        omitted (pass one value to several panels to share a scale).
    fmt : str
        Format of the written entries.
    sqrt_scale : bool
        Colour by the signed square root of the entries (and of ``limit``), so
        that small entries next to large ones still show.

    Returns
    -------
    matplotlib.image.AxesImage
    """
    ax, m = as_axes(ax), as_array(matrix, "matrix", ndim=2)
    if m.size == 0:
        raise ValueError("matrix must not be empty")
    sqrt_scale, fmt = as_flag(sqrt_scale, "sqrt_scale"), _as_format(fmt)
    top = np.abs(m).max() if limit is None else as_positive_scalar(limit, "limit")
    shade, top = (np.sign(m) * np.sqrt(np.abs(m)), np.sqrt(top)) if sqrt_scale else (m, top)
    im = ax.imshow(shade, cmap="RdBu_r", vmin=-top, vmax=top)
    for (r, c), value in np.ndenumerate(m):
        ax.text(c, r, fmt.format(value), ha="center", va="center",
                color="white" if abs(shade[r, c]) > 0.6 * top else "black")
    return im


def _as_format(fmt) -> str:
    """A format string for one number, such as ``"{:.2f}"``."""
    if not isinstance(fmt, str):
        raise InputTypeError(f"fmt must be a format string such as '{{:.2f}}', got {fmt!r}")
    try:
        fmt.format(0.5)
    except (IndexError, KeyError, ValueError) as exc:
        raise ValueError(f"fmt must format one number, such as '{{:.2f}}', got {fmt!r}") from exc
    return fmt
