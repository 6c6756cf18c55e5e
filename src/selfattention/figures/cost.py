"""Figures of :mod:`selfattention.cost`: operations and bytes counted, times measured, against the tokens."""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import LogLocator, NullFormatter

from .._validation import InputTypeError, as_array, as_count, as_labels, as_series
from ._style import (
    COLORS,
    MORE_COLORS,
    TEXT_PT,
    WIDTH,
    book_figure,
    new_figure,
    new_panels,
    plain_log_ticks,
    shared_legend,
)

#: Line colours and markers of the methods of the timing figure, by name.
METHOD_STYLES = {
    "exact": (COLORS["clean"], "o"),
    "fourier-64": (COLORS["noisy"], "s"),
    "fourier-512": (MORE_COLORS["purple"], "D"),
    "spread-128": (COLORS["accent"], "^"),
    "window-257": (COLORS["output"], "v"),
}


def _log_ticks(ax, numticks: int = 5, ns=None) -> None:
    """At most ``numticks`` labelled powers of ten on each log axis of ``ax``; minor ticks unlabelled.

    When the sizes ``ns`` drawn on the x axis span fewer than two powers of
    ten (the measured sizes, 256 to 8,192: only 1,000 would be labelled),
    every other one of them is labelled instead, written out.
    """
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10, numticks=numticks))
        axis.set_minor_formatter(NullFormatter())
    if ns is not None:
        ns = np.asarray(ns, dtype=float)  # (k,)
        decades = np.arange(np.ceil(np.log10(ns.min())), np.log10(ns.max()) + 1e-9)
        if decades.size < 2:
            ticks = ns[::2]
            ax.set_xticks(ticks, [f"{t:,.0f}" for t in ticks])
            ax.xaxis.set_minor_formatter(NullFormatter())


def _label(text) -> str:
    if not isinstance(text, str):
        raise InputTypeError(f"machine must be a string, got {text!r}")
    return text


@book_figure
def plot_quadratic_wall(ns, multiply_adds, nbytes, guard_n, measured_ns,
                        seconds, machine):
    """The exact head's work and memory, counted, and its time, measured.

    Left: multiply-adds and bytes of the weights against ``N``, counted, on
    log-log axes, with the largest ``N`` the memory guard lets through.
    Right: the times ``make bench`` measured; the figure's title names the
    machine and date.

    Parameters
    ----------
    ns, multiply_adds, nbytes : array_like, shape (k,)
        Counted, as from :func:`selfattention.cost.exact_cost`.
    guard_n : int
        The largest ``N`` of :func:`selfattention.cost.largest_n`.
    measured_ns, seconds : array_like, shape (j,)
    machine : str
        Where and when the times were measured.

    Returns
    -------
    matplotlib.figure.Figure
    """
    n, ops, size = as_series(ns=ns, multiply_adds=multiply_adds, nbytes=nbytes)
    guard_n = as_count(guard_n, "guard_n")
    m, t = as_series(measured_ns=measured_ns, seconds=seconds)
    fig, (ax_c, ax_t) = new_panels(2, height=2.6)
    ax_c.loglog(n, ops, "-", color=COLORS["noisy"], label="multiply-adds")
    ax_c.loglog(n, size, "--", color=COLORS["output"], label="bytes of $A$")
    ax_c.axvline(guard_n, color=COLORS["muted"], ls=":", lw=1.5,
                 label="memory guard")
    ax_c.set_title("counted")
    ax_t.loglog(m, t, "o-", color=COLORS["clean"], label="time, exact head")
    ax_t.set_title("measured (s)")
    for ax, sizes in ((ax_c, n), (ax_t, m)):
        _log_ticks(ax, 4, sizes)
        ax.set_xlabel("tokens $N$")
    fig.suptitle(f"measured on {_label(machine)}")
    shared_legend(fig, ncols=2)
    return fig


@book_figure
def plot_decoding(ns, recomputed, cached, measured_ns, recomputed_seconds,
                  cached_seconds, machine):
    """A causal head run over ``N`` given tokens one at a time, without and with a cache: work counted, times measured.

    Parameters
    ----------
    ns, recomputed, cached : array_like, shape (k,)
        Multiply-adds, as from :func:`selfattention.cost.decoding_cost`.
    measured_ns, recomputed_seconds, cached_seconds : array_like, shape (j,)
    machine : str

    Returns
    -------
    matplotlib.figure.Figure
    """
    n, again, kept = as_series(ns=ns, recomputed=recomputed, cached=cached)
    m, t_again, t_kept = as_series(measured_ns=measured_ns,
                                   recomputed_seconds=recomputed_seconds,
                                   cached_seconds=cached_seconds)
    fig, (ax_c, ax_t) = new_panels(2, height=2.6)
    for ax, x, y_again, y_kept in ((ax_c, n, again, kept),
                                   (ax_t, m, t_again, t_kept)):
        ax.loglog(x, y_again, "o-", color=COLORS["output"], label="recomputed")
        ax.loglog(x, y_kept, "s-", color=COLORS["accent"], label="cached")
        ax.set_xlabel("given tokens $N$, taken one at a time")
        _log_ticks(ax, 4, x)
    ax_c.set_title("multiply-adds")
    ax_t.set_title("measured (s)")
    fig.suptitle(f"measured on {_label(machine)}")
    shared_legend(fig, [ax_c], ncols=2)
    return fig


