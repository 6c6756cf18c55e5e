"""Finding one's way in the book: the phone's Contents panel, lettered appendices, and search.

A local Sphinx extension (``_config.yml``: ``sphinx.local_extensions``), for
two things the theme and Sphinx do not do as a reader expects:

* on a narrow screen, pydata-sphinx-theme 0.17 shows a page's table of
  contents (the secondary sidebar) in a ``<dialog>`` that its "Contents"
  button opens, three quarters of the screen wide; choosing a section
  scrolled the page behind it and left it open. ``static/contents-panel.js``
  (deferred, on every page) closes the theme's sidebar dialogs when a link in
  them is chosen; the browser then follows the link;
* Sphinx numbers every document of a numbered toctree as a chapter: the
  back matter under ``_toc.yml``'s "Appendices" caption is lettered instead,
  A, B, C (:mod:`.appendices`);
* prose names another chapter by its number, "chapter 9", linked, not by its
  title used as a noun (:mod:`.chapters`, the ``{chapter}`` role);
* Sphinx 7.4's search (``searchtools.js``, on the search page only, see
  ``lean_pages``) scored every page with a query word in any of its
  section titles alike (15) and ordered those alphabetically: "kernel" put
  "Attention is kernel regression" fourth. Its snippet was the first 240
  characters around the match in the page's ``[role="main"]``, which in this
  theme begins with the in-page table of contents: readers saw lines of it
  ("5.1. The head, end to end 5.2. ..."), and KaTeX's formulas twice over.
  ``static/search.js``, Sphinx's ``html_search_scorer`` (which Sphinx writes
  into ``language_data.js``, loaded by the search page after
  ``searchtools.js``), ranks first the pages whose title holds the query's
  words (then those with more sections titled with them), lists each page
  once (Sphinx listed a page twice when the query was half its title: its
  index title carries the section number), and makes each snippet the
  sentence around a match in the article's prose, a formula as one line of
  text (``κ_h(u)=exp(−u^2/(2h^2))``), or the line of code that holds it.

A book that sets ``html_search_scorer`` itself keeps its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

from . import appendices, chapters

STATIC = Path(__file__).resolve().parent / "static"
CONTENTS_JS = "contents-panel.js"
SCORER = STATIC / "search.js"


def set_scorer(app: Sphinx, config: Config) -> None:
    if not config.html_search_scorer:
        config.html_search_scorer = str(SCORER)


def add_assets(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    app.config.html_static_path.append(str(STATIC))
    app.add_js_file(CONTENTS_JS, loading_method="defer")


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", set_scorer)
    app.connect("builder-inited", add_assets)
    appendices.setup(app)
    chapters.setup(app)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
