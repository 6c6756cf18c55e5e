r"""Figures of :mod:`selfattention.studies.low_rank`: the singular values of the head's weights."""

from __future__ import annotations

import numpy as np

from .._validation import as_array, as_positive_scalar, as_series
from ._style import COLORS, book_figure, new_panels
from .cost import _log_ticks

#: Drawn in place of a singular value of 0 on a log axis.
FLOOR = 1e-17


@book_figure
def plot_singular_values(temperatures, values, ranks, tolerance):
    r"""Left: the singular values at each temperature, over the largest. Right: the numerical rank against :math:`\tau`.

    Parameters
    ----------
    temperatures : array_like, shape (k,)
    values : array_like, shape (k, n)
        Singular values, one row per temperature, largest first.
    ranks : array_like, shape (k,)
    tolerance : float
        Drawn as a dashed line on the left.

    Returns
    -------
    matplotlib.figure.Figure
    """
    taus, r = as_series(temperatures=temperatures, ranks=ranks)
    sigma = as_array(values, "values", ndim=2)
    if sigma.shape[0] != taus.size or (sigma < 0).any() or (sigma[:, 0] <= 0).any():
        raise ValueError("values must hold a row of non-negative singular values, the first positive, "
                         f"for each of the {taus.size} temperatures")
    tol = as_positive_scalar(tolerance, "tolerance")
    fig, (left, right) = new_panels(2, height=2.8)
    shades = np.linspace(0.25, 1.0, taus.size)
    for shade, row in zip(shades, sigma, strict=True):  # darker: warmer
        left.semilogy(np.arange(1, row.size + 1), np.maximum(row / row[0], FLOOR),
                      color=COLORS["noisy"], alpha=float(shade))
    left.axhline(tol, ls="--", color=COLORS["muted"])
    left.set_ylim(FLOOR * 1e2, 2)
    left.set_xlabel("index, largest first")
    left.set_ylabel("over the largest")
    right.loglog(taus, r, "o-", color=COLORS["output"])
    guide = r[0] * np.sqrt(taus[0] / taus)  # (k,): 1 / sqrt(tau) through the first point
    right.loglog(taus, guide, ":", color=COLORS["muted"])
    _log_ticks(right, 4)
    marks = [m for m in (5, 10, 20, 40, 80, 160) if r.min() / 1.5 <= m <= r.max() * 1.5]
    right.set_yticks(marks, [str(m) for m in marks])
    right.set_xlabel(r"$\tau$")
    right.set_ylabel("numerical rank")
    return fig
