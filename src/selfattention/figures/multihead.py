"""The figures of several heads: heads that look elsewhere, a derivative, a fourth-order smoother."""

from __future__ import annotations

import numpy as np

from .._validation import InputTypeError, as_array, as_counts, as_entries, as_positive_scalar, as_series
from ..studies.bias_variance import REGIONS
from ..studies.power_laws import PowerLaw
from ._style import COLORS, WIDTH, book_figure, new_figure, shared_legend, ticks
from .panels import draw_signal, draw_weights

#: One colour per head of a two-head figure (the one at +delta first; the second is Okabe & Ito's
#: reddish purple, apart from the noisy samples' blue), and the layer's.
HEAD_COLORS = (COLORS["accent"], "#CC79A7")
LAYER_COLOR = COLORS["output"]


def _labelled_rows(rows, name: str, n: int) -> dict:
    if not isinstance(rows, dict) or not rows or not all(isinstance(k, str) for k in rows):
        raise InputTypeError(f"{name} must map labels (strings) to arrays")
    out = {label: as_array(row, f"{name}[{label!r}]", ndim=1) for label, row in rows.items()}
    if any(row.size != n for row in out.values()):
        raise ValueError(f"{name} must hold arrays of the length of positions, {n}")
    return out


@book_figure
def plot_offset_heads(positions, clean, noisy, rows, outputs, query):
    """One query's weights in heads of several offsets (left), and their outputs on the signal (right); one legend.

    Parameters
    ----------
    positions, clean, noisy : array_like, shape (n,)
    rows : dict of str -> array_like, shape (n,)
        Label -> the weights of row ``query`` of one head.
    outputs : dict of str -> array_like, shape (n,)
        Label -> that head's output, the same labels.
    query : int
        The row shown on the left, marked by a vertical line.

    Returns
    -------
    matplotlib.figure.Figure
    """
    p, clean, noisy = as_series(positions=positions, clean=clean, noisy=noisy)
    rows, outputs = _labelled_rows(rows, "rows", p.size), _labelled_rows(outputs, "outputs", p.size)
    if list(rows) != list(outputs):
        raise ValueError("rows and outputs must have the same labels, in the same order")
    (query,) = as_counts([query], "query", minimum=0)
    if query >= p.size:
        raise ValueError(f"query must be below the number of positions, {p.size}")
    fig = new_figure(WIDTH, 3.4)
    ax_w, ax_s = fig.subplots(1, 2)
    colors = (HEAD_COLORS[1], COLORS["muted"], HEAD_COLORS[0])  # behind, centred, ahead (for three heads)
    for (label, row), color in zip(rows.items(), colors * 3, strict=False):
        ax_w.plot(p, row, "-o", ms=2.5, lw=1.2, color=color, label=label)
    ax_w.axvline(p[query], color=COLORS["clean"], lw=0.8, ls=":")
    ax_w.set_xlabel("key position $p_j$")
    ax_w.set_ylabel("weight $a_{ij}$")
    ax_w.set_title(f"query $p_i = {p[query]:.2f}$")
    ticks(ax_w)
    draw_signal(ax_s, p, clean, noisy, legend=None, dot_size=2.5, dot_alpha=0.4)
    for (label, out), color in zip(outputs.items(), colors * 3, strict=False):
        ax_s.plot(p, out, "-", lw=1.8, color=color, label=label)
    ax_s.set_title("outputs")
    shared_legend(fig, [ax_s], ncols=3)
    return fig


