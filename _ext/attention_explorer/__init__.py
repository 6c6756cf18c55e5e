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

    ```{attention-explorer}
    :layer: cost
    :features: 64
    ```

    ```{attention-explorer}
    :layer: induction
    :text: abcabc
    :margin: 8
    ```

    ```{attention-explorer}
    :layer: in-context
    :examples: 16
    :temperature: 0.01
    :eta: 1
    ```

The options set the starting sliders (the book's defaults from
``selfattention.defaults`` when omitted); ``layer`` chooses a layer of several
heads instead of the one head (``derivative``: heads at offsets +delta and
-delta, and their difference over 2 delta), or ``cost``: the exact head
against the head of ``features`` random Fourier features, both timed in the
reader's browser (its script is ``cost_explorer.js``, loaded after the
shared one, whose parts it uses through ``window.AttentionExplorerKit``), or
``induction``: chapter 12's hand-built circuit of two layers on a sequence of
letters (its data from
:func:`selfattention.interactive.circuit_data.circuit_json`, its picture
``selfattention.figures.induction.plot_layers``), or ``in-context``: the
examples of a prompt in one input, which the reader drags, and three
learners' predictions against the query's input (its script
``in_context_explorer.js``, its data from
:func:`selfattention.interactive.in_context_data.in_context_explorer_data`, its picture
``selfattention.figures.in_context.plot_prompts``). At build time the directive embeds,
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

The layout, shared by every explorer (a new one uses it too)
------------------------------------------------------------
A reader who drags a slider must see the picture it moves, on a 390-px phone
and on a desktop. The script builds each explorer as a *stage*::

    <div class="ae-stage">
      <div class="ae-main"> the main picture: the panel(s) a slider changes </div>
      <div class="ae-side"> <div class="ae-controls">the sliders</div> other panels </div>
    </div>

