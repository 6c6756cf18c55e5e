"""The figure style's helpers: sizes in whole CSS px, panels in rows of two, the style restored, PNGs at 2x that say
their smallest text; and the site's ``<img>`` size read from them (``_ext/lean_pages/images.py``)."""

from __future__ import annotations

import io

import matplotlib
import numpy as np
import pytest
from PIL import Image

from _ext.lean_pages.images import css_size
from selfattention.figures import _style
from selfattention.figures._style import (
    COLUMN_PX,
    MIN_TEXT_PX,
    PIXEL_RATIO,
    STYLE,
    TEXT_PT,
    WIDTH,
    book_figure,
    new_figure,
    new_panels,
    png_meta,
    render_png,
    smallest_legible_pt,
)


def pixels(png: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(png)) as image:
        return image.size


def test_a_figure_is_whole_css_px_and_its_png_twice_as_many_pixels():
    fig = new_figure(3.456, 2.001)
    np.testing.assert_array_equal(fig.get_size_inches(), [3.46, 2.0])
    assert pixels(render_png(fig)) == (346 * PIXEL_RATIO, 200 * PIXEL_RATIO)
    fig.set_size_inches(1.234, 0.5)  # resized by hand: still whole CSS px
    assert pixels(render_png(fig)) == (123 * PIXEL_RATIO, 50 * PIXEL_RATIO)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"width": 0.001}, r"width must lie in \[0.01, 7.74\] inches, got 0.001"),
    ({"width": 7.8}, r"width must lie in \[0.01, 7.74\] inches, got 7.8"),
    ({"width": 1e308}, "width must lie in"),
    ({"height": 10.5}, r"height must lie in \[0.01, 10.0\] inches"),
])
def test_a_figure_too_small_or_too_large_is_refused_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message):
        new_figure(**kwargs)


