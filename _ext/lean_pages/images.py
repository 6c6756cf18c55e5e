"""Images that reserve their box and load when needed: ``width``/``height``, ``decoding``, ``loading``.

Docutils writes ``<img src alt>`` with no size unless the source gives one
(and then as CSS, which would stop the image from scaling down on a phone),
so the page reflows as each figure arrives. :func:`visit_image` wraps the
HTML translator's own ``visit_image`` (registered with ``app.add_node(...,
override=True)``) and adds the image file's intrinsic ``width`` and
``height`` attributes (Sphinx's :func:`~sphinx.util.images.get_image_size`;
the stylesheet keeps ``height: auto``, so the browser only takes the aspect
ratio from them), ``decoding="async"``, and ``loading="lazy"``. A PNG drawn
for screens of a higher device pixel ratio says so in a ``Pixel ratio`` text
chunk (the book's figures are rendered at 2: ``selfattention.figures._style``):
its attributes are then its CSS size, its pixels divided by that ratio
(:func:`css_size`), so that a desktop shows it at that size and a phone of
device pixel ratio 2 gets one image pixel per device pixel. Every image of a
chapter is lazy, its first too: a chapter opens with its idea in words (its
set-up code collapsed), and an eager first figure further down took the
bandwidth of what the first screen shows (on a slow network its largest paint
came later); a lazy image in view still loads as soon as the page is laid out.
The book's root page is the exception: its first figure is its first screen's
largest paint, so it is ``loading="eager"`` with ``fetchpriority="high"``
(:func:`first_screen`): a lazy one waits for layout before it is even
requested, which Lighthouse counted against that page's largest paint.
"""

from __future__ import annotations

import os
import re

from docutils import nodes
from PIL import Image
from sphinx.util.images import get_image_size

from . import dark_figures

IMG = re.compile(r"<img\b")
#: The PNG text chunk that gives the image's device pixels per CSS px.
RATIO_CHUNK = "Pixel ratio"


def css_size(path: str) -> tuple[int, int] | None:
    """The CSS size of the image file at ``path``: its pixels, divided by its ``Pixel ratio`` chunk if it has one."""
    size = get_image_size(path)
    if size is None or not path.lower().endswith(".png"):
        return size
    with Image.open(path) as image:
        ratio = getattr(image, "text", {}).get(RATIO_CHUNK)
    if ratio is None:
        return size
    if not ratio.isdigit() or int(ratio) < 1:
        raise ValueError(f"{path}: its {RATIO_CHUNK!r} text chunk must be a whole number >= 1, got {ratio!r}")
    return size[0] // int(ratio), size[1] // int(ratio)


def image_attributes(tag: str, size: tuple[int, int] | None, eager: bool = False) -> str:
    """``tag`` (an ``<img ...>``) with size, decoding and loading attributes it lacks.

    Loading is lazy, or with ``eager`` (the first screen's figure) eager and fetched first.
    """
    extra = ""
    if size and " width=" not in tag and " height=" not in tag:
        extra += f' width="{size[0]}" height="{size[1]}"'
    if " decoding=" not in tag:
        extra += ' decoding="async"'
    if " loading=" not in tag:
        extra += ' loading="eager" fetchpriority="high"' if eager else ' loading="lazy"'
    return IMG.sub("<img" + extra, tag, count=1)


def first_screen(translator) -> bool:
    """Whether the image ``translator`` is about to write is the root page's first (once per page)."""
    if translator.builder.current_docname != translator.builder.config.root_doc:
        return False
    first = not getattr(translator, "_lean_pages_seen_image", False)
    translator._lean_pages_seen_image = True
    return first


def visit_image(self, node: nodes.image) -> None:
    """The translator's ``visit_image``, then :func:`image_attributes` on the ``<img>`` it wrote."""
    uri = node["uri"]  # the translator replaces it by the copy's URL in _images/
    source = os.path.join(self.builder.srcdir, uri)
    size = css_size(source) if "://" not in uri and os.path.isfile(source) else None
    eager = first_screen(self)
    figure = "://" not in uri and dark_figures.is_figure(source)
    start = len(self.body)
    type(self).visit_image(self, node)
    for index in range(start, len(self.body)):
        if IMG.search(self.body[index]):
            self.body[index] = image_attributes(self.body[index], size, eager)
            if figure:  # and its twin for the dark theme (.dark_figures)
                self.body[index] = dark_figures.twin_tag(self.body[index])
            break


def depart_image(self, node: nodes.image) -> None:
    type(self).depart_image(self, node)
