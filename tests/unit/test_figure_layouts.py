"""Every figure function of the package follows the figure style (``selfattention.figures._style``).

Each public figure function is called with its valid call of the input
audit (``tests/public_api*.py``, which lists every public function), and
its figure rendered as the book renders it. Then:

* its smallest text, as drawn, is at least :func:`smallest_legible_pt` of its
  width (9 CSS px on a 390-px phone, 11 on a 1440-px desktop);
* at most :data:`MAX_COLUMNS` panels stand side by side (colour bars, and the
  blank panel a shared legend fills, are not panels);
* it was drawn in the style (:func:`book_figure`): a figure function that
  forgot it draws with matplotlib's defaults.

``tests/browser/test_figures.py`` measures the same in the built book, with
the chapters' own data, as shown at both widths.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import SimpleNamespace

import pytest
from matplotlib.figure import Figure
from public_api import calls

import selfattention.figures
from selfattention.figures import _style
from selfattention.figures._style import MAX_COLUMNS, png_meta, render_png, smallest_legible_pt


def figure_functions() -> list[str]:
    """``module.name`` of every public function of the figure modules (the shared panels' drawing aside)."""
    names = []
    for info in pkgutil.iter_modules(selfattention.figures.__path__):
        if not info.name.startswith("_") and info.name != "panels":
            module = importlib.import_module(f"selfattention.figures.{info.name}")
            names += [f"{module.__name__}.{name}" for name, obj in inspect.getmembers(module, inspect.isfunction)
                      if obj.__module__ == module.__name__ and not name.startswith("_")]
    return sorted(names)


def figure_calls() -> dict:
    """The audit's valid call of each figure function, by ``module.name`` (no arguments for one that takes none)."""
    found = {}
    for call in calls():
        name = f"{getattr(call.func, '__module__', '')}.{getattr(call.func, '__qualname__', '')}"
        if name in figure_functions():
            found[name] = call
    for name in set(figure_functions()) - set(found):
        module, attr = name.rsplit(".", 1)
        func = getattr(importlib.import_module(module), attr)
        if not inspect.signature(func).parameters:
            found[name] = SimpleNamespace(func=func, kwargs={})
    return found


def side_by_side(fig: Figure) -> int:
    """The most panels whose boxes share a horizontal band (half the shorter one's height or more)."""
    fig.draw_without_rendering()
    boxes = [ax.get_position() for ax in fig.axes
             if ax.axison and ax.get_visible() and not hasattr(ax, "_colorbar")]
    most = 0
    for box in boxes:
        level = [other for other in boxes
                 if min(box.y1, other.y1) - max(box.y0, other.y0) >= 0.5 * min(box.height, other.height)]
        most = max(most, len(level))
    return most


def test_every_figure_function_has_a_valid_call():
    assert figure_functions(), "no figure function found"
    assert set(figure_calls()) == set(figure_functions())


@pytest.mark.parametrize("name", figure_functions())
def test_a_figure_is_legible_on_a_phone_and_a_desktop_with_at_most_two_panels_side_by_side(name):
    call = figure_calls()[name]
    fig = call.func(**call.kwargs)
    meta = png_meta(render_png(fig))
    width = float(meta["size"].split(" x ")[0])
    assert meta["smallest"] != "none", f"{name} draws no text"
    assert float(meta["smallest"]) >= smallest_legible_pt(width) - 1e-9, \
        f"{name}: {meta['text']!r} is {meta['smallest']} pt, under {smallest_legible_pt(width):.2f} pt at {width} in"
    assert side_by_side(fig) <= MAX_COLUMNS, f"{name}: {side_by_side(fig)} panels side by side"
    if name.removeprefix("selfattention.figures.") in _style.EVERY_GLYPH_LEGIBLE:
        assert float(meta["glyph"]) >= smallest_legible_pt(width) - 1e-9, \
            f"{name}: a glyph of {meta['glyph_text']!r} is {meta['glyph']} pt, under {smallest_legible_pt(width):.2f}"


def test_the_glyph_measure_sees_an_exponent_set_small():
    """A log axis's default labels, 10^k, set the exponent at 0.7 of the label; plain_log_ticks writes none."""
    @_style.book_figure
    def draw():
        fig = _style.new_figure()
        fig.add_subplot().loglog([1e-3, 1.0], [1e-3, 1.0])
        return fig

    fig = draw()
    ax = fig.axes[0]
    meta = png_meta(render_png(fig))
    assert float(meta["glyph"]) == pytest.approx(0.7 * _style.TEXT_PT) and float(meta["smallest"]) == _style.TEXT_PT
    _style.plain_log_ticks(ax)
    meta = png_meta(render_png(fig))
    assert float(meta["glyph"]) == _style.TEXT_PT, meta


def test_the_checks_fail_on_small_text_three_panels_in_a_row_and_a_figure_out_of_the_style():
    fig = _style.new_figure(_style.WIDTH, 2.0)
    for ax in fig.subplots(1, 3):
        ax.set_xlabel("x")
    assert side_by_side(fig) == 3
    meta = png_meta(render_png(fig))  # drawn outside book_figure: matplotlib's 10-pt labels
    assert float(meta["smallest"]) < smallest_legible_pt(_style.WIDTH)
    fig, axes = _style.new_panels(3)
    axes[0].plot([0, 1], [0, 1], label="a line")
    _style.shared_legend(fig, axes[:1], where=fig.add_subplot(2, 2, 4))
    assert side_by_side(fig) == 2  # the legend's blank panel is not a panel
