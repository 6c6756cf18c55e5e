"""Figures of the head's error as the noise and the number of samples change."""

from __future__ import annotations

from .._validation import as_array, as_counts, as_instances, as_series
from ..studies.noise_and_samples import SmoothedSine
from ._style import COLORS, new_figure
from .panels import SMALL_LEGEND, SMALL_PANEL, draw_signal


def plot_noise_recovery(sigmas, panels):
    """The head at several noise levels, one panel per level.

    Each panel's title gives the RMSE of the input and of the output.

    Parameters
    ----------
    sigmas : sequence of float, length m
        The noise levels, for the titles.
    panels : sequence of SmoothedSine, length m
        ``(positions, clean, noisy, output, weights, rmse_input, rmse_output)``
        of each level, as from :func:`selfattention.studies.noise_and_samples.noise_levels`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    sigmas, panels = as_array(sigmas, "sigmas", ndim=1), as_instances(panels, "panels", SmoothedSine)
    m = len(sigmas)
    if len(panels) != m:
        raise ValueError(f"sigmas and panels must have the same length, got {m} and {len(panels)}")
    fig = new_figure(3.2 * m, 3.2)
    axes = fig.subplots(1, m, squeeze=False, sharey=True)[0]
    for k, (sigma, panel) in enumerate(zip(sigmas, panels, strict=True)):
        positions, clean, noisy, output, _, rmse_input, rmse_output = panel
        draw_signal(axes[k], positions, clean, noisy, output, **SMALL_PANEL, legend=SMALL_LEGEND if k == 0 else None)
        axes[k].set_title(f"$\\sigma = {sigma:g}$: RMSE {rmse_input:.2f} $\\to$ {rmse_output:.2f}", fontsize="medium")
    axes[0].set_ylabel("value")
    return fig


def plot_samples(sample_counts, rmse_input, rmse_output, examples):
    """More samples, less error: example signals and the error curve.

    Parameters
    ----------
    sample_counts : sequence of int, length m
    rmse_input, rmse_output : ndarray, shape (m,)
        The results of :func:`selfattention.studies.noise_and_samples.error_vs_samples`.
    examples : sequence of SmoothedSine, length 2
        The two examples drawn on the left, as from
        :func:`selfattention.studies.noise_and_samples.smoothed_sine`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    sample_counts = as_counts(sample_counts, "sample_counts")
    _, rmse_input, rmse_output = as_series(sample_counts=sample_counts, rmse_input=rmse_input, rmse_output=rmse_output)
    examples = as_instances(examples, "examples", SmoothedSine)
    if len(examples) != 2:
        raise ValueError(f"examples must hold 2 SmoothedSine, got {len(examples)}")
    fig = new_figure(10.0, 3.3)
    axes = fig.subplots(1, 3, width_ratios=(1, 1, 1.1))
    for k, (positions, clean, noisy, output, _, _, example_rmse) in enumerate(examples):
        draw_signal(axes[k], positions, clean, noisy, output, **SMALL_PANEL, legend=SMALL_LEGEND if k == 0 else None)
        axes[k].set_title(f"$N = {len(positions)}$: output RMSE {example_rmse:.3f}", fontsize="medium")
    axes[0].set_ylabel("value")
    ax = axes[2]
    ax.loglog(sample_counts, rmse_input, "o-", color=COLORS["noisy"], label="noisy input")
    ax.loglog(sample_counts, rmse_output, "s-", color=COLORS["output"], label="attention output")
    ax.set_xlabel("number of samples $N$")
    ax.set_ylabel("mean RMSE vs ground truth")
    ax.set_title("Error against $N$", fontsize="medium")
    ax.legend(fontsize="small")
    return fig
