"""Sphinx extension: the in-page attention explorer, with no kernel.

Usage in a MyST page::

    ```{attention-explorer}
    ```

    ```{attention-explorer}
    :n: 200
    :sigma: 0.5
    :temperature: 0.002
    ```

    ```{attention-explorer}
    :layer: derivative
    :offset: 0.1
    ```

The options set the starting sliders (the book's defaults from
``selfattention.defaults`` when omitted); ``layer`` chooses a layer of several
heads instead of the one head (``derivative``: heads at offsets +delta and
-delta, and their difference over 2 delta). At build time the directive embeds,
as JSON, the data of :func:`selfattention.interactive.explorer_data.explorer_data`
(settings, slider ranges, the book's unit noise draws, the leave-one-out
candidate temperatures) or of ``layer_data``, and a PNG of
``selfattention.figures.smoothing.plot_smoothing`` (or
``selfattention.figures.multihead.plot_derivative_layer``) at the starting settings, written beside myst-nb's outputs
(``_build/attention_explorer/``) and put in the page as an image node, which
Sphinx copies into ``_images/`` like any figure. The image is in a
``<noscript>``: readers without JavaScript see it, and a browser that runs
``attention_explorer.js``, which builds the live explorer in its place,
never downloads it. The extension registers the script for the pages that
use the directive only, and its stylesheet for every page (it becomes part of
the one stylesheet all pages share and cache, ``lean_pages.stylesheets``);
Sphinx copies them into the site's ``_static``: nothing is loaded from
another host.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

STATIC = Path(__file__).parent / "static"
JS_FILE = "attention_explorer.js"
CSS_FILE = "attention_explorer.css"
FALLBACK_ALT = {
    None: "Static picture of the explorer at its starting settings. Left, a dashed sine, "
    "noisy dots around it and a solid line, the attention output, that follows the sine. "
    "Right, the attention matrix as a square heat map with a bright band along its diagonal.",
    "derivative": "Static picture of the explorer at its starting settings. Left, a dashed sine, noisy dots "
    "around it and two smooth curves, the sine shifted left and right. Middle, a square heat map of the two "
    "heads' weights, two bright bands on either side of the diagonal. Right, a dashed cosine, the true slope, "
    "and the layer's estimate, a solid curve that follows it away from the ends.",
}
#: The caption of the static picture, by layer.
FALLBACK_CAPTION = {None: "The engineered attention head", "derivative": "The derivative layer of two heads"}


class attention_explorer(nodes.General, nodes.Element):
    """The explorer: ``data_json`` becomes its HTML; its child image is the no-JavaScript fallback."""


class AttentionExplorer(SphinxDirective):
    """The ``attention-explorer`` directive; see the module docstring."""

    has_content = False
    option_spec: ClassVar[dict[str, Callable]] = {
        "n": directives.positive_int,
        "sigma": float,
        "temperature": float,
        "layer": directives.unchanged_required,
        "offset": float,
    }

    def run(self):
        from selfattention.interactive.explorer_data import explorer_json

        layer = self.options.get("layer")
        keys = ("n", "sigma", "temperature") + (("offset",) if layer is not None else ())
        if layer is None and "offset" in self.options:
            raise self.error("attention-explorer: offset needs a layer (layer: derivative)")
        kwargs = {key: self.options.get(key) for key in keys}
        try:
            data_json = explorer_json(**kwargs, **({"layer": layer} if layer is not None else {}))
        except ValueError as exc:
            raise self.error(f"attention-explorer: {exc}") from exc
        serial = self.env.new_serialno("attention-explorer")
        node = attention_explorer(ids=[f"attention-explorer-{serial}"], data_json=data_json, layer=layer)
        png = fallback_file(Path(self.env.app.outdir).parent / "attention_explorer", data_json)
        node += nodes.image(uri="/" + os.path.relpath(png, self.env.srcdir), alt=FALLBACK_ALT[layer])
        self.set_source_info(node)
        return [node]


@functools.lru_cache(maxsize=8)
def fallback_png(data_json: str) -> bytes:
    """PNG of the package's figure for the explorer's starting data."""
    import json

    from selfattention.figures.multihead import plot_derivative_layer
    from selfattention.figures.smoothing import plot_smoothing
    from selfattention.interactive.explorer_data import fallback_series, layer_series

    data = json.loads(data_json)
    if "layer" in data:
        return plot_derivative_layer(*layer_series(data))._repr_png_()
    return plot_smoothing(*fallback_series(data))._repr_png_()


def fallback_file(folder: Path, data_json: str) -> Path:
    """:func:`fallback_png` written in ``folder``, named by its content (written again only if missing)."""
    png = fallback_png(data_json)
    path = folder / f"attention-explorer-{hashlib.sha256(png).hexdigest()[:16]}.png"
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png)
    return path


def render_open(ident: str, data_json: str, layer: str | None = None) -> str:
    """The explorer element's opening HTML: its data, and the opening of its no-JS fallback.

    The fallback's image follows, then :func:`render_close`.
    ``attention_explorer.js`` turns every ``[data-attention-explorer]``
    element into a live explorer; a ``layer``'s element has the class
    ``ae-kind-<layer>``, for the box its stylesheet reserves.
    """
    kind = f" ae-kind-{layer}" if layer else ""
    return (
        f'<div class="attention-explorer{kind}" id="{ident}" data-attention-explorer>'
        f'<script type="application/json" class="attention-explorer-data">{data_json}</script>'
        '<noscript><figure class="attention-explorer-fallback">'
    )


def render_close(layer: str | None = None) -> str:
    """The end of the fallback (its caption, which names the ``layer``) and of the explorer element."""
    return (f"<figcaption>{FALLBACK_CAPTION[layer]} at the explorer's starting settings. "
            # Not on paper (print.css hides .screen-only): a printed page has no sliders.
            '<span class="screen-only">Turn on JavaScript to move its sliders.</span>'
            "</figcaption></figure></noscript></div>\n")


def visit_html(self, node):
    self.body.append(render_open(node["ids"][0], node["data_json"], node.get("layer")))


def depart_html(self, node):
    self.body.append(render_close(node.get("layer")))


def skip(self, node):
    """Builders other than HTML have no explorer (the chapter's figure stands)."""
    raise nodes.SkipNode


def add_static_path(app):
    app.config.html_static_path.append(str(STATIC))
    app.add_css_file(CSS_FILE)


def add_assets(app, pagename, templatename, context, doctree):
    if doctree is not None and next(iter(doctree.findall(attention_explorer)), None) is not None:
        app.add_js_file(JS_FILE, defer="defer")


def setup(app):
    app.add_node(
        attention_explorer,
        html=(visit_html, depart_html),
        latex=(skip, None),
        text=(skip, None),
        man=(skip, None),
        texinfo=(skip, None),
    )
    app.add_directive("attention-explorer", AttentionExplorer)
    app.connect("builder-inited", add_static_path)
    app.connect("html-page-context", add_assets)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
