r"""The figures' style: drawn for the book's column, legible on a phone, sharp on any screen.

A figure is read in the book's content column: 342 CSS px wide on a 390-px
phone, and up to 774 CSS px on a 1440-px desktop (measured in Chromium;
:data:`COLUMN_PX`). Its text must be at least 9 CSS px tall on the phone and
11 on the desktop (:data:`MIN_TEXT_PX`), and its PNG must hold two device
pixels per CSS pixel, so that it is sharp at a device pixel ratio of 2.

How a figure is drawn to that end (``tests/unit/test_figure_style.py`` and
``tests/browser/test_figures.py`` check it):

1. **A figure is a package function** decorated with :func:`book_figure`,
   which draws it in :data:`STYLE` (font sizes, line widths, compact
   legends) through :func:`matplotlib.rc_context`: rcParams are restored
   when the function returns. The function starts from :func:`new_figure`
   (or :func:`new_panels`) and returns the figure.
2. **Its width is** :data:`WIDTH` **inches**, 560 CSS px, at most (an inch
   is :data:`CSS_PX_PER_INCH` CSS px; a desktop shows it at that size, a
   phone scales it to 342 px, by 0.61). Narrower is fine; wider needs larger
   text (:func:`smallest_legible_pt`).
3. **Its text is at least** :data:`TEXT_PT` **points** (11 pt; 9.3 CSS px
   on the phone, 15.3 on a desktop): tick labels, axis labels, legends,
   annotations, colour-bar labels, numbers written in cells. Titles are
   :data:`TITLE_PT`. Under :func:`book_figure` every default is already that
   size: never pass ``fontsize="small"`` or a number below :data:`TEXT_PT`.
   Subscripts and exponents of math text are set smaller (0.7 of the
   label) by TeX's rules; :func:`render_png` records the smallest glyph too
   (:data:`META` ``"glyph"``), and the figures of :data:`EVERY_GLYPH_LEGIBLE`
   hold every glyph to the least size: a log axis labelled by
   :func:`plain_log_ticks` writes 0.001, not :math:`10^{-3}`.
4. **At most two panels side by side** (:data:`MAX_COLUMNS`): three or four
   panels go in rows of two (:func:`new_panels`), a wide panel gets a row
   of its own. A panel of a two-panel row is about 250 CSS px wide on a
   desktop and 150 on a phone: keep to four or five ticks an axis, short
   labels (units in the caption, not the axis), and legends inside the axes
   only where they hide no data; else one legend outside the panels
   (:func:`shared_legend`: under or above the figure, or in the spare
   place of an odd panel out). :func:`ticks` thins a linear axis's ticks.
5. **The PNG is rendered at** :data:`PIXEL_RATIO` **times its CSS size**
   (:data:`DPI` dots per inch) by :func:`render_png`, as a palette PNG
   (:func:`palette_png`) carrying in its text chunks its size in inches, its
   pixel ratio and its smallest text in points (:data:`META`); the site
   sets the ``<img>``'s ``width`` and ``height`` to the CSS size
   (``_ext/lean_pages/images.py``), and the browser test measures every
   figure's smallest text, as shown, from these numbers. The bytes are the
   same on every build: no date, no software version.

Colours: :data:`COLORS` (colour-blind safe, after Okabe & Ito) and
:data:`WEIGHTS_CMAP` for attention matrices.
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Callable, Mapping
from types import MappingProxyType

import matplotlib
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.mathtext import MathTextParser
from matplotlib.ticker import FuncFormatter, MaxNLocator
from PIL import Image, PngImagePlugin

from .._validation import InputTypeError, as_counts, as_flag, as_positive_scalar

#: Colours used across chapters (colour-blind safe, after Okabe & Ito).
COLORS = MappingProxyType({
    "clean": "#000000",
    "noisy": "#0072B2",
    "output": "#D55E00",
    "accent": "#009E73",
    "muted": "#999999",
})
#: More colours, for a figure of more lines than :data:`COLORS` tells apart (Okabe & Ito's too).
MORE_COLORS = MappingProxyType({"purple": "#CC79A7", "sky": "#56B4E9", "orange": "#E69F00"})
#: The figure functions whose every glyph, exponents and subscripts too, is at least the least legible size
#: (issue 40; ``tests/unit/test_figure_layouts.py``). The others set exponents and subscripts at 0.7 of it.
EVERY_GLYPH_LEGIBLE = ("cost.plot_times", "induction.plot_circuit_training")
#: Colour map of attention matrices.
WEIGHTS_CMAP = "viridis"

#: CSS px of one inch of a figure shown at its own size (a desktop's column is wider than a figure).
CSS_PX_PER_INCH = 100
#: Device pixels per CSS px of the PNGs: sharp on a screen of device pixel ratio 2.
PIXEL_RATIO = 2
#: Resolution of the PNGs.
DPI = CSS_PX_PER_INCH * PIXEL_RATIO
#: Width in CSS px of the column a figure is shown in, at a 390-px phone and a 1440-px desktop
#: (the figure's box in the theme's article, measured in Chromium).
COLUMN_PX = MappingProxyType({"phone": 342, "desktop": 774})
#: The least height in CSS px of a figure's text on each screen.
MIN_TEXT_PX = MappingProxyType({"phone": 9.0, "desktop": 11.0})
#: The width of a figure, in inches (560 CSS px), at most with :data:`TEXT_PT` text.
WIDTH = 5.6
#: The height of a row of panels, in inches, in :func:`new_panels`.
ROW_HEIGHT = 2.5
#: The tallest figure, in inches (on a phone, 0.61 of it: most of an 844-px screen).
MAX_HEIGHT = 10.0
#: The widest figure :func:`new_figure` draws, in inches: the desktop's column (wider is never shown at its
#: size). Wider than :data:`WIDTH` needs text larger than :data:`TEXT_PT` (:func:`smallest_legible_pt`).
MAX_WIDTH = COLUMN_PX["desktop"] / CSS_PX_PER_INCH
#: Panels side by side, at most.
MAX_COLUMNS = 2
#: Size of a figure's text, in points: ticks, axis labels, legends, annotations, entries.
TEXT_PT = 11.0
#: Size of titles, in points.
TITLE_PT = 12.0
#: Colours of the palette PNGs (PNG's largest palette).
PALETTE = 256

#: The rcParams a figure is drawn in (:func:`book_figure`) and rendered in (:func:`render_png`).
STYLE = MappingProxyType({
    "font.size": TEXT_PT,
    "axes.titlesize": TITLE_PT,
    "axes.labelsize": TEXT_PT,
    "xtick.labelsize": TEXT_PT,
    "ytick.labelsize": TEXT_PT,
    "legend.fontsize": TEXT_PT,
    "legend.title_fontsize": TEXT_PT,
    "figure.titlesize": TITLE_PT,
    "axes.titlepad": 4.0,
    "axes.labelpad": 2.0,
    "xtick.major.pad": 2.0,
    "ytick.major.pad": 2.0,
    "axes.linewidth": 0.8,
    "lines.linewidth": 1.8,
    "lines.markersize": 4.5,
    "legend.framealpha": 0.9,
    "legend.borderpad": 0.3,
    "legend.labelspacing": 0.25,
    "legend.handlelength": 1.5,
    "legend.handletextpad": 0.4,
    "legend.borderaxespad": 0.3,
    "legend.columnspacing": 0.9,
    "figure.constrained_layout.h_pad": 0.03,
    "figure.constrained_layout.w_pad": 0.03,
    "figure.constrained_layout.hspace": 0.04,
    "figure.constrained_layout.wspace": 0.04,
})

#: Keys of the PNG text chunks :func:`render_png` writes.
META = MappingProxyType({
    "size": "Figure size (in)",
    "ratio": "Pixel ratio",
    "smallest": "Smallest text (pt)",
    "text": "Smallest text",
    "glyph": "Smallest glyph (pt)",
    "glyph_text": "Smallest glyph's text",
})


def book_figure(draw: Callable[..., Figure]) -> Callable[..., Figure]:
    """Decorate a figure function: it draws in :data:`STYLE`, and rcParams are restored when it returns."""
    @functools.wraps(draw)
    def drawn_in_style(*args, **kwargs):
        with matplotlib.rc_context(STYLE):
            return draw(*args, **kwargs)
    return drawn_in_style


class BookFigure(Figure):
    """A matplotlib figure that displays itself in Jupyter without pyplot, as :func:`render_png` renders it."""

    def _repr_png_(self) -> bytes:
        return render_png(self)


def new_figure(width: float = WIDTH, height: float = 3.2) -> BookFigure:
    """A pyplot-free figure of ``width`` x ``height`` inches, rounded to whole CSS px.

    It gets its own Agg canvas, so rendering it never imports pyplot.

    Parameters
    ----------
    width, height : float
        In inches: ``width`` in [0.01, :data:`MAX_WIDTH`], ``height`` in [0.01, :data:`MAX_HEIGHT`]
        (a figure is legible at most :data:`WIDTH` wide with :data:`TEXT_PT` text).
    """
    width, height = _css_inches(width, "width", MAX_WIDTH), _css_inches(height, "height", MAX_HEIGHT)
    fig = BookFigure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def new_panels(count: int, *, height: float = ROW_HEIGHT, width: float = WIDTH, **subplots_kw):
    """A figure of ``count`` panels in rows of at most :data:`MAX_COLUMNS`, and its axes.

    Parameters
    ----------
    count : int
        Panels, ``>= 1``; one or two make one row, three or four two rows,
        and so on (an odd last panel sits alone at the left of its row).
    height : float
        The height of a row, in inches.
    width : float
        The figure's width, in inches.
    **subplots_kw
        Passed to :meth:`~matplotlib.figure.Figure.subplots` (``sharex``, ``sharey``, ...).

    Returns
    -------
    fig : BookFigure
    axes : list of matplotlib.axes.Axes, length ``count``
        In reading order, row by row.
    """
    (count,) = as_counts([count], "count", minimum=1)
    height = as_positive_scalar(height, "height")
    rows, columns = math.ceil(count / MAX_COLUMNS), min(count, MAX_COLUMNS)
    if rows * height > MAX_HEIGHT:
        raise ValueError(f"count and height: {count} panels in rows of {height!r} inches are taller than "
                         f"{MAX_HEIGHT} inches")
    fig = new_figure(width, rows * height)
    grid = fig.subplots(rows, columns, squeeze=False, **subplots_kw).ravel()  # (rows * columns,)
    for ax in grid[count:]:
        ax.remove()
    return fig, list(grid[:count])


def shared_legend(fig: Figure, axes=None, *, ncols: int = 3, where="below"):
    """One legend for the labelled artists of ``axes`` (all the figure's when None), outside the panels.

    For a legend that would hide data inside a panel, or one shared by
    several panels. Each label appears once, in the order first drawn.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    axes : sequence of matplotlib.axes.Axes, optional
    ncols : int
        Entries per row, ``>= 1``.
    where : {"below", "above"} or matplotlib.axes.Axes
        Under the figure, above it (next to a top panel it explains), or in
        a spare panel of the figure (the empty place of an odd panel out,
        whose axes are turned off).

    Returns
    -------
    matplotlib.legend.Legend
    """
    if not isinstance(fig, Figure):
        raise InputTypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    axes = fig.axes if axes is None else [as_axes(ax, "axes") for ax in axes]
    (ncols,) = as_counts([ncols], "ncols", minimum=1)
    entries: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    handles, labels = list(entries.values()), list(entries)
    if isinstance(where, Axes):
        where.axis("off")
        return where.legend(handles, labels, loc="center", ncols=ncols, frameon=False)
    if where not in ("below", "above"):
        raise ValueError(f"where must be 'below', 'above' or an Axes of the figure, got {where!r}")
    return fig.legend(handles, labels, loc=f"outside {'lower' if where == 'below' else 'upper'} center",
                      ncols=ncols, frameon=False, borderaxespad=0.1, columnspacing=1.2, handlelength=1.8)


def ticks(ax, *, x: bool = True, y: bool = False):
    """Fewer, rounder ticks on a small panel's linear axes: steps of 1, 2 or 5 times a power of ten, as many as fit."""
    ax = as_axes(ax)
    for axis, wanted in ((ax.xaxis, x), (ax.yaxis, y)):
        if as_flag(wanted, "x or y"):
            axis.set_major_locator(MaxNLocator(nbins="auto", steps=[1, 2, 5, 10]))


def plain_log_ticks(ax, *, x: bool = True, y: bool = True):
    """Label the powers of ten of ``ax``'s log axes as plain numbers (0.001, 1, 10,000): no exponent set small.

    An exponent (:math:`10^{-3}`) is set at 0.7 of its label's size by TeX's
    rules, under the style's least size; a plain number is all at the label's size.
    """
    ax = as_axes(ax)
    for axis, wanted in ((ax.xaxis, x), (ax.yaxis, y)):
        if as_flag(wanted, "x or y"):
            axis.set_major_formatter(FuncFormatter(_plain_number))


def _plain_number(value: float, _position=None) -> str:
    """``value`` written out: 1,000 and 0.001, never in powers of ten."""
    if value >= 1:
        return f"{value:,.0f}"
    return f"{value:.{max(0, -math.floor(math.log10(value) + 1e-9))}f}" if value > 0 else "0"


def smallest_legible_pt(width: float) -> float:
    r"""The least font size, in points, legible in a figure ``width`` inches wide on every screen.

    A figure is shown at its own size (100 CSS px an inch), or at the
    column's width if it is wider; text of a given size in points is then
    that size over 72, times the shown width in CSS px over ``width``, CSS px
    tall. The least size that meets :data:`MIN_TEXT_PX` on both screens of
    :data:`COLUMN_PX`.
    """
    width = as_positive_scalar(width, "width")
    return max(MIN_TEXT_PX[screen] * 72 * width / min(CSS_PX_PER_INCH * width, column)
               for screen, column in COLUMN_PX.items())


def render_png(fig: Figure) -> bytes:
    """``fig`` as a palette PNG at :data:`DPI`, with its size, pixel ratio and smallest text in text chunks.

    The figure is drawn in :data:`STYLE`, as ``savefig`` would draw it there, on a renderer that records every
    piece of text it draws and its size. The PNG is :data:`PIXEL_RATIO` times
    the figure's whole CSS px in each direction.
    """
    if not isinstance(fig, Figure):
        raise InputTypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    inches = fig.get_size_inches()  # (2,)
    css = [max(1, round(CSS_PX_PER_INCH * value)) for value in inches]
    renderer = _TextRecorder(css[0] * PIXEL_RATIO, css[1] * PIXEL_RATIO, DPI)
    dpi = fig.dpi
    try:
        with matplotlib.rc_context(STYLE):  # what is made as it is drawn (ticks beyond the first) takes the style too
            fig.set_dpi(DPI)
            fig.draw(renderer)
    finally:
        fig.set_dpi(dpi)
    size, text = min(renderer.texts, default=(math.inf, ""))
    glyph, glyph_text = min(renderer.glyphs, default=(math.inf, ""))
    meta = {META["size"]: f"{inches[0]:.2f} x {inches[1]:.2f}", META["ratio"]: str(PIXEL_RATIO),
            META["smallest"]: f"{size:.2f}" if renderer.texts else "none", META["text"]: text[:60],
            META["glyph"]: f"{glyph:.2f}" if renderer.glyphs else "none", META["glyph_text"]: glyph_text[:60]}
    image = Image.frombuffer("RGBA", (renderer.width, renderer.height), bytes(renderer.buffer_rgba()), "raw", "RGBA",
                             0, 1)
    return palette_png(_png(image.convert("RGB")), meta)


def png_meta(png: bytes) -> dict[str, str]:
    """The text chunks :func:`render_png` wrote in ``png`` (by the keys of :data:`META`), else empty."""
    with Image.open(io.BytesIO(png)) as image:
        chunks = dict(getattr(image, "text", {}))
    return {key: chunks[name] for key, name in META.items() if name in chunks}


def palette_png(png: bytes, meta: Mapping[str, str] | None = None) -> bytes:
    """An opaque PNG as a PNG of at most :data:`PALETTE` colours, if that is smaller; ``meta`` as text chunks.

    Median-cut quantisation without dithering: flat areas stay flat and a
    line's anti-aliased edge keeps its shades. On the book's figures (lines,
    dots, text, viridis heat maps) the result is 0.35 of the bytes, at a peak
    signal-to-noise ratio of 47 dB or more against the original. A PNG with
    transparent pixels, or already a palette, is returned unchanged.
    """
    with Image.open(io.BytesIO(png)) as image:
        image.load()
        if image.mode == "P" or (image.mode == "RGBA" and image.getextrema()[3][0] < 255):
            return png
        rgb = image.convert("RGB")
    quantized = rgb.quantize(PALETTE, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    small, full = _png(quantized, meta), _png(rgb, meta)
    return small if len(small) < len(full) else full


def as_axes(ax, name: str = "ax") -> Axes:
    """``ax`` if it is a matplotlib :class:`~matplotlib.axes.Axes`, else an error naming it."""
    if not isinstance(ax, Axes):
        raise InputTypeError(f"{name} must be a matplotlib Axes, got {type(ax).__name__}")
    return ax


#: Lays math text out into its glyphs, each with its size: the smallest is what a reader must read.
_MATH_GLYPHS = MathTextParser("path")


class _TextRecorder(RendererAgg):
    """An Agg renderer that records ``(size in points, text)`` of every non-blank text it draws."""

    def __init__(self, width: int, height: int, dpi: float):
        super().__init__(width, height, dpi)
        self.texts: list[tuple[float, str]] = []
        self.glyphs: list[tuple[float, str]] = []  # the same, sized by the smallest glyph of math text

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if s.strip():
            size = float(prop.get_size_in_points())
            self.texts.append((size, s))
            if ismath:  # an exponent or a subscript is set smaller than its label by TeX's rules
                glyphs = _MATH_GLYPHS.parse(s, 72, prop).glyphs  # (font, size in pt, code, x, y) each
                size = min((float(glyph[1]) for glyph in glyphs), default=size)
            self.glyphs.append((size, s))
        return super().draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)


def _png(image: Image.Image, meta: Mapping[str, str] | None = None) -> bytes:
    """``image`` as PNG bytes with ``meta`` as text chunks, and nothing else that could vary."""
    info = PngImagePlugin.PngInfo()
    for key, value in (meta or {}).items():
        info.add_text(key, value)
    buf = io.BytesIO()
    image.save(buf, "PNG", pnginfo=info, optimize=False)
    return buf.getvalue()


def _css_inches(value, name: str, largest: float) -> float:
    """``value`` inches rounded to whole CSS px (so the PNG is whole device pixels), or an error naming ``name``."""
    value = as_positive_scalar(value, name)
    if not 0.5 / CSS_PX_PER_INCH <= value <= largest:
        raise ValueError(f"{name} must lie in [{1 / CSS_PX_PER_INCH}, {largest}] inches, got {value!r}")
    return round(CSS_PX_PER_INCH * value) / CSS_PX_PER_INCH
