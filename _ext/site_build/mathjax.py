"""Serve MathJax from the site: a copy of the npm package ``mathjax`` in ``_static/``.

Sphinx's default ``mathjax_path`` is a CDN URL; ``_config.yml`` sets it to
``mathjax/tex-mml-chtml.js``, a path in the site's ``_static/``. This module
fills that directory when the builder starts, from ``node_modules/mathjax/es5``
(pinned in ``package.json``/``package-lock.json``, installed by ``make
assets``; never committed): the entry point ``mathjax_path`` names, and what
it loads on demand (its CommonHTML fonts, the TeX/MathML extensions, the
menu's accessibility and speech components). Sphinx's ``copy_asset`` skips
files that are already up to date.
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging
from sphinx.util.fileutil import copy_asset

from .paths import PROJECT_ROOT

logger = logging.getLogger(__name__)

# Relative to node_modules/mathjax/es5: what the entry point may load.
PARTS = ("a11y", "ui", "sre", "input/tex", "input/mml", "output/chtml")
MAJOR_VERSION = "3"


def mathjax_source() -> Path:
    """``node_modules/mathjax/es5`` of the project, checked to be MathJax 3."""
    package = PROJECT_ROOT / "node_modules" / "mathjax"
    manifest = package / "package.json"
    if not manifest.is_file():
        raise ExtensionError(f"{package} is missing: run `make assets` (npm ci) first")
    version = json.loads(manifest.read_text())["version"]
    if not version.startswith(MAJOR_VERSION + "."):
        raise ExtensionError(f"{package} is MathJax {version}, the book needs {MAJOR_VERSION}.x")
    return package / "es5"


def copy_mathjax(app: Sphinx) -> None:
    """Copy the entry point named by ``mathjax_path`` and :data:`PARTS` into ``_static/``.

    Done when the builder starts, before pages are written, so that Sphinx's
    ``?v=<checksum>`` on the script tag is computed from the copied file. A
    ``mathjax_path`` on another host is left to :mod:`.checks` to report.
    """
    path = app.config.mathjax_path
    if app.builder.format != "html" or "//" in path:
        return
    folder, entry = posixpath.split(path)
    source = mathjax_source()
    if not (source / entry).is_file():
        raise ExtensionError(f"mathjax_path {path!r}: MathJax has no {entry} in {source}")
    target = Path(app.outdir) / "_static" / folder
    copy_asset(source / entry, target)
    for part in PARTS:
        copy_asset(source / part, target / part)
    logger.info("site_build: MathJax served from _static/%s", folder)
