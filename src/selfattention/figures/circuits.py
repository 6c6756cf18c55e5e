"""Figures of the circuits view (:mod:`selfattention.circuits`): circuits over the vocabulary side by side.

Drawn in the book's figure style (:mod:`._style`: at most 5.6 inches wide,
11-point text, at most two panels side by side).
"""

from __future__ import annotations

import numpy as np

from .._validation import as_array, as_entries
from ._style import WIDTH, book_figure, new_figure


@book_figure
def plot_circuits(circuits):
    """Square circuits over the vocabulary, two a row, each on its own colour scale.

    Parameters
    ----------
    circuits : dict of str -> array_like, shape (d_vocab, d_vocab)
        Titles and matrices (rows: the symbol read by the query, or by the
        value; columns: the key's, or the symbol written), two or four.

    Returns
    -------
    matplotlib.figure.Figure
    """
    panels = as_entries(circuits, "circuits", list(circuits) if isinstance(circuits, dict) else [])
    if len(panels) not in (2, 4):
        raise ValueError(f"circuits must hold two or four matrices, got {len(panels)}")
    fig = new_figure(WIDTH, 2.9 * len(panels) // 2)
    for k, (title, matrix) in enumerate(panels.items()):
        M = as_array(matrix, "circuits", ndim=2)
        ax = fig.add_subplot(len(panels) // 2, 2, k + 1)
        limit = max(float(np.abs(M).max()), np.finfo(float).tiny)
        ax.imshow(M, cmap="RdBu_r", vmin=-limit, vmax=limit, interpolation="nearest")
        ax.set_title(title)
        ax.set_xticks([0, M.shape[1] - 1], ["a", "z"] if M.shape[1] == 26 else [0, M.shape[1] - 1])
        ax.set_yticks([0, M.shape[0] - 1], ["a", "z"] if M.shape[0] == 26 else [0, M.shape[0] - 1])
        ax.tick_params(length=0)
    return fig