with ``stage({main: [...], side: [controls, ...panels]})`` (a panel that no
slider moves, such as the cost explorer's times, goes after the stage, in
``<div class="ae-after">``, where the pinned picture has let go and cannot
cover it: ``buildPanels()`` returns it as ``after``), and calls
``keepPinned(stageElement)``; both are also ``window.AttentionExplorerLayout``
for an explorer written in another script. The stylesheet
(``attention_explorer.css``) makes ``.ae-main`` sticky, just below the
theme's sticky header (``--ae-sticky-top``, which ``keepPinned`` measures),
with the controls and the other panels below it: while a slider is on screen
the picture stays in view, also as the reader scrolls on (the controls and
the panels after them pass under the pinned picture). At least 36rem wide
(a desktop's column), the panels of ``.ae-main`` stand side by side, and so
do the controls and the other panels of ``.ae-side`` (each other panel 20rem
at most); narrower, everything is one column. A focused control stops below
the pinned picture (``scroll-margin-top`` from ``--ae-main-height``). Panels
are ``<figure class="ae-panel ae-panel-<name>">`` with a ``<canvas>``
(``.ae-canvas-signal`` is 16:10, 16:9 on a phone, 16:7 alone on a
desktop); a control is ``<div class="ae-control">`` holding a ``<label>``,
an ``<input type="range">`` and an ``<output class="ae-value">`` (label and
value on one line, the slider under them). Keep the main picture short
enough that it and a slider fit on a phone's screen below the header (about
780 px in all: the derivative layer's two panels take 460 px). In
``attention_explorer.js`` a new kind subclasses ``Explorer``: its
``buildPanels()`` returns ``{main: [figures], more: [figures]}`` and the
base class builds the stage; register it in ``KINDS`` under its layer's name,
and give its element's class ``ae-kind-<layer>`` the two reserved heights in
the stylesheet (one column and side by side). ``tests/browser/test_explorer_layout.py``
checks every slider of every page: it must be in an ``.ae-stage`` with an
``.ae-main``, and wherever it is wholly on screen, at least half the main
picture must be in view, at 390 x 844 and 1440 x 900.
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
#: The scripts of the explorers written in files of their own, by layer (loaded after :data:`JS_FILE`).
LAYER_JS_FILES = {"cost": "cost_explorer.js", "in-context": "in_context_explorer.js"}
CSS_FILE = "attention_explorer.css"
FALLBACK_ALT = {
    None: "Static picture of the explorer at its starting settings. Left, a dashed sine, "
    "noisy dots around it and a solid line, the attention output, that follows the sine. "
    "Right, the attention matrix as a square heat map with a bright band along its diagonal.",
    "derivative": "Static picture of the explorer at its starting settings. Top, a dashed sine, noisy dots "
    "around it and two smooth curves, the sine shifted left and right. Bottom left, a square heat map of the "
    "two heads' weights, two bright bands on either side of the diagonal. Bottom right, a dashed cosine, the "
    "true slope, and the layer's estimate, a solid curve that follows it away from the ends.",
    "cost": "Static picture of the explorer at its starting settings: a dashed sine, noisy dots around it, "
    "the exact head's output, a smooth curve that follows the sine, and the output of the head of random "
    "features, a curve close to it.",
    "induction": "Static picture of the explorer at its starting settings: two square heat maps with the letters "
    "of the sequence along both axes. Left, the first layer: one bright cell per row, just left of the diagonal. "
    "Right, the second layer: in the repeat, one bright cell per row on a stripe half a sequence to the left.",
    "in-context": "Static picture of the explorer at its starting settings: the examples of a prompt as grey dots, "
    "scattered around a low wave, and three predictions against the query's input: the softmax head, a wiggly curve "
    "that follows the dots, and two straight lines, one step of gradient descent and least squares (dashed).",
}
#: The caption of the static picture, by layer.
FALLBACK_CAPTION = {None: "The engineered attention head", "derivative": "The derivative layer of two heads",
                    "cost": "The exact head and the head of random features",
                    "induction": "The two layers of the hand-built induction circuit",
                    "in-context": "The three learners on the starting prompt"}
#: The options each kind of explorer takes (None: the one head).
LAYER_OPTIONS = {None: ("n", "sigma", "temperature"), "derivative": ("n", "sigma", "temperature", "offset"),
                 "cost": ("n", "features"), "induction": ("text", "margin"),
                 "in-context": ("examples", "temperature", "eta")}


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
        "features": directives.positive_int,
        "text": directives.unchanged_required,
        "margin": float,
        "examples": directives.positive_int,
        "eta": float,
    }

    def run(self):
        from selfattention.interactive.explorer_data import explorer_json

        layer = self.options.get("layer")
        keys = LAYER_OPTIONS.get(layer, LAYER_OPTIONS["derivative"])
        stray = sorted(set(self.options) - {"layer", *keys})
        if stray:
            raise self.error(f"attention-explorer: {', '.join(stray)} is not an option of "
                             f"{'layer: ' + layer if layer else 'the one head'} (it takes {', '.join(keys)})")
        if layer == "induction":
            return self.run_circuit()
        if layer == "in-context":
            return self.run_in_context()
        kwargs = {key: self.options.get(key) for key in keys}
        if layer == "cost":
            kwargs["count"] = kwargs.pop("features")
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

    def run_in_context(self):
        """The in-context explorer (``layer: in-context``): its data and its static picture."""
        from selfattention.interactive.in_context_data import in_context_explorer_json as in_context_json

        kwargs = {key: self.options[key] for key in LAYER_OPTIONS["in-context"] if key in self.options}
        try:
            data_json = in_context_json(**kwargs)
        except ValueError as exc:
            raise self.error(f"attention-explorer: {exc}") from exc
        return [self.explorer_node(data_json, "in-context")]

    def explorer_node(self, data_json: str, layer: str):
        """The explorer's node of ``layer`` holding ``data_json``, with its static picture."""
        serial = self.env.new_serialno("attention-explorer")
        node = attention_explorer(ids=[f"attention-explorer-{serial}"], data_json=data_json, layer=layer)
        png = fallback_file(Path(self.env.app.outdir).parent / "attention_explorer", data_json)
        node += nodes.image(uri="/" + os.path.relpath(png, self.env.srcdir), alt=FALLBACK_ALT[layer])
        self.set_source_info(node)
        return node

    def run_circuit(self):
        """The induction circuit's explorer (``layer: induction``): its data and its static picture."""
        from selfattention.interactive.circuit_data import circuit_json

        kwargs = {key: self.options[key] for key in ("text", "margin") if key in self.options}
        try:
            data_json = circuit_json(**kwargs)
        except ValueError as exc:
            raise self.error(f"attention-explorer: {exc}") from exc
        serial = self.env.new_serialno("attention-explorer")
        node = attention_explorer(ids=[f"attention-explorer-{serial}"], data_json=data_json, layer="induction")
        png = fallback_file(Path(self.env.app.outdir).parent / "attention_explorer", data_json)
        node += nodes.image(uri="/" + os.path.relpath(png, self.env.srcdir), alt=FALLBACK_ALT["induction"])
        self.set_source_info(node)
        return [node]


@functools.lru_cache(maxsize=8)
def fallback_png(data_json: str) -> bytes:
    """PNG of the package's figure for the explorer's starting data."""
    import json

    from selfattention.figures.approximate_heads import plot_exact_and_features
    from selfattention.figures.multihead import plot_derivative_layer
    from selfattention.figures.smoothing import plot_smoothing
    from selfattention.interactive.explorer_data import cost_series, fallback_series, layer_series

    data = json.loads(data_json)
    if data.get("layer") == "in-context":
        from selfattention.figures.in_context import plot_prompts
        from selfattention.interactive.in_context_data import fallback_panel

        return plot_prompts([fallback_panel(data)])._repr_png_()
    if data.get("layer") == "induction":
        from selfattention.figures.induction import plot_layers
        from selfattention.interactive.circuit_data import circuit_labels, circuit_run

        run = circuit_run(data["text"], data["margin"])
        return plot_layers(list(run.weights), circuit_labels(data["text"]))._repr_png_()
    if data.get("layer") == "cost":
        return plot_exact_and_features(*cost_series(data), data["count"])._repr_png_()
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
    explorers = [] if doctree is None else list(doctree.findall(attention_explorer))
    if explorers:
        app.add_js_file(JS_FILE, defer="defer")
    for layer in sorted({node.get("layer") for node in explorers} & set(LAYER_JS_FILES)):
        app.add_js_file(LAYER_JS_FILES[layer], defer="defer")  # after JS_FILE: deferred scripts run in order


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