@book_figure
def plot_times(timings, labels, crossovers, machine):
    """Measured times of several heads against ``N``, log-log, with where the cheaper ones overtake the exact one.

    Each line has a colour and marker of its own and its label at its end;
    every number is written out (no exponent set small), so that the figure
    reads on a phone.

    Parameters
    ----------
    timings : mapping of str to (array_like, array_like)
        Method name (a key of :data:`METHOD_STYLES`) to its ``(ns,
        seconds)``.
    labels : mapping of str to str
        Method name to its label, written at the end of its line.
    crossovers : mapping of str to float
        Each method but ``"exact"`` to the ``N`` where it becomes faster than
        ``"exact"``; drawn on the exact head's line as a filled mark of that
        method's marker and colour, ringed in white, over the lines.
    machine : str

    Returns
    -------
    matplotlib.figure.Figure
    """
    series = _timings(timings)
    if not isinstance(labels, dict) or set(labels) != set(series):
        raise InputTypeError("labels must map every method of timings to a label")
    names = list(series)
    entries = dict(zip(names, as_labels([labels[k] for k in names], "labels", len(names)), strict=True))
    fig = new_figure(WIDTH, 4.2)
    ax = fig.add_subplot()
    for name, (n, t) in series.items():
        color, marker = METHOD_STYLES[name]
        ax.loglog(n, t, marker + "-", color=color, label=entries[name])
    exact_n, exact_t = series["exact"]
    for name, where in _crossings(crossovers, series).items():
        at = np.exp(np.interp(np.log(where), np.log(exact_n), np.log(exact_t)))
        color, marker = METHOD_STYLES[name]
        ax.plot([where], [at], marker, color=color, mec="white", ms=11, mew=1.5, zorder=5)
    _log_ticks(ax, 6, np.unique(np.concatenate([n for n, _ in series.values()])))
    plain_log_ticks(ax)
    ax.set_xlabel("tokens $N$")
    ax.set_ylabel("seconds")
    ax.set_title(f"measured on {_label(machine)}")
    _label_line_ends(ax, {entries[name]: (n[-1], t[-1], METHOD_STYLES[name][0]) for name, (n, t) in series.items()})
    sizes = np.concatenate([n for n, _ in series.values()])  # every N measured
    decades = 10.0 ** np.arange(np.ceil(np.log10(sizes.min())), np.floor(np.log10(sizes.max()) + 1e-9) + 1)
    if decades.size >= 2:  # the powers of ten the lines span, not those of the labels' room
        ax.set_xticks(decades)
    return fig


def _label_line_ends(ax, ends) -> None:
    """Write each label by its line's end, in its colour, where no line runs.

    A line that others outrun by more than a decade is labelled left of its
    last point (the room right of it is theirs); the others' labels stand in
    a column right of the furthest end, from the highest end down, a comma
    breaking a label in two lines, moved apart so that none overlap, and the
    x axis is widened to hold them. ``ends`` maps a label to ``(x, y,
    colour)`` of its line's end.
    """
    fig = ax.figure
    fig.draw_without_rendering()
    box = ax.get_window_extent()  # (display pixels)
    low, high = np.log10(ax.get_ylim())
    line = 1.2 * TEXT_PT / 72 * fig.dpi / box.height * (high - low)  # one line of text, in decades of y
    last = max(x for x, _, _ in ends.values())
    column = sorted((label for label in ends if ends[label][0] * 10 > last), key=lambda label: -ends[label][1])
    texts, y = [], high - line
    for label in column:
        rows = label.count(", ") + 1
        y = min(y, np.log10(ends[label][1]) + (rows - 1) * line / 2)
        texts.append(ax.annotate(label.replace(", ", "\n"), (last, 10 ** (y - (rows - 1) * line / 2)),
                                 xytext=(6, 0), textcoords="offset points", color=ends[label][2],
                                 va="center", ha="left", linespacing=1.0, annotation_clip=False))
        y -= (rows + 0.3) * line
    for label, (x, y_end, color) in ends.items():
        if label not in column:
            ax.annotate(label, (x, y_end), xytext=(-7, 0), textcoords="offset points", color=color,
                        va="center", ha="right")
    fig.draw_without_rendering()
    wide = max((text.get_window_extent().width + 10 for text in texts), default=0.0)
    left = np.log10(ax.get_xlim()[0])
    span = np.log10(last) - left
    ax.set_xlim(10 ** left, 10 ** (np.log10(last) + span * wide / max(box.width - wide, 1.0)))


def _timings(timings) -> dict:
    if not isinstance(timings, dict) or "exact" not in timings \
            or not set(timings) <= set(METHOD_STYLES):
        raise InputTypeError(f"timings must map methods of {list(METHOD_STYLES)}, "
                             "exact among them, to (ns, seconds)")
    return {name: as_series(**{f"timings[{name!r}]": pair[0],
                               f"timings[{name!r}] seconds": pair[1]})
            for name, pair in timings.items()}


def _crossings(crossovers, series) -> dict:
    others = sorted(set(series) - {"exact"})
    if not isinstance(crossovers, dict) or set(crossovers) != set(others):
        raise InputTypeError(f"crossovers must map each of {others} to a size")
    found = {name: float(as_array(where, f"crossovers[{name!r}]"))
             for name, where in crossovers.items()}
    if any(where <= 0 for where in found.values()):
        raise ValueError("crossovers must be positive sizes")
    return found
