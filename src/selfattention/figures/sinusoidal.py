"""Figures of :mod:`selfattention.studies.sinusoidal`: cosine kernels and where they alias."""

from __future__ import annotations

import numpy as np

from .._validation import as_array, as_nonnegative_scalar, as_positive_scalar, as_series, as_temperature
from ._style import COLORS, WIDTH, book_figure, new_figure, shared_legend

#: Line colours of the cosine kernels, in the order given.
_COLORS = (COLORS["noisy"], COLORS["output"], COLORS["accent"], COLORS["muted"])


@book_figure
def plot_aliasing(distances, frequencies, profiles, temperature, sweep_frequencies, sweep_rmse, gaussian_rmse, *,
                  span=1.0):
    r"""Cosine kernels against the Gaussian, and the error of the head as the frequency grows.

    Left: each frequency's score relative to the query's own,
    :math:`\xi (\cos \omega u - 1)`, against the distance ``u``, next to
    the Gaussian head's :math:`-u^2 / \tau` (dashed). Right: the error of
    the matched one-frequency head against ``omega`` times the span, in
    units of ``pi``, with the Gaussian head's error (dashed). One legend under both.

    Parameters
    ----------
    distances : array_like, shape (d,)
    frequencies : array_like, shape (m,)
        Up to four, ``> 0``.
    profiles : array_like, shape (m, d)
        As from :func:`selfattention.studies.sinusoidal.relative_scores`.
    temperature : float
    sweep_frequencies, sweep_rmse : array_like, shape (k,)
    gaussian_rmse : float
    span : float
        The span of the positions, ``> 0``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    u = as_array(distances, "distances", ndim=1)
    omegas, profiles = as_array(frequencies, "frequencies", ndim=1), as_array(profiles, "profiles", ndim=2)
    if not 0 < omegas.size <= len(_COLORS) or profiles.shape != (omegas.size, u.size):
        raise ValueError(f"frequencies (at most {len(_COLORS)}) and profiles must have shapes (m,) and "
                         f"(m, {u.size}), got {omegas.shape} and {profiles.shape}")
    tau, span = as_temperature(temperature, "temperature"), as_positive_scalar(span, "span")
    sweep, errors = as_series(sweep_frequencies=sweep_frequencies, sweep_rmse=sweep_rmse)
    gaussian_rmse = as_nonnegative_scalar(gaussian_rmse, "gaussian_rmse")
    fig = new_figure(WIDTH, 3.9)
    ax_k, ax_e = fig.subplots(1, 2)
    ax_k.plot(u, -(u**2) / tau, "--", color=COLORS["clean"], lw=1.2, label="Gaussian, $-u^2/\\tau$")
    for omega, profile, color in zip(omegas, profiles, _COLORS, strict=False):
        ax_k.plot(u, profile, "-", color=color, lw=1.8, label=f"$\\omega\\,$span $= {_multiple_of_pi(omega * span)}$")
    low = float(np.min(profiles))
    ax_k.set_ylim(1.15 * low, -0.08 * low)
    ax_k.set_xlabel("distance $u = |p_i - p_j|$")
    ax_k.set_ylabel("score less the query's own")
    ax_e.plot(sweep * span / np.pi, errors, "o-", color=COLORS["output"], ms=3, lw=1.4, label="one cosine")
    ax_e.axhline(gaussian_rmse, color=COLORS["clean"], ls="--", lw=1, label="Gaussian head")
    for multiple in (1, 2):
        ax_e.axvline(multiple, color=COLORS["muted"], ls=":", lw=1)
    ax_e.set_xlabel("$\\omega\\,$span$\\,/\\,\\pi$")
    ax_e.set_ylabel("RMSE against $f$")
    shared_legend(fig, ncols=2)
    return fig


def _multiple_of_pi(x: float) -> str:
    r"""``x`` as TeX in units of pi: ``\pi``, ``1.5\pi``, ``3\pi``."""
    k = x / np.pi
    return "\\pi" if np.isclose(k, 1) else f"{k:g}\\pi"
