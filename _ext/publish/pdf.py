"""The book's PDF on the site: copied to its root and linked from every page, only when it was printed.

``make pdf`` prints the book (``tools/pdf.py``) and then builds the site with
``BOOK_PDF=<the printed file>``. That build copies the file to
``<site>/self-attention-by-hand.pdf`` (:data:`PDF_NAME`) and adds "The whole
book (.pdf)" to each page's download menu. A build without ``BOOK_PDF``
(``make build``) has neither the link nor the file (a copy left by an
earlier ``make pdf`` is removed, since it may be out of date): a site never
links a PDF it does not have, and a rebuild equals a clean build.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ConfigError

PDF_ENV = "BOOK_PDF"
#: The configuration value (rebuild "html"): the site's PDF file name, or "" for none.
#: When it changes, Sphinx rewrites every page (with or without the link).
CONFIG = "book_pdf"
PDF_NAME = "self-attention-by-hand.pdf"
LINK = {
    "type": "link",
    "text": "The whole book (.pdf)",
    "tooltip": "Download the whole book as one PDF",
    "icon": "fas fa-book",
    "label": "download-book-pdf-button",
}


def pdf_source() -> Path | None:
    """The printed PDF named by :data:`PDF_ENV`, or None; a named file that is missing is an error."""
    value = os.environ.get(PDF_ENV, "").strip()
    if not value:
        return None
    path = Path(value).resolve()
    if not path.is_file():
        raise ConfigError(f"{PDF_ENV}={value!r}: no such file; print the book first (make pdf)")
    return path


def set_pdf(app: Sphinx, config: Config) -> None:
    config[CONFIG] = PDF_NAME if pdf_source() else ""


def add_download_link(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree) -> None:
    """Append the PDF to the page's download menu (sphinx-book-theme's ``download-buttons`` group)."""
    if not app.config[CONFIG]:
        return
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            group["buttons"].append({**LINK, "url": context["pathto"](app.config[CONFIG], 1)})


def copy_pdf(app: Sphinx, exception: Exception | None) -> None:
    """Put the printed PDF at the site's root, or remove a copy that no page links any more."""
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / PDF_NAME
    source = pdf_source()
    if source is None:
        target.unlink(missing_ok=True)
    elif not target.exists() or target.read_bytes() != source.read_bytes():
        shutil.copyfile(source, target)
