"""The published book: which repository it is published from, its print edition, its PDF.

A local Sphinx extension (``_config.yml``: ``sphinx.local_extensions``). It

* takes the book's GitHub repository from the environment
  (``BOOK_REPOSITORY=owner/name``), which the workflow sets from the Actions
  context: nothing in the repository names it, so a fork publishes a book
  whose Binder links point at the fork; without it the book is
  *unpublished*: no Binder link, and the page says that live code on Binder
  needs a published book (:mod:`.repository`). Binder launches the ref
  ``binder-<hash of binder/>``, which changes only when ``binder/`` does
  (:mod:`.binder_ref`), so that a push of chapters or package starts from
  Binder's cached image;
* adds the print stylesheet (``static/print.css``, ``media="print"``): no
  site chrome or controls on paper, one chapter per page, and
  ``screen-only`` blocks (web-only sentences) left out;
* when the book was printed (``BOOK_PDF=<file>``, set by ``make pdf``),
  copies the PDF to the site's root and links it from every page's download
  menu; without it, no link and no PDF, so a site never links a PDF it does
  not have (:mod:`.pdf`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

from . import pdf, repository

STATIC = Path(__file__).resolve().parent / "static"
PRINT_CSS = "print.css"


def add_static_path(app: Sphinx) -> None:
    app.config.html_static_path.append(str(STATIC))


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value(pdf.CONFIG, "", "html", types=[str])
    # Before the theme reads the repository (builder-inited) and before the env is compared.
    app.connect("config-inited", repository.set_repository, priority=100)
    app.connect("config-inited", pdf.set_pdf, priority=100)
    app.connect("builder-inited", add_static_path)
    app.add_css_file(PRINT_CSS, media="print")
    # After sphinx-book-theme has made its download menu (priority 501).
    app.connect("html-page-context", pdf.add_download_link, priority=502)
    app.connect("build-finished", pdf.copy_pdf)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
