r"""Figures of :mod:`selfattention.studies.approximate_heads`: the cheaper heads' errors."""

from __future__ import annotations

import numpy as np

from .._validation import InputTypeError, as_array, as_count, as_entries, as_labels, as_series
from ._style import COLORS, WIDTH, book_figure, new_figure, new_panels, shared_legend
from .cost import _log_ticks

#: Colour, marker and legend entry of each random-feature method.
METHODS = {
    "fourier": (COLORS["noisy"], "o", "cosines"),
    "performer": (COLORS["output"], "s", "Performer's"),
    "spread": (COLORS["accent"], "^", "spread bumps"),
    "window": (COLORS["clean"], "D", "window"),
}


@book_figure
def plot_feature_errors(counts, errors, slopes):
    """Each random-feature head's distance to the exact head against ``D``, the frequencies or centres it draws.

    The median and quartiles over repeated draws.

    Parameters
    ----------
    counts : array_like, shape (k,)
        The ``D`` tried.
    errors : mapping of str to array_like, shape (draws, k)
        Method (``"fourier"``, ``"performer"``, ``"spread"``) to its errors.
    slopes : mapping of str to float
        Method to its fitted log-log slope, shown in the legend.

    Returns
    -------
    matplotlib.figure.Figure
    """
    D = as_array(counts, "counts", ndim=1)
    table = _errors(errors, D.size)
    slopes = as_entries(slopes, "slopes", list(table))
    fig = new_figure(WIDTH, 4.0)
    ax = fig.add_subplot()
    for method, e in table.items():
        color, marker, label = METHODS[method]
        low, mid, high = np.percentile(e, [25, 50, 75], axis=0)
        ax.fill_between(D, low, high, color=color, alpha=0.2, lw=0)
        ax.loglog(D, mid, marker + "-", color=color,
                  label=f"{label}: slope {float(slopes[method]):.2f}")
    if "spread" in table:
        ax.loglog(D, _guide(D, table["spread"]), ":", color=COLORS["muted"],
                  label="$D^{-1/2}$")
    _log_ticks(ax)
    ax.set_xlabel("frequencies or centres drawn, $D$")
    ax.set_ylabel("distance to exact head")
    shared_legend(fig, ncols=2)
    return fig


def _guide(D: np.ndarray, errors: np.ndarray) -> np.ndarray:
    """A D**-1/2 line through a method's median at the middle D, a factor 2 below."""
    k = D.size // 2
    return np.median(errors, axis=0)[k] / 2 * np.sqrt(D[k] / D)


def _errors(errors, k: int) -> dict:
    if not isinstance(errors, dict) or not errors or \
            not set(errors) <= {"fourier", "performer", "spread"}:
        raise InputTypeError("errors must map some of fourier, performer, "
                             "spread to arrays of shape (draws, k)")
    table = as_entries(errors, "errors", list(errors))
    if any(e.ndim != 2 or e.shape[1] != k or (e < 0).any()
           for e in table.values()):
        raise ValueError(f"errors must hold non-negative arrays of shape "
                         f"(draws, {k})")
    return table


@book_figure
def plot_denominators(positions, estimated, exact, output, exact_output,
                      positive_output):
    """One draw of cosine features whose denominator crosses 0, and what it does to the output.

    Left: the estimated denominators against the exact ones, along the
    positions. Right: that head's output (cut at three times the exact
    output's largest size), the exact head's, and a positive-feature
    head's with as many draws.

    Parameters
    ----------
    positions, estimated, exact : array_like, shape (n,)
    output, exact_output, positive_output : array_like, shape (n,)

    Returns
    -------
    matplotlib.figure.Figure
    """
    p, est, ex, out, ex_out, pos_out = as_series(
        positions=positions, estimated=estimated, exact=exact, output=output,
        exact_output=exact_output, positive_output=positive_output)
    fig, (ax_d, ax_o) = new_panels(2, height=2.6)
    ax_d.plot(p, ex, "--", color=COLORS["clean"], label="exact")
    ax_d.plot(p, est, "-", color=COLORS["noisy"], label="cosines")
    ax_d.axhline(0, color=COLORS["muted"], lw=1)
    ax_d.set_title("denominators")
    limit = 3 * float(np.max(np.abs(ex_out)))
    ax_o.plot(p, np.clip(out, -limit, limit), "-", color=COLORS["noisy"])
    ax_o.plot(p, ex_out, "--", color=COLORS["clean"])
    ax_o.plot(p, pos_out, "-", color=COLORS["accent"], label="positive")
    ax_o.set_ylim(-limit, limit)
    ax_o.set_title("outputs")
    for ax in (ax_d, ax_o):
        ax.set_xlabel("position $p_i$")
        ax.set_xticks([0, 0.5, 1])
    shared_legend(fig, ncols=3)
    return fig


