"""The figure of why attention divides the scores by ``sqrt(d_k)``."""

from __future__ import annotations

import numpy as np

from .._validation import as_entries
from ._style import COLORS, WIDTH, book_figure, new_figure, shared_legend


@book_figure
def plot_dk_scaling(result):
    """Why divide by ``sqrt(d_k)``: spread of the scores and peakedness of softmax.

    Left: the standard deviation of ``q . k`` against ``d_k`` (log-log), with
    the curve ``sqrt(d_k)``. Right: the mean largest softmax weight of a row,
    without and with the scaling. One legend under both.

    Parameters
    ----------
    result : dict of str to ndarray
        As returned by :func:`selfattention.studies.dk_scaling.dk_scaling_experiment`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    result = as_entries(result, "result", ("d_k", "std", "max_weight_unscaled", "max_weight_scaled"), series=True)
    d_k = result["d_k"]
    fig = new_figure(WIDTH, 3.0)
    ax_std, ax_max = fig.subplots(1, 2)
    ax_std.loglog(d_k, result["std"], "o", color=COLORS["noisy"], label="measured std")
    ax_std.loglog(d_k, np.sqrt(d_k), "-", color=COLORS["clean"], lw=1, label="$\\sqrt{d_k}$")
    ax_std.set_xlabel("key dimension $d_k$")
    ax_std.set_ylabel("std of $q \\cdot k$")
    ax_std.set_title("spread of $q \\cdot k$")
    ax_max.semilogx(d_k, result["max_weight_unscaled"], "o-", color=COLORS["output"],
                    label="softmax$(QK^\\top)$")
    ax_max.semilogx(d_k, result["max_weight_scaled"], "s-", color=COLORS["accent"],
                    label="softmax$(QK^\\top/\\sqrt{d_k})$")
    ax_max.set_ylim(0, 1.05)
    ax_max.set_xlabel("key dimension $d_k$")
    ax_max.set_ylabel("mean largest weight of a row")
    ax_max.set_title("peak of the softmax")
    shared_legend(fig, ncols=2)
    return fig
