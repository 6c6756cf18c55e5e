"""Only what a page uses: no icon script or webfont, no search scripts but on the search page, sized lazy images.

A local Sphinx extension (``_config.yml``: ``sphinx.local_extensions``). The
theme (pydata-sphinx-theme 0.17 under sphinx-book-theme) puts on every page:

* Font Awesome's JavaScript (540 KB gzipped) to turn its ~17 icon elements
  into SVG, which also fetches the icon webfont (157 KB): :mod:`.icons`
  writes the SVGs into the page instead, and the template drops the script;
* Sphinx's search scripts and the whole search index, render-blocking in
  ``<head>``, for a search-as-you-type that the theme has off (its search
  dialog submits to ``search.html``, whose own template loads them): the
  template drops them from every other page;
* figures without a size or lazy loading: :mod:`.images`;
* a colour theme left at ``auto`` until its script runs at ``DOMContentLoaded``:
  rules keyed on ``data-theme`` (Pygments' ``line-height`` of code blocks)
  then change the layout after the first paint, which moves a page opened at
  an anchor below code blocks (:func:`resolving_theme_early`).

The template (``templates/layout.html``, added to ``templates_path``)
extends the theme's layout and filters the blocks that hold those parts
through two Jinja filters registered here, so each page is written lean in
the first place (a rebuild equals a clean build; no pass over written files).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError

from . import icons, images

HERE = Path(__file__).resolve().parent
SCRIPT = re.compile(r'[ \t]*<script\b[^>]*\bsrc="([^"]*)"[^>]*>\s*</script>\n?')


def without_scripts(html: str, *names: str) -> str:
    """``html`` without the ``<script src>`` elements whose path ends with one of ``names``."""
    return SCRIPT.sub(lambda m: "" if urlsplit(m.group(1)).path.endswith(names) else m.group(0), html)


#: The theme's inline head script that sets ``data-mode`` and ``data-theme`` (``auto`` unless stored).
THEME_MODE_SCRIPT = re.compile(r'<script data-cfasync="false">\s*document\.documentElement\.dataset\.mode'
                               r'[^<]*</script>')
#: Resolves ``auto`` to the reader's colour scheme, as the theme's ``setMode`` does later.
RESOLVE_THEME = """
  <script data-cfasync="false">
    (function (root) {
      if (root.dataset.theme === "auto") {
        root.dataset.theme = matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
      }
    })(document.documentElement);
  </script>"""


def resolving_theme_early(html: str) -> str:
    """``html`` with the theme resolved right after the theme's mode script, before any stylesheet.

    Placed before the stylesheets so that it does not wait for them. A theme whose head no longer
    has that script fails the build: the shift would come back unseen.
    """
    found = THEME_MODE_SCRIPT.search(html)
    if found is None:
        raise ExtensionError("lean_pages: the theme's colour-mode script was not found in its head "
                             "(pydata-sphinx-theme changed?): the theme cannot be resolved before the first paint")
    return html[:found.end()] + RESOLVE_THEME + html[found.end():]


def add_templates(app: Sphinx, config: Config) -> None:
    config.templates_path.append(str(HERE / "templates"))


def add_filters(app: Sphinx) -> None:
    """Register the template's filters, and the stylesheet of the inline icons and sized images."""
    if app.builder.format != "html":
        return
    app.builder.templates.environment.filters.update(without_scripts=without_scripts,
                                                     resolving_theme_early=resolving_theme_early,
                                                     inline_icons=icons.inline_icons)
    app.config.html_static_path.append(str(HERE / "static"))
    app.add_css_file("lean-pages.css")


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", add_templates)
    app.connect("builder-inited", add_filters)
    app.add_node(nodes.image, override=True, html=(images.visit_image, images.depart_image))
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
