"""Figures of the knobs chapter: temperature, noise and number of samples."""

from __future__ import annotations

import numpy as np

from ..head import gaussian_head
from ..knobs import rmse
from ..signals import noisy_sine
from ._style import COLORS, draw_weights, new_figure


def _tau_label(tau) -> str:
    """``tau`` as TeX: ``10^{-6}`` rather than ``1e-06``."""
    text = f"{tau:.3g}"
    if "e" not in text:
        return f"\\tau = {text}"
    mantissa, exponent = text.split("e")
    prefix = "" if mantissa == "1" else f"{mantissa} \\times "
    return f"\\tau = {prefix}10^{{{int(exponent)}}}"


def _signal_panel(ax, positions, clean, noisy, output, *, legend=False):
    ax.plot(positions, clean, "--", color=COLORS["clean"], lw=1.2, label="ground truth")
    ax.plot(positions, noisy, "o", color=COLORS["noisy"], ms=2.5, alpha=0.6, label="noisy input")
    ax.plot(positions, output, "-", color=COLORS["output"], lw=1.8, label="attention output")
    ax.set_xlabel("position $p$")
    if legend:
        ax.legend(loc="lower left", fontsize="x-small", framealpha=0.9)


def plot_temperature_extremes(positions, clean, noisy, temperatures):
    """The head at several temperatures: weights above, signals below.

    Parameters
    ----------
    positions, clean, noisy : ndarray, shape (n,)
    temperatures : sequence of float, length m
        One column per temperature, in the order given.

    Returns
    -------
    matplotlib.figure.Figure
    """
    m = len(temperatures)
    fig = new_figure(3.2 * m, 6.4)
    axes = fig.subplots(2, m, squeeze=False, height_ratios=(1.1, 1))
    for k, tau in enumerate(temperatures):
        output, weights = gaussian_head(noisy, positions, tau)  # (n,), (n, n)
        draw_weights(axes[0, k], weights, np.asarray(positions), title=f"${_tau_label(tau)}$")
        _signal_panel(axes[1, k], positions, clean, noisy, output, legend=k == 0)
        axes[1, k].set_title(f"output range {np.ptp(output):.2f}", fontsize="small")
    axes[1, 0].set_ylabel("value")
    return fig


def plot_temperature_sweep(temperatures, sweep):
    """How far the weights are from the identity and from uniform, vs tau.

    Parameters
    ----------
    temperatures : ndarray, shape (m,)
    sweep : dict of ndarray, each shape (m,)
        The result of :func:`selfattention.knobs.temperature_sweep`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig = new_figure(9.0, 3.4)
    ax_w, ax_o = fig.subplots(1, 2)
    floor = 1e-18  # exact zeros cannot sit on a log axis
    ax_w.loglog(temperatures, np.maximum(sweep["identity"], floor), "o-", color=COLORS["noisy"],
                label="$\\max|W - I|$ (identity)")
    ax_w.loglog(temperatures, np.maximum(sweep["uniform"], floor), "s-", color=COLORS["output"],
                label="$\\max|W - 1/n|$ (uniform)")
    ax_w.set_title("The attention matrix")
    ax_o.loglog(temperatures, np.maximum(sweep["input_gap"], floor), "o-", color=COLORS["noisy"],
                label="$\\max|\\mathrm{output} - \\mathrm{input}|$")
    ax_o.loglog(temperatures, np.maximum(sweep["mean_gap"], floor), "s-", color=COLORS["output"],
                label="$\\max|\\mathrm{output} - \\mathrm{mean}|$")
    ax_o.set_title("The output")
    for ax in (ax_w, ax_o):
        ax.set_xlabel("temperature $\\tau$")
        ax.set_ylabel("distance")
        ax.legend(fontsize="small")
    return fig


def plot_noise_recovery(n, sigmas, temperature, *, rng=None):
    """The head at several noise levels, one panel per level.

    Every panel scales the same standard normal draws by its ``sigma``; its
    title gives the RMSE of the input and of the output.

    Parameters
    ----------
    n : int
    sigmas : sequence of float, length m
    temperature : float
    rng : int, numpy.random.Generator or None
        Seed of the (shared) noise draws: pass a seed, not a generator, so
        every panel gets the same draws.

    Returns
    -------
    matplotlib.figure.Figure
    """
    m = len(sigmas)
    fig = new_figure(3.2 * m, 3.2)
    axes = fig.subplots(1, m, squeeze=False, sharey=True)[0]
    for k, sigma in enumerate(sigmas):
        positions, clean, noisy = noisy_sine(n, sigma, rng=rng)
        output, _ = gaussian_head(noisy, positions, temperature)  # (n,)
        _signal_panel(axes[k], positions, clean, noisy, output, legend=k == 0)
        axes[k].set_title(f"$\\sigma = {sigma:g}$: RMSE {rmse(noisy, clean):.2f} $\\to$ "
                          f"{rmse(output, clean):.2f}", fontsize="medium")
    axes[0].set_ylabel("value")
    return fig


def plot_samples(sample_counts, rmse_input, rmse_output, *, examples, sigma, temperature, rng=None):
    """More samples, less error: two example signals and the error curve.

    Parameters
    ----------
    sample_counts : sequence of int, length m
    rmse_input, rmse_output : ndarray, shape (m,)
        The results of :func:`selfattention.knobs.error_vs_samples`.
    examples : pair of int
        The two ``N`` drawn as examples.
    sigma, temperature : float
    rng : int or None
        Seed of the examples' noise.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig = new_figure(10.0, 3.3)
    axes = fig.subplots(1, 3, width_ratios=(1, 1, 1.1))
    for ax, n in zip(axes[:2], examples):
        positions, clean, noisy = noisy_sine(n, sigma, rng=rng)
        output, _ = gaussian_head(noisy, positions, temperature)  # (n,)
        _signal_panel(ax, positions, clean, noisy, output, legend=ax is axes[0])
        ax.set_title(f"$N = {n}$: output RMSE {rmse(output, clean):.3f}", fontsize="medium")
    axes[0].set_ylabel("value")
    ax = axes[2]
    ax.loglog(sample_counts, rmse_input, "o-", color=COLORS["noisy"], label="noisy input")
    ax.loglog(sample_counts, rmse_output, "s-", color=COLORS["output"], label="attention output")
    ax.set_xlabel("number of samples $N$")
    ax.set_ylabel("mean RMSE vs ground truth")
    ax.set_title("Error against $N$", fontsize="medium")
    ax.legend(fontsize="small")
    return fig
