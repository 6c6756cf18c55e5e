"""Accessibility and metadata of the markup the book produces.

A local Sphinx extension (``_config.yml``: ``sphinx.local_extensions``):

* hidden-cell toggles are named by what they show: myst-nb 1.4 writes
  ``<summary aria-label="Toggle hidden content">`` around the visible
  "Show code cell source", and a name that differs from the visible label
  fails WCAG 2.5.3 (label in name). The node's HTML visitor is wrapped to
  leave the ``aria-label`` out, so the name is the visible text; and the
  hidden source of a page's first code cell, when it sets up the chapter,
  gets a label that says so (:func:`set_up_label`): "Show the imports" when it only imports, "Show the
  imports and set-up" when it imports and computes, unless the cell names its
  toggle itself (``mystnb: code_prompt_show``);
* citation lists use ARIA roles that exist: docutils 0.21 writes each entry
  with ``role="doc-biblioentry"`` (deprecated in DPUB-ARIA 1.1, and then the
  list has no ``listitem``); the wrapped visitor writes ``role="listitem"``;
* every page has a meta description (:mod:`.description`); the generated
  search and index pages get their name, the book's title and the first
  page's description; a description shorter than 50 characters is a build
  warning;
* a chapter's opening, ``:::{div} chapter-goals`` right after its title
  (what the reader will be able to do after the chapter, and the chapters
  it builds on), is a light box (``static/chapter-goals.css``); the page's
  meta description skips it, as it skips every container, and is the
  paragraph that follows;
* the home page's three ways to use the book, ``:::{div} three-ways``
  around a list of three items, are light cards, side by side where the
  column has room (``static/home.css``);
* the home page's reading time, ``{reading-time}`150```, counted from the
  chapters' prose when the book is built (:mod:`.reading_time`);
* the site's root ``index.html`` is a real page (``<html lang>``, a title, a
  description, a link) that redirects to the book's first page, written with
  Sphinx's ``html_additional_pages`` (sphinx-external-toc then leaves it,
  instead of writing a bare ``<meta http-equiv="Refresh">``).
"""

from __future__ import annotations

import ast
import html
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util import logging

from .description import MIN_LENGTH, description, shorten
from .reading_time import ReadingTime

logger = logging.getLogger(__name__)
HERE = Path(__file__).resolve().parent
HIDDEN_CELL_LABEL = ' aria-label="Toggle hidden content"'
ROOT_PAGE = "index"
ROOT_TEMPLATE = "root-redirect.html"
#: The chapter opening's box, and the home page's three ways to use the book.
CSS_FILES = ("chapter-goals.css", "home.css")
GENERATED_PAGES = {"genindex": "Index of", "search": "Search"}


#: What a hidden source that sets up a chapter holds: only imports, or imports and then other code.
SET_UP_LABELS = {True: "the imports", False: "the imports and set-up"}


def set_up_label(code: str) -> str | None:
    """What ``code`` holds, for its toggle, if it sets up (starts with an import); else None."""
    try:
        statements = ast.parse(code).body
    except SyntaxError:  # IPython magics: not plain Python, not named
        return None
    if not statements or not isinstance(statements[0], (ast.Import, ast.ImportFrom)):
        return None
    return SET_UP_LABELS[all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in statements)]


def first_code_cell(document: nodes.document) -> nodes.Element | None:
    """The page's first code cell (myst-nb's ``cell_code`` container), if it has one."""
    return next(document.findall(lambda n: isinstance(n, nodes.container) and n.get("nb_element") == "cell_code"),
                None)


def named_by_content(visit):
    """The hidden-cell visitor, the first code cell's default label replaced by :func:`set_up_label`'s."""
    def wrapped(self, node: nodes.Element) -> None:
        default = {key: self.config[f"nb_code_{key}"].replace("{type}", "source")
                   for key in ("prompt_show", "prompt_hide")}
        source = next(node.findall(nodes.literal_block), None)
        first = "above-input" in node["classes"] and node.parent is first_code_cell(self.document)
        label = set_up_label(source.astext()) if first and source else None
        if label and all(node[key] == text for key, text in default.items()):
            node["prompt_show"], node["prompt_hide"] = f"Show {label}", f"Hide {label}"
        visit(self, node)
    return wrapped


def _rewritten(visit, old: str, new: str):
    """The translator's ``visit``, with ``old`` replaced by ``new`` in what it wrote."""
    def wrapped(self, node: nodes.Element) -> None:
        start = len(self.body)
        try:
            visit(self, node)
        finally:
            self.body[start:] = [part.replace(old, new) for part in self.body[start:]]
    return wrapped


def root_description(app: Sphinx) -> str:
    """The description of the book's first page (its first paragraph)."""
    return description(app.env.get_doctree(app.config.root_doc))


def page_description(app: Sphinx, pagename: str, doctree) -> str:
    """The page's first paragraph; for a generated page (search, index), its name and the book's."""
    if doctree is not None:
        return description(doctree)
    name = GENERATED_PAGES.get(pagename, pagename.capitalize())
    return shorten(f"{name} {app.config.html_title or app.config.project}. {root_description(app)}")


def add_description(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree) -> None:
    """``<meta name="description">`` unless the front matter gave one (html-page-context)."""
    if pagename == ROOT_PAGE and templatename == ROOT_TEMPLATE:
        context["root_description"] = root_description(app)
        return
    if 'name="description"' in context.get("metatags", ""):
        return
    text = page_description(app, pagename, doctree)
    if len(text) < MIN_LENGTH:
        logger.warning("page %s has no description of %d characters or more (%r): give it front matter "
                       "myst: html_meta: description: ...", pagename, MIN_LENGTH, text,
                       type="page_meta", subtype="description", location=pagename)
    context["metatags"] = context.get("metatags", "") + f'\n<meta name="description" content="{html.escape(text)}" />'


def add_root_page(app: Sphinx, config: Config) -> None:
    """Write the site's root ``index.html`` from ``templates/root-redirect.html`` (a book rooted elsewhere)."""
    if config.root_doc != ROOT_PAGE:
        config.templates_path.append(str(HERE / "templates"))
        config.html_additional_pages[ROOT_PAGE] = ROOT_TEMPLATE


def add_stylesheet(app: Sphinx) -> None:
    """The stylesheets of :data:`CSS_FILES`, on every page (``builder-inited``): joined into the one
    stylesheet every page shares (``lean_pages``), they cost no request of their own."""
    app.config.html_static_path.append(str(HERE / "static"))
    for name in CSS_FILES:
        app.add_css_file(name)


def setup(app: Sphinx) -> dict[str, Any]:
    from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput, visit_HideCellInput

    app.setup_extension("myst_nb")
    app.add_node(HideCodeCellNode, override=True,
                 html=(named_by_content(_rewritten(visit_HideCellInput, HIDDEN_CELL_LABEL, "")), depart_HideCellInput))
    app.add_node(nodes.citation, override=True,
                 html=(_rewritten(lambda self, node: type(self).visit_citation(self, node),
                                  'role="doc-biblioentry"', 'role="listitem"'),
                       lambda self, node: type(self).depart_citation(self, node)))
    app.add_role("reading-time", ReadingTime())
    app.connect("config-inited", add_root_page, priority=900)  # after sphinx-external-toc sets root_doc
    app.connect("html-page-context", add_description)
    app.connect("builder-inited", add_stylesheet)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
