"""Architecture diagrams of a self-attention head, drawn with matplotlib.

Two views of the same computation: :func:`draw_overview` shows the data flow
from the tokens to the output; :func:`draw_detailed` draws every matrix as a
grid whose rows and columns are its real shape.
"""

from __future__ import annotations

from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from .._validation import as_count
from ._style import COLORS, new_figure

#: Colour of each matrix role, shared by both diagrams.
ROLE_COLORS = {
    "X": "#999999",
    "Q": COLORS["accent"],
    "K": COLORS["noisy"],
    "V": COLORS["output"],
    "W": "#CC79A7",
    "out": "#E69F00",
}


def _box(ax, x, y, text, color, *, width=1.6, height=0.8):
    """A rounded box centred on (x, y) holding ``text``."""
    patch = FancyBboxPatch((x - width / 2, y - height / 2), width, height,
                           boxstyle="round,pad=0.05", facecolor=color, alpha=0.25,
                           edgecolor=color, linewidth=1.5)
    ax.add_patch(patch)
    ax.text(x, y, text, ha="center", va="center", fontsize=11)
    return patch


def _arrow(ax, start, end, **kwargs):
    """An arrow from ``start`` to ``end`` (data coordinates)."""
    arrow = FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=14,
                            color="#333333", linewidth=1.2, shrinkA=0, shrinkB=0, **kwargs)
    ax.add_patch(arrow)
    return arrow


def _blank_axes(fig, xlim, ylim):
    ax = fig.add_subplot()
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")
    return ax


def draw_overview():
    """Overview of a self-attention head: tokens to queries, keys, values, output.

    Returns
    -------
    matplotlib.figure.Figure
        One axes holding the boxes (patches), arrows and labels (texts).
    """
    fig = new_figure(9.0, 3.4)
    ax = _blank_axes(fig, (-0.2, 13.4), (-0.4, 4.4))
    _box(ax, 0.9, 2.0, "tokens\n$X$", ROLE_COLORS["X"], height=1.4)
    rows = (("Q", "queries", 3.5), ("K", "keys", 2.0), ("V", "values", 0.5))
    for name, word, y in rows:
        _arrow(ax, (1.75, 2.0), (2.8, y))
        _box(ax, 3.6, y, f"$\\times W_{name}$", ROLE_COLORS[name])
        _arrow(ax, (4.45, y), (5.25, y))
        _box(ax, 6.1, y, f"{word} ${name}$", ROLE_COLORS[name])
    _arrow(ax, (6.95, 3.5), (7.7, 2.95))
    _arrow(ax, (6.95, 2.0), (7.7, 2.55))
    _box(ax, 8.6, 2.75, "scores\n$QK^\\top/\\sqrt{d_k}$", ROLE_COLORS["W"], width=1.9, height=1.0)
    _arrow(ax, (9.6, 2.75), (10.3, 2.75))
    _box(ax, 11.1, 2.75, "softmax\nby rows", ROLE_COLORS["W"], width=1.5, height=1.0)
    _arrow(ax, (11.1, 2.2), (11.1, 1.3))
    _arrow(ax, (6.95, 0.5), (10.2, 0.5))
    _box(ax, 11.1, 0.6, "weighted\naverage $AV$", ROLE_COLORS["out"], width=1.7, height=1.0)
    _arrow(ax, (11.95, 0.6), (12.6, 0.6))
    ax.text(12.7, 0.6, "output", ha="left", va="center", fontsize=11)
    ax.text(11.25, 1.75, "weights $A$", ha="left", va="center", fontsize=10)
    return fig


#: Side of one matrix cell in the detailed diagram, in data units.
CELL = 0.45


