"""Figures of the head's error as the noise and the number of samples change."""

from __future__ import annotations

from .._validation import as_array, as_counts, as_instances, as_series
from ..studies.noise_and_samples import SmoothedSine
from ._style import COLORS, MAX_COLUMNS, ROW_HEIGHT, WIDTH, book_figure, new_figure, new_panels, shared_legend
from .panels import SMALL_PANEL, draw_signal


@book_figure
def plot_noise_recovery(sigmas, panels):
    """The head at several noise levels, one panel per level, in rows of two.

    Each panel's title gives the RMSE of the input and of the output; one
    legend under the panels.

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
    fig, axes = new_panels(m + m % MAX_COLUMNS if m > 1 else m, sharey=True,
                           height=ROW_HEIGHT if m > MAX_COLUMNS else 2.9)
    spare, axes = axes[m:], axes[:m]  # an odd panel out leaves a place for the legend
    for k, (sigma, panel) in enumerate(zip(sigmas, panels, strict=True)):
        positions, clean, noisy, output, _, rmse_input, rmse_output = panel
        draw_signal(axes[k], positions, clean, noisy, output, **SMALL_PANEL, legend=None)
        axes[k].set_title(f"$\\sigma = {sigma:g}$, RMSE {rmse_input:.2f} $\\to$ {rmse_output:.2f}",
                          fontsize="medium")
        if k % MAX_COLUMNS == 0:
            axes[k].set_ylabel("value")
        if k < m - MAX_COLUMNS:
            axes[k].set_xlabel("")
    shared_legend(fig, axes[:1], ncols=1 if spare else 3, where=spare[0] if spare else "below")
    return fig


@book_figure
def plot_samples(sample_counts, rmse_input, rmse_output, examples):
    """More samples, less error: two example signals side by side, the error curve under them.

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
    fig = new_figure(WIDTH, 5.6)
    panels = fig.subplot_mosaic([["a", "b"], ["err", "err"]], height_ratios=(1, 1.1))
    axes = [panels["a"], panels["b"]]
    for k, (positions, clean, noisy, output, _, _, example_rmse) in enumerate(examples):
        draw_signal(axes[k], positions, clean, noisy, output, **SMALL_PANEL, legend=None)
        axes[k].set_title(f"$N = {len(positions)}$, RMSE {example_rmse:.3f}", fontsize="medium")
    axes[0].set_ylabel("value")
    shared_legend(fig, axes[:1], where="above")
    ax = panels["err"]
    ax.loglog(sample_counts, rmse_input, "o-", color=COLORS["noisy"], label="noisy input")
    ax.loglog(sample_counts, rmse_output, "s-", color=COLORS["output"], label="attention output")
    ax.set_xlabel("number of samples $N$")
    ax.set_ylabel("mean RMSE")
    ax.set_title("error against $N$", fontsize="medium")
    ax.legend(loc="lower left")
    return fig