@book_figure
def plot_window_errors(reach, errors, bound):
    r"""The window head's distance to the exact head against its half-width in units of :math:`\sqrt\tau`.

    Parameters
    ----------
    reach : array_like, shape (k,)
        :math:`U / \sqrt\tau`.
    errors : array_like, shape (k,)
        Positive.
    bound : array_like, shape (k,)
        The weight left out, drawn dashed.

    Returns
    -------
    matplotlib.figure.Figure
    """
    r, e, b = as_series(reach=reach, errors=errors, bound=bound)
    fig = new_figure(WIDTH, 3.4)
    ax = fig.add_subplot()
    ax.semilogy(r, np.maximum(e, 1e-17), "o-", color=COLORS["output"],
                label="window head")
    ax.semilogy(r, np.maximum(b, 1e-17), "--", color=COLORS["muted"],
                label="$\\exp(-U^2/\\tau)$")
    ax.set_xlabel("half-width $U / \\sqrt{\\tau}$")
    ax.set_ylabel("distance to exact head")
    ax.set_ylim(1e-17, 2)
    ax.set_yticks([1e-16, 1e-12, 1e-8, 1e-4, 1])
    ax.legend(loc="upper right")
    return fig


@book_figure
def plot_cost_and_error(panels, titles):
    """Error against multiply-adds per token for the window and random features, one panel per temperature.

    Parameters
    ----------
    panels : sequence of mapping
        One or two results of
        :func:`selfattention.studies.approximate_heads.cost_and_error`.
    titles : sequence of str
        One per panel.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not isinstance(panels, list | tuple) or not 1 <= len(panels) <= 2:
        raise InputTypeError("panels must be one or two results of cost_and_error")
    titles = as_labels(titles, "titles", len(panels))
    fig, axes = new_panels(len(panels), height=2.8, sharey=True)
    for ax, result, title in zip(axes, panels, titles, strict=True):
        for method in ("window", "fourier", "spread"):
            color, marker, label = METHODS[method]
            ops, err = _panel_series(result, method)
            ax.loglog(ops, np.maximum(err, 1e-17), marker + "-", color=color,
                      label=label)
        _log_ticks(ax, 4)
        ax.set_xlabel("multiply-adds a token")
        ax.set_title(title)
    axes[0].set_ylabel("distance to exact head")
    shared_legend(fig, ncols=3)
    return fig


def _panel_series(result, method: str):
    """A panel's ``(operations, errors)`` of one method, checked."""
    entry = result.get(method) if isinstance(result, dict) else None
    if not isinstance(entry, dict):
        raise InputTypeError(f"panels must map {method!r} to a dict of "
                             "operations and errors")
    return as_series(operations=entry.get("operations"),
                     errors=entry.get("errors"))


@book_figure
def plot_exact_and_features(positions, clean, noisy, exact, approximate, count):
    """The exact head's output and the output of ``D`` random Fourier features, on the noisy sine.

    The cost explorer's static picture, for readers without JavaScript.

    Parameters
    ----------
    positions, clean, noisy, exact, approximate : array_like, shape (n,)
    count : int
        ``D``, for the legend.

    Returns
    -------
    matplotlib.figure.Figure
    """
    p, f, s, ex, ap = as_series(positions=positions, clean=clean, noisy=noisy,
                                exact=exact, approximate=approximate)
    D = as_count(count, "count")
    fig = new_figure(WIDTH, 3.4)
    ax = fig.add_subplot()
    ax.plot(p, s, ".", color=COLORS["noisy"], alpha=0.6, label="noisy")
    ax.plot(p, f, "--", color=COLORS["clean"], lw=1.2, label="sine")
    ax.plot(p, ex, "-", color=COLORS["output"], lw=2.2, label="exact head")
    ax.plot(p, ap, "-", color=COLORS["accent"],
            label=f"$D = {D}$ random frequencies")
    ax.set_xlabel("position $p_i$")
    shared_legend(fig, ncols=2)
    return fig
