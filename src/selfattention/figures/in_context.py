"""Figures of :mod:`selfattention.studies.in_context`: heads that learn from the examples of a prompt."""

from __future__ import annotations

from collections.abc import Mapping

from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

from .._validation import InputTypeError, as_array, as_counts, as_real_scalar, as_sequence
from ._style import COLORS, book_figure, new_panels, shared_legend, ticks

#: Line styles of the learners, by name: colour, line style.
_LEARNERS = {
    "least squares": (COLORS["clean"], "--"),
    "one step": (COLORS["noisy"], "-"),
    "trained layer": (COLORS["accent"], "-."),
    "softmax head": (COLORS["output"], "-"),
}


def _as_mapping(x, name: str, keys) -> Mapping:
    """``x``, a mapping holding ``keys``."""
    if not isinstance(x, Mapping):
        raise InputTypeError(f"{name} must hold mappings, got {type(x).__name__}")
    missing = [key for key in keys if key not in x]
    if missing:
        raise ValueError(f"{name} lacks {', '.join(map(repr, missing))}")
    return x


@book_figure
def plot_prompts(panels):
    """Prompts of one input and each learner's prediction as a function of the query's input.

    Parameters
    ----------
    panels : sequence of dict
        One or two panels, each with ``"inputs"`` and ``"labels"`` (N,), the
        examples; ``"grid"`` (m,), the query inputs; ``"title"`` (str); and
        predictions (m,) by learner name, among those of ``_LEARNERS``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    panels = [_as_mapping(panel, "panels", ("inputs", "labels", "grid", "title"))
              for panel in as_sequence(panels, "panels")]
    if not 1 <= len(panels) <= 2:
        raise ValueError(f"panels must hold one or two panels, got {len(panels)}")
    fig, axes = new_panels(len(panels), height=3.0)
    for ax, panel in zip(axes, panels, strict=True):
        grid = as_array(panel["grid"], "panels", ndim=1)
        ax.plot(as_array(panel["inputs"], "panels", ndim=1), as_array(panel["labels"], "panels", ndim=1),
                "o", color=COLORS["muted"], ms=4, label="examples")
        for name, (color, style) in _LEARNERS.items():
            if name in panel:
                ax.plot(grid, as_array(panel[name], "panels", ndim=1), style, color=color, lw=1.8, label=name)
        ax.set_title(str(panel["title"]))
        ax.set_xlabel("query input $p$")
        ticks(ax)
    axes[0].set_ylabel("prediction")
    shared_legend(fig, axes, ncols=2, where="below")
    return fig


@book_figure
def plot_learner_errors(counts, curves, *, dimension):
    """Held-out error against the number of examples, for the linear (left) and the sine tasks (right).

    Parameters
    ----------
    counts : sequence of int, length k
        The numbers of examples ``N``.
    curves : dict
        ``"linear"`` and ``"sine"``: dicts of learner name -> array (k,), mean squared errors.
    dimension : int
        The inputs' ``d`` of the linear tasks, for the title.

    Returns
    -------
    matplotlib.figure.Figure
    """
    ns = as_counts(counts, "counts")
    both = {kind: _as_mapping(_as_mapping(curves, "curves", ("linear", "sine"))[kind], "curves", ())
            for kind in ("linear", "sine")}
    d = as_real_scalar(dimension, "dimension")
    fig, axes = new_panels(2, height=3.4)
    for ax, (kind, errors) in zip(axes, both.items(), strict=True):
        for name, (color, style) in _LEARNERS.items():
            if name in errors:
                ax.plot(ns, as_array(errors[name], "curves", ndim=1), style, color=color, lw=1.8, marker="o",
                        ms=3, label=name)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(FixedLocator([n for n in (2, 5, 10, 20, 50, 100, 200) if ns[0] <= n <= ns[-1]]))
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("examples $N$")
        ax.set_title(f"linear, $d = {d:.0f}$" if kind == "linear" else "sines")
    axes[0].set_ylabel("error")
    shared_legend(fig, axes, ncols=2, where="below")
    return fig


@book_figure
def plot_layer_errors(layers, stack_errors, step_errors, least_squares):
    """Error of ``T`` linear layers and of ``T`` steps of gradient descent, against ``T``.

    Parameters
    ----------
    layers : sequence of int, length k
    stack_errors, step_errors : array_like, shape (k,)
        Mean squared errors of the stacks and of the explicit steps.
    least_squares : float
        Least squares' error, the limit of the steps.

    Returns
    -------
    matplotlib.figure.Figure
    """
    T = as_counts(layers, "layers")
    stack, steps = as_array(stack_errors, "stack_errors", ndim=1), as_array(step_errors, "step_errors", ndim=1)
    fig, (ax,) = new_panels(1, height=3.0)
    ax.plot(T, steps, "o", color=COLORS["noisy"], ms=7, label="$T$ steps")
    ax.plot(T, stack, "x", color=COLORS["output"], ms=7, mew=2, label="$T$ layers")
    ax.axhline(as_real_scalar(least_squares, "least_squares"), color=COLORS["clean"], ls="--", lw=1.2,
               label="least squares")
    ax.set_yscale("log")
    ax.set_xlabel("layers or steps $T$")
    ax.set_ylabel("error")
    ticks(ax)
    ax.legend(loc="upper right")
    return fig
