r"""Figures of :mod:`selfattention.studies.quadrature`: bumps on a grid against draws at random."""

from __future__ import annotations

import numpy as np

from .._validation import InputTypeError, as_array, as_counts, as_series
from ._style import COLORS, WIDTH, book_figure, new_figure, new_panels, shared_legend
from .cost import _log_ticks

#: Colour, marker and legend entry of each way of placing the features.
KINDS = {
    "grid": (COLORS["clean"], "D", "bumps on a grid"),
    "bumps": (COLORS["accent"], "^", "bumps at random"),
    "cosines": (COLORS["noisy"], "o", "cosines at random"),
}
#: Drawn in place of an error of 0 on a log axis, below double rounding.
FLOOR = 1e-17


@book_figure
def plot_grid_errors(counts, grid, random):
    """The head of ``D`` bumps on a grid and at random centres: distance to the exact head against ``D``.

    Parameters
    ----------
    counts : array_like, shape (k,)
    grid : array_like, shape (k,)
    random : array_like, shape (draws, k)
        The median and the middle half over the draws are drawn.

    Returns
    -------
    matplotlib.figure.Figure
    """
    D, g = as_series(counts=counts, grid=grid)
    r = as_array(random, "random", ndim=2)
    if r.shape[1] != D.size:
        raise ValueError(f"random must have a column for each of the {D.size} counts, got shape {r.shape}")
    fig = new_figure(WIDTH, 3.4)
    ax = fig.add_subplot()
    _median_band(ax, D, r, "bumps")
    color, marker, label = KINDS["grid"]
    ax.loglog(D, np.maximum(g, FLOOR), marker + "-", color=color, label=label)
    _log_ticks(ax)
    ax.set_xlabel("bumps, $D$")
    ax.set_ylabel("distance to exact head")
    shared_legend(fig, ncols=2)
    return fig


@book_figure
def plot_dimension_errors(results, dims):
    r"""Bumps on a grid, bumps and cosines at random, against columns a token: one panel per ``d_k``.

    A grid is drawn where it has at least two centres an axis.

    Parameters
    ----------
    results : mapping of int to mapping
        :func:`selfattention.studies.quadrature.dimension_errors`.
    dims : sequence of int
        One or two ``d_k`` of ``results``, one panel each.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not isinstance(results, dict):
        raise InputTypeError("results must be a dict of dimension_errors, one entry per d_k")
    dims = as_counts(dims, "dims")
    if len(dims) > 2:
        raise ValueError(f"dims must name one or two d_k, got {len(dims)}")
    fig, axes = new_panels(len(dims), height=2.8, sharey=True)
    for ax, d in zip(axes, dims, strict=True):
        entry = results.get(d)
        if not isinstance(entry, dict):
            raise ValueError(f"dims: results holds no entry for d_k = {d}")
        D, sizes, grid = as_series(counts=entry.get("counts"), grid_sizes=entry.get("grid_sizes"),
                                   grid=entry.get("grid"))
        for kind in ("bumps", "cosines"):
            _median_band(ax, D, as_array(entry.get(kind), kind, ndim=2), kind)
        color, marker, label = KINDS["grid"]
        whole = sizes >= 2**d  # at least two centres an axis
        ax.loglog(sizes[whole], np.maximum(grid[whole], FLOOR), marker + "-", color=color, label=label)
        _log_ticks(ax, 4)
        ax.set_xlabel("columns a token")
        ax.set_title(f"$d_k = {d}$")
    axes[0].set_ylabel("distance to exact head")
    shared_legend(fig, ncols=3)
    return fig


def _median_band(ax, D: np.ndarray, errors: np.ndarray, kind: str) -> None:
    """The median over the draws (line) and the middle half (band)."""
    if errors.shape[1] != D.size:
        raise ValueError(f"{kind} must have a column for each of the {D.size} counts, got shape {errors.shape}")
    color, marker, label = KINDS[kind]
    low, mid, high = np.percentile(errors, [25, 50, 75], axis=0)  # (k,) each
    ax.fill_between(D, low, high, color=color, alpha=0.2, lw=0)
    ax.loglog(D, mid, marker + "-", color=color, label=label)
