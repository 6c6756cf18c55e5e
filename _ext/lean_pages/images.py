"""Images that reserve their box and load when needed: ``width``/``height``, ``decoding``, ``loading``.

Docutils writes ``<img src alt>`` with no size unless the source gives one
(and then as CSS, which would stop the image from scaling down on a phone),
so the page reflows as each figure arrives. :func:`visit_image` wraps the
HTML translator's own ``visit_image`` (registered with ``app.add_node(...,
override=True)``) and adds the image file's intrinsic ``width`` and
``height`` attributes (Sphinx's :func:`~sphinx.util.images.get_image_size`;
the stylesheet keeps ``height: auto``, so the browser only takes the aspect
ratio from them), ``decoding="async"``, and ``loading="lazy"`` on every image
of the page but the first, which may be in view when the page opens.
"""

from __future__ import annotations

import os
import re

from docutils import nodes
from sphinx.util.images import get_image_size

IMG = re.compile(r"<img\b")


def image_attributes(tag: str, size: tuple[int, int] | None, first: bool) -> str:
    """``tag`` (an ``<img ...>``) with size, decoding and loading attributes it lacks."""
    extra = ""
    if size and " width=" not in tag and " height=" not in tag:
        extra += f' width="{size[0]}" height="{size[1]}"'
    if " decoding=" not in tag:
        extra += ' decoding="async"'
    if not first and " loading=" not in tag:
        extra += ' loading="lazy"'
    return IMG.sub("<img" + extra, tag, count=1)


def visit_image(self, node: nodes.image) -> None:
    """The translator's ``visit_image``, then :func:`image_attributes` on the ``<img>`` it wrote."""
    uri = node["uri"]  # the translator replaces it by the copy's URL in _images/
    source = os.path.join(self.builder.srcdir, uri)
    size = get_image_size(source) if "://" not in uri and os.path.isfile(source) else None
    start = len(self.body)
    type(self).visit_image(self, node)
    first = not getattr(self, "lean_pages_images", 0)
    for index in range(start, len(self.body)):
        if IMG.search(self.body[index]):
            self.body[index] = image_attributes(self.body[index], size, first)
            self.lean_pages_images = getattr(self, "lean_pages_images", 0) + 1
            break


def depart_image(self, node: nodes.image) -> None:
    type(self).depart_image(self, node)
