"""The figure of the leave-one-out choice of the temperature, against the true best."""

from __future__ import annotations

import numpy as np

from .._validation import InputTypeError, as_positive_scalar, as_series, as_temperatures
from ._style import COLORS, WIDTH, book_figure, new_figure, shared_legend


@book_figure
def plot_leave_one_out(temperatures, loo, expected, chosen_tau, best_tau, true_best, chosen, spread=None):
    """Leave-one-out choice of the temperature, and how close it lands.

    Parameters
    ----------
    temperatures : ndarray, shape (m,)
    loo : ndarray, shape (m,)
        Leave-one-out error of one noisy signal.
    expected : ndarray, shape (m,)
        What it estimates: ``sigma**2 +`` the true mean squared error.
    chosen_tau, best_tau : float
        The leave-one-out choice and the true best temperature.
    true_best, chosen : ndarray, shape (c,)
        True best and chosen temperatures of several signals (right panel).
    spread : tuple of ndarray, optional
        ``(true_best, chosen)`` of more noise draws, drawn faintly.

    Returns
    -------
    matplotlib.figure.Figure
    """
    temperatures = as_temperatures(temperatures, "temperatures")
    _, loo, expected = as_series(temperatures=temperatures, loo=loo, expected=expected)
    chosen_tau, best_tau = as_positive_scalar(chosen_tau, "chosen_tau"), as_positive_scalar(best_tau, "best_tau")
    true_best, chosen = as_series(true_best=as_temperatures(true_best, "true_best"),
                                  chosen=as_temperatures(chosen, "chosen"))
    if spread is not None:
        if not isinstance(spread, tuple) or len(spread) != 2:
            raise InputTypeError(f"spread must be a pair (true_best, chosen) of arrays or None, got {spread!r}")
        spread = as_series(**{"spread[0]": as_temperatures(spread[0], "spread[0]"),
                              "spread[1]": as_temperatures(spread[1], "spread[1]")})
    fig = new_figure(WIDTH, 3.8)
    ax_c, ax_r = fig.subplots(1, 2)
    ax_c.loglog(temperatures, loo, "-", color=COLORS["noisy"], lw=2, label="leave-one-out error (one signal)")
    ax_c.loglog(temperatures, expected, "--", color=COLORS["clean"], lw=1.4, label="$\\sigma^2$ + true MSE")
    ax_c.axvline(chosen_tau, color=COLORS["noisy"], lw=1)
    ax_c.axvline(best_tau, color=COLORS["clean"], lw=1, ls="--")
    ax_c.set_xlabel("temperature $\\tau$")
    ax_c.set_ylabel("error")
    if spread is not None:
        ax_r.loglog(*spread, ".", color=COLORS["muted"], ms=3, alpha=0.5, label="other noise draws")
    ax_r.loglog(true_best, chosen, "o", color=COLORS["output"], ms=5, label="the book's signals")
    lims = np.array([min(np.min(true_best), np.min(chosen)) / 3, max(np.max(true_best), np.max(chosen)) * 3])
    ax_r.loglog(lims, lims, "-", color=COLORS["clean"], lw=1, label="chosen = best")
    ax_r.fill_between(lims, lims / 2, lims * 2, color=COLORS["muted"], alpha=0.2, lw=0, label="within a factor 2")
    ax_r.set_xlim(lims)
    ax_r.set_ylim(lims)
    ax_r.set_xlabel("true best $\\tau^*$")
    ax_r.set_ylabel("leave-one-out choice")
    shared_legend(fig, ncols=2)
    return fig
