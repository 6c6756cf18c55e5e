"""Serve MathJax from the site: a copy of the npm package ``mathjax`` in ``_static/``.

Sphinx's default ``mathjax_path`` is a CDN URL. Instead, the pages load
``_static/mathjax/tex-mml-chtml.js``, copied at build time from
``node_modules/mathjax/es5`` (pinned in ``package.json``/``package-lock.json``,
installed by ``make assets``; never committed). Only the combined component
and what it loads on demand are copied: its CommonHTML fonts, the TeX/MathML
extensions, and the menu's accessibility and speech components.
"""

from __future__ import annotations

import json
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError
from sphinx.ext.mathjax import MATHJAX_URL
from sphinx.util import logging

from .paths import copy_if_changed, project_root

logger = logging.getLogger(__name__)

STATIC_DIR = "mathjax"  # inside the site's _static/
ENTRY = "tex-mml-chtml.js"
# Relative to node_modules/mathjax/es5: the entry point and what it may load.
PARTS = (ENTRY, "a11y", "ui", "sre", "input/tex", "input/mml", "output/chtml")
MAJOR_VERSION = "3"


def use_local_mathjax(app: Sphinx, config: Config) -> None:
    """Point ``mathjax_path`` (relative to ``_static/``) at the local copy."""
    if config.mathjax_path == MATHJAX_URL:
        config.mathjax_path = f"{STATIC_DIR}/{ENTRY}"
    elif "//" in config.mathjax_path:
        logger.warning("mathjax_path %r is on another host; the site must serve MathJax itself",
                       config.mathjax_path, type="site_build", subtype="mathjax")


def mathjax_source(app: Sphinx) -> Path:
    """``node_modules/mathjax/es5`` of the project, checked to be MathJax 3."""
    package = project_root(app) / "node_modules" / "mathjax"
    manifest = package / "package.json"
    if not manifest.is_file():
        raise ExtensionError(f"{package} is missing: run `make assets` (npm ci) first")
    version = json.loads(manifest.read_text())["version"]
    if not version.startswith(MAJOR_VERSION + "."):
        raise ExtensionError(f"{package} is MathJax {version}, the book needs {MAJOR_VERSION}.x")
    return package / "es5"


def copy_mathjax(app: Sphinx) -> None:
    """Copy :data:`PARTS` into ``_static/mathjax/``, skipping files already up to date.

    Done when the builder starts, before pages are written, so that Sphinx's
    ``?v=<checksum>`` on the script tag is computed from the copied file.
    """
    if app.builder.format != "html" or not app.config.mathjax_path.startswith(STATIC_DIR + "/"):
        return
    source = mathjax_source(app)
    target = Path(app.outdir) / "_static" / STATIC_DIR
    copied = 0
    for part in PARTS:
        files = [source / part] if (source / part).is_file() else sorted((source / part).rglob("*"))
        for path in files:
            if path.is_file():
                copied += copy_if_changed(path, target / path.relative_to(source))
    logger.info("site_build: MathJax served from _static/%s (%d files copied)", STATIC_DIR, copied)