@pytest.mark.parametrize(("count", "rows"), [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3)])
def test_panels_come_in_rows_of_at_most_two_in_reading_order(count, rows):
    fig, axes = new_panels(count, height=2.0)
    assert len(axes) == len(fig.axes) == count
    np.testing.assert_array_equal(fig.get_size_inches(), [WIDTH, 2.0 * rows])
    spans = [ax.get_subplotspec() for ax in axes]
    assert [(s.rowspan.start, s.colspan.start) for s in spans] == [(k // 2, k % 2) for k in range(count)]


def test_panels_refuse_a_count_below_one():
    with pytest.raises(ValueError, match="count"):
        new_panels(0)


def test_a_figure_function_draws_in_the_style_and_leaves_rcparams_as_they_were():
    before = dict(matplotlib.rcParams)
    seen = {}

    @book_figure
    def draw(fail=False):
        """A figure."""
        seen.update({key: matplotlib.rcParams[key] for key in STYLE})
        if fail:
            raise ValueError("drawing failed")
        fig = new_figure()
        fig.add_subplot().set_xlabel("x")
        return fig

    fig = draw()
    assert seen == dict(STYLE) and draw.__doc__ == "A figure." and draw.__name__ == "draw"
    assert fig.axes[0].xaxis.label.get_fontsize() == TEXT_PT
    assert fig.axes[0].xaxis.get_ticklabels()[0].get_fontsize() == TEXT_PT
    with pytest.raises(ValueError, match="drawing failed"):
        draw(fail=True)
    assert dict(matplotlib.rcParams) == before


def test_the_png_records_its_size_ratio_and_the_smallest_text_drawn():
    fig = new_figure(4.0, 2.0)
    ax = fig.add_subplot()
    ax.set_xlim(0, 1)
    ax.set_xticks([0.0, 0.5, 1.0], labels=["a", "b", "c"], fontsize=12)
    ax.set_yticks([])
    ax.text(0.5, 0.5, "small", fontsize=7.5)
    ax.text(0.5, 0.2, "hidden", fontsize=3, visible=False)  # not drawn: not counted
    ax.text(0.5, 0.8, " ", fontsize=2)  # blank: not counted
    meta = png_meta(render_png(fig))
    assert meta == {"size": "4.00 x 2.00", "ratio": "2", "smallest": "7.50", "text": "small",
                    "glyph": "7.50", "glyph_text": "small"}
    fig = new_figure(4.0, 2.0)
    fig.text(0.5, 0.5, "value $x_i$", fontsize=12)  # its subscript is set at 0.7 of 12 pt
    meta = png_meta(render_png(fig))
    assert (meta["smallest"], meta["glyph"], meta["glyph_text"]) == ("12.00", "8.40", "value $x_i$")


def test_a_figure_without_text_records_none_and_a_foreign_png_records_nothing():
    assert png_meta(render_png(new_figure(1.0, 1.0)))["smallest"] == "none"
    buf = io.BytesIO()
    Image.new("RGB", (4, 4), "white").save(buf, "PNG")
    assert png_meta(buf.getvalue()) == {}


def test_the_png_is_the_same_bytes_for_the_same_figure():
    def draw():
        fig = new_figure(3.0, 2.0)
        ax = fig.add_subplot()
        ax.plot([0, 1, 2], [1, 0, 1], label="a line")
        ax.legend()
        return fig

    assert render_png(draw()) == render_png(draw()) == draw()._repr_png_()


def test_the_png_has_the_pixels_savefig_would_give_in_the_style():
    @book_figure
    def draw():
        fig = new_figure(3.0, 2.0)
        fig.add_subplot().imshow(np.arange(12.0).reshape(3, 4))
        return fig

    buf = io.BytesIO()
    with matplotlib.rc_context(STYLE):
        (fig := draw()).savefig(buf, format="png", dpi=_style.DPI)
    with Image.open(buf) as saved, Image.open(io.BytesIO(render_png(draw()))) as ours:
        a, b = (np.asarray(im.convert("RGB"), dtype=float) for im in (saved, ours))  # (h, w, 3)
    assert a.shape == b.shape
    assert np.mean((a - b) ** 2) <= 255**2 * 1e-4  # 40 dB or more: the palette's rounding only
    assert fig.dpi == _style.DPI
    fig.set_dpi(72)
    render_png(fig)
    assert fig.dpi == 72  # rendering leaves the figure's own resolution as it was


def test_the_smallest_legible_size_meets_both_screens_at_its_bound():
    """Text of that size in a figure of that width is exactly the least on one screen and no less on the other."""
    for width in (2.0, 3.42, WIDTH, 7.74):
        size = smallest_legible_pt(width)
        shown = {screen: min(100 * width, column) for screen, column in COLUMN_PX.items()}
        px = {screen: size / 72 * shown[screen] / width for screen in COLUMN_PX}
        assert all(px[s] >= MIN_TEXT_PX[s] - 1e-9 for s in px)
        assert any(abs(px[s] - MIN_TEXT_PX[s]) < 1e-9 for s in px)
    assert smallest_legible_pt(WIDTH) <= TEXT_PT < smallest_legible_pt(WIDTH * 1.04)


def test_the_site_sizes_an_image_by_its_pixel_ratio(tmp_path):
    fig = new_figure(3.0, 1.5)
    (tmp_path / "fig.png").write_bytes(render_png(fig))
    Image.new("RGB", (30, 20), "white").save(tmp_path / "plain.png")
    assert css_size(str(tmp_path / "fig.png")) == (300, 150)
    assert css_size(str(tmp_path / "plain.png")) == (30, 20)


def test_a_shared_legend_lists_each_label_once_under_above_or_in_a_spare_panel():
    fig, axes = new_panels(3)
    for ax in axes:
        ax.plot([0, 1], [0, 1], label="truth")
    axes[1].plot([0, 1], [1, 0], label="output")
    below = _style.shared_legend(fig)
    assert [t.get_text() for t in below.get_texts()] == ["truth", "output"]
    assert below._outside_loc == "lower"
    assert _style.shared_legend(fig, axes[1:2], where="above")._outside_loc == "upper"
    spare = fig.add_subplot(2, 2, 4)
    inside = _style.shared_legend(fig, axes[:1], ncols=1, where=spare)
    assert inside.axes is spare and not spare.axison and [t.get_text() for t in inside.get_texts()] == ["truth"]
    with pytest.raises(ValueError, match="where must be 'below', 'above' or an Axes"):
        _style.shared_legend(fig, where="left")


def test_ticks_are_steps_of_one_two_or_five():
    fig = new_figure(1.6, 1.6)
    ax = fig.add_subplot()
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    _style.ticks(ax, y=True)
    fig.draw_without_rendering()
    for axis in (ax.xaxis, ax.yaxis):
        steps = np.diff(axis.get_majorticklocs())
        assert steps.size >= 1 and np.allclose(steps, steps[0])
        assert np.isclose(steps[0] / 10 ** np.floor(np.log10(steps[0])), [1, 2, 5]).any()
