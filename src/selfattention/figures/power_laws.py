"""The figure of the power laws of the best temperature, in ``N`` and in ``sigma``."""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import NullFormatter

from .._validation import InputTypeError, as_array, as_counts, as_entries
from ..studies.bias_variance import REGIONS
from ..studies.power_laws import PowerLaw
from ._style import COLORS, WIDTH, book_figure, new_figure, shared_legend

#: Colour of each region of :data:`selfattention.studies.bias_variance.REGIONS`.
REGION_COLORS = {"whole": COLORS["output"], "interior": COLORS["accent"]}


def _power_law_panel(ax, x, best, fits, labels, along, fixed_values):
    """One log-log panel of :func:`plot_power_laws`; ``along`` is "n" or "sigma"."""
    for region, table in best.items():
        series = table if along == "n" else table.T  # (len(x), len(fixed))
        for k, fixed in enumerate(fixed_values):
            n, s = (x, fixed) if along == "n" else (fixed, x)
            ax.loglog(x, fits[region](n, s), "-", color=REGION_COLORS[region], lw=0.8, alpha=0.7)
            ax.loglog(x, series[:, k], "o" if region == "whole" else "s", color=REGION_COLORS[region],
                      mfc="none" if region == "interior" else None, ms=4, label=labels[region] if k == 0 else None)
    ax.set_xticks(x, labels=[f"{v:g}" for v in x])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("number of samples $N$" if along == "n" else "noise $\\sigma$")
    ax.set_ylabel("best temperature $\\tau^*$")


@book_figure
def plot_power_laws(ns, sigmas, best, fits):
    """Best temperature against ``N`` (one line per sigma) and sigma (one per ``N``).

    Parameters
    ----------
    ns : sequence of int, length a
    sigmas : sequence of float, length b
    best : dict of region -> ndarray, shape (a, b)
        Measured best temperatures.
    fits : dict of region -> selfattention.studies.power_laws.PowerLaw
        Fitted laws, drawn as lines.

    Returns
    -------
    matplotlib.figure.Figure
    """
    ns, sigmas = as_counts(ns, "ns"), as_array(sigmas, "sigmas", ndim=1)
    best = as_entries(best, "best", REGIONS)
    if any(table.shape != (len(ns), sigmas.size) or (table <= 0).any() for table in best.values()):
        raise ValueError(f"best must hold positive tables of shape (len(ns), len(sigmas)) = {(len(ns), sigmas.size)}")
    laws = fits.values() if isinstance(fits, dict) else ()
    if set(fits if isinstance(fits, dict) else ()) != set(REGIONS) or any(not isinstance(f, PowerLaw) for f in laws):
        raise InputTypeError(f"fits must map each region {sorted(REGIONS)} to its PowerLaw")
    fig = new_figure(WIDTH, 3.4)
    ax_n, ax_s = fig.subplots(1, 2, sharey=True)
    labels = {
        region: f"{region}: $N^{{{fit.n_exponent:.2f}}}\\,\\sigma^{{{fit.sigma_exponent:.2f}}}$"
        for region, fit in fits.items()
    }
    _power_law_panel(ax_n, np.asarray(ns), best, fits, labels, "n", sigmas)
    _power_law_panel(ax_s, np.asarray(sigmas), best, fits, labels, "sigma", ns)
    ax_n.set_title("one line per $\\sigma$", fontsize="medium")
    ax_s.set_title("one line per $N$", fontsize="medium")
    ax_s.set_ylabel("")
    shared_legend(fig, ncols=2)
    return fig
