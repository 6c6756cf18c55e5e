"""Figures of bias and variance: the error curve against the temperature, and
the edge effect, the bias at the ends of the interval."""

from __future__ import annotations

from .._validation import as_counts, as_positive_scalar, as_series, as_temperatures, as_weights
from ._style import COLORS, WIDTH, book_figure, new_figure, shared_legend
from .panels import draw_signal


@book_figure
def plot_bias_variance(temperatures, bias2, variance, best_tau):
    """Error of the head against temperature, split into bias and variance.

    Parameters
    ----------
    temperatures : ndarray, shape (m,)
    bias2, variance : ndarray, shape (m,)
        Squared bias and variance; their sum is the mean squared error.
    best_tau : float
        Marked with a vertical line.

    Returns
    -------
    matplotlib.figure.Figure
    """
    temperatures = as_temperatures(temperatures, "temperatures")
    _, bias2, variance = as_series(temperatures=temperatures, bias2=bias2, variance=variance)
    best_tau = as_positive_scalar(best_tau, "best_tau")
    fig = new_figure(WIDTH, 3.4)
    ax = fig.subplots()
    mse = bias2 + variance  # (m,)
    ax.loglog(temperatures, mse, "-", color=COLORS["clean"], lw=2.2, label="mean squared error")
    ax.loglog(temperatures, bias2, "--", color=COLORS["output"], lw=1.6, label="bias$^2$ (flattening)")
    ax.loglog(temperatures, variance, ":", color=COLORS["noisy"], lw=2, label="variance (noise kept)")
    ax.axvline(best_tau, color=COLORS["muted"], lw=1)
    ax.set_ylim(mse.min() / 30, mse.max() * 2)
    ax.annotate(f"best $\\tau$ = {best_tau:.2g}", (best_tau, mse.min() / 30), xytext=(4, 4),
                textcoords="offset points")
    ax.set_xlabel("temperature $\\tau$")
    ax.set_ylabel("error, mean over positions")
    ax.legend(loc="upper left")
    return fig


@book_figure
def plot_edge_effect(positions, clean, smoothed, weights, queries):
    """The pull toward the inside at the ends, and the one-sided weights behind it.

    Parameters
    ----------
    positions, clean, smoothed : ndarray, shape (n,)
        ``smoothed`` is the head's output on the noise-free signal (its mean).
    weights : ndarray, shape (n, n)
        The head's attention matrix.
    queries : sequence of int
        Rows of ``weights`` to draw on the right.

    Returns
    -------
    matplotlib.figure.Figure
    """
    positions, clean, smoothed = as_series(positions=positions, clean=clean, smoothed=smoothed)
    weights = as_weights(weights, "weights", square=True)
    queries = as_counts(queries, "queries", minimum=0)
    if weights.shape[0] != positions.size or max(queries) >= positions.size:
        raise ValueError(f"weights must be {positions.size} x {positions.size} and queries rows of it")
    fig = new_figure(WIDTH, 3.3)
    ax_s, ax_w = fig.subplots(1, 2)
    draw_signal(ax_s, positions, clean, output=smoothed, output_label="mean output", legend=None)
    styles = ["-", "--", ":", "-."]
    for k, i in enumerate(queries):
        ax_w.plot(positions, weights[i], styles[k % len(styles)], color=COLORS["noisy"], lw=1.6,
                  label=f"row of the query at $p$ = {positions[i]:.2f}")
        ax_s.plot(positions[i], smoothed[i], "o", color=COLORS["output"], ms=5)
    ax_w.set_xlabel("key position $p_j$")
    ax_w.set_ylabel("attention weight $a_{ij}$")
    shared_legend(fig, ncols=2)
    return fig
