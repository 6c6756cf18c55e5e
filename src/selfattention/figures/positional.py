"""Figures of :mod:`selfattention.positional`'s heads side by side: their kernels and their outputs."""

from __future__ import annotations

from collections.abc import Mapping

from .._validation import InputTypeError, as_array, as_count, as_counts, as_nonnegative_scalar, as_series, as_weights
from ._style import COLORS, new_figure
from .panels import SMALL_LEGEND, SMALL_PANEL, draw_signal, draw_weights

#: Colours of the queries whose rows :func:`plot_kernel_rows` draws.
_ROW_COLORS = (COLORS["noisy"], COLORS["output"], COLORS["accent"])


def plot_kernel_rows(positions, weights, queries):
    """Several heads' attention matrices, and a few rows of each as curves.

    Top: each head's matrix, all on one colour scale, clipped at the largest
    weight of the rows drawn below. Bottom: the rows of ``queries`` against
    the key position (solid), over the same rows of the first head (dashed),
    so that every kernel is seen against the first.

    Parameters
    ----------
    positions : array_like, shape (n,)
    weights : dict of str -> array_like, shape (n, n)
        Each head's attention matrix, by name; the first is the reference.
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
    (reference, first), *_ = weights.items()
    fig = new_figure(2.6 * len(weights) + 0.6, 5.6)
    axes = fig.subplots(2, len(weights), squeeze=False, height_ratios=(1.15, 1))
    top = max(float(w[rows].max()) for w in weights.values())
    for k, (name, w) in enumerate(weights.items()):
        draw_weights(axes[0, k], w, p, title=name).set_clim(0, top)  # one colour scale for every matrix
        ax = axes[1, k]
        for row, color in zip(rows, _ROW_COLORS, strict=False):
            ax.plot(p, first[row], "--", color=COLORS["muted"], lw=1)
            ax.plot(p, w[row], "-", color=color, lw=1.6, label=f"$p_i = {p[row]:.2f}$")
        ax.set_ylim(0, 1.08 * top)
        ax.set_xlabel("key position $p_j$")
        if k:
            axes[0, k].set_ylabel("")
        else:
            ax.set_ylabel("weight $a_{ij}$")
    axes[1, 0].legend(fontsize="x-small", loc="upper left")
    if len(weights) > 1:
        (dashed,) = axes[1, 1].plot([], [], "--", color=COLORS["muted"], lw=1, label=f"{reference} (dashed)")
        axes[1, 1].legend(handles=[dashed], fontsize="x-small", loc="upper left")
    return fig


def plot_head_outputs(positions, clean, noisy, outputs, errors):
    """Several heads' outputs on the same noisy signal, one small panel each, its error in the title.

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
    fig = new_figure(2.6 * len(outputs) + 0.6, 2.9)
    axes = fig.subplots(1, len(outputs), sharey=True, squeeze=False)[0]
    for k, (name, output) in enumerate(outputs.items()):
        draw_signal(axes[k], p, f, s, output, output_label="output", **SMALL_PANEL,
                    legend=SMALL_LEGEND if k == 0 else None)
        axes[k].set_title(f"{name}\nRMSE {errors[name]:.3f}", fontsize="small")
    axes[0].set_ylabel("value")
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