@book_figure
def plot_derivative(positions, truth, estimate, inside, offsets, noise, leading, bandwidth):
    """The derivative layer's estimate against the truth (left), its noise against the offset (right).

    Parameters
    ----------
    positions, truth, estimate : array_like, shape (n,)
    inside : array_like of bool, shape (n,)
        The interior, shaded.
    offsets, noise, leading : array_like, shape (a,)
        Offsets, the exact standard deviation of the noise at each (``sigma sqrt(sum_j b_ij**2)``), and the
        leading-order formula.
    bandwidth : float
        ``h``, marked on the right.

    Returns
    -------
    matplotlib.figure.Figure
    """
    p, truth, estimate = as_series(positions=positions, truth=truth, estimate=estimate)
    inside = np.asarray(inside)
    if inside.dtype != bool or inside.shape != p.shape:
        raise ValueError(f"inside must be booleans of the shape of positions, {p.shape}")
    deltas, noise, leading = as_series(offsets=offsets, noise=noise, leading=leading)
    h = as_positive_scalar(bandwidth, "bandwidth")
    fig = new_figure(WIDTH, 3.6)
    ax_d, ax_n = fig.subplots(1, 2)
    ax_d.axvspan(p[inside].min(), p[inside].max(), color=COLORS["muted"], alpha=0.15, lw=0, label="interior")
    ax_d.plot(p, truth, "--", color=COLORS["clean"], lw=1.2, label="true $f'(p)$")
    ax_d.plot(p, estimate, "-", color=LAYER_COLOR, lw=1.8, label="two heads")
    ax_d.set_xlabel("position $p$")
    ax_d.set_ylabel("slope")
    ticks(ax_d)
    ax_n.loglog(deltas, noise, "o", color=LAYER_COLOR, ms=4, label="exact")
    ax_n.loglog(deltas, leading, "-", color=COLORS["clean"], lw=1.0, label="formula")
    ax_n.axvline(h, color=COLORS["muted"], ls=":", lw=1.0)
    ax_n.annotate("$\\delta = h$", (h, noise.max()), xytext=(4, -4), textcoords="offset points", va="top")
    ax_n.set_xlabel("offset $\\delta$")
    ax_n.set_ylabel("std of the estimate's noise")
    shared_legend(fig, ncols=3)
    return fig


@book_figure
def plot_jackknife_weights(positions, rows, query_labels):
    """Weights of one query in each head and in the layer, for a query inside and one at the end.

    Parameters
    ----------
    positions : array_like, shape (n,)
    rows : dict of str -> array_like, shape (q, n)
        Label ("one head, tau", "one head, 2 tau", "two heads") -> the rows of
        the ``q`` queries shown, one panel per query.
    query_labels : sequence of str, length q
        The panels' titles.

    Returns
    -------
    matplotlib.figure.Figure
    """
    (p,) = as_series(positions=positions)
    if not isinstance(rows, dict) or len(rows) != 3:
        raise InputTypeError("rows must map three labels (two heads and the layer) to arrays")
    tables = {label: as_array(r, f"rows[{label!r}]", ndim=2) for label, r in rows.items()}
    count = len(query_labels) if isinstance(query_labels, list | tuple) else -1
    if count < 1 or any(t.shape != (count, p.size) for t in tables.values()):
        raise ValueError("rows must hold arrays of shape (len(query_labels), len(positions))")
    if count > 2:
        raise ValueError(f"query_labels must hold one or two queries (two panels side by side), got {count}")
    fig = new_figure(WIDTH, 3.0)
    axes = fig.subplots(1, count, sharey=True, squeeze=False)[0]
    styles = ((HEAD_COLORS[0], "-", 1.0), (HEAD_COLORS[1], "-", 1.0), (LAYER_COLOR, "-", 2.0))
    for k, ax in enumerate(axes):
        ax.axhline(0, color=COLORS["muted"], lw=0.6)
        for (label, table), (color, ls, lw) in zip(tables.items(), styles, strict=True):
            ax.plot(p, table[k], ls, color=color, lw=lw, label=label)
        ax.set_title(str(query_labels[k]), fontsize="medium")
        ax.set_xlabel("key position $p_j$")
        ticks(ax)
    axes[0].set_ylabel("weight of key $j$")
    shared_legend(fig, axes[:1])
    return fig