def _grid(ax, x, y, rows, cols, color, label, *, cell=CELL):
    """A ``rows`` x ``cols`` grid of cells with its top-left corner at (x, y).

    The label goes under the grid. Returns the (left, bottom, right, top) box.
    """
    for i in range(rows):
        for j in range(cols):
            ax.add_patch(Rectangle((x + j * cell, y - (i + 1) * cell), cell, cell,
                                   facecolor=color, alpha=0.35, edgecolor=color, linewidth=0.8))
    right, bottom = x + cols * cell, y - rows * cell
    ax.text((x + right) / 2, bottom - 0.12, label, ha="center", va="top", fontsize=10)
    return x, bottom, right, y


def _symbol(ax, x, y, text):
    ax.text(x, y, text, ha="center", va="center", fontsize=13)


def _equation(ax, x, y, parts, *, mid, gap=0.5):
    """Lay out ``parts`` left to right, matrices top-aligned at ``y``.

    Each part is a string (an operator, drawn at height ``mid``) or a tuple
    ``(rows, cols, color, label)``. Returns the x coordinate after the last part.
    """
    for part in parts:
        if isinstance(part, str):
            _symbol(ax, x + gap / 2, mid, part)
            x += gap
        else:
            rows, cols, color, label = part
            x = _grid(ax, x, y, rows, cols, color, label)[2]
    return x


def draw_detailed(n=4, d_model=3, d_k=2, d_v=2):
    """Detailed view: every matrix of the head drawn with its real shape.

    Top row: the three projections ``X W_Q = Q``, ``X W_K = K``,
    ``X W_V = V``. Bottom row: ``Q K^T`` (n x n scores), the row-wise
    softmax of the scaled scores (the weights ``W``), and ``W V``.

    Parameters
    ----------
    n : int
        Number of tokens.
    d_model, d_k, d_v : int
        Token, query/key and value dimensions.

    Returns
    -------
    matplotlib.figure.Figure
    """
    n, d_model = as_count(n, "n"), as_count(d_model, "d_model")
    d_k, d_v = as_count(d_k, "d_k"), as_count(d_v, "d_v")
    if max(n, d_model, d_k, d_v) > 8:
        raise ValueError(f"draw_detailed draws every cell: keep n, d_model, d_k and d_v at most 8, "
                         f"got {(n, d_model, d_k, d_v)}")
    c = ROLE_COLORS
    X = (n, d_model, c["X"], f"$X$\n$N\\times d_{{\\mathrm{{model}}}}$\n({n}×{d_model})")
    top, bottom = 0.0, -(n * CELL + 1.6)  # the two rows of equations
    fig = new_figure(8.0, 4.2)
    ax = _blank_axes(fig, (-0.2, 14.6), (bottom - n * CELL - 1.3, 0.3))
    x = 0.0
    for name, dim, sub in (("Q", d_k, "k"), ("K", d_k, "k"), ("V", d_v, "v")):
        w = (d_model, dim, c[name], f"$W_{name}$\n$d_{{\\mathrm{{model}}}}\\times d_{sub}$")
        out = (n, dim, c[name], f"${name}$\n$N\\times d_{sub}$\n({n}×{dim})")
        x = _equation(ax, x, top, [X, "×", w, "=", out], mid=top - n * CELL / 2) + 0.7
    mid = bottom - n * CELL / 2
    parts = [(n, d_k, c["Q"], "$Q$"), "×", (d_k, n, c["K"], "$K^\\top$\n$d_k\\times N$"), "=",
             (n, n, c["W"], "scores\n$QK^\\top$\n$N\\times N$")]
    x = _equation(ax, 0.0, bottom, parts, mid=mid)
    _arrow(ax, (x + 0.2, mid), (x + 2.6, mid))
    ax.text(x + 1.4, mid + 0.15, "softmax of\neach row of\n$QK^\\top/\\sqrt{d_k}$",
            ha="center", va="bottom", fontsize=10)
    parts = [(n, n, c["W"], "weights $A$\n$N\\times N$\nrows sum to 1"), "×",
             (n, d_v, c["V"], "$V$\n$N\\times d_v$"), "=",
             (n, d_v, c["out"], "output\n$N\\times d_v$")]
    _equation(ax, x + 2.8, bottom, parts, mid=mid)
    return fig
