"""The book's figures for the dark theme: a dark twin of each, made when the build finishes, shown by the theme.

A figure is drawn black on white (``selfattention.figures``); in the theme's
dark mode (``html[data-theme="dark"]``, which follows the reader's
``prefers-color-scheme`` unless the reader chose) a white box would glare in
the dark page. Every PNG that says its ``Pixel ratio`` (the book's figures)
gets a twin, ``<name>-dark.png``, beside it in ``_images/`` (:func:`write_twins`),
and :func:`twin_tag` writes the twin's ``<img>`` after the figure's: the
stylesheet shows one of the two by the theme, and a hidden lazy image is
never fetched. Printing shows the light one.

The twin is the figure re-inked (:func:`dark_pixels`), pixel by pixel, with
no other host and no second drawing: a grey pixel (white, black and the
greys between: the background, text, axes, ticks, the edges of text) is
read as black ink over white and becomes the page's text colour over its
background (so a grey line stays a middle grey); a coloured pixel keeps its
hue, lifted a fifth of the way to white, so that the book's colours hold
4.5:1 on the dark background (Okabe & Ito's blue, #0072B2, is 3.7:1 on it
unlifted); between the two (chroma 10 to 40 of 255) it is a blend of both.
A heat map keeps its order (viridis has chroma 80 or more): its bright
cells stay bright, as the prose says.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
from PIL import Image, PngImagePlugin

#: The dark page's background and text colours (sphinx-book-theme's ``--pst-color-background`` and
#: pydata-sphinx-theme's ``--pst-color-text-base`` in dark mode).
BACKGROUND = np.array([0x12, 0x12, 0x12], dtype=float)
TEXT = np.array([0xCE, 0xD6, 0xDD], dtype=float)
#: How far a coloured ink is lifted towards white.
LIFT = 0.2
#: Chroma (max - min of an ink's channels, of 255) under which an ink counts as grey, and over which as colour.
GREY, COLOUR = 10.0, 40.0
SUFFIX = "-dark.png"
SRC = re.compile(r'src="([^"]+)\.png"')


def dark_pixels(rgb: np.ndarray) -> np.ndarray:
    """``rgb`` (..., 3) in [0, 255] re-inked for the dark background, as uint8 (see the module's docstring)."""
    rgb = np.asarray(rgb, dtype=float)
    chroma = np.ptp(rgb, axis=-1, keepdims=True)  # (..., 1)
    colour = np.clip((chroma - GREY) / (COLOUR - GREY), 0.0, 1.0)  # 0 for greys, 1 for colours
    cover = 1.0 - rgb.mean(axis=-1, keepdims=True) / 255.0  # (..., 1): a grey's share of black ink
    grey = cover * TEXT + (1.0 - cover) * BACKGROUND  # black on white -> text on the background
    lifted = rgb + LIFT * (255.0 - rgb)
    return np.rint(colour * lifted + (1.0 - colour) * grey).clip(0, 255).astype(np.uint8)


def dark_png(path: Path, twin: Path) -> None:
    """Write ``twin``, the figure at ``path`` re-inked, with the same text chunks (size, pixel ratio, text)."""
    with Image.open(path) as image:
        chunks = dict(getattr(image, "text", {}))
        if image.mode == "P" and image.palette is not None and image.palette.mode == "RGB":
            palette = np.array(image.getpalette("RGB"), dtype=float).reshape(-1, 3)  # (colours, 3)
            dark = image.copy()
            dark.putpalette(dark_pixels(palette).ravel().tolist())
        else:
            dark = Image.fromarray(dark_pixels(np.asarray(image.convert("RGB"))), "RGB")
    info = PngImagePlugin.PngInfo()
    for key, value in chunks.items():
        info.add_text(key, value)
    dark.save(twin, "PNG", pnginfo=info)


def is_figure(path: str) -> bool:
    """Whether the PNG at ``path`` is one of the book's figures (it says its ``Pixel ratio``)."""
    if not path.lower().endswith(".png") or not os.path.isfile(path):
        return False
    with Image.open(path) as image:
        return "Pixel ratio" in getattr(image, "text", {})


def twin_tag(tag: str) -> str:
    """``tag``, a figure's ``<img>``, marked light, followed by its dark twin's ``<img>``: lazy, with the same
    alt text, since the one the scheme hides (``display: none``) is hidden from assistive technology too, so a
    reader in either scheme meets the figure's alt text once. Both are ``dark-light``, the theme's
    class for an image drawn for both modes: in dark mode it neither dims it (``filter: brightness(.8)
    contrast(1.2)``) nor puts it on a white box. (The theme's ``only-dark``/``only-light`` would also hide
    the ``figcaption`` after the hidden one.)"""
    light = tag.replace("<img", '<img class="lean-light dark-light"', 1)
    dark = SRC.sub(lambda m: f'src="{m.group(1)}{SUFFIX[:-4]}.png"', tag, count=1)
    dark = re.sub(r' (loading|fetchpriority)="[^"]*"', "", dark)
    dark = dark.replace("<img", '<img class="lean-dark dark-light" loading="lazy"', 1)
    return light + dark


def write_twins(app, exception) -> None:
    """When an HTML build succeeds: a dark twin for every figure in ``_images/`` that has none or an older one."""
    if exception is not None or app.builder.format != "html":
        return
    for path in sorted(Path(app.outdir, "_images").glob("*.png")):
        twin = path.with_name(path.stem + SUFFIX)
        if path.name.endswith(SUFFIX) or not is_figure(str(path)):
            continue
        if not twin.exists() or twin.stat().st_mtime < path.stat().st_mtime:
            dark_png(path, twin)
