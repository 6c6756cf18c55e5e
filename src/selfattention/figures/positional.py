"""Figures of :mod:`selfattention.positional`'s heads side by side: their kernels and their outputs."""

from __future__ import annotations

from collections.abc import Mapping

from .._validation import InputTypeError, as_array, as_count, as_counts, as_nonnegative_scalar, as_series, as_weights
from ._style import COLORS, MAX_COLUMNS, MAX_HEIGHT, WIDTH, book_figure, new_figure, new_panels, shared_legend, ticks
from .panels import SMALL_PANEL, draw_signal, draw_weights

#: Height in inches of a head's row in :func:`plot_kernel_rows`.
_ROW = 2.1

#: Colours of the queries whose rows :func:`plot_kernel_rows` draws.
_ROW_COLORS = (COLORS["noisy"], COLORS["output"], COLORS["accent"])


@book_figure
def plot_kernel_rows(positions, weights, queries):
    """Several heads' attention matrices, and a few rows of each as curves: one head a row.

    Left: each head's matrix, all on one colour scale, clipped at the largest
    weight of the rows drawn beside it. Right: the rows of ``queries`` against
    the key position (solid), over the same rows of the first head (dashed),
    so that every kernel is seen against the first. One legend under them.

    Parameters
    ----------
    positions : array_like, shape (n,)
    weights : dict of str -> array_like, shape (n, n)
        Each head's attention matrix, by name; the first is the reference. At most four.
    queries : sequence of int
        Up to three query indices.

    Returns
    -------
    matplotlib.figure.Figure
    """
    (p,) = as_series(positions=positions)
    weights = _as_named(weights, "weights", (p.size, p.size))
    rows = as_counts(queries, "queries", minimum=0)
    if len(rows) > len(_ROW_COLORS) or max(rows) >= p.size:
        raise ValueError(f"queries must be at most {len(_ROW_COLORS)} indices below {p.size}, got {queries!r}")
    m = len(weights)
    if m * _ROW > MAX_HEIGHT - 0.5:
        raise ValueError(f"weights must hold at most {int((MAX_HEIGHT - 0.5) // _ROW)} heads, got {m}")
    (reference, first), *_ = weights.items()
    fig = new_figure(WIDTH, m * _ROW + 0.5)
    axes = fig.subplots(m, 2, squeeze=False, width_ratios=(1, 1.3))
    top = max(float(w[rows].max()) for w in weights.values())
    for k, (name, w) in enumerate(weights.items()):
        draw_weights(axes[k, 0], w, p, title="").set_clim(0, top)  # one colour scale for every matrix
        axes[k, 0].set_ylabel("query $p_i$")
        ax = axes[k, 1]
        for row, color in zip(rows, _ROW_COLORS, strict=False):
            ax.plot(p, first[row], "--", color=COLORS["muted"], lw=1, label=f"{reference} (dashed)")
            ax.plot(p, w[row], "-", color=color, lw=1.6, label=f"row of $p_i = {p[row]:.2f}$")
        ax.set_ylim(0, 1.08 * top)
        ax.set_title(name)
        ax.set_ylabel("weight $a_{ij}$")
        ticks(ax)
        for panel in axes[k]:
            panel.set_xlabel("key position $p_j$" if k == m - 1 else "")
    shared_legend(fig, [axes[0, 1]], ncols=2)
    return fig


@book_figure
def plot_head_outputs(positions, clean, noisy, outputs, errors):
    """Several heads' outputs on the same noisy signal, one small panel each in rows of two, its error in the title.

    Parameters
    ----------
    positions, clean, noisy : array_like, shape (n,)
    outputs : dict of str -> array_like, shape (n,)
        Each head's output, by name.
    errors : dict of str -> float
        Each head's RMSE against ``clean``, by the same names.

    Returns
    -------
    matplotlib.figure.Figure
    """
    p, f, s = as_series(positions=positions, clean=clean, noisy=noisy)
    outputs = _as_named(outputs, "outputs", (p.size,))
    if not isinstance(errors, Mapping) or set(errors) != set(outputs):
        raise InputTypeError(f"errors must map the heads of outputs, {sorted(outputs)}, to their errors")
    errors = {name: as_nonnegative_scalar(errors[name], f"errors[{name!r}]") for name in outputs}
    m = len(outputs)
    fig, axes = new_panels(m, sharey=True, height=2.6)
    for k, (name, output) in enumerate(outputs.items()):
        draw_signal(axes[k], p, f, s, output, output_label="output", **SMALL_PANEL, legend=None)
        axes[k].set_title(f"{name}\nRMSE {errors[name]:.3f}", fontsize="medium")
        if k % MAX_COLUMNS == 0:
            axes[k].set_ylabel("value")
        if k < m - MAX_COLUMNS:
            axes[k].set_xlabel("")
    shared_legend(fig, axes[:1])
    return fig


def _as_named(x, name: str, shape: tuple) -> dict:
    """A non-empty mapping of names to arrays of ``shape`` (attention matrices when 2-D), checked."""
    if not isinstance(x, Mapping) or not x or not all(isinstance(key, str) for key in x):
        raise InputTypeError(f"{name} must map heads' names to arrays, got {type(x).__name__}")
    checked = {key: as_weights(v, f"{name}[{key!r}]", block=True) if len(shape) == 2
               else as_array(v, f"{name}[{key!r}]", ndim=1) for key, v in x.items()}
    for key, v in checked.items():
        if v.shape != shape:
            raise ValueError(f"{name}[{key!r}] must have shape {shape}, got {v.shape}")
    return checked



def _heads_of_a_query(positions, clean, noisy, outputs, weights, query, most: int):
    """The checked arguments of a figure of up to ``most`` heads' outputs and one query's rows of their weights.

    Returns ``positions, clean, noisy`` (arrays), ``outputs`` and ``weights`` (by the same names) and the
    query's index.
    """
    p, f, s = as_series(positions=positions, clean=clean, noisy=noisy)
    outputs = _as_named(outputs, "outputs", (p.size,))
    weights = _as_named(weights, "weights", (p.size, p.size))
    if len(outputs) > most or set(weights) != set(outputs):
        raise ValueError(f"outputs and weights must name the same heads, at most {most}")
    i = as_count(query, "query", minimum=0)
    if i >= p.size:
        raise ValueError(f"query must be below the number of positions {p.size}, got {query!r}")
    return p, f, s, outputs, weights, i
