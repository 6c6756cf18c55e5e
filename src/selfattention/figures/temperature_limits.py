"""Figures of the temperature's two limits: the identity and the uniform average."""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import LogLocator

from .._validation import as_array, as_entries, as_series, as_temperatures, as_weights
from ._style import COLORS, MAX_HEIGHT, WIDTH, book_figure, new_figure, shared_legend
from .panels import SMALL_PANEL, draw_signal, draw_weights

#: Height in inches of a temperature's row in :func:`plot_temperature_extremes`.
_ROW = 2.2


def _tau_label(tau) -> str:
    """``tau`` as TeX: ``10^{-6}`` rather than ``1e-06``."""
    text = f"{tau:.3g}"
    if "e" not in text:
        return f"\\tau = {text}"
    mantissa, exponent = text.split("e")
    prefix = "" if mantissa == "1" else f"{mantissa} \\times "
    return f"\\tau = {prefix}10^{{{int(exponent)}}}"


@book_figure
def plot_temperature_extremes(positions, clean, noisy, temperatures, outputs, weights):
    """The head at several temperatures: one row each, the weights left and the signal right.

    Parameters
    ----------
    positions, clean, noisy : ndarray, shape (n,)
    temperatures : sequence of float, length m
        One row per temperature, in the order given; at most four.
    outputs : ndarray, shape (m, n)
    weights : ndarray, shape (m, n, n)
        The head's output and weights at each temperature, as from
        :func:`selfattention.studies.temperature_limits.head_at_temperatures`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    positions, clean, noisy = as_series(positions=positions, clean=clean, noisy=noisy)
    temperatures = as_temperatures(temperatures, "temperatures")
    outputs, weights = as_array(outputs, "outputs", ndim=2), as_array(weights, "weights", ndim=3)
    m, n = temperatures.size, positions.size
    if m * _ROW > MAX_HEIGHT - 0.4:
        raise ValueError(f"temperatures must hold at most {int((MAX_HEIGHT - 0.4) // _ROW)} values, got {m}")
    if outputs.shape != (m, n) or weights.shape != (m, n, n):
        raise ValueError(f"outputs and weights must have shapes {(m, n)} and {(m, n, n)}")
    for k in range(m):
        as_weights(weights[k], f"weights[{k}]")
    fig = new_figure(WIDTH, m * _ROW + 0.4)
    axes = fig.subplots(m, 2, squeeze=False, width_ratios=(1, 1.25))
    for k, tau in enumerate(temperatures):
        draw_weights(axes[k, 0], weights[k], positions, title=f"${_tau_label(tau)}$")
        draw_signal(axes[k, 1], positions, clean, noisy, outputs[k], **SMALL_PANEL, legend=None)
        axes[k, 1].set_title(f"output range {np.ptp(outputs[k]):.2f}")
        axes[k, 1].set_ylabel("value")
        if k < m - 1:
            axes[k, 0].set_xlabel("")
            axes[k, 1].set_xlabel("")
    shared_legend(fig, [axes[0, 1]])
    return fig


@book_figure
def plot_temperature_sweep(temperatures, sweep):
    """How far the weights are from the identity and from uniform, vs tau.

    Parameters
    ----------
    temperatures : ndarray, shape (m,)
    sweep : dict of ndarray, each shape (m,)
        The result of :func:`selfattention.studies.temperature_limits.temperature_sweep`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    temperatures = as_temperatures(temperatures, "temperatures")
    sweep = as_entries(sweep, "sweep", ("identity", "uniform", "input_gap", "mean_gap"), series=True)
    if sweep["identity"].size != temperatures.size:
        raise ValueError(f"sweep must hold one value per temperature, {temperatures.size}")
    fig = new_figure(WIDTH, 3.4)
    ax_w, ax_o = fig.subplots(1, 2, sharey=True)
    floor = 1e-18  # exact zeros cannot sit on a log axis
    ax_w.loglog(temperatures, np.maximum(sweep["identity"], floor), "o-", color=COLORS["noisy"],
                label="$\\max|A - I|$ (identity)")
    ax_w.loglog(temperatures, np.maximum(sweep["uniform"], floor), "s-", color=COLORS["output"],
                label="$\\max|A - 1/N|$ (uniform)")
    ax_w.set_title("The attention matrix")
    ax_o.loglog(temperatures, np.maximum(sweep["input_gap"], floor), "o-", color=COLORS["noisy"],
                label="$\\max|\\mathrm{output} - \\mathrm{input}|$")
    ax_o.loglog(temperatures, np.maximum(sweep["mean_gap"], floor), "s-", color=COLORS["output"],
                label="$\\max|\\mathrm{output} - \\mathrm{mean}|$")
    ax_o.set_title("The output")
    for ax in (ax_w, ax_o):
        ax.set_xlabel("temperature $\\tau$")
        ax.xaxis.set_major_locator(LogLocator(numticks=4))
    ax_w.set_ylabel("distance")
    shared_legend(fig, ncols=2)
    return fig
