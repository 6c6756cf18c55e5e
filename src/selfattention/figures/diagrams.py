"""Architecture diagrams of a self-attention head, drawn with matplotlib.

Two views of the same computation: :func:`draw_overview` shows the data flow
from the tokens to the output; :func:`draw_detailed` draws every matrix as a
grid whose rows and columns are its real shape.
"""

from __future__ import annotations

from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from .._validation import as_count
from ._style import COLORS, TITLE_PT, WIDTH, book_figure, new_figure

#: Colour of each matrix role, shared by both diagrams.
ROLE_COLORS = {
    "X": "#999999",
    "Q": COLORS["accent"],
    "K": COLORS["noisy"],
    "V": COLORS["output"],
    "W": "#CC79A7",
    "out": "#E69F00",
}


def _box(ax, x, y, text, color, *, width=1.0, height=0.45):
    """A rounded box centred on (x, y) holding ``text`` (data units are inches)."""
    patch = FancyBboxPatch((x - width / 2, y - height / 2), width, height,
                           boxstyle="round,pad=0.03", facecolor=color, alpha=0.25,
                           edgecolor=color, linewidth=1.5)
    ax.add_patch(patch)
    ax.text(x, y, text, ha="center", va="center")
    return patch


def _arrow(ax, start, end, **kwargs):
    """An arrow from ``start`` to ``end`` (data coordinates)."""
    arrow = FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12,
                            color="#333333", linewidth=1.2, shrinkA=0, shrinkB=0, **kwargs)
    ax.add_patch(arrow)
    return arrow


def _canvas(width, height):
    """A figure of ``width`` x ``height`` inches whose one blank axes fills it, one data unit an inch."""
    fig = new_figure(width, height)
    fig.set_layout_engine("none")  # the axes is placed by hand
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.axis("off")
    return fig, ax


@book_figure
def draw_overview():
    """Overview of a self-attention head: tokens to queries, keys, values, output.

    Left to right: the tokens, the three projections and the queries, keys
    and values they give; then, in the right-hand column from top to
    bottom, the scores of the queries against the keys, their softmax by
    rows (the weights), and the weighted average of the values, the output.

    Returns
    -------
    matplotlib.figure.Figure
        One axes holding the boxes (patches), arrows and labels (texts).
    """
    fig, ax = _canvas(WIDTH, 3.3)
    _box(ax, 0.42, 1.95, "tokens\n$X$", ROLE_COLORS["X"], width=0.72, height=1.7)
    rows = (("Q", "queries", 2.75), ("K", "keys", 1.95), ("V", "values", 1.15))
    for name, word, y in rows:
        _arrow(ax, (0.81, 1.95), (1.12, y))
        _box(ax, 1.5, y, f"$\\times W_{name}$", ROLE_COLORS[name], width=0.7)
        _arrow(ax, (1.88, y), (2.12, y))
        _box(ax, 2.68, y, f"{word} ${name}$", ROLE_COLORS[name], width=1.05)
    _box(ax, 4.55, 2.75, "scores\n$QK^\\top/\\sqrt{d_k}$", ROLE_COLORS["W"], width=1.45, height=0.75)
    _arrow(ax, (3.24, 2.75), (3.79, 2.82))
    _arrow(ax, (3.24, 1.95), (3.79, 2.62))
    _box(ax, 4.55, 1.8, "softmax by rows", ROLE_COLORS["W"], width=1.45)
    _arrow(ax, (4.55, 2.35), (4.55, 2.05))
    _box(ax, 4.55, 0.85, "weighted\naverage $AV$", ROLE_COLORS["out"], width=1.45, height=0.7)
    _arrow(ax, (4.55, 1.55), (4.55, 1.23))
    ax.text(4.62, 1.39, "weights $A$", ha="left", va="center")
    _arrow(ax, (3.24, 1.15), (3.79, 0.9))
    _arrow(ax, (4.55, 0.47), (4.55, 0.2))
    ax.text(4.68, 0.2, "output", ha="left", va="center")
    return fig


#: Side of one matrix cell in the detailed diagram, in inches (smaller when the matrices are large).
CELL = 0.2
#: Room in inches around an operator of the detailed diagram.
_OPERATOR = 0.25


def _grid(ax, x, y, rows, cols, color, label, *, cell=CELL):
    """A ``rows`` x ``cols`` grid of cells with its top-left corner at (x, y), its label under it."""
    for i in range(rows):
        for j in range(cols):
            ax.add_patch(Rectangle((x + j * cell, y - (i + 1) * cell), cell, cell,
                                   facecolor=color, alpha=0.35, edgecolor=color, linewidth=0.8))
    ax.text(x + cols * cell / 2, y - rows * cell - 0.06, label, ha="center", va="top", linespacing=1.1)


