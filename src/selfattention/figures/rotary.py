"""Figures of :mod:`selfattention.studies.rotary`: a RoPE head beyond the span it was set up for."""

from __future__ import annotations

from .._validation import as_positive_scalar
from ._style import COLORS, WIDTH, book_figure, new_figure, shared_legend
from .panels import draw_signal
from .positional import _heads_of_a_query

#: Line colours of the heads, in the order given (the first is drawn as the panels' output).
_COLORS = (COLORS["output"], COLORS["accent"])


@book_figure
def plot_extrapolation(positions, clean, noisy, outputs, weights, query, *, set_up_span):
    """Two heads on a signal longer than the span one of them was set up for.

    Top: the signal and both outputs, the set-up span shaded. Bottom: the
    row of ``query`` of each head's attention matrix against the key position.

    Parameters
    ----------
    positions, clean, noisy : array_like, shape (n,)
    outputs : dict of str -> array_like, shape (n,)
        Two heads' outputs, by name.
    weights : dict of str -> array_like, shape (n, n)
        Their attention matrices, by the same names.
    query : int
        The row drawn at the bottom.
    set_up_span : float
        The span of positions the first head was set up for, ``> 0``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    p, f, s, outputs, weights, i = _heads_of_a_query(positions, clean, noisy, outputs, weights, query, len(_COLORS))
    if len(outputs) != len(_COLORS):
        raise ValueError(f"outputs and weights must name {len(_COLORS)} heads, got {len(outputs)}")
    span = as_positive_scalar(set_up_span, "set_up_span")
    fig = new_figure(WIDTH, 5.4)
    ax_s, ax_w = fig.subplots(2, 1, height_ratios=(1.3, 1), sharex=True)
    (first, output), (second, other) = outputs.items()
    for ax in (ax_s, ax_w):
        ax.axvspan(p[0], p[0] + span, color=COLORS["muted"], alpha=0.15, lw=0)
    draw_signal(ax_s, p, f, s, output, output_label=first, dot_size=2.5, dot_alpha=0.5, legend=None)
    ax_s.plot(p, other, "-", color=_COLORS[1], lw=1.4, label=second)
    shared_legend(fig, [ax_s], ncols=2, where="above")
    ax_s.set_xlabel("")
    for (name, w), color in zip(weights.items(), _COLORS, strict=True):
        ax_w.plot(p, w[i], "-", color=color, lw=1.5, label=name)
    ax_w.axvline(p[i], color=COLORS["clean"], ls=":", lw=1, label=f"query $p_i = {p[i]:.2f}$")
    ax_w.set_xlabel("key position $p_j$")
    ax_w.set_ylabel("weight $a_{ij}$")
    ax_w.legend(loc="upper right")
    return fig
