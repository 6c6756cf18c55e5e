"""Figures of the page "Exact attention in linear memory": peak memory measured, a layer's parts counted."""

from __future__ import annotations

import numpy as np

from .._validation import as_count, as_positive_scalar, as_series
from ._style import COLORS, book_figure, new_panels, shared_legend
from .cost import _label, _log_ticks


@book_figure
def plot_peak_memory(exact_ns, exact_bytes, online_ns, online_bytes, exact_seconds, online_seconds,
                     guard_n, machine):
    """The exact head's and the online head's peak memory and time against ``N``, as ``make bench`` measured them.

    Left: peak bytes of one call, log-log, with the largest ``N`` the memory
    guard lets the exact head through (dotted). Right: processor seconds.

    Parameters
    ----------
    exact_ns, exact_bytes, exact_seconds : array_like, shape (k,)
    online_ns, online_bytes, online_seconds : array_like, shape (j,)
    guard_n : int
        The largest ``N`` of :func:`selfattention.cost.largest_n`.
    machine : str
        Where and when they were measured.

    Returns
    -------
    matplotlib.figure.Figure
    """
    e_n, e_b, e_t = as_series(exact_ns=exact_ns, exact_bytes=exact_bytes, exact_seconds=exact_seconds)
    o_n, o_b, o_t = as_series(online_ns=online_ns, online_bytes=online_bytes, online_seconds=online_seconds)
    guard_n = as_count(guard_n, "guard_n")
    fig, (ax_m, ax_t) = new_panels(2, height=2.6)
    for ax, exact, online in ((ax_m, e_b, o_b), (ax_t, e_t, o_t)):
        ax.loglog(e_n, exact, "o-", color=COLORS["clean"], label="exact head")
        ax.loglog(o_n, online, "s-", color=COLORS["output"], label="online head")
        ax.axvline(guard_n, color=COLORS["muted"], ls=":", lw=1.5, label="memory guard")
        _log_ticks(ax, 4)
        ax.set_xlabel("tokens $N$")
    ax_m.set_title("peak bytes")
    ax_t.set_title("seconds")
    fig.suptitle(f"measured on {_label(machine)}")
    shared_legend(fig, [ax_m], ncols=3)
    return fig


@book_figure
def plot_layer_cost(ns, projections, attention, mlp, from_projections, from_layer):
    """Multiply-adds of a layer's parts against ``N``, log-log, with where attention passes the rest.

    Parameters
    ----------
    ns, projections, attention, mlp : array_like, shape (k,)
        As from :func:`selfattention.model_cost.layer_cost`.
    from_projections, from_layer : float
        The ``N`` where attention passes the projections, and the
        projections and the MLP together (dotted and dashed).

    Returns
    -------
    matplotlib.figure.Figure
    """
    n, proj, att, ff = as_series(ns=ns, projections=projections, attention=attention, mlp=mlp)
    first = as_positive_scalar(from_projections, "from_projections")
    second = as_positive_scalar(from_layer, "from_layer")
    fig, (ax,) = new_panels(1, height=3.2)
    ax.loglog(n, proj, "-", color=COLORS["noisy"], label="projections")
    ax.loglog(n, ff, "--", color=COLORS["accent"], label="MLP")
    ax.loglog(n, proj + ff, "-.", color=COLORS["muted"], label="projections + MLP")
    ax.loglog(n, att, "-", color=COLORS["output"], lw=2.5, label="attention")
    for where, style in ((first, ":"), (second, "--")):
        ax.axvline(where, color=COLORS["clean"], ls=style, lw=1)
    _log_ticks(ax, 5, np.array([n.min(), n.max()]))
    ax.set_xlabel("tokens $N$")
    ax.set_ylabel("multiply-adds")
    shared_legend(fig, ncols=2)
    return fig