def _rooms(ax, parts, cell):
    """The width in inches each part of an equation takes: an operator's room, or a matrix's or its label's."""
    renderer, rooms = ax.figure.canvas.get_renderer(), []
    for part in parts:
        if isinstance(part, str):
            rooms.append(_OPERATOR)
            continue
        _, cols, _, label = part
        text = ax.text(0, 0, label, linespacing=1.1)
        rooms.append(max(cols * cell, text.get_window_extent(renderer).width / ax.figure.dpi))
        text.remove()
    return rooms


def _equation(ax, x, y, parts, *, mid, cell=CELL):
    """Lay out ``parts`` left to right from ``x``, matrices top-aligned at ``y``.

    Each part is a string (an operator, drawn at height ``mid``) or a tuple
    ``(rows, cols, color, label)``; a matrix and its label are centred in
    the room they take (:func:`_rooms`). Returns the centre of each matrix.
    """
    centres = []
    for part, room in zip(parts, _rooms(ax, parts, cell), strict=True):
        if isinstance(part, str):
            ax.text(x + room / 2, mid, part, ha="center", va="center", fontsize=TITLE_PT)
        else:
            rows, cols, color, label = part
            _grid(ax, x + (room - cols * cell) / 2, y, rows, cols, color, label, cell=cell)
            centres.append(x + room / 2)
        x += room
    return centres


@book_figure
def draw_detailed(n=4, d_model=3, d_k=2, d_v=2):
    """Detailed view: every matrix of the head drawn with its real shape, in rows of two equations.

    First the three projections ``X W_Q = Q``, ``X W_K = K``, ``X W_V =
    V``, then ``Q K^T`` (n x n scores), and, under the scores, an arrow (the
    row-wise softmax of the scaled scores) to the weights ``A`` of ``A V``,
    the output.

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
    cell = min(CELL, 0.6 / max(n, d_model, d_k, d_v))  # (8, 8) matrices fit half the width with their labels
    tall = max(n, d_model) * cell + 0.7  # a row: the tallest matrix and a three-line label
    fig, ax = _canvas(WIDTH, 3 * tall + 0.65)
    tops = (3 * tall + 0.55, 2 * tall + 0.4, tall + 0.05)  # the three rows of equations
    X = (n, d_model, c["X"], f"$X$\n$N\\times d_{{\\mathrm{{model}}}}$\n({n}×{d_model})")
    slots = [(0.05, tops[0]), (WIDTH / 2 + 0.05, tops[0]), (0.05, tops[1])]
    for (name, dim, sub), (x, y) in zip((("Q", d_k, "k"), ("K", d_k, "k"), ("V", d_v, "v")), slots, strict=True):
        w = (d_model, dim, c[name], f"$W_{name}$\n$d_{{\\mathrm{{model}}}}\\times d_{sub}$")
        out = (n, dim, c[name], f"${name}$\n$N\\times d_{sub}$\n({n}×{dim})")
        _equation(ax, x, y, [X, "×", w, "=", out], mid=y - n * cell / 2, cell=cell)
    parts = [(n, d_k, c["Q"], "$Q$"), "×", (d_k, n, c["K"], "$K^\\top$\n$d_k\\times N$"), "=",
             (n, n, c["W"], "scores\n$QK^\\top$\n$N\\times N$")]
    *_, scores = _equation(ax, WIDTH / 2 + 0.05, tops[1], parts, mid=tops[1] - n * cell / 2, cell=cell)
    parts = [(n, n, c["W"], "weights $A$\n$N\\times N$\nrows sum to 1"), "×",
             (n, d_v, c["V"], "$V$\n$N\\times d_v$"), "=", (n, d_v, c["out"], "output\n$N\\times d_v$")]
    weights, *_ = _equation(ax, 0.05, tops[2], parts, mid=tops[2] - n * cell / 2, cell=cell)
    # From under the scores' label, across, and down onto the weights: the softmax of each row.
    bend = tops[2] + 0.17
    ax.plot([scores, scores, weights], [tops[1] - n * cell - 0.66, bend, bend], "-", color="#333333", lw=1.2)
    _arrow(ax, (weights, bend), (weights, tops[2] + 0.03))
    ax.text(WIDTH - 0.05, bend - 0.08, "softmax of each row\nof $QK^\\top/\\sqrt{d_k}$", ha="right", va="top")
    return fig
