"""Only what a page uses: no icon script or webfont, no search scripts but on the search page, sized lazy images,
nothing rendered far below the view.

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
* figures glaring white in the dark theme: :mod:`.dark_figures` (a dark twin of each, shown by the theme);
* every part of a long chapter laid out and painted as the page arrives, the
  parts below the fold too (thousands of KaTeX spans): the stylesheet gives
  sections, paragraphs, display math, lists and code cells
  ``content-visibility: auto``, so the browser renders them only near the
  view, and :mod:`.tab_stops` keeps the theme's script from measuring every
  code block at load (which laid them all out again);
* scripts in ``<head>`` that block the first paint until each has arrived
  (:func:`deferring_scripts`; not on the search page, whose own search
  script runs as the page is parsed and needs them), a stylesheet that only
  imports another (:func:`without_import_chain`), preloads of scripts that
  run only after the page is parsed (:func:`without_script_preloads`), and
  sphinx-design's stylesheet and script on pages that use none of its
  components (:func:`without_unused_design`);
* Bootstrap's script, run at every load for the article header's two menus: :mod:`.bootstrap_on_demand`
  fetches it when a reader first reaches for one of them;
* sixteen stylesheets, each a request that the first paint waits for
  (:mod:`.stylesheets` joins them into one, without Font Awesome's glyph rules);
* two search fields on a desktop page, the header's and the sidebar's
  (:func:`add_templates` keeps the sidebar's);
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
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError

from . import bootstrap_on_demand, dark_figures, icons, images, stylesheets, tab_stops

HERE = Path(__file__).resolve().parent
SCRIPT = re.compile(r'[ \t]*<script\b[^>]*\bsrc="([^"]*)"[^>]*>\s*</script>\n?')


def without_scripts(html: str, *names: str) -> str:
    """``html`` without the ``<script src>`` elements whose path ends with one of ``names``."""
    return SCRIPT.sub(lambda m: "" if urlsplit(m.group(1)).path.endswith(names) else m.group(0), html)


#: The theme's inline head script that sets ``data-mode`` and ``data-theme`` (``auto`` unless stored).
THEME_MODE_SCRIPT = re.compile(r'<script data-cfasync="false">\s*document\.documentElement\.dataset\.mode'
                               r'[^<]*</script>')
#: Resolves ``auto`` to the reader's colour scheme, as the theme's ``setMode`` does later; marks a page
#: opened at an anchor, whose parts lean-pages.css then renders at once.
RESOLVE_THEME = """
  <script data-cfasync="false">
    (function (root) {
      if (root.dataset.theme === "auto") {
        root.dataset.theme = matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
      }
      if (location.hash) root.classList.add("lean-at-anchor");  // every part rendered: lean-pages.css
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


#: A classic script element: its attributes and its body (empty for ``<script src>``).
SCRIPT_ELEMENT = re.compile(r"<script\b(?P<attrs>[^>]*)>(?P<body>.*?)</script>", re.S)
#: An inline script that only declares a variable with a literal value (it needs no other script).
DECLARATION = re.compile(r"\s*(?:let|var|const)\s+\w+\s*=\s*(?:'[^'\\]*'|\"[^\"\\]*\"|true|false|[\d.]+)\s*;?\s*")


def deferring_scripts(html: str) -> str:
    """``html`` (the head's scripts) with every script deferred, in the same order.

    A ``<script src>`` without ``defer`` or ``async`` blocks the first paint until it has arrived and
    run: on a slow network, the eight that Sphinx, sphinx-book-theme, sphinx-copybutton,
    sphinx-togglebutton and sphinx-design put in the head each waited for a round trip before the
    page showed anything. Deferred, they run after the page is parsed, in document order. An inline
    script that only declares a variable with a literal value (``let toggleHintShow = '...'``) stays
    inline: it runs first, and a deferred script that runs its set-up at once (the document is
    parsed) finds it already set. Any other inline script (``DOCUMENTATION_OPTIONS.pagename = ...``
    needs ``documentation_options.js``) becomes a deferred ``data:`` script, so that it still runs
    after the scripts before it.
    """
    def deferred(found: re.Match) -> str:
        attrs, body = found["attrs"], found["body"]
        if re.search(r"\b(defer|async)\b|\btype=\"(?!text/javascript)", attrs):
            return found[0]
        if " src=" in attrs:
            return f"<script defer{attrs}></script>"
        if DECLARATION.fullmatch(body):
            return found[0]
        return f'<script defer src="data:text/javascript,{quote(body.strip())}"{attrs}></script>'

    return SCRIPT_ELEMENT.sub(deferred, html)


#: The theme's first stylesheet, whose only rule imports Sphinx's ``basic.css`` (a second round trip).
THEME_CSS = re.compile(r'(<link href="[^"]*?_static/)styles/theme\.css(\?digest=\w+)?(" rel="stylesheet" />)')
THEME_CSS_TEXT = re.compile(r'\s*(/\*[^*]*\*/\s*)?@import "\.\./basic\.css";\s*')


def without_import_chain(html: str) -> str:
    """``html`` (the head's stylesheets) linking ``basic.css`` itself, not ``theme.css`` that imports it.

    The browser finds the import only once ``theme.css`` has arrived: every page waited a round
    trip more than its other stylesheets before it could paint. :func:`check_theme_css` makes sure
    that ``theme.css`` holds nothing else.
    """
    return THEME_CSS.sub(lambda m: f"{m[1]}basic.css{m[2] or ''}{m[3]}", html, count=1)


SCRIPT_PRELOAD = re.compile(r'[ \t]*<link rel="preload" as="script" href="[^"]*" />\n?')


def without_script_preloads(html: str) -> str:
    """``html`` (the head) without ``<link rel="preload" as="script">``.

    The theme preloads its two scripts, which run only once the page is parsed: fetched at once,
    they took the bandwidth the stylesheets and fonts of the first paint need (on a slow network
    the largest paint came later); the browser finds them at the end of the body anyway.
    """
    return SCRIPT_PRELOAD.sub("", html)


def check_theme_css(static: Path) -> None:
    """Fail the build if the theme's ``styles/theme.css`` holds more than the import of ``basic.css``."""
    text = (static / "styles" / "theme.css").read_text()
    if not THEME_CSS_TEXT.fullmatch(text):
        raise ExtensionError("lean_pages: the theme's styles/theme.css holds more than @import \"../basic.css\" "
                             "(pydata-sphinx-theme changed?): pages link basic.css instead of it")


#: Assets of sphinx-design, which a page uses only if its body has one of sphinx-design's ``sd-`` classes.
DESIGN_ASSETS = ("sphinx-design.min.css", "design-tabs.js")
DESIGN_CLASS = re.compile(r'class="(?:[^"]* )?sd-')


def without_unused_design(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree) -> None:
    """Leave sphinx-design's stylesheet and script off a page that uses none of its components."""
    if DESIGN_CLASS.search(context.get("body", "")):
        return
    for key in ("css_files", "script_files"):
        if key in context:
            context[key] = [asset for asset in context[key]
                            if not (getattr(asset, "filename", None) or "").endswith(DESIGN_ASSETS)]


def add_templates(app: Sphinx, config: Config) -> None:
    """The template, and one search field: the primary sidebar's (``config-inited``).

    pydata-sphinx-theme puts a search field in the header too (its ``navbar_persistent``, unless
    set), so that a desktop page showed two; without it the theme writes no header at all. The
    sidebar's field stays (a phone shows the article header's search button); the search dialog,
    its Ctrl+K shortcut and the search page do not depend on either. A book that sets
    ``navbar_persistent`` itself keeps its choice.
    """
    config.templates_path.append(str(HERE / "templates"))
    config.html_theme_options.setdefault("navbar_persistent", [])


def theme_static_dir(app: Sphinx) -> Path:
    """The ``static`` directory of the theme (or parent theme) that holds pydata-sphinx-theme's script."""
    for theme_dir in app.builder.theme.get_theme_dirs():
        if (Path(theme_dir, "static") / tab_stops.THEME_SCRIPT).is_file():
            return Path(theme_dir, "static")
    raise ExtensionError(f"lean_pages: no theme of this build has static/{tab_stops.THEME_SCRIPT}")


def add_filters(app: Sphinx) -> None:
    """Register the template's filters, the stylesheet, and the theme's script with tab stops set near the view.

    The theme's script without its tab-stop pass is written under the doctree directory, which
    ``html_static_path`` then copies into ``_static/lean_pages/``.
    """
    if app.builder.format != "html":
        return
    bootstrap_version = bootstrap_on_demand.digest(HERE / "static")
    app.builder.templates.environment.filters.update(without_scripts=without_scripts,
                                                     resolving_theme_early=resolving_theme_early,
                                                     deferring_scripts=deferring_scripts,
                                                     without_import_chain=without_import_chain,
                                                     without_script_preloads=without_script_preloads,
                                                     with_lean_theme_script=tab_stops.with_lean_theme_script,
                                                     inline_icons=icons.inline_icons,
                                                     bootstrap_on_demand=partial(bootstrap_on_demand.bootstrap_on_demand,
                                                                                 version=bootstrap_version),
                                                     bundling=app.lean_stylesheets)
    app.config.html_static_path.append(str(HERE / "static"))
    static = theme_static_dir(app)
    check_theme_css(static)
    lean_static = tab_stops.write_theme_script(static, Path(app.doctreedir) / "lean_pages_static")
    app.config.html_static_path.append(str(lean_static))
    app.add_css_file("lean-pages.css")
    app.add_js_file("tab-stops.js", loading_method="defer")


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", add_templates)
    app.connect("builder-inited", add_filters)
    app.connect("html-page-context", without_unused_design, priority=900)
    app.lean_stylesheets = stylesheets.Bundler()
    app.connect("html-page-context", app.lean_stylesheets.page_written)
    # Last: the theme rewrites pygments.css when the build finishes (its light and dark styles).
    app.connect("build-finished", app.lean_stylesheets.write, priority=900)
    app.add_node(nodes.image, override=True, html=(images.visit_image, images.depart_image))
    app.connect("build-finished", dark_figures.write_twins)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
