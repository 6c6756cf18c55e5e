"""Figures of :mod:`selfattention.studies.causal`: a head that sees only the past, and its lag."""

from __future__ import annotations

from .._validation import as_array, as_entries, as_real_scalar
from ._style import COLORS, new_figure
from .panels import draw_signal
from .positional import _heads_of_a_query

#: Line colours of the heads, in the order given.
_COLORS = (COLORS["muted"], COLORS["output"], COLORS["accent"])


def plot_causal(positions, clean, noisy, outputs, weights, query, offsets, sweep, *, chosen=None):
    """Causal heads: their outputs, one row of each, and the lag and neighbours against the offset.

    Left: the signal and each head's output. Middle: the row of ``query`` of
    each head's attention matrix. Right, from top to bottom: the lag, the
    effective number of neighbours (both of ``query``) and the error against
    ``clean``, against the offset.

    Parameters
    ----------
    positions, clean, noisy : array_like, shape (n,)
    outputs : dict of str -> array_like, shape (n,)
        Up to three heads' outputs, by name.
    weights : dict of str -> array_like, shape (n, n)
        Their attention matrices, by the same names.
    query : int
    offsets : array_like, shape (m,)
    sweep : dict
        ``"lag"``, ``"neighbours"``, ``"rmse"``: arrays of shape (m,), as
        from :func:`selfattention.studies.causal.offset_sweep`.
    chosen : float, optional
        An offset marked by a dotted line in the right panels.

    Returns
    -------
    matplotlib.figure.Figure
    """
    p, f, s, outputs, weights, i = _heads_of_a_query(positions, clean, noisy, outputs, weights, query, len(_COLORS))
    deltas = as_array(offsets, "offsets", ndim=1)
    mark = None if chosen is None else as_real_scalar(chosen, "chosen")
    curves = as_entries(sweep, "sweep", ("lag", "neighbours", "rmse"), series=True)
    if any(v.size != deltas.size for v in curves.values()):
        raise ValueError(f"sweep's arrays must have one entry per offset ({deltas.size})")
    fig = new_figure(12.0, 4.4)
    grid = fig.add_gridspec(3, 3, width_ratios=(1.5, 1.1, 0.9))
    ax_s, ax_w = fig.add_subplot(grid[:, 0]), fig.add_subplot(grid[:, 1])
    draw_signal(ax_s, p, f, s, dot_size=2.5, dot_alpha=0.5, legend=None)
    for (name, output), color in zip(outputs.items(), _COLORS, strict=False):
        ax_s.plot(p, output, "-", color=color, lw=1.6, label=name)
        ax_w.plot(p, weights[name][i], "-", color=color, lw=1.6, label=name)
    ax_s.legend(fontsize="x-small", loc="lower left", framealpha=0.9)
    ax_w.axvline(p[i], color=COLORS["clean"], ls=":", lw=1)
    ax_w.set_xlim(p[i] - 0.25 * (p[-1] - p[0]), p[i] + 0.25 * (p[-1] - p[0]))
    ax_w.set_xlabel("key position $p_j$")
    ax_w.set_ylabel(f"weight $a_{{ij}}$ of the query at $p_i = {p[i]:.2f}$")
    ax_w.legend(fontsize="x-small", loc="upper left")
    labels = {"lag": "lag", "neighbours": "$N_{\\mathrm{eff},i}$", "rmse": "RMSE"}
    for row, key in enumerate(labels):
        ax = fig.add_subplot(grid[row, 2])
        ax.plot(deltas, curves[key], "-", color=COLORS["noisy"], lw=1.5)
        if chosen is not None:
            ax.axvline(mark, color=COLORS["accent"], ls=":", lw=1.2)
        ax.set_ylabel(labels[key], fontsize="small")
        ax.tick_params(labelsize="x-small")
        if row < 2:
            ax.tick_params(labelbottom=False)
    ax.set_xlabel("offset $\\delta$")
    return fig

