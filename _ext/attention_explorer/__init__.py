"""Sphinx extension: the in-page attention explorer, with no kernel.

Usage in a MyST page::

    ```{attention-explorer}
    ```

    ```{attention-explorer}
    :n: 200
    :sigma: 0.5
    :temperature: 0.002
    ```

The options set the starting sliders (the book's defaults from
``selfattention.defaults`` when omitted). At build time the directive embeds,
as JSON, the data of :func:`selfattention.interactive.explorer_data.explorer_data` (settings,
slider ranges, the book's unit noise draws, the leave-one-out candidate
temperatures), plus a PNG of ``selfattention.figures.smoothing.plot_smoothing``
at the starting settings. Readers without JavaScript see that PNG; with
JavaScript, ``attention_explorer.js`` replaces it by the live explorer. The
extension registers the script and its stylesheet for the pages that use the
directive only, and Sphinx copies them into the site's ``_static``: nothing
is loaded from another host.
"""

from __future__ import annotations

import base64
import functools
import html
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

STATIC = Path(__file__).parent / "static"
JS_FILE = "attention_explorer.js"
CSS_FILE = "attention_explorer.css"
FALLBACK_ALT = (
    "Static picture of the explorer at its starting settings. Left, a dashed sine, "
    "noisy dots around it and a solid line, the attention output, that follows the sine. "
    "Right, the attention matrix as a square heat map with a bright band along its diagonal."
)


class attention_explorer(nodes.General, nodes.Element):
    """Placeholder node: ``data_json`` and ``png`` become the explorer's HTML."""


class AttentionExplorer(SphinxDirective):
    """The ``attention-explorer`` directive; see the module docstring."""

    has_content = False
    option_spec: ClassVar[dict[str, Callable]] = {
        "n": directives.positive_int,
        "sigma": float,
        "temperature": float,
    }

    def run(self):
        from selfattention.interactive.explorer_data import explorer_json

        kwargs = {key: self.options.get(key) for key in ("n", "sigma", "temperature")}
        try:
            data_json = explorer_json(**kwargs)
        except ValueError as exc:
            raise self.error(f"attention-explorer: {exc}") from exc
        serial = self.env.new_serialno("attention-explorer")
        node = attention_explorer(
            ids=[f"attention-explorer-{serial}"], data_json=data_json, png=_fallback_png(data_json)
        )
        self.set_source_info(node)
        return [node]


@functools.lru_cache(maxsize=8)
def _fallback_png(data_json: str) -> str:
    """Base64 PNG of the package's figure for the explorer's starting data."""
    import json

    from selfattention.figures.smoothing import plot_smoothing
    from selfattention.interactive.explorer_data import fallback_series

    fig = plot_smoothing(*fallback_series(json.loads(data_json)))
    return base64.b64encode(fig._repr_png_()).decode("ascii")


def render_open(ident: str, data_json: str, png_base64: str) -> str:
    """The explorer element's opening HTML: its data and its no-JS fallback.

    The element is closed by ``</div>``; ``attention_explorer.js`` turns every
    ``[data-attention-explorer]`` element into a live explorer.
    """
    return (
        f'<div class="attention-explorer" id="{ident}" data-attention-explorer>'
        f'<script type="application/json" class="attention-explorer-data">{data_json}</script>'
        '<figure class="attention-explorer-fallback">'
        f'<img src="data:image/png;base64,{png_base64}" alt="{html.escape(FALLBACK_ALT)}">'
        "<figcaption>The engineered attention head at the explorer's starting settings. "
        # Not on paper (print.css hides .screen-only): a printed page has no sliders.
        '<span class="screen-only">Turn on JavaScript to move its sliders.</span></figcaption></figure>'
    )


def visit_html(self, node):
    self.body.append(render_open(node["ids"][0], node["data_json"], node["png"]))


def depart_html(self, node):
    self.body.append("</div>\n")


def skip(self, node):
    """Builders other than HTML have no explorer (the chapter's figure stands)."""
    raise nodes.SkipNode


def add_static_path(app):
    app.config.html_static_path.append(str(STATIC))


def add_assets(app, pagename, templatename, context, doctree):
    if doctree is not None and next(iter(doctree.findall(attention_explorer)), None) is not None:
        app.add_css_file(CSS_FILE)
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
