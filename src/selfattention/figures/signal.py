"""Figures of the chapters on attention (the scaling demo) and the noisy signal."""

from __future__ import annotations

import numpy as np

from ._style import COLORS, draw_weights, new_figure


def plot_scaling(result):
    """Why divide by ``sqrt(d_k)``: spread of the scores and peakedness of softmax.

    Left: the standard deviation of ``q . k`` against ``d_k`` (log-log), with
    the curve ``sqrt(d_k)``. Right: the mean largest softmax weight of a row,
    without and with the scaling.

    Parameters
    ----------
    result : dict of str to ndarray
        As returned by :func:`selfattention.scaling.scaling_experiment`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    d_k = np.asarray(result["d_k"], dtype=float)
    fig = new_figure(9.0, 3.4)
    ax_std, ax_max = fig.subplots(1, 2)
    ax_std.loglog(d_k, result["std"], "o", color=COLORS["noisy"], label="measured")
    ax_std.loglog(d_k, np.sqrt(d_k), "-", color=COLORS["clean"], lw=1, label="$\\sqrt{d_k}$")
    ax_std.set_xlabel("key dimension $d_k$")
    ax_std.set_ylabel("std of $q \\cdot k$")
    ax_std.set_title("Spread of the dot products")
    ax_std.legend(fontsize="small")
    ax_max.semilogx(d_k, result["max_weight_unscaled"], "o-", color=COLORS["output"],
                    label="softmax$(QK^\\top)$")
    ax_max.semilogx(d_k, result["max_weight_scaled"], "s-", color=COLORS["accent"],
                    label="softmax$(QK^\\top/\\sqrt{d_k})$")
    ax_max.set_ylim(0, 1.05)
    ax_max.set_xlabel("key dimension $d_k$")
    ax_max.set_ylabel("mean largest weight of a row")
    ax_max.set_title("How peaked the softmax is")
    ax_max.legend(fontsize="small", loc="center right")
    return fig


def _signal_panel(ax, positions, clean, noisy, output=None):
    ax.plot(positions, clean, "--", color=COLORS["clean"], lw=1.2, label="ground truth")
    ax.plot(positions, noisy, "o", color=COLORS["noisy"], ms=3, alpha=0.7, label="noisy input")
    if output is not None:
        ax.plot(positions, output, "-", color=COLORS["output"], lw=2, label="attention output")
    ax.set_xlabel("position $p$")
    ax.set_ylabel("value")
    ax.legend(loc="upper right", fontsize="small")


def plot_noisy_signal(positions, clean, noisy):
    """The noisy sine: ground truth dashed, observations as dots.

    Parameters
    ----------
    positions, clean, noisy : ndarray, shape (n,)

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig = new_figure(7.0, 3.0)
    ax = fig.add_subplot()
    _signal_panel(ax, positions, clean, noisy)
    return fig


def plot_onedim_head(positions, clean, noisy, output, weights):
    """The 1-D head on the noisy sine: output, attention matrix, output vs value.

    Top: ground truth, noisy input and the head's output against position.
    Bottom left: the attention matrix (row ``i`` = query ``i``). Bottom
    right: each token's output against its own input value; the points fall
    on one curve because the output depends on nothing else.

    Parameters
    ----------
    positions, clean, noisy, output : ndarray, shape (n,)
    weights : ndarray, shape (n, n)

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig = new_figure(8.0, 6.6)
    axes = fig.subplot_mosaic([["sig", "sig"], ["w", "val"]], height_ratios=(1, 1.15))
    ax_sig, ax_w, ax_val = axes["sig"], axes["w"], axes["val"]
    _signal_panel(ax_sig, positions, clean, noisy, output)
    ax_sig.set_title("1-D head on the noisy sine")
    draw_weights(ax_w, np.asarray(weights), np.asarray(positions))
    points = ax_val.scatter(noisy, output, c=positions, cmap="plasma", s=12)
    fig.colorbar(points, ax=ax_val, label="position $p_i$")
    ax_val.set_xlabel("input value $x_i$")
    ax_val.set_ylabel("output$_i$")
    ax_val.set_title("Output vs own value")
    return fig


def plot_strength_sweep(strengths, errors, noisy_error, band_error=None):
    """Error of the 1-D head for every score strength ``c = w_q w_k / tau``.

    Parameters
    ----------
    strengths, errors : ndarray, shape (m,)
        As passed to and returned by :func:`selfattention.onedim.strength_sweep`.
    noisy_error : float
        RMSE of the noisy input itself (a horizontal line).
    band_error : float, optional
        RMSE of a position-aware head, for comparison (another line).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig = new_figure(7.0, 3.2)
    ax = fig.add_subplot()
    ax.plot(strengths, errors, "-", color=COLORS["output"], lw=2, label="1-D head output")
    ax.axhline(noisy_error, ls="--", color=COLORS["noisy"], label="noisy input")
    if band_error is not None:
        ax.axhline(band_error, ls=":", color=COLORS["accent"], lw=2, label="position-aware head")
    ax.set_yscale("log")
    ax.set_xlabel("score strength $c = w_q w_k / \\tau$")
    ax.set_ylabel("RMSE against the ground truth")
    ax.legend(fontsize="small")
    return fig
