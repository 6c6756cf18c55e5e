"""Figures of :mod:`selfattention.studies.causal`: a head that sees only the past, and its lag."""

from __future__ import annotations

from .._validation import as_array, as_entries, as_real_scalar
from ._style import COLORS, WIDTH, book_figure, new_figure, shared_legend, ticks
from .panels import draw_signal
from .positional import _heads_of_a_query

#: Line colours of the heads, in the order given.
_COLORS = (COLORS["muted"], COLORS["output"], COLORS["accent"])


@book_figure
def plot_causal(positions, clean, noisy, outputs, weights, query, offsets, sweep, *, chosen=None):
    """Causal heads: their outputs, one row of each, and the lag and neighbours against the offset.

    Top: the signal and each head's output, their legend above. Middle left:
    the row of ``query`` of each head's attention matrix. Then, against the
    offset: the lag (middle right), the effective number of neighbours (both
    of ``query``; bottom left) and the error against ``clean`` (bottom right).

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
    fig = new_figure(WIDTH, 7.6)
    panels = fig.subplot_mosaic([["s", "s"], ["w", "lag"], ["neighbours", "rmse"]], height_ratios=(1.2, 1, 1))
    ax_s, ax_w = panels["s"], panels["w"]
    draw_signal(ax_s, p, f, s, dot_size=2.5, dot_alpha=0.5, legend=None)
    for (name, output), color in zip(outputs.items(), _COLORS, strict=False):
        ax_s.plot(p, output, "-", color=color, lw=1.6, label=name)
        ax_w.plot(p, weights[name][i], "-", color=color, lw=1.6, label=name)
    shared_legend(fig, [ax_s], ncols=3, where="above")
    ax_w.axvline(p[i], color=COLORS["clean"], ls=":", lw=1)
    ax_w.set_xlim(p[i] - 0.25 * (p[-1] - p[0]), p[i] + 0.25 * (p[-1] - p[0]))
    ax_w.set_xlabel("key position $p_j$")
    ax_w.set_ylabel("weight $a_{ij}$")
    ax_w.set_title(f"query $p_i = {p[i]:.2f}$")
    ticks(ax_w)
    labels = {"lag": "lag", "neighbours": "$N_{\\mathrm{eff},i}$", "rmse": "RMSE"}
    for key, label in labels.items():
        ax = panels[key]
        ax.plot(deltas, curves[key], "-", color=COLORS["noisy"], lw=1.5)
        if chosen is not None:
            ax.axvline(mark, color=COLORS["accent"], ls=":", lw=1.2)
        ax.set_title(label)
        ax.set_xlabel("offset $\\delta$")
    return fig