@book_figure
def plot_error_laws(ns, sigmas, least, fits):
    """The least mean squared error against ``N``, one head and two heads, in each region.

    Parameters
    ----------
    ns : sequence of int, length a
    sigmas : sequence of float, length b
    least : dict of str -> dict of region -> ndarray, shape (a, b)
        "one head" and "two heads" -> the least error of each pair.
    fits : dict of str -> dict of region -> PowerLaw
        The laws fitted to ``least``, drawn as lines.

    Returns
    -------
    matplotlib.figure.Figure
    """
    ns, sigmas = as_counts(ns, "ns"), as_array(sigmas, "sigmas", ndim=1)
    names = ("one head", "two heads")
    if not isinstance(least, dict) or set(least) != set(names) or not isinstance(fits, dict) or set(fits) != set(names):
        raise InputTypeError(f"least and fits must map {names} to dicts by region")
    if not all(isinstance(fits[name], dict) for name in names):
        raise InputTypeError(f"fits must map {names} to dicts of PowerLaw by region")  # least: checked below
    fig = new_figure(WIDTH, 3.4)
    axes = fig.subplots(1, 2, sharey=True)
    x = np.asarray(ns, dtype=float)
    for ax, region in zip(axes, ("interior", "whole"), strict=True):
        for name, color, marker in zip(names, (COLORS["noisy"], LAYER_COLOR), ("o", "s"), strict=True):
            table = as_entries(least[name], f"least[{name!r}]", REGIONS)[region]
            law = fits[name][region]
            if not isinstance(law, PowerLaw) or table.shape != (len(ns), sigmas.size):
                raise ValueError(f"least[{name!r}] and fits[{name!r}] must hold a table and a PowerLaw per region")
            for b, sigma in enumerate(sigmas):
                ax.loglog(x, table[:, b], marker, color=color, ms=3.5, mfc="none" if name == "two heads" else None,
                          label=f"{name}: $N^{{{law.n_exponent:.2f}}}$" if b == 0 else None)
                ax.loglog(x, law(x, sigma), "-", color=color, lw=0.8, alpha=0.7)
        ax.set_xticks(x, labels=[f"{v:g}" for v in ns])
        ax.minorticks_off()
        ax.set_xlabel("samples $N$")
        ax.set_title("the interior $[0.25, 0.75]$" if region == "interior" else "the whole $[0, 1]$",
                     fontsize="medium")
        ax.legend(loc="lower left")
    axes[0].set_ylabel("least mean squared error")
    return fig


@book_figure
def plot_derivative_layer(positions, clean, noisy, outputs, weights, estimate, slope):
    """The derivative layer at one setting: the heads' outputs (top), their two bands and the estimated slope.

    The static picture of the layer's in-page explorer (for readers without JavaScript).

    Parameters
    ----------
    positions, clean, noisy : array_like, shape (n,)
    outputs : array_like, shape (2, n)
        The outputs of the heads at ``+delta`` and ``-delta``.
    weights : array_like, shape (2, n, n)
        Their attention matrices, drawn averaged.
    estimate, slope : array_like, shape (n,)
        The layer's output and the true slope.

    Returns
    -------
    matplotlib.figure.Figure
    """
    p, clean, noisy, estimate, slope = as_series(positions=positions, clean=clean, noisy=noisy, estimate=estimate,
                                                 slope=slope)
    outputs, weights = as_array(outputs, "outputs"), as_array(weights, "weights")
    if outputs.shape != (2, p.size) or weights.shape != (2, p.size, p.size):
        raise ValueError(f"outputs and weights must have shapes (2, n) and (2, n, n) for n = {p.size}, "
                         f"got {outputs.shape} and {weights.shape}")
    fig = new_figure(WIDTH, 5.6)
    panels = fig.subplot_mosaic([["s", "s"], ["w", "d"]], height_ratios=(1, 1.1))
    ax_s, ax_w, ax_d = panels["s"], panels["w"], panels["d"]
    draw_signal(ax_s, p, clean, noisy, legend=None, dot_size=2.5, dot_alpha=0.5)
    for out, color, label in zip(outputs, HEAD_COLORS, ("head at $+\\delta$", "head at $-\\delta$"), strict=True):
        ax_s.plot(p, out, "-", lw=1.8, color=color, label=label)
    shared_legend(fig, [ax_s], ncols=2, where="above")
    draw_weights(ax_w, weights.mean(axis=0), p, title="weights, averaged")
    ax_d.plot(p, slope, "--", color=COLORS["clean"], lw=1.2, label="true $f'(p)$")
    ax_d.plot(p, estimate, "-", color=LAYER_COLOR, lw=1.8, label="two heads")
    ax_d.set_xlabel("position $p$")
    ax_d.set_ylabel("slope")
    ax_d.set_title("the layer's slope")
    ticks(ax_d)
    ax_d.legend(loc="upper center", ncols=2)
    ax_d.margins(y=0.3)
    return fig
